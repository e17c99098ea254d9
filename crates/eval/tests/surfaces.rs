//! Honest surfaces over a real conversation: a memory that episodic capture kept (a first-person
//! statement restated in the third person) is context the model may use, never a fact it is
//! told not to contradict, in storage and in every block.
//!
//! Runs over LoCoMo's first conversation when the dataset is at hand (`MNEMO_LOCOMO_DATA`, or
//! `locomo10.json` in the `shared/data` folder beside the repository, where CI keeps it), and
//! always over the tiny LoCoMo-format fixture.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::Duration;
use mnemo::store::{ListFilter, SqliteStore};
use mnemo::{Config, ManualClock, Memory};
use mnemo_core::assemble::SectionName;
use mnemo_core::extract::CAPTURE_RULE;
use mnemo_core::{NewMessage, Role, Scope, StatusKind, Surface};
use mnemo_eval::locomo::{Conversation, Dataset, TurnRendering};

fn datasets() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let real = std::env::var_os("MNEMO_LOCOMO_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/data/locomo10.json"));
    let mut out = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/locomo-tiny.json")];
    match real.is_file() {
        true => out.push(real),
        false => eprintln!("{} not found: checking the fixture only", real.display()),
    }
    out
}

/// Ingests `conv` as the benchmark does (every turn the user's, named), with the hashing
/// embedder: surfaces come from extraction, not from the model.
fn ingest(conv: &Conversation, dir: &Path) -> Memory {
    let mut config = Config::default();
    config.embedder.kind = mnemo::models::EmbedderKind::Hash;
    config.data_dir = dir.to_path_buf();
    let embedder = mnemo::models::open_embedder(&config.embedder).unwrap();
    let store = SqliteStore::open(config.db_path()).unwrap();
    let clock = Arc::new(ManualClock::new(conv.sessions[0].at));
    let memory = Memory::from_parts(config, Arc::new(store), Some(embedder), clock.clone());
    for s in &conv.sessions {
        clock.set(s.at);
        let scope = Scope::parse("t", None, Some(&conv.sample_id), Some(&format!("s{}", s.number))).unwrap();
        let batch = s
            .turns
            .iter()
            .enumerate()
            .map(|(i, t)| NewMessage {
                id: Some(t.dia_id.clone()),
                role: Role::User,
                content: t.render(TurnRendering::default()),
                at: Some(s.at + Duration::seconds(30 * i as i64)),
            })
            .collect();
        memory.ingest(&scope, batch).unwrap();
    }
    clock.set(conv.sessions.iter().map(|s| s.at).max().unwrap() + Duration::hours(1));
    memory
}

/// `conv` ingested into `dir`, and the active memories of its user.
fn active_memories(conv: &Conversation, dir: &Path) -> (Memory, Vec<mnemo_core::Memory>) {
    let memory = ingest(conv, dir);
    let user = Scope::parse("t", None, Some(&conv.sample_id), None).unwrap();
    let active = ListFilter { statuses: vec![StatusKind::Active], ..ListFilter::default() };
    let rows = memory.list(&user, &active).unwrap();
    (memory, rows)
}

#[test]
fn no_captured_memory_is_a_fact_not_to_contradict() {
    for path in datasets() {
        let data = Dataset::load(&path).unwrap();
        let conv = &data.conversations[0];
        let dir = tempfile::tempdir().unwrap();
        let (memory, rows) = active_memories(conv, dir.path());
        let captures: Vec<_> = rows.iter().filter(|m| m.provenance.rule.as_deref() == Some(CAPTURE_RULE)).collect();
        assert!(!captures.is_empty(), "{}: capture kept nothing, so this test checks nothing", path.display());
        let wrong: Vec<&str> =
            captures.iter().filter(|m| m.surface == Surface::FactCheck).map(|m| m.content.as_str()).collect();
        assert!(wrong.is_empty(), "{}: captures stored as do-not-contradict: {wrong:?}", path.display());
        // And no block puts one under DO NOT CONTRADICT.
        let captured: std::collections::HashSet<String> = captures.iter().map(|m| m.id.to_string()).collect();
        for q in conv.questions.iter().take(40) {
            let chat = Scope::parse("t", None, Some(&conv.sample_id), Some(&format!("q{}", q.index))).unwrap();
            let ctx = memory.context(&chat, &q.text, Some(1000)).unwrap();
            if let Some(s) = ctx.block.section(SectionName::FactCheck) {
                let bad: Vec<&str> =
                    s.items.iter().filter(|i| captured.contains(&i.id)).map(|i| i.text.as_str()).collect();
                assert!(
                    bad.is_empty(),
                    "{}: {:?} puts captures under DO NOT CONTRADICT: {bad:?}",
                    path.display(),
                    q.text
                );
            }
        }
    }
}

/// The right person: every turn of the default rendering is labelled with its speaker, so no
/// memory may be about "User" (the app's user never spoke here); each names the speaker whose
/// turn it came from, and none is a fact not to contradict.
#[test]
fn a_labelled_turn_makes_memories_about_its_speaker_never_the_user() {
    for path in datasets() {
        let data = Dataset::load(&path).unwrap();
        let conv = &data.conversations[0];
        let dir = tempfile::tempdir().unwrap();
        let (_memory, rows) = active_memories(conv, dir.path());
        assert!(!rows.is_empty(), "{}: nothing was kept, so this test checks nothing", path.display());
        let speaker_of =
            |id: &str| conv.sessions.iter().flat_map(|s| &s.turns).find(|t| t.dia_id == id).map(|t| t.speaker.clone());
        for m in &rows {
            let words: Vec<&str> = m.content.split(|c: char| !c.is_alphanumeric()).collect();
            assert!(!words.contains(&"User"), "{}: {:?} is about the user", path.display(), m.content);
            let speakers: Vec<String> = m.provenance.sources.iter().filter_map(|s| speaker_of(s.as_str())).collect();
            assert!(
                speakers.iter().any(|s| m.content.contains(s.as_str())),
                "{}: {:?} does not name its speaker ({speakers:?})",
                path.display(),
                m.content
            );
            assert_ne!(m.surface, Surface::FactCheck, "{}: {:?}", path.display(), m.content);
        }
    }
}
