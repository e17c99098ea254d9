//! The loop with the real local model (all-MiniLM-L6-v2 from the cache directory).
//! CI fetches the model first (`scripts/fetch-model.sh`); a missing model fails loudly.

use std::sync::Arc;

use mnemo::core::RecallMode;
use mnemo::models::{Embedder, EmbedderSettings, LocalEmbedder};

use crate::common::{chat, with_embedder};

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
fn a_paraphrase_reinforces_through_the_real_model() {
    let f = with_embedder(Some(model()));
    let s = chat("dana", "c1");
    f.say(&s, &["I really love hiking in the mountains."]);
    let r = f.say(&chat("dana", "c2"), &["I love hiking in the mountains!"]);
    assert!(matches!(r.ops[0].verdict, mnemo::core::Verdict::Deduplicated { .. }), "{:?}", r.ops[0].verdict);
}
