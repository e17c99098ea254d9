//! Reconsolidation: the turn that contradicts a memory sees it flagged, before the correction is
//! even ingested; other turns do not.

use mnemo::core::SectionName;

use crate::common::{chat, hashed};

#[test]
fn a_contradicting_message_flags_the_memory_in_its_own_block() {
    let f = hashed();
    f.say(&chat("ines", "c1"), &["I live in Lisbon.", "I have a dog named Biscuit."]);
    let here = chat("ines", "c2");
    let ctx = f.memory.context(&here, "Actually I live in Porto now, where should I go running?", None).unwrap();
    let lines: Vec<&str> = ctx
        .block
        .sections
        .iter()
        .filter(|s| s.name != SectionName::Excerpt)
        .flat_map(|s| s.items.iter().map(|i| i.text.as_str()))
        .collect();
    let home = lines.iter().find(|l| l.contains("Lisbon")).unwrap_or_else(|| panic!("{}", ctx.block.text));
    assert!(home.contains("possibly outdated") && home.contains("Porto"), "{home}");
    assert!(lines.iter().filter(|l| l.contains("possibly outdated")).count() == 1, "{}", ctx.block.text);

    let recall = f.memory.recall(&here, "I don't have a dog anymore", Some(5)).unwrap();
    let dog = recall.items.iter().find(|i| i.memory.content.contains("Biscuit")).expect("dog recalled");
    assert!(dog.possibly_outdated.as_deref().is_some_and(|s| s.contains("dog")), "{dog:#?}");

    // Nothing was written by reading the message, and an unrelated turn flags nothing.
    assert!(f.active_contents(&here).iter().all(|c| !c.contains("Porto")));
    let calm = f.memory.context(&here, "Where should I go running this weekend?", None).unwrap();
    assert!(!calm.block.text.contains("possibly outdated"), "{}", calm.block.text);
}
