//! Archival recall: the conversation itself is searched too, within the user's own messages,
//! and what was forgotten, corrected or declared off-limits is never quoted back.

use chrono::Duration;
use mnemo::core::SectionName;

use std::sync::Arc;

use mnemo::models::{Embedder, HashEmbedder, blend, cosine};

use crate::common::{chat, configured, hashed, t0};

fn excerpts(block: &mnemo::core::ContextBlock) -> Vec<String> {
    block.section(SectionName::Excerpt).map(|s| s.items.iter().map(|i| i.text.clone()).collect()).unwrap_or_default()
}

#[test]
fn what_was_merely_said_in_another_chat_comes_back_verbatim_and_dated() {
    let f = hashed();
    f.say(&chat("dana", "c1"), &["We watched a documentary about octopuses last night, they have three hearts!"]);
    f.say(&chat("eve", "c1"), &["Octopuses are my favourite animal, the documentary was great."]);
    f.clock.set(t0() + Duration::days(20));
    let here = chat("dana", "c2");
    let ctx = f.memory.context(&here, "how many hearts does an octopus have", None).unwrap();
    let lines = excerpts(&ctx.block);
    assert_eq!(lines.len(), 1, "{}", ctx.block.text);
    assert!(lines[0].starts_with("We watched a documentary about octopuses"), "{lines:?}");
    let item = &ctx.block.section(SectionName::Excerpt).unwrap().items[0];
    assert_eq!(item.kind, "message");
    // Dated by the line above it, which the day's excerpts share.
    assert_eq!(item.day.map(|d| d.to_string()).as_deref(), Some("2026-03-02"));
    assert!(ctx.block.text.contains("[2026-03-02]\n- We watched a documentary"), "{}", ctx.block.text);
    assert!(ctx.block.text.contains("FROM PAST CONVERSATIONS"));

    let recall = f.memory.recall(&here, "octopus documentary", Some(5)).unwrap();
    assert_eq!(recall.excerpts.len(), 1, "{:#?}", recall.excerpts);
    assert_eq!(recall.excerpts[0].message.id.as_str(), item.id);
    assert!(recall.excerpts[0].relevance > 0.0);
}

#[test]
fn the_current_chat_window_is_not_repeated_as_excerpts() {
    let f = hashed();
    let c1 = chat("dana", "c1");
    f.say(&c1, &["The octopus documentary was fascinating."]);
    let ctx = f.memory.context(&c1, "octopus documentary", None).unwrap();
    assert!(excerpts(&ctx.block).is_empty(), "{}", ctx.block.text);
    assert_eq!(ctx.block.section(SectionName::Recent).unwrap().items.len(), 1);
}

#[test]
fn forgotten_corrected_and_off_limits_words_are_never_quoted_back() {
    let f = hashed();
    let c1 = chat("dana", "c1");
    f.say(&c1, &["I work at Initech."]);
    f.say(&c1, &["Actually, I work at Globex now."]);
    f.say(&c1, &["Never mention my ex-husband Marcus."]);
    f.say(&c1, &["I have a parrot named Kiwi."]);
    let forgot = f.say(&c1, &["Please forget that I have a parrot named Kiwi."]);
    assert!(forgot.ops.iter().any(|o| matches!(o.verdict, mnemo::core::Verdict::Forgotten { .. })), "{forgot:#?}");
    f.clock.set(t0() + Duration::days(3));
    let c2 = chat("dana", "c2");
    for query in ["where do I work, Initech or Globex?", "my ex-husband Marcus", "my parrot Kiwi"] {
        let ctx = f.memory.context(&c2, query, None).unwrap();
        for line in excerpts(&ctx.block) {
            for banned in ["Initech", "Marcus", "Kiwi"] {
                assert!(!line.contains(banned), "{query}: excerpt {line:?} quotes {banned}");
            }
        }
        let recall = f.memory.recall(&c2, query, Some(10)).unwrap();
        assert!(
            recall
                .excerpts
                .iter()
                .all(|e| !["Initech", "Marcus", "Kiwi"].iter().any(|b| e.message.content.contains(b))),
            "{query}: {:#?}",
            recall.excerpts
        );
    }
    // The correction itself is still there to be found.
    let ctx = f.memory.context(&c2, "Globex", None).unwrap();
    assert!(ctx.block.text.contains("Globex"), "{}", ctx.block.text);
}

#[test]
fn a_corrected_statement_leaves_the_rest_of_its_message_in_recall() {
    let f = hashed();
    let c1 = chat("dana", "c1");
    f.say(&c1, &["I live in Leeds. I cook after 7pm, 30 minutes max, and my partner Tom is vegetarian."]);
    let moved = f.say(&c1, &["Actually, I live in York now."]);
    assert!(moved.ops.iter().any(|o| matches!(o.verdict, mnemo::core::Verdict::Superseded { .. })), "{moved:#?}");
    f.clock.set(t0() + Duration::days(3));
    let recall = f.memory.recall(&chat("dana", "c2"), "how long can I spend cooking after 7pm", Some(10)).unwrap();
    let lines: Vec<&str> = recall.excerpts.iter().map(|e| e.message.content.as_str()).collect();
    // The message still holds the cooking time and Tom, which other memories draw on.
    assert!(lines.iter().any(|l| l.contains("30 minutes max")), "{lines:?}");
}

#[test]
fn the_answer_next_to_a_hit_comes_back_with_it() {
    // The neighbourhood alone: with turn context the answer is a hit of its own (tested below).
    let f = configured(Some(Arc::new(HashEmbedder::new(384))), |c| c.ranking.turn_context = 0.0);
    f.say(
        &chat("dana", "c1"),
        &[
            "My sister asked what I painted for the county fair.",
            "A sunset over Loch Ness, in oils.",
            "Anyway, the weather has been awful lately.",
        ],
    );
    f.clock.set(t0() + Duration::days(5));
    let ctx = f.memory.context(&chat("dana", "c2"), "what did I paint for the county fair?", None).unwrap();
    let lines = excerpts(&ctx.block);
    // The answer shares no word with the question: it comes back as the hit's neighbour.
    assert!(lines.iter().any(|l| l.contains("county fair")), "{}", ctx.block.text);
    assert!(lines.iter().any(|l| l.contains("A sunset over Loch Ness")), "{}", ctx.block.text);
    // Two turns away is not the neighbourhood.
    assert!(!lines.iter().any(|l| l.contains("weather")), "{}", ctx.block.text);
}

#[test]
fn a_reply_is_found_by_the_topic_of_the_turn_it_answers_even_across_ingest_calls() {
    let question = "What did you paint for the county fair?";
    let reply = "A sunset over Loch Ness, in oils.";
    let query = "painting for the county fair";
    let embedder = HashEmbedder::new(384);
    let e = |t: &str| embedder.embed(&[t]).unwrap().remove(0);
    let reply_cosine = |weight: f32| {
        let f = configured(Some(Arc::new(HashEmbedder::new(384))), |c| c.ranking.turn_context = weight);
        let c1 = chat("dana", "c1");
        // Two calls, as a chat application sends them: the question's vector is read back.
        f.say(&c1, &[question]);
        f.say(&c1, &[reply]);
        f.clock.set(t0() + Duration::days(5));
        let recall = f.memory.recall(&chat("dana", "c2"), query, Some(10)).unwrap();
        recall.excerpts.iter().find(|x| x.message.content == reply).and_then(|x| x.vector)
    };
    let alone = cosine(&e(reply), &e(query));
    let leaning = cosine(&blend(&e(reply), &e(question), 0.5), &e(query));
    assert!(leaning > alone + 0.2, "the blend must carry the question's topic: {alone} vs {leaning}");
    let found = reply_cosine(0.5).expect("the reply is a vector hit of its own");
    assert!((found - leaning).abs() < 1e-4, "stored vector is the blend: {found} vs {leaning}");
    // Off, the reply's vector is its own words only.
    if let Some(off) = reply_cosine(0.0) {
        assert!((off - alone).abs() < 1e-4, "{off} vs {alone}");
    }
}

#[test]
fn the_first_turn_of_a_chat_leans_on_nothing() {
    let f = hashed();
    f.say(&chat("dana", "c1"), &["What did you paint for the county fair?"]);
    let opener = "A sunset over Loch Ness, in oils.";
    f.say(&chat("dana", "c2"), &[opener]);
    f.clock.set(t0() + Duration::days(5));
    let embedder = HashEmbedder::new(384);
    let e = |t: &str| embedder.embed(&[t]).unwrap().remove(0);
    let query = "sunset over Loch Ness";
    let recall = f.memory.recall(&chat("dana", "c3"), query, Some(10)).unwrap();
    let hit = recall.excerpts.iter().find(|x| x.message.content == opener).expect("found");
    let own = cosine(&e(opener), &e(query));
    assert!((hit.vector.unwrap() - own).abs() < 1e-4, "another chat's turn is not its context");
}

#[test]
fn a_question_naming_a_time_favours_what_was_said_then() {
    let f = hashed();
    let dinners = [
        "We had dinner at the harbour restaurant, the grilled fish was lovely.",
        "We had dinner at the mountain lodge, the venison stew was lovely.",
    ];
    f.say(&chat("dana", "c1"), &dinners[..1]); // Monday 2 March 2026
    f.clock.set(t0() + Duration::days(10));
    f.say(&chat("dana", "c2"), &dinners[1..]); // Thursday 12 March
    f.clock.set(t0() + Duration::days(17)); // Thursday 19 March
    let here = chat("dana", "c3");
    let first = |query: &str| {
        let r = f.memory.recall(&here, query, Some(5)).unwrap();
        assert!(r.excerpts.len() >= 2, "{query}: {:#?}", r.excerpts);
        assert!(r.excerpts[0].period.is_some() && r.excerpts[1].period.is_none(), "{query}: {:#?}", r.excerpts);
        r.excerpts[0].message.content.clone()
    };
    assert!(first("Where did we have dinner on 12 March?").contains("mountain lodge"));
    assert!(first("where did we go for dinner on March 2nd, 2026").contains("harbour"));
    assert!(first("what was dinner like the week before 5 March?").contains("harbour"));
    assert!(first("where did we have dinner last week?").contains("mountain lodge"));

    // Without a time, neither is lifted; with the lift turned off, the date changes nothing.
    let r = f.memory.recall(&here, "where did we have dinner?", Some(5)).unwrap();
    assert!(r.excerpts.iter().all(|e| e.period.is_none()), "{:#?}", r.excerpts);
    let off = configured(Some(Arc::new(HashEmbedder::new(384))), |c| c.ranking.period_boost = 0.0);
    off.say(&chat("dana", "c1"), &dinners);
    let r = off.memory.recall(&here, "Where did we have dinner on 12 March?", Some(5)).unwrap();
    assert!(r.excerpts.iter().all(|e| e.period.is_none()), "{:#?}", r.excerpts);
}

#[test]
fn a_question_naming_a_time_draws_candidates_from_then_that_the_whole_archive_would_not() {
    // Seven word matches fill the shortlist (five excerpts asked, two candidates per half); a
    // lift that puts anything said on the day first shows whether the day's turn was drawn.
    let both = |period_candidates: usize| {
        let f = configured(Some(Arc::new(HashEmbedder::new(384))), |c| {
            c.ranking.candidates = 2;
            c.ranking.period_boost = 0.9;
            c.ranking.period_candidates = period_candidates;
        });
        f.say(
            &chat("dana", "c1"),
            &[
                "Where did we have dinner? We had dinner at the harbour.",
                "We have dinner plans again, where did we have dinner before?",
                "Dinner where we had dinner last time was fine.",
                "Did we have dinner there? We did have dinner.",
                "Where we have dinner matters, we had dinner late.",
                "We had dinner where we always have dinner.",
                "Where did you have dinner? Did we have it together?",
            ],
        ); // Monday 2 March 2026
        f.clock.set(t0() + Duration::days(10));
        f.say(&chat("dana", "c2"), &["The venison stew at the mountain lodge was lovely."]); // 12 March
        f.clock.set(t0() + Duration::days(17));
        let r = f.memory.recall(&chat("dana", "c3"), "Where did we have dinner on 12 March?", Some(5)).unwrap();
        r.excerpts.iter().any(|e| e.message.content.contains("mountain lodge"))
    };
    assert!(both(10), "the evening of 12 March is drawn from its own day");
    assert!(!both(0), "without period candidates the shortlist of two holds only the word matches");
}

#[test]
fn a_message_that_talks_about_two_things_is_found_by_either() {
    let turn = "Thanks so much for asking about it! The pottery class I joined meets every Tuesday evening. \
                My brother is moving to Denver next spring with his whole family.";
    let passage = "The pottery class I joined meets every Tuesday evening.";
    let query = "which evening is my pottery class";
    let embedder = HashEmbedder::new(384);
    let e = |t: &str| embedder.embed(&[t]).unwrap().remove(0);
    let found = |max_passages: usize| {
        let f = configured(Some(Arc::new(HashEmbedder::new(384))), |c| c.ranking.max_passages = max_passages);
        f.say(&chat("dana", "c1"), &[turn]);
        f.clock.set(t0() + Duration::days(5));
        let recall = f.memory.recall(&chat("dana", "c2"), query, Some(10)).unwrap();
        recall.excerpts.iter().find(|x| x.message.content == turn).and_then(|x| x.vector)
    };
    let whole = cosine(&e(turn), &e(query));
    let own = cosine(&e(passage), &e(query));
    assert!(own > whole + 0.1, "the passage alone is closer to the question: {whole} vs {own}");
    let with = found(8).expect("found by vector");
    assert!((with - own).abs() < 1e-4, "scored by its closest passage: {with} vs {own}");
    // Off, the message has its whole vector only.
    let off = found(0).expect("found by vector");
    assert!((off - whole).abs() < 1e-4, "{off} vs {whole}");
}

/// The hashing embedder, keeping every single- or two-text call (a query's) it was asked.
struct Recording(HashEmbedder, std::sync::Mutex<Vec<Vec<String>>>);

impl Embedder for Recording {
    fn id(&self) -> &str {
        self.0.id()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn embed(&self, texts: &[&str]) -> mnemo::models::Result<Vec<Vec<f32>>> {
        if texts.len() <= 2 {
            self.1.lock().unwrap().push(texts.iter().map(|t| t.to_string()).collect());
        }
        self.0.embed(texts)
    }
}

#[test]
fn a_word_most_of_the_users_messages_share_is_weighed_down_in_the_querys_vector() {
    let asked = |messages: usize, share: f32| {
        let recording = Arc::new(Recording(HashEmbedder::new(384), Default::default()));
        let f = configured(Some(recording.clone()), |c| c.ranking.common_term_share = share);
        let lines: Vec<String> = (0..messages)
            .map(|i| if i % 3 == 0 { format!("Ben: day {i} was fine") } else { format!("Ann: entry {i} of the log") })
            .collect();
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        f.say(&chat("dana", "c1"), &lines);
        recording.1.lock().unwrap().clear();
        f.memory.recall(&chat("dana", "c2"), "What does Ann do to unwind?", Some(5)).unwrap();
        recording.1.lock().unwrap().clone()
    };
    // "Ann" stands in two thirds of 60 messages: the query is embedded with and without it, in
    // one call; "Ben" (a third) stays, and is not in the query anyway.
    assert_eq!(asked(60, 0.3), vec![vec!["What does Ann do to unwind?", "What does do to unwind?"]]);
    // Too few messages to tell a label from a topic, or the setting off: the query as asked.
    assert_eq!(asked(30, 0.3), vec![vec!["What does Ann do to unwind?"]]);
    assert_eq!(asked(60, 0.0), vec![vec!["What does Ann do to unwind?"]]);
}

#[test]
fn forgetting_one_thing_keeps_what_its_message_said_beside_it() {
    let f = hashed();
    let c1 = chat("bridie", "c1");
    f.say(
        &c1,
        &["My Grandson Cian is getting Married to a Lovely girl from Ballina on the 8th of August in Knock. I will have to get a Hat."],
    );
    let forgot = f.say(&c1, &["Never mind about the Hat."]);
    assert!(forgot.ops.iter().any(|o| matches!(o.verdict, mnemo::core::Verdict::Forgotten { .. })), "{forgot:#?}");
    let active = f.active_contents(&c1);
    assert!(active.iter().any(|m| m.contains("8th of August in Knock")), "the wedding is kept: {active:?}");
    assert!(active.iter().all(|m| !m.contains("Hat")), "the hat is forgotten: {active:?}");
    // A memory that is all about what is forgotten goes whole, and nothing is written for it.
    f.say(&c1, &["I have a parrot named Kiwi."]);
    f.say(&c1, &["Please forget that I have a parrot named Kiwi."]);
    assert!(f.active_contents(&c1).iter().all(|m| !m.contains("Kiwi")), "{:?}", f.active_contents(&c1));
}
