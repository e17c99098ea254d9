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

/// Vectors of all-MiniLM-L6-v2 computed by a general tensor library (candle 0.9's BERT, the
/// encoder mnemo used before its own), in `fixtures/minilm-reference.json`: the encoder must
/// give the same vectors, so stored embeddings stay comparable across the change.
#[test]
fn vectors_match_the_reference_implementation() {
    if std::env::var_os("MNEMO_MODEL_DIR").is_some() {
        return; // the fixture is for the default model only
    }
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/minilm-reference.json")).unwrap();
    let fixture: serde_json::Value = serde_json::from_str(&text).unwrap();
    let texts: Vec<&str> = fixture["texts"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    let want: Vec<Vec<f32>> = serde_json::from_value(fixture["vectors"].clone()).unwrap();
    let batch = model().embed(&texts).unwrap();
    for ((text, want), got) in texts.iter().zip(&want).zip(&batch) {
        let single = &model().embed(&[text]).unwrap()[0];
        for v in [got, single] {
            let max_diff = v.iter().zip(want).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
            assert!(max_diff < 2e-5, "{text:.40?}: differs from the reference by up to {max_diff}");
            assert!(cosine(v, want) > 0.999_99, "{text:.40?}: cosine {}", cosine(v, want));
        }
    }
}

/// Checkpoints name and store the same weights in other ways: under a `bert.` prefix, layer
/// norms as `gamma`/`beta`, in bfloat16. The all-MiniLM weights rewritten so must load and give
/// the same vectors, up to bfloat16's precision.
#[test]
fn a_checkpoint_with_prefixed_names_and_bf16_weights_gives_the_same_vectors() {
    use safetensors::tensor::{Dtype, TensorView};
    let dir = default_model_dir();
    let bytes = std::fs::read(dir.join("model.safetensors")).unwrap();
    let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
    let mut renamed: Vec<(String, Vec<usize>, Vec<u8>)> = Vec::new();
    for (name, view) in st.tensors() {
        if view.dtype() != Dtype::F32 {
            continue; // buffers such as `embeddings.position_ids`, which the encoder does not read
        }
        let name = name.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta");
        let bf16: Vec<u8> = view
            .data()
            .chunks_exact(4)
            .flat_map(|b| {
                let bits = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                let rounded = bits.wrapping_add(0x7fff + ((bits >> 16) & 1)) >> 16;
                u16::try_from(rounded).unwrap().to_le_bytes()
            })
            .collect();
        renamed.push((format!("bert.{name}"), view.shape().to_vec(), bf16));
    }
    let views: Vec<(String, TensorView<'_>)> = renamed
        .iter()
        .map(|(name, shape, data)| (name.clone(), TensorView::new(Dtype::BF16, shape.clone(), data).unwrap()))
        .collect();
    let tmp = tempfile::tempdir().unwrap();
    safetensors::serialize_to_file(views, None, &tmp.path().join("model.safetensors")).unwrap();
    for file in ["config.json", "tokenizer.json"] {
        std::fs::copy(dir.join(file), tmp.path().join(file)).unwrap();
    }
    let other = LocalEmbedder::open(tmp.path()).unwrap();
    let texts = ["I adopted a puppy named Biscuit", "what is my dog's name?", "quarterly tax filing deadline"];
    let (a, b) = (model().embed(&texts).unwrap(), other.embed(&texts).unwrap());
    for ((text, x), y) in texts.iter().zip(&a).zip(&b) {
        assert!(cosine(x, y) > 0.999, "{text}: cosine {}", cosine(x, y));
    }
}

/// A checkpoint that is not a BERT encoder is refused at load with the reason, not at the
/// first embedding.
#[test]
fn a_checkpoint_without_bert_tensors_is_refused_with_the_reason() {
    let dir = default_model_dir();
    let tmp = tempfile::tempdir().unwrap();
    for file in ["config.json", "tokenizer.json"] {
        std::fs::copy(dir.join(file), tmp.path().join(file)).unwrap();
    }
    let data = vec![0u8; 16];
    let view = safetensors::tensor::TensorView::new(safetensors::tensor::Dtype::F32, vec![4], &data).unwrap();
    safetensors::serialize_to_file([("lm_head.weight", view)], None, &tmp.path().join("model.safetensors")).unwrap();
    let err = LocalEmbedder::open(tmp.path()).unwrap_err().to_string();
    assert!(err.contains("embeddings.word_embeddings.weight"), "{err}");
}
