//! Settings as the engine's config file will contain them, and the factory's early errors.

use std::path::PathBuf;

use mnemo_models::{EmbedderKind, EmbedderSettings, ModelError, default_model_dir, open_embedder};

#[test]
fn defaults() {
    let s = EmbedderSettings::default();
    assert_eq!(s.kind, EmbedderKind::Local);
    assert_eq!(s.model_dir, None);
    assert_eq!(s.openai_base_url, "https://api.openai.com/v1");
    assert_eq!(s.openai_model, "text-embedding-3-small");
    assert_eq!((s.openai_api_key.as_deref(), s.openai_dim), (None, None));
    assert_eq!((s.hash_dim, s.batch_size, s.timeout_secs), (384, 32, 30));
    assert_eq!(s.resolved_model_dir(), default_model_dir());
    assert!(
        default_model_dir().ends_with("mnemo/models/all-MiniLM-L6-v2") || std::env::var_os("MNEMO_MODEL_DIR").is_some()
    );
}

#[test]
fn toml_roundtrip_and_partial_sections() {
    let empty: EmbedderSettings = toml::from_str("").unwrap();
    assert_eq!(empty, EmbedderSettings::default());

    let s: EmbedderSettings = toml::from_str(
        r#"
        kind = "openai"
        openai_base_url = "http://127.0.0.1:8080/v1"
        openai_model = "nomic-embed-text"
        openai_dim = 768
        batch_size = 8
        model_dir = "/opt/models/minilm"
        "#,
    )
    .unwrap();
    assert_eq!(s.kind, EmbedderKind::Openai);
    assert_eq!(s.openai_dim, Some(768));
    assert_eq!(s.batch_size, 8);
    assert_eq!(s.hash_dim, 384);
    assert_eq!(s.resolved_model_dir(), PathBuf::from("/opt/models/minilm"));
    let back: EmbedderSettings = toml::from_str(&toml::to_string(&s).unwrap()).unwrap();
    assert_eq!(back, s);
}

#[test]
fn unknown_fields_and_kinds_are_rejected() {
    let err = toml::from_str::<EmbedderSettings>("hash_dims = 3").unwrap_err().to_string();
    assert!(err.contains("hash_dims"), "{err}");
    assert!(toml::from_str::<EmbedderSettings>("kind = \"bert\"").is_err());
}

#[test]
fn kind_from_str_and_display() {
    for kind in [EmbedderKind::Local, EmbedderKind::Openai, EmbedderKind::Hash] {
        assert_eq!(kind.to_string().parse::<EmbedderKind>().unwrap(), kind);
    }
    assert_eq!(" OpenAI ".parse::<EmbedderKind>().unwrap(), EmbedderKind::Openai);
    let msg = "bert".parse::<EmbedderKind>().unwrap_err().to_string();
    assert!(msg.contains("bert") && msg.contains("local, openai, hash"), "{msg}");
}

#[test]
fn debug_hides_api_key() {
    let s = EmbedderSettings { openai_api_key: Some("sk-very-secret".into()), ..Default::default() };
    let shown = format!("{s:?}");
    assert!(!shown.contains("sk-very-secret") && shown.contains("redacted"), "{shown}");
}

#[test]
fn open_hash() {
    let s = EmbedderSettings { kind: EmbedderKind::Hash, hash_dim: 64, ..Default::default() };
    let e = open_embedder(&s).unwrap();
    assert_eq!((e.id(), e.dim()), ("hash:64", 64));
    assert_eq!(e.embed(&["a b"]).unwrap()[0].len(), 64);
}

#[test]
fn open_rejects_nonsense_numbers() {
    let zero_dim = EmbedderSettings { kind: EmbedderKind::Hash, hash_dim: 0, ..Default::default() };
    assert!(matches!(open_embedder(&zero_dim), Err(ModelError::InvalidSettings { field: "hash_dim", .. })));
    let zero_batch = EmbedderSettings { kind: EmbedderKind::Hash, batch_size: 0, ..Default::default() };
    assert!(matches!(open_embedder(&zero_batch), Err(ModelError::InvalidSettings { field: "batch_size", .. })));
}

#[test]
fn open_openai_known_model_needs_no_network() {
    let s = EmbedderSettings {
        kind: EmbedderKind::Openai,
        // Nothing listens on port 9 here; a probe would fail the test.
        openai_base_url: "http://127.0.0.1:9/v1".into(),
        ..Default::default()
    };
    let e = open_embedder(&s).unwrap();
    assert_eq!((e.id(), e.dim()), ("openai:text-embedding-3-small", 1536));
}

#[test]
fn open_openai_unknown_model_probes_and_reports_unreachable_server() {
    let s = EmbedderSettings {
        kind: EmbedderKind::Openai,
        openai_base_url: "http://127.0.0.1:9/v1".into(),
        openai_model: "custom".into(),
        ..Default::default()
    };
    let err = open_embedder(&s).err().expect("probe must fail");
    assert!(err.to_string().contains("http://127.0.0.1:9/v1/embeddings"), "{err}");
}

#[test]
fn open_local_without_model_says_how_to_fetch() {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbedderSettings { model_dir: Some(dir.path().join("nope")), ..Default::default() };
    let err = open_embedder(&s).err().expect("must fail");
    if cfg!(feature = "local") {
        assert!(matches!(err, ModelError::ModelNotFound { .. }), "{err:?}");
        assert!(err.to_string().contains("mnemo model fetch"), "{err}");
    } else {
        assert!(matches!(err, ModelError::FeatureDisabled("local")), "{err:?}");
    }
}
