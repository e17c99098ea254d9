//! Exports: what a scope's memory holds, in formats people and agents read.
//!
//! - `memory-md`: a MEMORY.md of the active memories, grouped by kind, pinned first — the file
//!   coding agents and assistants load as standing context, and what a user reads to see what is
//!   known about them.
//! - `conventions`: agent-scoped knowledge (protocols, knowledge, facts owned by an agent layer)
//!   as a CONVENTIONS.md: what every user of that agent benefits from.
//! - `skills`: the agent's approved skills (see [`crate::skill`]), one Markdown file each with
//!   a `name`/`description` front matter, the layout agent tools load skills from.
//! - `json`: everything, every status, with history and links (built by the engine).
//!
//! Rendering is deterministic: the same memories give the same bytes.

use std::str::FromStr;

use chrono::{DateTime, Utc};

use crate::error::CoreError;
use crate::kind::{Kind, StatusKind, Surface};
use crate::memory::Memory;
use crate::scope::Layer;

/// What `export` produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportFormat {
    /// Everything, as JSON.
    Json,
    /// MEMORY.md of the active memories.
    MemoryMd,
    /// CONVENTIONS.md of agent-scoped knowledge.
    Conventions,
    /// One Markdown file per approved skill of an agent.
    Skills,
}

impl ExportFormat {
    /// The name used on the command line and in the API.
    pub fn as_str(self) -> &'static str {
        match self {
            ExportFormat::Json => "json",
            ExportFormat::MemoryMd => "memory-md",
            ExportFormat::Conventions => "conventions",
            ExportFormat::Skills => "skills",
        }
    }

    /// The media type of the rendered export.
    pub fn media_type(self) -> &'static str {
        match self {
            ExportFormat::Json => "application/json",
            ExportFormat::MemoryMd | ExportFormat::Conventions | ExportFormat::Skills => "text/markdown; charset=utf-8",
        }
    }
}

impl FromStr for ExportFormat {
    type Err = CoreError;
    fn from_str(s: &str) -> Result<Self, CoreError> {
        match s {
            "json" => Ok(ExportFormat::Json),
            "memory-md" | "memory_md" | "md" => Ok(ExportFormat::MemoryMd),
            "conventions" => Ok(ExportFormat::Conventions),
            "skills" => Ok(ExportFormat::Skills),
            other => Err(CoreError::UnknownVariant {
                what: "export format",
                value: other.to_string(),
                expected: "json, memory-md, conventions or skills",
            }),
        }
    }
}

/// The headings of MEMORY.md, in document order. Each kind's row
/// ([`crate::kind::KindSpec::memory_md`]) puts it under one heading, or leaves it out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryMdHeading {
    /// Identity.
    AboutTheUser,
    /// Tastes and how replies should look.
    Preferences,
    /// How to interact, and what never to raise.
    Boundaries,
    /// Assertions about the user's world.
    Facts,
    /// Threads to pick up.
    OpenLoops,
    /// What happened.
    Events,
    /// The relationship's own words.
    SharedLanguage,
    /// Insights drawn from many memories.
    Reflections,
}

impl MemoryMdHeading {
    /// Every heading, in document order.
    pub const ALL: [MemoryMdHeading; 8] = [
        Self::AboutTheUser,
        Self::Preferences,
        Self::Boundaries,
        Self::Facts,
        Self::OpenLoops,
        Self::Events,
        Self::SharedLanguage,
        Self::Reflections,
    ];

    /// The heading as the file shows it.
    pub fn title(self) -> &'static str {
        match self {
            Self::AboutTheUser => "About the user",
            Self::Preferences => "Preferences",
            Self::Boundaries => "Boundaries and protocols",
            Self::Facts => "Facts",
            Self::OpenLoops => "Open loops",
            Self::Events => "Events",
            Self::SharedLanguage => "Shared language",
            Self::Reflections => "Reflections",
        }
    }
}

/// One line: the content, its date where it matters, and how to use it when not "speak".
fn line(m: &Memory) -> String {
    let mut s = format!("- {}", m.content.trim());
    match m.kind {
        Kind::OpenLoop => {
            if let Some(due) = m.due_at {
                s.push_str(&format!(" (due {})", due.format("%Y-%m-%d")));
            }
        }
        Kind::Event | Kind::Episode => {
            s.push_str(&format!(" ({})", m.valid_from.unwrap_or(m.created_at).format("%Y-%m-%d")));
        }
        _ => {}
    }
    // A protocol says how to behave itself; other avoid-surface rows (sensitive facts) need it said.
    if m.surface == Surface::Avoid && m.kind != Kind::Protocol {
        s.push_str(" — do not raise unless the user does");
    }
    s
}

/// Active memories, pinned first, then oldest first (stable across runs).
fn ordered(memories: &[Memory], keep: impl Fn(&Memory) -> bool) -> Vec<&Memory> {
    let mut v: Vec<&Memory> = memories.iter().filter(|m| m.status.kind() == StatusKind::Active && keep(m)).collect();
    v.sort_by(|a, b| b.pinned.cmp(&a.pinned).then(a.created_at.cmp(&b.created_at)).then(a.id.cmp(&b.id)));
    v
}

/// MEMORY.md for `subject` (e.g. "user dana"): active memories grouped by kind, pinned first.
/// Kinds without a heading (ephemeral moods, tenant policies, memos, summaries) are not memory
/// of the user and are left out unless pinned.
pub fn memory_md(subject: &str, memories: &[Memory], at: DateTime<Utc>) -> String {
    let mut out = format!("# Memory: {subject}\n\n_Exported {} by mnemo._\n", at.format("%Y-%m-%d %H:%M UTC"));
    let pinned = ordered(memories, |m| m.pinned);
    if !pinned.is_empty() {
        out.push_str("\n## Always known\n\n");
        for m in &pinned {
            out.push_str(&line(m));
            out.push('\n');
        }
    }
    let mut any = !pinned.is_empty();
    for heading in MemoryMdHeading::ALL {
        let rows = ordered(memories, |m| !m.pinned && m.kind.spec().memory_md == Some(heading));
        if rows.is_empty() {
            continue;
        }
        any = true;
        out.push_str(&format!("\n## {}\n\n", heading.title()));
        for m in rows {
            out.push_str(&line(m));
            out.push('\n');
        }
    }
    if !any {
        out.push_str("\nNothing is remembered yet.\n");
    }
    out
}

/// CONVENTIONS.md for `agent`: active protocols, knowledge and facts owned by an agent layer
/// (tenant-wide or per user of that agent), the agent's own conventions.
pub fn conventions(agent: &str, memories: &[Memory], at: DateTime<Utc>) -> String {
    let agent_layer = |m: &Memory| matches!(m.owner.layer(), Layer::TenantAgent | Layer::UserAgent);
    let mut out = format!("# Conventions: agent {agent}\n\n_Exported {} by mnemo._\n", at.format("%Y-%m-%d %H:%M UTC"));
    let mut any = false;
    for (title, kinds) in [
        ("Rules", &[Kind::Protocol][..]),
        ("Knowledge", &[Kind::Knowledge, Kind::Fact][..]),
        ("Preferences", &[Kind::Preference][..]),
    ] {
        let rows = ordered(memories, |m| agent_layer(m) && kinds.contains(&m.kind));
        if rows.is_empty() {
            continue;
        }
        any = true;
        out.push_str(&format!("\n## {title}\n\n"));
        for m in rows {
            out.push_str(&line(m));
            out.push('\n');
        }
    }
    if !any {
        out.push_str("\nNo agent-scoped knowledge yet.\n");
    }
    out
}

/// One file of the `skills` export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// Its file name: the rule's words, lower-cased and joined by dashes, then the end of the
    /// skill's id so two skills never share a name (`when-using-edit-file-...-4kq2mz.md`).
    pub name: String,
    /// Its Markdown.
    pub text: String,
}

/// The approved (active) skills of `agent`, one file each, oldest first: a front matter with
/// `name` and `description` (the rule), then the rule, the tool and outcome it was learned from,
/// and when it was approved.
pub fn skills(agent: &str, memories: &[Memory]) -> Vec<SkillFile> {
    ordered(memories, |m| m.kind == Kind::Skill)
        .into_iter()
        .map(|m| {
            let id = m.id.to_string();
            let words: Vec<String> = crate::text::words(&m.content).take(10).collect();
            let slug = format!("{}-{}", words.join("-"), &id[id.len() - 6..]);
            let rule = m.content.trim();
            let mut text = format!(
                "---\nname: {slug}\ndescription: {}\n---\n\n# {rule}\n\n- Agent: {agent}\n",
                serde_json::to_string(rule).expect("a string serialises")
            );
            if let Some((outcome, tool)) = m.key.as_deref().and_then(|k| k.split(':').next().zip(k.split(':').nth(1))) {
                text.push_str(&format!("- Learned from: `{tool}`, outcome {outcome}\n"));
            }
            text.push_str(&format!("- Approved: {}\n", m.updated_at.format("%Y-%m-%d")));
            SkillFile { name: format!("{slug}.md"), text }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kind::Status;
    use crate::scope::Scope;

    fn at() -> DateTime<Utc> {
        "2026-03-10T12:00:00Z".parse().unwrap()
    }

    fn mem(owner: &Scope, kind: Kind, content: &str, minutes: i64) -> Memory {
        Memory::new(owner.clone(), kind, content, at() + chrono::Duration::minutes(minutes))
    }

    #[test]
    fn memory_md_groups_active_memories_pinned_first_and_skips_the_rest() {
        let dana = Scope::parse("acme", None, Some("dana"), None).unwrap();
        let mut pinned = mem(&dana, Kind::Fact, "User is allergic to penicillin", 5);
        pinned.pinned = true;
        let mut boundary = mem(&dana, Kind::Protocol, "Never mention the user's ex", 1);
        boundary.surface = Surface::Avoid;
        let mut old = mem(&dana, Kind::Profile, "User lives in Lisbon", 0);
        old.status = Status::Archived;
        let mut loop_ = mem(&dana, Kind::OpenLoop, "User will call the landlord", 2);
        loop_.due_at = Some("2026-03-14T00:00:00Z".parse().unwrap());
        let rows = vec![
            mem(&dana, Kind::Profile, "User's name is Dana", 0),
            pinned,
            boundary,
            old,
            loop_,
            mem(&dana, Kind::Ephemeral, "User is tired today", 3),
        ];
        let md = memory_md("user dana", &rows, at());
        assert_eq!(
            md,
            "# Memory: user dana\n\n_Exported 2026-03-10 12:00 UTC by mnemo._\n\n\
             ## Always known\n\n- User is allergic to penicillin\n\n\
             ## About the user\n\n- User's name is Dana\n\n\
             ## Boundaries and protocols\n\n- Never mention the user's ex\n\n\
             ## Open loops\n\n- User will call the landlord (due 2026-03-14)\n"
        );
        assert_eq!(memory_md("user dana", &rows, at()), md, "deterministic");
        assert!(memory_md("user eve", &[], at()).ends_with("Nothing is remembered yet.\n"));
    }

    #[test]
    fn conventions_keep_agent_scoped_knowledge_only() {
        let agent = Scope::parse("acme", Some("coder"), None, None).unwrap();
        let user = Scope::parse("acme", None, Some("dana"), None).unwrap();
        let rows = vec![
            mem(&agent, Kind::Protocol, "Run cargo fmt before every commit", 0),
            mem(&agent, Kind::Knowledge, "The build uses nextest", 1),
            mem(&user, Kind::Fact, "User's stack is Rust", 2),
        ];
        let md = conventions("coder", &rows, at());
        assert!(md.contains("## Rules\n\n- Run cargo fmt before every commit\n"), "{md}");
        assert!(md.contains("## Knowledge\n\n- The build uses nextest\n"), "{md}");
        assert!(!md.contains("stack is Rust"), "{md}");
    }

    #[test]
    fn skills_are_one_file_each_named_by_their_rule() {
        let agent = Scope::parse("acme", Some("coder"), None, None).unwrap();
        let mut skill =
            mem(&agent, Kind::Skill, "When using edit_file on swiftui view: check accessibility modifiers.", 0);
        skill.key = Some("failure:edit_file:swiftui view".into());
        let mut candidate = mem(&agent, Kind::Skill, "When using run_tests on cargo: it worked.", 1);
        candidate.status = Status::Provisional;
        let files = skills("coder", &[skill.clone(), candidate, mem(&agent, Kind::Protocol, "Use tabs", 2)]);
        assert_eq!(files.len(), 1, "only approved skills: {files:?}");
        let id = skill.id.to_string();
        assert_eq!(
            files[0].name,
            format!("when-using-edit-file-on-swiftui-view-check-accessibility-modifiers-{}.md", &id[id.len() - 6..])
        );
        assert!(
            files[0].text.starts_with(&format!(
                "---\nname: {}\ndescription: \"When using",
                files[0].name.trim_end_matches(".md")
            )),
            "{}",
            files[0].text
        );
        assert!(files[0].text.contains("- Learned from: `edit_file`, outcome failure\n"), "{}", files[0].text);
    }

    #[test]
    fn formats_parse_and_bad_ones_say_what_to_use() {
        assert_eq!("memory-md".parse::<ExportFormat>().unwrap(), ExportFormat::MemoryMd);
        assert_eq!("json".parse::<ExportFormat>().unwrap().media_type(), "application/json");
        let err = "yaml".parse::<ExportFormat>().unwrap_err().to_string();
        assert!(err.contains("json, memory-md, conventions or skills"), "{err}");
    }

    proptest::proptest! {
        #[test]
        fn every_kind_is_exported_under_its_rows_heading_or_left_out(kind in proptest::sample::select(Kind::ALL)) {
            let dana = Scope::parse("acme", None, Some("dana"), None).unwrap();
            let md = memory_md("user dana", &[mem(&dana, kind, "User's distinctive memory line", 0)], at());
            let listed = md.contains("- User's distinctive memory line");
            match kind.spec().memory_md {
                Some(h) => proptest::prop_assert!(listed && md.contains(&format!("## {}\n\n- User's", h.title())), "{md}"),
                None => proptest::prop_assert!(!listed, "{md}"),
            }
        }
    }
}
