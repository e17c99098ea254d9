//! Behavioural learning and ownership layers, on either backend: observations recurring across
//! sessions become one skill candidate (corrections first), approved skills open every session
//! of the agent, bad observations write nothing; and the tabs-vs-spaces example of docs/agents.md, where
//! the most specific of the four layers wins.

use chrono::Duration;
use mnemo::core::{Draft, Kind, Outcome, SectionName, StatusKind, Verdict};
use mnemo::store::ListFilter;
use mnemo::{Memory, Scope};

use crate::common::{Fixture, configured, hashed};

fn session(user: &str, chat: &str) -> Scope {
    Scope::parse("acme", Some("coder"), Some(user), Some(chat)).unwrap()
}

fn agent() -> Scope {
    Scope::parse("acme", Some("coder"), None, None).unwrap()
}

/// The same pattern in three sessions of two users: editing a SwiftUI view failed on
/// accessibility.
fn swift_pattern(f: &Fixture) {
    for (user, chat, view) in
        [("dana", "s1", "ProfileView"), ("dana", "s2", "SettingsView"), ("sam", "s3", "LoginView")]
    {
        let args = format!("SwiftUI view {view}.swift");
        let note = "Check accessibility modifiers (labels, traits) on every SwiftUI view.";
        f.memory.observe(&session(user, chat), "edit_file", &args, Outcome::Failure, Some(note)).unwrap();
        f.clock.set(f.memory.now() + Duration::hours(1));
    }
}

fn skills(memory: &Memory, status: StatusKind) -> Vec<mnemo::core::Memory> {
    let filter = ListFilter { kinds: vec![Kind::Skill], statuses: vec![status], ..ListFilter::default() };
    memory.list(&agent(), &filter).unwrap()
}

#[test]
fn three_sessions_of_one_pattern_yield_one_candidate_once() {
    let f = hashed();
    swift_pattern(&f);
    let report = f.memory.maintain().unwrap();
    assert_eq!(report.consolidation.skills.len(), 1, "{:?}", report.consolidation.skills);
    let s = &report.consolidation.skills[0];
    assert_eq!((s.sessions, s.observations, s.outcome), (3, 3, Outcome::Failure));
    assert!(s.rule.starts_with("When using edit_file on swiftui view swift: Check accessibility"), "{}", s.rule);
    assert_eq!(report.summary().get("skill candidates"), Some(&1));
    // A candidate waits for a person: provisional at the agent layer, in /v1/candidates.
    let candidates = f.memory.list_candidates(&session("dana", "s9")).unwrap();
    assert_eq!(candidates.len(), 1);
    assert_eq!((candidates[0].kind, candidates[0].owner.clone()), (Kind::Skill, agent()));
    // Idempotent: a rerun, and a fourth session of the same pattern, propose nothing new.
    assert!(f.memory.maintain().unwrap().consolidation.skills.is_empty());
    let args = "SwiftUI view CartView.swift";
    f.memory.observe(&session("eve", "s4"), "edit_file", args, Outcome::Failure, None).unwrap();
    assert!(f.memory.maintain().unwrap().consolidation.skills.is_empty());
    assert_eq!(skills(&f.memory, StatusKind::Provisional).len(), 1);
}

#[test]
fn two_sessions_are_not_a_pattern_but_two_corrections_are_and_rank_first() {
    let f = hashed();
    for chat in ["s1", "s2"] {
        let args = "SwiftUI view ProfileView.swift";
        f.memory.observe(&session("dana", chat), "edit_file", args, Outcome::Failure, Some("Check labels")).unwrap();
    }
    assert!(f.memory.maintain().unwrap().consolidation.skills.is_empty(), "two plain sessions");
    swift_pattern(&f);
    for (chat, file) in [("s5", "main.go"), ("s6", "server.go")] {
        let args = format!("Go handler {file} indentation");
        let fix = "Indent Go code with tabs, as gofmt does";
        f.memory.observe(&session("sam", chat), "write_file", &args, Outcome::Corrected, Some(fix)).unwrap();
    }
    let report = f.memory.maintain().unwrap();
    let rules: Vec<(&str, usize)> = report.consolidation.skills.iter().map(|s| (s.rule.as_str(), s.sessions)).collect();
    assert_eq!(rules.len(), 2, "{rules:?}");
    assert_eq!(report.consolidation.skills[0].outcome, Outcome::Corrected, "{rules:?}");
    assert!(rules[0].0.contains("Indent Go code with tabs") && rules[0].1 == 2, "{rules:?}");
    // Five observations, in three sessions (s1 and s2 of dana seen twice).
    assert!(rules[1].0.contains("accessibility") && rules[1].1 == 3, "{rules:?}");
    assert_eq!(report.consolidation.skills[1].observations, 5);
    // Approved, both open a session; the correction's rule comes first.
    for s in &report.consolidation.skills {
        f.memory.approve(&agent(), s.id).unwrap();
    }
    let ctx = f.memory.context(&session("eve", "new"), "Let's fix the login screen", None).unwrap();
    let section = ctx.block.section(SectionName::Skill).expect("a SKILLS section");
    let texts: Vec<&str> = section.items.iter().map(|i| i.text.as_str()).collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].contains("tabs") && texts[1].contains("accessibility"), "{texts:?}");
}

#[test]
fn an_approved_skill_opens_every_session_of_its_agent_only() {
    let f = hashed();
    swift_pattern(&f);
    let report = f.memory.maintain().unwrap();
    let id = report.consolidation.skills[0].id;
    // Not before it is approved.
    let before = f.memory.context(&session("dana", "new1"), "Start on the settings screen", None).unwrap();
    assert!(!before.block.text.contains("accessibility modifiers"), "{}", before.block.text);
    let approved = f.memory.approve(&agent(), id).unwrap();
    assert_eq!(approved.status.kind(), StatusKind::Active);
    // A new session of any user of the agent starts with it.
    for user in ["dana", "zoe"] {
        let ctx = f.memory.context(&session(user, "new2"), "Start on the settings screen", None).unwrap();
        let skill = ctx.block.section(SectionName::Skill).expect("a SKILLS section");
        assert!(skill.items[0].text.contains("Check accessibility modifiers"), "{}", ctx.block.text);
    }
    // Not once the session has begun (it was placed at its start), not for another agent or tenant.
    f.memory.ingest(&session("dana", "new2"), vec![mnemo::core::NewMessage::user("Hi there", f.memory.now())]).unwrap();
    let later = f.memory.context(&session("dana", "new2"), "Open the settings screen file", None).unwrap();
    assert!(later.block.section(SectionName::Skill).is_none(), "{}", later.block.text);
    for other in [
        Scope::parse("acme", Some("writer"), Some("dana"), Some("new3")).unwrap(),
        Scope::parse("globex", Some("coder"), Some("dana"), Some("new3")).unwrap(),
    ] {
        let ctx = f.memory.context(&other, "Start on the settings screen", None).unwrap();
        assert!(!ctx.block.text.contains("accessibility"), "{other}: {}", ctx.block.text);
    }
    // Exported one file per approved skill.
    let files = f.memory.export_skills(&session("dana", "x")).unwrap();
    assert_eq!(files.len(), 1);
    assert!(files[0].name.starts_with("when-using-edit-file-on-swiftui-view-swift-") && files[0].name.ends_with(".md"));
    assert!(
        files[0].text.contains("# When using edit_file on swiftui view swift: Check accessibility"),
        "{}",
        files[0].text
    );
    assert!(f.memory.export_skills(&Scope::parse("acme", Some("writer"), None, None).unwrap()).unwrap().is_empty());
}

#[test]
fn a_rejected_candidate_is_not_proposed_again() {
    let f = hashed();
    swift_pattern(&f);
    let id = f.memory.maintain().unwrap().consolidation.skills[0].id;
    f.memory.reject(&agent(), id).unwrap();
    swift_pattern(&f); // three more sessions of the same pattern
    assert!(f.memory.maintain().unwrap().consolidation.skills.is_empty());
    assert!(skills(&f.memory, StatusKind::Provisional).is_empty());
    assert_eq!(skills(&f.memory, StatusKind::Archived).len(), 1);
    let ctx = f.memory.context(&session("dana", "new"), "Start on the settings screen", None).unwrap();
    assert!(ctx.block.section(SectionName::Skill).is_none(), "{}", ctx.block.text);
}

#[test]
fn bad_observations_are_refused_and_write_nothing() {
    let f = configured(Some(std::sync::Arc::new(mnemo::models::HashEmbedder::new(384))), |c| {
        c.limits.max_observation_chars = 100;
    });
    let s = session("dana", "s1");
    let long = "x".repeat(101);
    let refused = [
        f.memory.observe(&s, "edit_file", &long, Outcome::Failure, None),
        f.memory.observe(&s, "edit_file", "view", Outcome::Failure, Some(&long)),
        f.memory.observe(&s, "", "view", Outcome::Failure, None),
        f.memory.observe(&s, &"t".repeat(129), "view", Outcome::Failure, None),
        f.memory.observe(&s, "edit_file", " ", Outcome::Failure, None),
        f.memory.observe(&s.without_chat(), "edit_file", "view", Outcome::Failure, None),
    ];
    for r in refused {
        let e = r.unwrap_err();
        assert!(matches!(e, mnemo::Error::Invalid(_)), "{e}");
    }
    // A paused user's actions are not learned from.
    f.memory.pause(&s).unwrap();
    let e = f.memory.observe(&s, "edit_file", "view", Outcome::Failure, None).unwrap_err();
    assert!(matches!(e, mnemo::Error::Rejected { .. }), "{e}");
    assert!(f.memory.observations(&s.without_chat(), 500, 0).unwrap().is_empty());
    // Redacted before storage; erased with the user.
    f.memory.resume(&s).unwrap();
    let stored = f
        .memory
        .observe(&s, "send_mail", "mail to dana@example.com", Outcome::Success, Some("key sk-abcdefghijklmnopqrstuvwx"))
        .unwrap();
    assert!(!stored.observation.args_summary.contains("dana@example.com"), "{:?}", stored.observation);
    assert!(!stored.observation.text.as_deref().unwrap_or_default().contains("sk-abc"), "{:?}", stored.observation);
    assert_eq!(f.memory.observations(&s.without_chat(), 500, 0).unwrap().len(), 1);
    f.memory.erase_user(&s).unwrap();
    assert!(f.memory.observations(&s.without_chat(), 500, 0).unwrap().is_empty());
}

/// The example of docs/agents.md ("For coding agents", ownership layers): one key, `indentation`, set at
/// each of the four layers, and each request gets the value of the most specific layer it sees.
#[test]
fn the_most_specific_layer_wins_tabs_versus_spaces() {
    let f = hashed();
    let layer = |agent: Option<&str>, user: Option<&str>| Scope::parse("acme", agent, user, None).unwrap();
    let set = |owner: Scope, content: &str, value: &str| {
        let mut d = Draft::authored(Kind::Preference, content);
        d.key = Some("indentation".into());
        d.value = Some(value.into());
        match f.memory.add(&owner, d).unwrap() {
            Verdict::Written { id, status: StatusKind::Provisional } => {
                f.memory.approve(&owner, id).unwrap();
            }
            Verdict::Written { status: StatusKind::Active, .. } => {}
            other => panic!("{other:?}"),
        }
    };
    set(layer(None, None), "Indent with 4 spaces (company style guide)", "4 spaces"); // org
    set(layer(Some("go-service"), None), "Indent Go with tabs, as gofmt does", "tabs"); // project-org
    set(layer(None, Some("dana")), "Dana prefers 2-space indentation", "2 spaces"); // user
    set(layer(Some("go-service"), Some("dana")), "Dana uses tabs shown 8 wide in go-service", "tabs, 8 wide"); // user-project
    let winner = |agent: &str, user: &str| {
        let scope = Scope::parse("acme", Some(agent), Some(user), Some("c1")).unwrap();
        let ctx = f.memory.context(&scope, "Write the HTTP handler", None).unwrap();
        let prefs = ctx.block.section(SectionName::Preference).expect("a PREFERENCES section");
        let lines: Vec<String> = prefs.items.iter().map(|i| i.text.clone()).collect();
        assert_eq!(lines.len(), 1, "one value per key: {lines:?}");
        lines[0].clone()
    };
    assert_eq!(winner("web", "sam"), "Indent with 4 spaces (company style guide)"); // only org applies
    assert_eq!(winner("go-service", "sam"), "Indent Go with tabs, as gofmt does"); // project-org over org
    assert_eq!(winner("web", "dana"), "Dana prefers 2-space indentation"); // user over org
    assert_eq!(winner("go-service", "dana"), "Dana uses tabs shown 8 wide in go-service"); // user-project over all
}
