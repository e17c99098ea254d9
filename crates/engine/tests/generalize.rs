//! What the memory does with language it was not written for: events told in passing, the
//! user spoken of by name, constraints that protect them.

use chrono::Duration;
use mnemo::core::recall::ExactReason;
use mnemo::core::{Kind, SectionName};
use mnemo::store::ListFilter;

use crate::common::{chat, hashed, t0};

#[test]
fn what_happened_to_the_user_is_kept_dated_and_recalled() {
    let f = hashed();
    let s = chat("ines", "c1");
    f.clock.set(t0());
    f.say(&s, &["ugh long week. Last Saturday I ran my first half marathon in Porto, legs still hurt lol"]);
    let events = f.memory.list(&s, &ListFilter { kinds: vec![Kind::Event], ..ListFilter::default() }).unwrap();
    let run = events.iter().find(|m| m.content.contains("half marathon")).expect("the race is kept as an event");
    // t0 is Monday 2 March 2026: last Saturday is 28 February.
    assert_eq!(run.valid_from.map(|d| d.date_naive().to_string()).as_deref(), Some("2026-02-28"));

    f.clock.set(t0() + Duration::days(20));
    let r = f.memory.recall(&chat("ines", "c2"), "when did I run that half marathon?", Some(3)).unwrap();
    assert!(r.items.iter().any(|i| i.memory.content.contains("half marathon")), "{:#?}", r.items);
}

#[test]
fn a_question_about_the_user_by_name_finds_what_they_said() {
    let f = hashed();
    let s = chat("ines", "c1");
    f.say(&s, &["Hi, my name is Ines.", "I live in Porto with my two cats."]);
    let r = f.memory.recall(&chat("ines", "c2"), "Where does Ines live?", Some(3)).unwrap();
    assert!(r.items.first().is_some_and(|i| i.memory.content.contains("Porto")), "{:#?}", r.items);
}

#[test]
fn a_constraint_reaches_the_block_for_a_request_it_bears_on_and_only_then() {
    let f = hashed();
    let s = chat("ines", "c1");
    f.say(
        &s,
        &[
            "btw I'm severely allergic to peanuts, found out the hard way as a kid.",
            "I work as a nurse at the children's hospital.",
            "I have a dog named Pico.",
            "We went to the coast last weekend and it rained the whole time.",
        ],
    );
    f.clock.set(t0() + Duration::days(10));
    let c2 = chat("ines", "c2");
    let ctx = f.memory.context(&c2, "Can you suggest a dessert for Sunday lunch with friends?", Some(300)).unwrap();
    let adapt = ctx.block.sections.iter().find(|sec| sec.name == SectionName::Adapt);
    assert!(adapt.is_some_and(|sec| sec.items.iter().any(|i| i.text.contains("peanuts"))), "{}", ctx.block.text);
    let trace = f.memory.trace(&c2, &ctx.turn_id).unwrap().unwrap();
    assert!(trace.retrieved.iter().any(|i| i.exact == Some(ExactReason::Safety)), "the trace says why: {trace:#?}");

    let unrelated = f.memory.context(&chat("ines", "c3"), "How do I center a div with flexbox?", Some(300)).unwrap();
    assert!(!unrelated.block.text.contains("peanuts"), "{}", unrelated.block.text);
}
