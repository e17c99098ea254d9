//! glibc's malloc arenas, capped for `mnemo serve` before the server allocates.
//!
//! Under a server's load glibc gives threads that allocate at once arenas of their own (up to
//! eight per core) and keeps what they free in them: an hour of mixed load grew the resident set
//! 351 -> 635 MiB with a live heap that a profile put near 273 MB. The same load with
//! `MALLOC_ARENA_MAX=2` stayed within 0.4% from the tenth minute to the fifteenth (336 -> 337
//! MiB; BENCHMARKS.md, "Under load"). glibc reads the variable once, when the process first
//! allocates, so `serve` starts itself again with it set, unless the operator set it already.

/// The arenas a server gets: two, as the measured run.
const ARENAS: &str = "2";

/// glibc's variable for the number of arenas.
const VAR: &str = "MALLOC_ARENA_MAX";

/// Replaces this process with the same command under a capped arena count, unless the variable
/// is set already; returns only when that was not needed or could not be done (the server then
/// runs under glibc's defaults, and says so).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn cap_for_serve() {
    use std::os::unix::process::CommandExt;
    if std::env::var_os(VAR).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let err = std::process::Command::new(exe).args(std::env::args_os().skip(1)).env(VAR, ARENAS).exec();
    eprintln!("warning: could not restart with {VAR}={ARENAS} ({err}); memory may grow under load");
}

/// Other platforms and C libraries have no such variable.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn cap_for_serve() {}
