//! `mnemo demo`: two scripted sessions on the embedded store with the real local model, showing
//! what was remembered, why (verdicts), and the block the second session receives.

use std::sync::Arc;

use anyhow::{Context, Result};
use chrono::{DateTime, Duration, Utc};
use mnemo::core::{NewMessage, StatusKind};
use mnemo::models::{EmbedderKind, fetch_model, model_present, open_embedder};
use mnemo::store::{ListFilter, SqliteStore};
use mnemo::{Config, ManualClock, Memory, Scope};

use crate::render::verdict_line;

struct Session {
    chat: &'static str,
    start: &'static str,
    turns: &'static [(&'static str, &'static str)],
}

const SESSIONS: &[Session] = &[
    Session {
        chat: "first-chat",
        start: "2026-03-02T09:00:00Z",
        turns: &[
            ("Hi! My name is Maya and I live in Porto.", "Nice to meet you, Maya! How can I help?"),
            ("I'm a data engineer at a logistics company.", "Pipelines and trucks, nice."),
            ("I have a dog named Pixel.", "Pixel is a great name for a dog."),
            ("Please keep your answers short.", "Will do."),
            ("Never mention my old job at the bank.", "Understood."),
            ("I love trail running, especially on weekends.", "Trails around Porto are lovely."),
            ("ok thanks", "Anytime!"),
            ("My card number is 4111 1111 1111 1111, can you remember it?", "I won't store card numbers."),
            ("I live in Porto.", "Yes, you mentioned that."),
        ],
    },
    Session {
        chat: "second-chat",
        start: "2026-03-09T18:30:00Z",
        turns: &[("Actually I work as a product manager now, not data engineering.", "Congrats on the new role!")],
    },
];

const NEXT_MESSAGE: &str = "Any ideas for a relaxed Saturday with my dog?";
const BUDGET: usize = 400;

pub(crate) fn run(mut config: Config, keep: bool, json: bool) -> Result<()> {
    let _tmp = if keep {
        None
    } else {
        let t = tempfile::tempdir().context("creating a temporary data directory")?;
        config.data_dir = t.path().to_path_buf();
        Some(t)
    };
    if config.embedder.kind == EmbedderKind::Local {
        let dir = config.embedder.resolved_model_dir();
        if !model_present(&dir) {
            println!("The local model is not in {} yet; fetching it (one time)...", dir.display());
            fetch_model(&dir)?;
        }
    }
    let embedder = open_embedder(&config.embedder)?;
    let store = Arc::new(SqliteStore::open(config.db_path())?);
    let start: DateTime<Utc> = SESSIONS[0].start.parse()?;
    let clock = Arc::new(ManualClock::new(start));
    let memory = Memory::from_parts(config.clone(), store, Some(embedder), clock.clone());
    println!("mnemo demo · store {} · embedder {}", config.db_path().display(), memory.embedder_id().unwrap_or("none"));

    let user = |chat: &str| Scope::parse("demo", None, Some("maya"), Some(chat));
    for (n, s) in SESSIONS.iter().enumerate() {
        let scope = user(s.chat)?;
        let mut at: DateTime<Utc> = s.start.parse()?;
        println!("\n── Session {} · chat {} · {} ──", n + 1, s.chat, at.format("%A %Y-%m-%d %H:%M"));
        for (said, reply) in s.turns {
            clock.set(at);
            let report = memory.ingest(
                &scope,
                vec![NewMessage::user(*said, at), NewMessage::assistant(*reply, at + Duration::seconds(20))],
            )?;
            println!("  user: {said}");
            if report.ops.is_empty() {
                println!("      · nothing worth remembering");
            }
            for o in &report.ops {
                println!("      {}", verdict_line(&o.op.draft.content, o.op.draft.kind.as_str(), &o.verdict));
            }
            println!("  assistant: {reply}");
            at += Duration::minutes(2);
        }
        if n == 0 {
            let active =
                memory.list(&scope, &ListFilter { statuses: vec![StatusKind::Active], ..Default::default() })?;
            println!("\n  What mnemo now knows about Maya ({} active memories):", active.len());
            for m in active.iter().rev() {
                println!("    {:<10} {:<8} {}", m.kind, m.surface, m.content);
            }
        }
    }

    let last = SESSIONS.last().expect("sessions");
    clock.set(last.start.parse::<DateTime<Utc>>()? + Duration::minutes(10));
    let scope = user(last.chat)?;
    let ctx = memory.context(&scope, NEXT_MESSAGE, Some(BUDGET))?;
    println!("\n── The block session 2 hands the model for \"{NEXT_MESSAGE}\" ({BUDGET}-token budget) ──\n");
    print!("{}", ctx.block.text);
    println!("\n── Why ──");
    for s in &ctx.block.sections {
        if s.name == mnemo::core::SectionName::Recent {
            continue;
        }
        for i in &s.items {
            let why = match (&i.exact, &i.score, &i.tier) {
                (Some(e), _, _) => format!("always included ({e})"),
                (None, Some(p), Some(t)) => {
                    format!("ranked {:.3} ({t}: relevance {:.2}, strength {:.2})", p.total, p.relevance, p.strength)
                }
                _ => match i.kind.as_str() {
                    "policy" => "policy in force".into(),
                    "message" => "a past message that bears on this one (archival recall)".into(),
                    "memo" | "summary" => "this chat's timeline".into(),
                    other => format!("placed as {other}"),
                },
            };
            println!(
                "  {:<11} {:<44} {why}",
                s.name.as_str(),
                format!("\"{}\"", i.text.chars().take(42).collect::<String>())
            );
        }
    }
    for h in &ctx.block.held_back {
        println!("  held back   {} ({})", h.id, h.reason);
    }
    for s in &ctx.block.shed {
        println!(
            "  shed        {} to {} ({} of {} tokens, to fit the budget)",
            s.id, s.detail, s.tokens, s.full_tokens
        );
    }
    println!(
        "\n{} of {} tokens · retrieval mode {} · {:.1} ms ({:.1} ms embedding the message) · trace {}",
        ctx.block.tokens,
        BUDGET,
        ctx.mode,
        ctx.micros as f64 / 1e3,
        ctx.embed_micros as f64 / 1e3,
        ctx.turn_id
    );
    if json {
        println!("{}", serde_json::to_string_pretty(&ctx)?);
    }
    if keep {
        println!("Explore: mnemo list --data-dir {} --tenant demo --user maya", memory.config().data_dir.display());
    }
    Ok(())
}
