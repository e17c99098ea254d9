//! glibc's malloc, tuned for `mnemo serve` before the server allocates.
//!
//! Under a server's load glibc gives threads that allocate at once arenas of their own (up to
//! eight per core) and keeps what they free in them: an hour of mixed load grew the resident set
//! 351 -> 635 MiB with a live heap that a profile put near 273 MB. The same load with
//! `MALLOC_ARENA_MAX=2` stayed within 0.4% from the tenth minute to the fifteenth (336 -> 337
//! MiB; BENCHMARKS.md, "Under load").
//!
//! Over an hour the rest still grew in steps (343 -> 402 MiB, all of it anonymous memory, the
//! vector caches at their budgets). glibc raises its mmap threshold each time a large block is
//! freed, up to 32 MiB, so large buffers (listings, exports, which grow with the store) can move
//! into the arenas and hold them at their high-water mark. A fixed threshold
//! (`MALLOC_MMAP_THRESHOLD_`, glibc's initial 128 KiB) keeps each such buffer in a mapping of
//! its own, returned when freed. Measured over the same hour, it lowered the resident set by
//! 12-20 MiB throughout (341 against 360 MiB at minute 30, 390 against 402 at the end) but did
//! not remove the steps, which are not attributed yet (BENCHMARKS.md, "Under load").
//!
//! glibc reads these variables once, when the process first allocates, so `serve` starts itself
//! again with them set; a variable the operator set is left as it is.

/// What a server gets: two arenas, and large blocks always mapped on their own.
const TUNING: [(&str, &str); 2] = [("MALLOC_ARENA_MAX", "2"), ("MALLOC_MMAP_THRESHOLD_", "131072")];

/// Replaces this process with the same command under [`TUNING`], unless every variable is set
/// already; returns only when that was not needed or could not be done (the server then runs
/// under glibc's defaults, and says so).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
pub(crate) fn cap_for_serve() {
    use std::os::unix::process::CommandExt;
    let missing: Vec<_> = TUNING.iter().filter(|(var, _)| std::env::var_os(var).is_none()).collect();
    if missing.is_empty() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else { return };
    let mut command = std::process::Command::new(exe);
    command.args(std::env::args_os().skip(1));
    for (var, value) in &missing {
        command.env(var, value);
    }
    let err = command.exec();
    eprintln!("warning: could not restart with glibc's malloc tuned ({err}); memory may grow under load");
}

/// Other platforms and C libraries have no such variables.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn cap_for_serve() {}
