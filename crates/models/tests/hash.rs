//! The hash embedder must be deterministic and still rank paraphrases above unrelated text,
//! since other crates' tests lean on it as a cheap stand-in for a real model.

use mnemo_models::{Embedder, HashEmbedder, cosine};

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

#[test]
fn id_dim_and_unit_norm() {
    let e = HashEmbedder::new(384);
    assert_eq!(e.id(), "hash:384");
    assert_eq!(e.dim(), 384);
    assert_eq!(HashEmbedder::default().dim(), 384);
    let vs = e.embed(&["Hello, world!", "", "the of and", "ünïcödé wörds 42"]).unwrap();
    assert_eq!(vs.len(), 4);
    for v in &vs {
        assert_eq!(v.len(), 384);
        assert!((norm(v) - 1.0).abs() < 1e-5, "norm {}", norm(v));
    }
}

#[test]
fn empty_batch() {
    assert!(HashEmbedder::new(16).embed(&[]).unwrap().is_empty());
}

#[test]
fn deterministic_across_instances_and_batches() {
    let a = HashEmbedder::new(64).embed(&["Biscuit the puppy", "x"]).unwrap();
    let b = HashEmbedder::new(64).embed(&["Biscuit the puppy"]).unwrap();
    assert_eq!(a[0], b[0]);
    // Pin the output so a change of hash function (which would silently invalidate stored
    // vectors) shows up as a test failure.
    let nonzero: Vec<usize> = b[0].iter().enumerate().filter(|(_, x)| **x != 0.0).map(|(i, _)| i).collect();
    assert_eq!(nonzero.len(), 3, "{nonzero:?}");
}

#[test]
fn paraphrases_beat_unrelated() {
    let e = HashEmbedder::new(384);
    let cases = [
        (
            "I adopted a puppy named Biscuit",
            "Biscuit is the name of the puppy I adopted",
            "the quarterly tax filing deadline is in April",
        ),
        (
            "My favourite programming language is Rust",
            "Rust is my favourite language for programming",
            "We went hiking in the Alps last summer",
        ),
        (
            "The meeting was moved to Thursday afternoon",
            "Thursday afternoon meeting moved",
            "She prefers green tea over coffee",
        ),
    ];
    for (a, para, other) in cases {
        let v = e.embed(&[a, para, other]).unwrap();
        let sim = cosine(&v[0], &v[1]);
        let unrelated = cosine(&v[0], &v[2]);
        assert!(sim > 0.5, "{a:?} vs {para:?}: {sim}");
        assert!(sim > unrelated + 0.3, "{a:?}: paraphrase {sim} vs unrelated {unrelated}");
        assert!(unrelated.abs() < 0.3, "{a:?} vs {other:?}: {unrelated}");
    }
}

#[test]
fn stemming_and_stopwords_help() {
    let e = HashEmbedder::new(384);
    let v = e.embed(&["walking the dogs", "walked a dog", "the a an"]).unwrap();
    assert!(cosine(&v[0], &v[1]) > 0.6, "{}", cosine(&v[0], &v[1]));
}
