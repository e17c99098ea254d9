//! `mnemo serve` runs with glibc's malloc arenas capped and its mmap threshold fixed (see
//! `src/arenas.rs`), and an operator's own setting wins.

mod support;

/// The server's environment, as the kernel has it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn env_of(pid: u32, var: &str) -> Option<String> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let prefix = format!("{var}=");
    env.split(|b| *b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok())
        .find_map(|kv| kv.strip_prefix(prefix.as_str()).map(str::to_string))
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn arenas_of(pid: u32) -> Option<String> {
    env_of(pid, "MALLOC_ARENA_MAX")
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_server_caps_its_arenas_unless_told_otherwise() {
    let dir = tempfile::tempdir().unwrap();
    // The test's own environment must not decide the outcome.
    let server = support::serve_with(dir.path(), &[]);
    assert_eq!(arenas_of(server.pid()), Some("2".into()), "serve restarts itself with the cap");
    assert_eq!(env_of(server.pid(), "MALLOC_MMAP_THRESHOLD_"), Some("131072".into()), "and a fixed mmap threshold");
    drop(server);
    let dir = tempfile::tempdir().unwrap();
    let server = support::serve_with(dir.path(), &[("MALLOC_ARENA_MAX", "4")]);
    assert_eq!(arenas_of(server.pid()), Some("4".into()), "the operator's setting wins");
    assert_eq!(env_of(server.pid(), "MALLOC_MMAP_THRESHOLD_"), Some("131072".into()), "the other is still set");
}
