//! The core loop end to end on the embedded store, with the fast hashing embedder.

use chrono::Duration;
use mnemo::core::{Draft, Kind, NewMessage, RecallMode, SectionName, StatusKind, Surface, Verdict};
use mnemo::store::ListFilter;

use crate::common::{chat, hashed, t0, with_embedder};

#[test]
fn what_one_session_teaches_the_next_session_knows() {
    let f = hashed();
    let s1 = chat("dana", "c1");
    let report = f.say(
        &s1,
        &["Hi! My name is Dana.", "I'm a backend engineer at a fintech startup.", "I have a dog named Biscuit."],
    );
    assert_eq!(report.appended, 3);
    assert!(report.ops.iter().all(|o| matches!(o.verdict, Verdict::Written { .. })), "{:#?}", report.ops);

    f.clock.set(t0() + Duration::days(7));
    let s2 = chat("dana", "c2");
    let ctx = f.memory.context(&s2, "What should I name my dog's birthday party?", Some(500)).unwrap();
    let text = &ctx.block.text;
    assert!(text.contains("Biscuit"), "{text}");
    assert!(ctx.block.tokens <= 500);
    let trace = f.memory.trace(&s2, &ctx.turn_id).unwrap().unwrap();
    assert!(!trace.surfaced.is_empty());
    assert_eq!(trace.tokens, Some(ctx.block.tokens));

    let recall = f.memory.recall(&s2, "what happens at the startup", Some(3)).unwrap();
    assert_eq!(recall.mode, RecallMode::Hybrid);
    assert!(recall.items[0].memory.content.contains("backend engineer"), "{:#?}", recall.items);
    let parts = recall.items[0].score.unwrap();
    assert!(parts.relevance > 0.0 && parts.total > 0.0 && parts.strength > 0.0);
}

#[test]
fn replaying_messages_changes_nothing() {
    let f = hashed();
    let s = chat("dana", "c1");
    let msgs = vec![
        NewMessage::user("My name is Dana.", t0()).with_id("m1"),
        NewMessage::user("I live in Lisbon.", t0()).with_id("m2"),
    ];
    let first = f.memory.ingest(&s, msgs.clone()).unwrap();
    let second = f.memory.ingest(&s, msgs).unwrap();
    assert_eq!((first.appended, second.appended, second.duplicates), (2, 0, 2));
    assert!(second.ops.is_empty());
    assert_eq!(f.active_contents(&s).len(), 2);
}

#[test]
fn saying_it_again_reinforces_instead_of_duplicating() {
    let f = hashed();
    let s = chat("dana", "c1");
    f.say(&s, &["I live in Lisbon."]);
    let again = f.say(&chat("dana", "c2"), &["i live in lisbon!"]);
    assert!(matches!(again.ops[0].verdict, Verdict::Deduplicated { .. }), "{:?}", again.ops[0].verdict);
    let all = f.memory.list(&s, &ListFilter::default()).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].reinforcements, 1);
    assert_eq!(all[0].distinct_sessions, 2);
}

#[test]
fn corrections_supersede_with_history_and_links() {
    let f = hashed();
    let s = chat("dana", "c1");
    f.say(&s, &["I'm a backend engineer at a fintech startup."]);
    let r = f.say(&chat("dana", "c2"), &["Actually I work in product design now, not engineering."]);
    let Verdict::Superseded { id, old } = r.ops[0].verdict else { panic!("{:?}", r.ops[0].verdict) };
    assert_eq!(f.active_contents(&s), vec!["User works in product design"]);
    let detail = f.memory.show(&s, old).unwrap();
    assert_eq!(detail.memory.status.superseded_by(), Some(id));
    assert_eq!(detail.history.len(), 2);
    assert_eq!(detail.links.len(), 1);
    assert_eq!(detail.sources[0].content, "I'm a backend engineer at a fintech startup.");
    let ctx = f.memory.context(&chat("dana", "c3"), "How is work going?", None).unwrap();
    assert!(
        ctx.block.text.contains("product design") && !ctx.block.text.contains("backend engineer"),
        "{}",
        ctx.block.text
    );
}

#[test]
fn a_correction_after_a_quote_that_ends_its_sentence_adds_no_second_full_stop() {
    let f = hashed();
    let s = chat("bikash", "c1");
    f.say(&s, &["My younger brother Suman, his marriage is in Pokhara on 20 November. I am going Nepal for one month for this."]);
    let r = f.say(&s, &["Sorry I tell wrong date. Marriage is 22 November, my mother tell me on phone now."]);
    let Verdict::Superseded { id, .. } = r.ops[0].verdict else { panic!("{:#?}", r.ops) };
    let amended = f.memory.show(&s, id).unwrap().memory.content;
    assert!(
        amended.contains("20 November") && amended.contains("User corrected: \"Marriage is 22 November"),
        "{amended}"
    );
    assert!(!amended.contains(".\"."), "{amended}");
}

#[test]
fn a_corrected_detail_keeps_what_it_belongs_to() {
    let f = hashed();
    let s = chat("sami", "c1");
    f.say(&s, &["me n the boys entered the uni tourney its tues at 7 in the esports room"]);
    let r = f.say(&s, &["wait actually its not tues its wed mb our captain moved it"]);
    let Verdict::Superseded { id, old } = r.ops[0].verdict else { panic!("{:#?}", r.ops) };
    let amended = f.memory.show(&s, id).unwrap();
    assert_eq!(
        amended.memory.content,
        "On 2026-03-02 User said: \"Me n the boys entered the uni tourney its tues at 7 in the esports room\". \
         On 2026-03-02 User corrected: \"its not tues its wed mb our captain moved it\""
    );
    assert_eq!(amended.memory.provenance.sources.len(), 2, "both turns are cited");
    assert_eq!(f.memory.show(&s, old).unwrap().memory.status.superseded_by(), Some(id));
    // Read again, the amendment is said once.
    let msgs = vec![
        NewMessage::user("we play the derby on tues, kickoff 8", t0()).with_id("d1"),
        NewMessage::user("training is tues and thurs at the rec", t0() + Duration::minutes(1)).with_id("d2"),
        NewMessage::user("oops not tues, the derby is sat", t0() + Duration::minutes(2)).with_id("d3"),
    ];
    let team = chat("kai", "c1");
    f.memory.ingest(&team, msgs.clone()).unwrap();
    let before = f.memory.list(&team, &ListFilter::default()).unwrap();
    // Of the two memories that say "tues", the one the correction speaks of carries it.
    let amended: Vec<&str> = before
        .iter()
        .filter(|m| m.status.kind() == StatusKind::Active && m.content.contains("corrected"))
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(amended.len(), 1, "{before:#?}");
    assert!(amended[0].contains("derby on tues"), "{amended:?}");
    f.memory.reextract(&team, msgs).unwrap();
    assert_eq!(f.memory.list(&team, &ListFilter::default()).unwrap(), before);
    // A correction with nothing it could belong to is kept as the user's dated words.
    let lone = chat("noor", "c1");
    let msgs = vec![NewMessage::user("oops, not Thursday, Friday!", t0()).with_id("n1")];
    f.memory.ingest(&lone, msgs.clone()).unwrap();
    assert_eq!(f.active_contents(&lone), vec!["On 2026-03-02 User corrected: \"not Thursday, Friday!\""]);
    // Read again, the same words are a replay.
    let before = f.memory.list(&lone, &ListFilter::default()).unwrap();
    f.memory.reextract(&lone, msgs).unwrap();
    assert_eq!(f.memory.list(&lone, &ListFilter::default()).unwrap(), before);
}

#[test]
fn keyed_preferences_switch_and_boundaries_stay_avoid() {
    let f = hashed();
    let s = chat("dana", "c1");
    f.say(&s, &["Please keep your answers short.", "Never mention my ex-husband."]);
    f.say(&s, &["I prefer detailed answers."]);
    let ctx = f.memory.context(&chat("dana", "c2"), "tell me about rome", None).unwrap();
    let pref = ctx.block.section(SectionName::Preference).unwrap();
    assert_eq!(pref.items.len(), 1);
    assert!(pref.items[0].text.contains("detailed"), "{:?}", pref.items);
    assert!(pref.cacheable);
    let avoid = ctx.block.section(SectionName::Avoid).unwrap();
    assert!(avoid.items[0].text.contains("their ex-husband"), "{:?}", avoid.items);
    assert!(
        ctx.block.section(SectionName::Speak).is_none_or(|s| s.items.iter().all(|i| !i.text.contains("ex-husband")))
    );
}

#[test]
fn scopes_never_leak() {
    let f = hashed();
    f.say(&chat("dana", "c1"), &["My dog is called Biscuit."]);
    for other in [chat("eve", "c1"), mnemo::Scope::parse("evil", None, Some("dana"), Some("c1")).unwrap()] {
        let r = f.memory.recall(&other, "dog Biscuit", Some(10)).unwrap();
        assert!(r.items.is_empty() && r.exact.is_empty(), "{other}: {:?}", r.items);
        let ctx = f.memory.context(&other, "my dog Biscuit", None).unwrap();
        assert!(!ctx.block.text.contains("Biscuit"), "{other}");
    }
}

#[test]
fn bad_input_names_what_and_where_and_writes_nothing() {
    let f = hashed();
    let s = chat("dana", "c1");
    let err = f
        .memory
        .ingest(&s, vec![NewMessage::user("My name is Dana.", t0()), NewMessage::user("", t0()).with_id("bad")])
        .unwrap_err()
        .to_string();
    assert!(err.contains("message 1") && err.contains("bad") && err.contains("empty"), "{err}");
    let huge = "x".repeat(40_000);
    let err = f.memory.ingest(&s, vec![NewMessage::user(huge, t0())]).unwrap_err().to_string();
    assert!(err.contains("limit"), "{err}");
    let no_user = mnemo::Scope::parse("acme", None, None, Some("c1")).unwrap();
    let err = f.memory.ingest(&no_user, vec![NewMessage::user("My name is Dana.", t0())]).unwrap_err().to_string();
    assert!(err.contains("user_id"), "{err}");
    assert!(f.memory.list(&s, &ListFilter::default()).unwrap().is_empty());
    assert!(f.memory.store().recent_messages(&s, 10).unwrap().is_empty());
}

#[test]
fn pii_never_reaches_storage() {
    let f = hashed();
    let s = chat("dana", "c1");
    f.say(&s, &["My card is 4111 1111 1111 1111 and my password is hunter2."]);
    let stored = f.memory.store().recent_messages(&s, 10).unwrap();
    assert!(!stored[0].content.contains("4111") && !stored[0].content.contains("hunter2"), "{}", stored[0].content);
    assert!(f.memory.list(&s, &ListFilter::default()).unwrap().iter().all(|m| !m.content.contains("4111")));
}

#[test]
fn without_an_embedder_recall_degrades_to_lexical() {
    let f = with_embedder(None);
    let s = chat("dana", "c1");
    f.say(&s, &["I live in Lisbon."]);
    let r = f.memory.recall(&s, "Lisbon", None).unwrap();
    assert_eq!(r.mode, RecallMode::LexicalOnly);
    assert_eq!(r.items.len(), 1);
    let t = f.memory.trace(&s, &r.turn_id).unwrap().unwrap();
    assert!(t.degraded.unwrap().contains("no embedder"));
}

#[test]
fn the_over_reference_guard_holds_back_a_third_mention_in_a_row() {
    let f = hashed();
    let s = chat("dana", "c1");
    f.say(&s, &["My dog is called Biscuit."]);
    for turn in 0..2 {
        let ctx = f.memory.context(&s, "my dog Biscuit", None).unwrap();
        assert!(
            ctx.block.section(SectionName::Speak).is_some_and(|x| x.items[0].text.contains("Biscuit")),
            "turn {turn}"
        );
    }
    let third = f.memory.context(&s, "my dog Biscuit", None).unwrap();
    assert!(third.block.section(SectionName::Speak).is_none());
    assert_eq!(third.block.held_back[0].reason, mnemo::core::assemble::HoldReason::SurfacedRecently);
    // Another chat has its own history.
    let other = f.memory.context(&chat("dana", "c2"), "my dog Biscuit", None).unwrap();
    assert!(other.block.section(SectionName::Speak).is_some());
}

#[test]
fn a_failure_in_the_middle_of_an_apply_leaves_nothing_half_written() {
    let scenario = fail::FailScenario::setup();
    let f = hashed();
    let s = chat("dana", "c1");
    f.say(&s, &["I'm a backend engineer at a fintech startup."]);
    let before = f.memory.list(&s, &ListFilter::default()).unwrap();
    fail::cfg("store::apply::after_first_change", "return").unwrap();
    let err = f.memory.ingest(&s, vec![NewMessage::user("Actually I work in product design now.", f.memory.now())]);
    fail::remove("store::apply::after_first_change");
    assert!(err.unwrap_err().to_string().contains("injected"));
    let after = f.memory.list(&s, &ListFilter::default()).unwrap();
    assert_eq!(after, before, "the correction's insert must roll back with its supersession");
    assert_eq!(after[0].status.kind(), StatusKind::Active);
    scenario.teardown();
}

#[test]
fn the_cascade_ends_in_substring_matching() {
    let f = with_embedder(None);
    let s = chat("dana", "c1");
    f.say(&s, &["I live in Lisbon."]);
    // "Lisb" is no FTS token and there are no vectors: only the substring rung can find it.
    let r = f.memory.recall(&s, "Lisb", None).unwrap();
    assert_eq!(r.mode, RecallMode::Substring);
    assert!(r.items[0].memory.content.contains("Lisbon"));
}

#[test]
fn policies_in_force_reach_every_block_and_new_versions_replace_old() {
    let f = hashed();
    let s = chat("dana", "c1");
    f.memory
        .put_policy(&s, "refunds", "Refunds are possible within 30 days.", serde_json::json!({"days": 30}))
        .unwrap();
    f.clock.set(t0() + Duration::days(1));
    let v2 = f
        .memory
        .put_policy(&s, "refunds", "Refunds are possible within 14 days.", serde_json::json!({"days": 14}))
        .unwrap();
    assert_eq!(v2.version, 2);
    let ctx = f.memory.context(&s, "hello", None).unwrap();
    let policy = ctx.block.section(SectionName::Policy).unwrap();
    assert_eq!(policy.items.len(), 1);
    assert!(policy.items[0].text.contains("14 days") && policy.cacheable);
    assert!(!ctx.block.text.contains("30 days"));
    // Other tenants are not bound by it.
    let other = mnemo::Scope::parse("other", None, Some("dana"), Some("c1")).unwrap();
    assert!(f.memory.context(&other, "hello", None).unwrap().block.section(SectionName::Policy).is_none());
}

#[test]
fn maintenance_moves_stale_things_out_of_recall_and_is_idempotent() {
    use mnemo::core::{Draft, Kind};
    let f = hashed();
    let s = chat("dana", "c1");
    let mut mood = Draft::new(Kind::Ephemeral, "User feels exhausted today", 0.9, 0.8);
    mood.expires_at = None;
    f.memory.add(&s, mood).unwrap();
    f.memory.add(&s, Draft::new(Kind::Event, "User ran a half marathon in Porto", 0.9, 0.7)).unwrap();
    f.memory.add(&s, Draft::new(Kind::Profile, "User lives in Porto", 0.9, 0.8)).unwrap();
    f.clock.set(t0() + Duration::days(4));
    let r = f.memory.maintain().unwrap();
    assert_eq!(r.examined, 3);
    assert_eq!(r.transitions.len(), 1, "{:?}", r.transitions);
    assert_eq!(r.transitions[0].to, StatusKind::Stale);
    assert!(f.memory.maintain().unwrap().transitions.is_empty(), "a second run at the same time changes nothing");
    f.clock.set(t0() + Duration::days(31));
    let r = f.memory.maintain().unwrap();
    assert_eq!(r.transitions.len(), 1, "the event goes stale: {:?}", r.transitions);
    assert_eq!(f.active_contents(&s), vec!["User lives in Porto"]);
    let rec = f.memory.recall(&s, "Porto marathon exhausted", Some(5)).unwrap();
    assert!(rec.items.iter().all(|i| i.memory.content == "User lives in Porto"));
}

#[test]
fn ingest_leaves_its_verdicts_in_the_trace_and_reextract_adds_no_duplicates() {
    let f = hashed();
    let s = chat("dana", "c1");
    let msgs =
        vec![NewMessage::user("My name is Dana.", t0()).with_id("m1"), NewMessage::user("ok", t0()).with_id("m2")];
    let r = f.memory.ingest(&s, msgs.clone()).unwrap();
    let trace = f.memory.trace(&s, r.turn_id.as_deref().unwrap()).unwrap().unwrap();
    assert_eq!(trace.verdicts.len(), 1);
    assert_eq!(trace.verdicts[0].sources[0].as_str(), "m1");
    let again = f.memory.reextract(&s, msgs).unwrap();
    assert!(matches!(again.ops[0].verdict, Verdict::Deduplicated { .. }));
    assert_eq!(f.active_contents(&s).len(), 1);
}

#[test]
fn a_number_named_as_it_was_said_finds_what_it_corrects() {
    let f = hashed();
    for (i, (said, then, holds, names)) in [
        ("My rent is 1,450 a month.", "sorry, my mistake: is 1,540 not 1,450", "1,540 not 1,450", "rent is 1,450"),
        (
            "I'm on sertraline 50mg every morning.",
            "the GP upped the sertraline so its 100 now not 50",
            "100 now not 50",
            // A medicine is a typed slot: "User takes sertraline 50 mg every morning".
            "sertraline 50 mg",
        ),
        (
            "The gala dinner is Friday 22 May in the town hall.",
            "Sorry all it's the 29th not the 22nd",
            "29 May",
            "gala dinner",
        ),
        // A value changed to a number, the old one not named: the thing it belongs to finds it.
        (
            "My doctor has me on lisinopril, the blood pressure pill, 10 milligrams.",
            "Doc bumped my blood pressure pill up to 20 milligram last week",
            "up to 20 milligram",
            "lisinopril",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let s = chat(&format!("ines{i}"), "c1");
        f.say(&s, &[said]);
        let r = f.say(&s, &[then]);
        assert!(matches!(r.ops[0].verdict, Verdict::Superseded { .. }), "{then}: {:#?}", r.ops);
        let active = f.active_contents(&s);
        assert_eq!(active.len(), 1, "{active:?}");
        assert!(active[0].contains(holds) && active[0].contains(names), "{active:?}");
    }
}

#[test]
fn of_two_days_said_in_one_message_a_take_back_moves_the_one_it_names() {
    let f = hashed();
    let s = chat("sabine", "c1");
    let msgs = vec![
        NewMessage::user(
            "My mother has her 70th birthday on 14 March in Freiburg, the whole family comes. I must book the flights until Friday.",
            t0(),
        )
        .with_id("s1"),
        NewMessage::user(
            "Ah no, I mix it up. The birthday is the 14th but the party is on Saturday 21st. So I fly on the 20th.",
            t0() + Duration::minutes(1),
        )
        .with_id("s2"),
    ];
    let r = f.memory.ingest(&s, msgs).unwrap();
    let active = f.active_contents(&s);
    assert!(
        active.iter().any(|c| c.contains("70th birthday") && c.contains("Saturday 21st")),
        "{active:#?}\n{:#?}",
        r.ops
    );
    assert!(!active.iter().any(|c| c.contains("flights") && c.contains("21st")), "{active:#?}");
}

#[test]
fn a_take_back_naming_only_the_new_day_moves_what_named_a_day_just_before() {
    let f = hashed();
    let s = chat("ines", "c1");
    let msgs = vec![
        NewMessage::user("Our Tomasz has his driving test on the 4th of June in Bicester.", t0()).with_id("a1"),
        NewMessage::user("I get the new fridge delivered on Thursday.", t0() + Duration::days(6)).with_id("a2"),
        NewMessage::user(
            "My nephew Olek and his girlfriend booked the christening for the 21st",
            t0() + Duration::days(7),
        )
        .with_id("a3"),
        NewMessage::user(
            "no sorry its the 28th, I was reading the wrong line of the email",
            t0() + Duration::days(7) + Duration::minutes(4),
        )
        .with_id("a4"),
    ];
    let r = f.memory.ingest(&s, msgs.clone()).unwrap();
    let active = f.active_contents(&s);
    // The christening, said a moment before, moves to the new day; the fridge (a day before)
    // and the driving test (a week before) do not.
    assert!(active.iter().any(|c| c.contains("booked the christening for the 28th")), "{active:#?}\n{:#?}", r.ops);
    assert!(!active.iter().any(|c| c.contains("21st") || c.contains("corrected")), "{active:#?}");
    assert!(active.iter().any(|c| c.contains("4th of June")), "{active:#?}");
    assert!(active.iter().any(|c| c.contains("fridge delivered on Thursday")), "{active:#?}");
    // Read again, nothing changes.
    let before = f.memory.list(&s, &ListFilter::default()).unwrap();
    f.memory.reextract(&s, msgs).unwrap();
    assert_eq!(f.memory.list(&s, &ListFilter::default()).unwrap(), before);
    // With nothing said shortly before, the take-back is kept as the user's dated words.
    let lone = chat("piet", "c1");
    f.memory
        .ingest(&lone, vec![NewMessage::user("I have my eye test at Specsavers on the 3rd.", t0()).with_id("b1")])
        .unwrap();
    let later = NewMessage::user("nah sorry it's the 5th", t0() + Duration::days(9)).with_id("b2");
    f.memory.ingest(&lone, vec![later]).unwrap();
    let active = f.active_contents(&lone);
    assert!(active.iter().any(|c| c.contains("on the 3rd") && !c.contains("corrected")), "{active:#?}");
    assert!(active.iter().any(|c| c.contains("corrected: \"it's the 5th\"")), "{active:#?}");
}

#[test]
fn a_day_set_against_another_moves_only_the_thing_the_sentence_names() {
    let f = hashed();
    let s = chat("annelie", "c1");
    let msgs = vec![
        NewMessage::user("My Ma turns 80 in Bloemfontein, the party is Saturday 6 June in the church hall.", t0())
            .with_id("m1"),
        // No word owns a slip and nothing the party holds is named: the party stays.
        NewMessage::user("I work the 13th, not the 6th.", t0() + Duration::days(1)).with_id("m2"),
    ];
    f.memory.ingest(&s, msgs).unwrap();
    let active = f.active_contents(&s);
    assert!(active.iter().any(|c| c.contains("party is Saturday 6 June")), "{active:#?}");
    // Relayed from someone else, naming the party: it moves, and the brother stays named.
    let r = f
        .memory
        .ingest(
            &s,
            vec![NewMessage::user(
                "Jislaaik, wait. My brother Pieter says the party is the 13th, not the 6th, the hall was booked for a wedding.",
                t0() + Duration::days(2),
            )
            .with_id("m3")],
        )
        .unwrap();
    let active = f.active_contents(&s);
    assert!(active.iter().any(|c| c.contains("party is") && c.contains("13th")), "{active:#?}\n{:#?}", r.ops);
    assert!(!active.iter().any(|c| c.contains("party is Saturday 6 June") && !c.contains("13th")), "{active:#?}");
    assert!(active.iter().any(|c| c.contains("brother is named Pieter")), "{active:#?}");
    // The month the sentence names is the old day's month: the same day.
    let w = chat("sina", "c1");
    let said = [
        "My son Ioane he getting married in Apia on 11 July.",
        "Aue sorry! My daughter she tell me the wedding is Saturday 18 July not the 11th. The church was not free.",
    ];
    for (i, text) in said.iter().enumerate() {
        f.memory.ingest(&w, vec![NewMessage::user(*text, t0() + Duration::days(i as i64))]).unwrap();
    }
    let active = f.active_contents(&w);
    assert!(active.iter().any(|c| c.contains("married in Apia on Saturday 18 July")), "{active:#?}");
}

#[test]
fn a_speakers_take_back_in_a_pasted_transcript_amends_what_that_speaker_said() {
    let f = hashed();
    let s = chat("kerry", "c1");
    let msgs = vec![
        NewMessage::user("Pat: Party is Sunday 9 August at the Miners Welfare from 1pm", t0()).with_id("p1"),
        NewMessage::user("i've got my smear test on the 7th too", t0() + Duration::minutes(1)).with_id("p2"),
        NewMessage::user("Dean: I'm on call Friday 14 August", t0() + Duration::minutes(2)).with_id("p3"),
        NewMessage::user(
            "Pat: Correction, the Welfare double booked us, it's now Saturday 8 August same time",
            t0() + Duration::minutes(3),
        )
        .with_id("p4"),
    ];
    let r = f.memory.ingest(&s, msgs.clone()).unwrap();
    let active = f.active_contents(&s);
    // Pat's party moves to Pat's new day; the user's test and Dean's shift, said in between
    // and naming dates too, do not.
    assert!(
        active.iter().any(|c| c.contains("party is Saturday 8 August at the Miners Welfare")),
        "{active:#?}\n{:#?}",
        r.ops
    );
    assert!(!active.iter().any(|c| c.contains("Sunday 9 August") || c.contains("corrected")), "{active:#?}");
    assert!(active.iter().any(|c| c.contains("Dean is on call Friday 14 August")), "{active:#?}");
    assert!(active.iter().any(|c| c.contains("smear test on the 7th")), "{active:#?}");
    // The day it is due moves with it.
    let party = f.memory.list(&s, &ListFilter::default()).unwrap();
    let party = party.iter().find(|m| m.content.contains("Saturday 8 August")).expect("the party");
    assert_eq!(party.due_at.map(|d| d.format("%Y-%m-%d").to_string()).as_deref(), Some("2026-08-08"), "{party:#?}");
    // Read again, nothing changes.
    let before = f.memory.list(&s, &ListFilter::default()).unwrap();
    f.memory.reextract(&s, msgs).unwrap();
    assert_eq!(f.memory.list(&s, &ListFilter::default()).unwrap(), before);
}

#[test]
fn no_longer_said_to_the_assistants_summary_amends_what_it_summed_up() {
    let f = hashed();
    let s = chat("orla", "c1");
    f.say(&s, &["I'm the one driving Granny up from Athlone, she's only off the crutches since June."]);
    let msgs = vec![
        NewMessage::assistant("Updated plan:\n- Hotel: the Shannon room\n- You're driving Granny from Athlone", t0())
            .with_id("a1"),
        NewMessage::user("no, not anymore, Ciarán's taking Granny now", t0() + Duration::minutes(1)).with_id("u1"),
    ];
    f.memory.ingest(&s, msgs).unwrap();
    let active = f.active_contents(&s);
    assert!(
        active.iter().any(|c| c.contains("driving Granny up from Athlone")
            && c.contains("User said: \"No, not anymore, Ciarán's taking Granny now\"")),
        "{active:?}"
    );
    assert_eq!(active.iter().filter(|c| c.contains("driving Granny")).count(), 1, "{active:?}");
}

#[test]
fn re_extracting_a_corrected_conversation_changes_nothing() {
    let f = hashed();
    let s = chat("dana", "c1");
    let msgs = vec![
        NewMessage::user("I'm a backend engineer at a fintech startup.", t0()).with_id("m1"),
        NewMessage::user("Actually I work in product design now, not engineering.", t0() + Duration::minutes(5))
            .with_id("m2"),
    ];
    f.memory.ingest(&s, msgs.clone()).unwrap();
    let before = f.memory.list(&s, &ListFilter::default()).unwrap();
    let replay = f.memory.reextract(&s, msgs).unwrap();
    assert!(
        replay
            .ops
            .iter()
            .all(|o| matches!(o.verdict, Verdict::Deduplicated { by: mnemo::core::verdict::DedupBy::Replay, .. })),
        "{:#?}",
        replay.ops
    );
    assert_eq!(f.memory.list(&s, &ListFilter::default()).unwrap(), before);
}

#[test]
fn a_resolution_closes_its_own_loop_and_not_another() {
    let f = hashed();
    let s = chat("ana", "c1");
    f.say(&s, &["I need to call my mom this weekend.", "I have to book a dentist appointment on Friday."]);
    let loops = || {
        let filter = ListFilter {
            kinds: vec![mnemo::core::Kind::OpenLoop],
            statuses: vec![StatusKind::Active],
            ..Default::default()
        };
        f.memory.list(&s, &filter).unwrap().into_iter().map(|m| m.content).collect::<Vec<_>>()
    };
    assert_eq!(loops().len(), 2, "{:?}", loops());
    f.say(&s, &["I called the dentist's office this morning."]);
    let left = loops();
    assert!(left.iter().any(|l| l.contains("mom")), "a call to the dentist must not close the call to mom: {left:?}");
    f.say(&s, &["I called my mom last night."]);
    assert!(loops().iter().all(|l| !l.contains("mom")), "{:?}", loops());
}

#[test]
fn exports_render_the_users_memory_and_everything_as_json() {
    use mnemo::core::export::ExportFormat;
    let f = hashed();
    let s = chat("dana", "c1");
    f.say(&s, &["My name is Dana.", "Never mention my ex-husband.", "I live in Lisbon."]);
    f.say(&s, &["Actually, I live in Porto now."]);
    f.say(&chat("eve", "c1"), &["My name is Eve."]);
    let md = f.memory.export(&s, ExportFormat::MemoryMd).unwrap();
    assert!(md.starts_with("# Memory: user dana\n"), "{md}");
    assert!(md.contains("## About the user") && md.contains("Dana") && md.contains("Porto"), "{md}");
    assert!(md.contains("## Boundaries and protocols") && md.contains("ex-husband"), "{md}");
    assert!(!md.contains("Lisbon") && !md.contains("Eve"), "superseded and foreign rows stay out: {md}");

    let json: mnemo::ExportDocument = serde_json::from_str(&f.memory.export(&s, ExportFormat::Json).unwrap()).unwrap();
    assert!(json.memories.iter().all(|m| m.memory.owner.user.as_ref().map(|u| u.as_str()) == Some("dana")));
    let lisbon = json.memories.iter().find(|m| m.memory.content.contains("Lisbon")).expect("superseded row exported");
    assert_eq!(lisbon.memory.status.kind(), StatusKind::Superseded);
    assert!(lisbon.history.len() >= 2 && !lisbon.links.is_empty(), "{lisbon:#?}");

    let err = f.memory.export(&s, ExportFormat::Conventions).unwrap_err().to_string();
    assert!(err.contains("agent_id"), "{err}");
}

#[test]
fn the_per_user_cap_archives_the_weakest_and_spares_pinned_and_boundaries() {
    use mnemo::core::{Draft, Kind};
    let dir = tempfile::tempdir().unwrap();
    let mut config = mnemo::Config { data_dir: dir.path().to_path_buf(), ..mnemo::Config::default() };
    config.lifecycle.max_active_per_user = 4;
    let (store, _db) = crate::common::backend(&config);
    let clock = std::sync::Arc::new(mnemo::ManualClock::new(t0()));
    let embedder: std::sync::Arc<dyn mnemo::models::Embedder> =
        std::sync::Arc::new(mnemo::models::HashEmbedder::new(384));
    let memory = mnemo::Memory::from_parts(config, store, Some(embedder), clock.clone());
    let s = chat("dana", "c1");
    let facts = ["User keeps bees", "User plays the cello", "User speaks Basque", "User collects stamps", "User sails"];
    for (i, fact) in facts.iter().enumerate() {
        clock.set(t0() + Duration::days(i as i64 * 20));
        memory.add(&s, Draft::new(Kind::Fact, *fact, 0.9, 0.5)).unwrap();
    }
    memory.add(&s, Draft::new(Kind::Protocol, "Never mention the user's ex", 0.9, 0.9)).unwrap();
    let oldest = memory.list(&s, &ListFilter::default()).unwrap().into_iter().find(|m| m.content == facts[0]).unwrap();
    memory.pin(&s, oldest.id, true).unwrap();

    let r = memory.maintain().unwrap();
    let capped: Vec<_> = r.transitions.iter().filter(|t| t.reason.contains("cap of 4")).collect();
    assert_eq!(capped.len(), 2, "{:#?}", r.transitions);
    let active = |m: &mnemo::Memory| -> Vec<String> {
        let f = ListFilter { statuses: vec![StatusKind::Active], ..Default::default() };
        m.list(&s, &f).unwrap().into_iter().map(|m| m.content).collect()
    };
    let left = active(&memory);
    assert_eq!(left.len(), 4, "{left:?}");
    for kept in [facts[0], facts[3], facts[4], "Never mention the user's ex"] {
        assert!(left.iter().any(|c| c == kept), "{kept} should stay: {left:?}\n{:#?}", r.transitions);
    }
    assert!(memory.maintain().unwrap().transitions.is_empty(), "idempotent");
}

#[test]
fn a_user_edits_a_memory_and_clears_everything() {
    let f = hashed();
    let s = chat("dana", "c1");
    f.say(&s, &["I live in Lisbon.", "I have a dog named Biscuit."]);
    f.say(&chat("eve", "c1"), &["I have a cat named Miso."]);
    let rows = f.memory.list(&s, &ListFilter::default()).unwrap();
    let home = rows.iter().find(|m| m.content.contains("Lisbon")).unwrap();
    let verdict = f.memory.edit(&s, home.id, "User lives in Lisbon, in Alfama").unwrap();
    assert!(matches!(verdict, Verdict::Superseded { old, .. } if old == home.id), "{verdict:?}");
    let detail = f.memory.show(&s, home.id).unwrap();
    assert_eq!(detail.memory.status.kind(), StatusKind::Superseded);
    assert!(f.active_contents(&s).iter().any(|c| c.contains("Alfama")));
    // A superseded row is not edited again.
    assert!(f.memory.edit(&s, home.id, "User lives in Porto").is_err());

    let cleared = f.memory.clear_user(&s).unwrap();
    assert_eq!(cleared, 2, "the edited home and the dog");
    assert!(f.active_contents(&s).is_empty());
    let ctx = f.memory.context(&chat("dana", "c2"), "Biscuit the dog in Lisbon", None).unwrap();
    assert!(!ctx.block.text.contains("Biscuit") && !ctx.block.text.contains("Lisbon"), "{}", ctx.block.text);
    // History stays; another user is untouched.
    assert!(f.memory.show(&s, home.id).unwrap().history.len() >= 2);
    assert_eq!(f.active_contents(&chat("eve", "c1")).len(), 1);
}

#[test]
fn what_was_written_while_the_embedder_was_down_is_embedded_by_maintenance() {
    let f = hashed();
    // The same store and clock while the model server is down: the write succeeds, degraded,
    // with no vector.
    let down = mnemo::Memory::from_parts(f.memory.config().clone(), f.memory.store().clone(), None, f.clock.clone());
    let s2 = chat("dana", "c2");
    let report = down.ingest(&s2, vec![NewMessage::user("I play the cello in an orchestra.", f.memory.now())]).unwrap();
    assert!(report.degraded.is_some(), "{report:?}");
    let user = s2.without_chat();
    let filter = ListFilter { statuses: vec![StatusKind::Active], ..Default::default() };
    let rows = f.memory.list(&user, &filter).unwrap();
    let cello = rows.iter().find(|m| m.content.contains("cello")).expect("the degraded write stored its memory");
    let tenant = &cello.owner.tenant;
    assert_eq!(f.memory.store().embedding(tenant, cello.id).unwrap(), None);

    f.clock.set(f.memory.now() + Duration::hours(1));
    f.memory.maintain().unwrap();
    let e = f.memory.store().embedding(tenant, cello.id).unwrap().expect("maintenance embedded the row");
    assert_eq!(e.model, "hash:384");
    assert_eq!(e.vector.len(), 384);
    // A second run finds nothing left to embed, and vector search reaches the row again.
    let again = f.memory.maintain().unwrap();
    assert!(again.summary().is_empty(), "{:?}", again.summary());
    let hits = f.memory.store().vector(&user, "hash:384", &e.vector, 5).unwrap();
    assert_eq!(hits.first().map(|h| h.0), Some(cello.id));
}

#[test]
fn a_memory_names_the_rule_that_read_it_and_an_authored_one_names_none() {
    let f = hashed();
    let s = chat("dana", "c1");
    let report = f.say(&s, &["Honestly, I can't stand cilantro."]);
    let Verdict::Written { id, .. } = report.ops[0].verdict else { panic!("{:#?}", report.ops) };
    let stored = f.memory.show(&s, id).unwrap().memory.provenance;
    assert_eq!((stored.extractor.as_str(), stored.rule.as_deref()), ("heuristic", Some("preference.dislikes")));
    // The ingest trace records it beside the verdict, so `mnemo trace` can say it too.
    let trace = f.memory.trace(&s, report.turn_id.as_deref().unwrap()).unwrap().unwrap();
    assert_eq!(trace.verdicts[0].rule.as_deref(), Some("preference.dislikes"));

    let surface = trace.verdicts[0].surface.as_ref().expect("the trace says what set the surface");
    assert_eq!(surface.by, "a preference's default (rule preference.dislikes chose the kind)");

    // A person's words are no rule's, even when the draft claims one.
    let draft =
        Draft { rule: Some("preference.likes".into()), ..Draft::authored(Kind::Fact, "Dana's bike is a red Brompton") };
    let Verdict::Written { id, .. } = f.memory.add(&s, draft).unwrap() else { panic!("not written") };
    let stored = f.memory.show(&s, id).unwrap().memory.provenance;
    assert_eq!((stored.extractor.as_str(), stored.rule), ("api", None));
}

#[test]
fn the_trace_says_which_rule_set_each_surface() {
    let f = hashed();
    let s = chat("dana", "c2");
    let report = f.say(&s, &["My laptop runs Arch Linux.", "Melanie: My laptop runs Windows 11."]);
    let trace = f.memory.trace(&s, report.turn_id.as_deref().unwrap()).unwrap().unwrap();
    let by = |who: &str| {
        let v =
            trace.verdicts.iter().find(|v| v.content.contains(who)).unwrap_or_else(|| panic!("{:#?}", trace.verdicts));
        v.surface.clone().expect("surface recorded")
    };
    let mine = by("User");
    assert_eq!(mine.policy, Surface::FactCheck, "the user's own fact about themselves");
    assert!(mine.by.starts_with("a fact's default (rule "), "{mine:?}");
    let hers = by("Melanie");
    assert_ne!(hers.policy, Surface::FactCheck);
    assert!(hers.by.starts_with("attribution: Melanie's words"), "{hers:?}");
}

/// A read's bookkeeping does not wait for the store's writer: with another process holding
/// SQLite's write lock (as another tenant's ingest holds the writer), recall and context still
/// answer at once, and their traces and access counts are there once the lock is let go.
#[test]
fn a_read_answers_while_the_writer_is_held_and_its_trace_follows() {
    let f = crate::common::sqlite_with_embedder(Some(std::sync::Arc::new(mnemo::models::HashEmbedder::default())));
    let s = chat("dana", "c1");
    f.say(&s, &["I have a dog named Biscuit.", "I live in Leeds."]);
    // Another connection takes the write lock and keeps it until told, then 200 ms more.
    let (locked, release) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
    let path = f.memory.config().db_path();
    let holder = std::thread::spawn(move || {
        let other = rusqlite::Connection::open(path).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        locked.0.send(()).unwrap();
        release.1.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(200));
        other.execute_batch("ROLLBACK").unwrap();
    });
    locked.1.recv().unwrap();
    let started = std::time::Instant::now();
    let r = f.memory.recall(&s, "what is my dog called", Some(3)).unwrap();
    let ctx = f.memory.context(&s, "tell me about my dog", Some(300)).unwrap();
    // Inline, the trace waited for the lock: up to the store's 10 s busy timeout.
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(ctx.block.text.contains("Biscuit"), "{}", ctx.block.text);
    release.0.send(()).unwrap();
    // Reading the trace waits for the queued turns, then finds them.
    assert!(f.memory.trace(&s, &r.turn_id).unwrap().is_some());
    assert!(f.memory.trace(&s, &ctx.turn_id).unwrap().is_some());
    holder.join().unwrap();
    let dog = r.items.first().map(|i| i.memory.id).expect("recall found the dog");
    let listed = f.memory.list(&s, &ListFilter::default()).unwrap();
    let row = listed.iter().find(|m| m.id == dog).unwrap();
    assert!(row.access_count >= 1, "{row:?}");
}

#[test]
fn starting_somewhere_new_takes_the_old_place_out_of_the_job() {
    let f = hashed();
    let s = chat("rab", "c1");
    f.say(&s, &["I'm a mechanic at the First bus depot on Caledonia Road."]);
    f.say(&s, &["am movin depots. startin at the larkfield garage on monday"]);
    let active = f.active_contents(&s);
    assert!(active.iter().any(|m| m == "User is a mechanic"), "{active:?}");
    assert!(active.iter().any(|m| m == "User works at the larkfield garage"), "{active:?}");
    assert!(active.iter().all(|m| !m.contains("Caledonia")), "the old depot is no current memory: {active:?}");
}
