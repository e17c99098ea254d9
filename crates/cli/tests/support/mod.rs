//! What the tests that drive `mnemo serve` or `mnemo mcp` from a client SDK share: the binary
//! with a data dir, keys, a server on a loopback port, the SDK's virtualenv, a deadline.
#![allow(dead_code)] // each test binary uses its own part

pub(crate) mod aged;

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub(crate) fn mnemo(data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mnemo"));
    c.arg("--data-dir").arg(data).env("MNEMO_EMBEDDER", "hash").env_remove("MNEMO_CONFIG").env_remove("MNEMO_API_KEY");
    c
}

pub(crate) fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

pub(crate) fn create_key(data: &Path, tenant: &str) -> String {
    let o = mnemo(data).args(["keys", "create", "--tenant", tenant]).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    out.trim().to_string()
}

/// The python of a virtualenv prepared by `script` (a `scripts/pyvenv.sh` environment whose
/// finished install leaves `marker`) in `$env_var`, default `~/.cache/mnemo/<dir>`, or `None` (after saying why) when it is not
/// prepared. Under CI (`CI` set) a missing environment fails the test instead.
pub(crate) fn venv_python(env_var: &str, dir: &str, marker: &str, script: &str) -> Option<PathBuf> {
    let venv = match std::env::var_os(env_var) {
        Some(v) => PathBuf::from(v),
        None => {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            cache.join("mnemo").join(dir)
        }
    };
    let python = venv.join("bin").join("python");
    if venv.join(marker).is_file() && python.is_file() {
        return Some(python);
    }
    let why = format!("the virtualenv is not prepared at {}: run `{script}` (or set {env_var})", venv.display());
    if std::env::var_os("CI").is_some() {
        panic!("{why}");
    }
    eprintln!("skipping: {why}");
    None
}

/// A `mnemo serve` child process, killed when the test ends however it ends.
pub(crate) struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub(crate) base: String,
}

impl Server {
    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the server with SIGKILL, as a crash or the OOM killer would: no drain, no flush.
    pub(crate) fn kill_9(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn serve(data: &Path) -> Server {
    serve_with(data, &[])
}

/// [`serve`] with more environment variables (settings, `MNEMO_ADMIN_KEY`).
pub(crate) fn serve_with(data: &Path, env: &[(&str, &str)]) -> Server {
    // The address is read from the default `info` log line, in text.
    let mut child = mnemo(data)
        .args(["serve", "--addr", "127.0.0.1:0"])
        // Unless a test sets it, the server decides its arenas (src/arenas.rs).
        .env_remove("MALLOC_ARENA_MAX")
        .env_remove("MALLOC_MMAP_THRESHOLD_")
        .envs(env.iter().copied())
        .env_remove("MNEMO_LOG")
        .env_remove("RUST_LOG")
        .env_remove("MNEMO_LOG_FORMAT")
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mnemo serve");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("the server exited before listening").unwrap();
        if let Some(addr) = line.split("listening on http://").nth(1) {
            break addr.trim().to_string();
        }
    };
    // Keep draining its stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    Server { child, base: format!("http://{addr}") }
}

/// Waits for a child with a deadline; returns (success, stdout, stderr).
pub(crate) fn wait_with_deadline(mut child: Child, limit: Duration) -> (bool, String, String) {
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let (out, err) = (out_reader.join().unwrap(), err_reader.join().unwrap());
    match status {
        Some(s) => (s.success(), out, err),
        None => (false, out, format!("{err}\n(killed after {limit:?})")),
    }
}
