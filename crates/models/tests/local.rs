//! Sanity checks of the real all-MiniLM-L6-v2 model. The model must be present (CI runs
//! scripts/fetch-model.sh first); a missing model fails loudly instead of skipping, so a
//! broken fetch can never turn these tests into silent passes.

use std::sync::OnceLock;

use mnemo_models::{Embedder, LocalEmbedder, cosine, default_model_dir, model_present};

/// Loads the model once per test process; every test shares it.
fn model() -> &'static LocalEmbedder {
    static MODEL: OnceLock<LocalEmbedder> = OnceLock::new();
    MODEL.get_or_init(|| {
        let dir = default_model_dir();
        assert!(
            model_present(&dir),
            "all-MiniLM-L6-v2 not found at {}: run scripts/fetch-model.sh (or set MNEMO_MODEL_DIR)",
            dir.display()
        );
        LocalEmbedder::open(&dir).expect("model files present but failed to load")
    })
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

#[test]
fn id_dim_and_unit_norm() {
    let m = model();
    assert_eq!(m.dim(), 384);
    assert!(m.id().starts_with("local:"), "{}", m.id());
    if std::env::var_os("MNEMO_MODEL_DIR").is_none() {
        assert_eq!(m.id(), "local:all-MiniLM-L6-v2");
    }
    let vs = m
        .embed(&["hello world", "", "A much longer sentence about nothing in particular, to vary the length."])
        .unwrap();
    assert_eq!(vs.len(), 3);
    for v in &vs {
        assert_eq!(v.len(), 384);
        assert!((norm(v) - 1.0).abs() < 1e-4, "norm {}", norm(v));
    }
    assert!(m.embed(&[]).unwrap().is_empty());
}

#[test]
fn semantics() {
    let v = model()
        .embed(&["I adopted a puppy named Biscuit", "my new dog is called Biscuit", "quarterly tax filing deadline"])
        .unwrap();
    let close = cosine(&v[0], &v[1]);
    let far = cosine(&v[0], &v[2]);
    assert!(close > far + 0.2, "paraphrase {close} vs unrelated {far}");
    assert!(close > 0.5, "{close}");
}

#[test]
fn batch_equals_single() {
    let m = model();
    let texts = [
        "short",
        "I adopted a puppy named Biscuit",
        "The quick brown fox jumps over the lazy dog while the farmer watches from the porch, sipping coffee.",
        "",
        "tax",
        "Rust's borrow checker prevents data races at compile time.",
    ];
    let batch = m.embed(&texts).unwrap();
    for (text, b) in texts.iter().zip(&batch) {
        let single = &m.embed(&[text]).unwrap()[0];
        let max_diff = single.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
        assert!(max_diff < 1e-4, "{text:?}: batch and single differ by {max_diff}");
    }
}

#[test]
fn long_input_is_truncated_not_rejected() {
    let long = "memory ".repeat(2000);
    let v = model().embed(&[&long]).unwrap();
    assert!((norm(&v[0]) - 1.0).abs() < 1e-4);
}

#[test]
fn small_batch_size_gives_same_results() {
    let dir = default_model_dir();
    let small = LocalEmbedder::open(&dir).unwrap().with_batch_size(2);
    let texts = ["one", "two words", "three words here", "and four words here", "five"];
    let a = small.embed(&texts).unwrap();
    let b = model().embed(&texts).unwrap();
    for (x, y) in a.iter().zip(&b) {
        assert!(cosine(x, y) > 0.9999);
    }
}

#[test]
fn missing_model_dir_is_model_not_found() {
    let tmp = tempfile::tempdir().unwrap();
    let err = LocalEmbedder::open(tmp.path()).unwrap_err();
    assert!(err.to_string().contains("mnemo model fetch"), "{err}");
}
