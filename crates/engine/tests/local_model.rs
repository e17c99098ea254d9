//! The loop with the real local model (all-MiniLM-L6-v2 from the cache directory).
//! CI fetches the model first (`scripts/fetch-model.sh`); a missing model fails loudly.

use std::sync::Arc;

use mnemo::core::RecallMode;
use mnemo::models::{Embedder, EmbedderSettings, LocalEmbedder};

use crate::common::{chat, configured, with_embedder};

fn model() -> Arc<dyn Embedder> {
    let dir = EmbedderSettings::default().resolved_model_dir();
    match LocalEmbedder::open(&dir) {
        Ok(e) => Arc::new(e),
        Err(e) => panic!("the local model is required for this test: {e}\nrun scripts/fetch-model.sh first"),
    }
}

#[test]
fn paraphrased_questions_find_memories_through_the_real_model() {
    let f = with_embedder(Some(model()));
    let s = chat("dana", "c1");
    f.say(&s, &["I have a dog named Biscuit.", "I live in Lisbon.", "I'm a backend engineer at a fintech startup."]);
    let r = f.memory.recall(&chat("dana", "c2"), "What is my puppy called?", Some(3)).unwrap();
    assert_eq!(r.mode, RecallMode::Hybrid);
    assert!(
        r.items[0].memory.content.contains("Biscuit"),
        "{:#?}",
        r.items.iter().map(|i| &i.memory.content).collect::<Vec<_>>()
    );
    let r = f.memory.recall(&chat("dana", "c2"), "which city is home for me", Some(3)).unwrap();
    assert!(
        r.items[0].memory.content.contains("Lisbon"),
        "{:#?}",
        r.items.iter().map(|i| (&i.memory.content, i.score)).collect::<Vec<_>>()
    );
}

#[test]
fn a_plan_called_off_gives_way_to_what_the_message_says_now_through_the_real_model() {
    let f = with_embedder(Some(model()));
    let s = chat("rohit", "c1");
    f.say(&s, &["Company is shifting me to Hyderabad office from 1st April onwards."]);
    f.say(
        &s,
        &["Hello, change of plans. Hyderabad transfer is cancelled. Now company is sending me onsite to Dallas."],
    );
    let active = f.active_contents(&s);
    assert!(active.iter().all(|c| !c.contains("Hyderabad office")), "{active:#?}");
    assert!(active.iter().any(|c| c.contains("Dallas")), "{active:#?}");
    // What was called off does not take another plan with it.
    let s = chat("ola", "c1");
    f.say(
        &s,
        &["We are thinking to move back to Wrocław in summer.", "My sister is getting married in Gdańsk in June."],
    );
    f.say(&s, &["I have news, we are not going back to Wrocław. We decided to stay."]);
    let active = f.active_contents(&s);
    assert!(active.iter().all(|c| !c.contains("thinking to move back")), "{active:#?}");
    assert!(active.iter().any(|c| c.contains("Gdańsk")), "{active:#?}");
}

#[test]
fn a_paraphrase_reinforces_through_the_real_model() {
    let f = with_embedder(Some(model()));
    let s = chat("dana", "c1");
    f.say(&s, &["I really love hiking in the mountains."]);
    let r = f.say(&chat("dana", "c2"), &["I love hiking in the mountains!"]);
    assert!(matches!(r.ops[0].verdict, mnemo::core::Verdict::Deduplicated { .. }), "{:?}", r.ops[0].verdict);
}

/// A transcript whose lines carry their speaker ("Priya: …"), as meeting notes, chat exports
/// and group threads do, ingested as one user's history over three sessions.
const TRANSCRIPT: [&[&str]; 3] = [
    &[
        "Priya: Morning! Did the flat viewing go okay yesterday?",
        "Tom: It did, the landlord seemed decent. Tiny kitchen though.",
        "Priya: Tiny kitchens are a crime. Mine barely fits a kettle.",
        "Tom: Ha. How was your week?",
        "Priya: Busy. Two deadlines at work and my sister visited from Leeds.",
        "Tom: Leeds! Did you show her around?",
        "Priya: We did the market and the canal walk, she loved it.",
        "Tom: Nice. I mostly worked, the migration at the office dragged on.",
        "Priya: Did you get it finished in the end?",
        "Tom: Friday night, finally. I slept most of Saturday.",
        "Priya: You earned it.",
        "Tom: What about you, anything planned for the weekend?",
        "Priya: Not much, probably laundry and a film.",
        "Tom: Sounds perfect honestly.",
    ],
    &[
        "Tom: Hey Priya, long time no chat!",
        "Priya: I know, it's been hectic. My manager left so I'm covering her team.",
        "Tom: Oof, that's a lot. Are they paying you more for it?",
        "Priya: Not yet, I'm bringing it up at my review next month.",
        "Tom: Good luck with that. How do you even switch off with all that going on?",
        "Priya: Honestly, throwing clay on the wheel every Sunday morning is what keeps me sane.",
        "Tom: I didn't know you did pottery!",
        "Priya: Started in spring. My bowls are still lopsided but I love it.",
        "Tom: Send me a picture of the next one.",
        "Priya: Deal. How's the new flat?",
        "Tom: Boxes everywhere. The cat hates the move.",
        "Priya: Poor thing. What's the cat called again?",
        "Tom: Noodle. He's hiding under the sofa.",
        "Priya: Give Noodle a scratch from me.",
    ],
    &[
        "Priya: Guess what, I got the promotion!",
        "Tom: Priya, that's brilliant, congratulations!",
        "Priya: Thanks! The review went better than I expected.",
        "Tom: Are you celebrating?",
        "Priya: Dinner at the Lebanese place on Friday with my sister.",
        "Tom: The one near the station? Their falafel is unreal.",
        "Priya: That's the one. How's work on your side?",
        "Tom: Quieter. I've started cycling to the office now that I moved.",
        "Priya: How far is it?",
        "Tom: About twenty minutes along the river.",
        "Priya: That sounds lovely in summer.",
        "Tom: Less lovely in the rain, but yes.",
        "Priya: I should try it, I never get any exercise.",
        "Tom: Come along one weekend, there's a bike you can borrow.",
    ],
];

#[test]
fn a_speaker_label_on_every_line_does_not_outweigh_what_a_question_asks_with_the_real_model() {
    let asked = [
        ("How does Priya relax when work gets stressful?", "throwing clay on the wheel"),
        ("What is the name of Tom's pet?", "Noodle. He's hiding"),
        ("How does Tom get to work these days?", "cycling to the office"),
    ];
    let ranks = |share: f32| {
        let f = configured(Some(model()), |c| {
            c.ranking.common_term_share = share;
            c.ranking.common_term_min_messages = 30;
        });
        for (i, session) in TRANSCRIPT.iter().enumerate() {
            f.say(&chat("sam", &format!("s{i}")), session);
        }
        let here = chat("sam", "today");
        asked
            .iter()
            .map(|(question, answer)| {
                let r = f.memory.recall(&here, question, Some(10)).unwrap();
                let rank = r.excerpts.iter().position(|e| e.message.content.contains(answer));
                (rank, r.excerpts.iter().map(|e| e.message.content.clone()).take(5).collect::<Vec<_>>())
            })
            .collect::<Vec<_>>()
    };
    let on = ranks(0.3);
    let off = ranks(0.0);
    // Measured when this test was written: the pet's name comes first; the other two answers
    // are missed with or without the blend (a bare "get" or "work" in a short turn outranks
    // them lexically), which the blend neither causes nor cures.
    let (rank, top) = &on[1];
    assert_eq!(*rank, Some(0), "{}: {top:#?}", asked[1].0);
    let total = |r: &[(Option<usize>, Vec<String>)]| r.iter().map(|(rank, _)| rank.unwrap_or(10)).sum::<usize>();
    assert!(total(&on) <= total(&off), "with the blend {on:#?}\nwithout {off:#?}");
}
