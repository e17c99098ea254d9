//! The binary's one `tracing` subscriber: the libraries only emit events and spans, and this
//! decides which are shown and how. Everything goes to stderr, so what commands print on stdout
//! (JSON, reports, keys) stays clean for pipes.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum LogFormat {
    /// One human-readable line per event (colours on a terminal).
    Text,
    /// One JSON object per event, with its span's fields: for log collectors of servers.
    Json,
}

/// Installs the subscriber. The filter is `MNEMO_LOG`, else `RUST_LOG`, else `default` (a
/// directive such as `warn` or `info,mnemo=debug`). A filter that does not parse is reported
/// and replaced by the default rather than silently showing nothing.
pub(crate) fn init(format: LogFormat, default: &str) {
    let (source, directives) = match (std::env::var("MNEMO_LOG"), std::env::var("RUST_LOG")) {
        (Ok(v), _) if !v.trim().is_empty() => ("MNEMO_LOG", v),
        (_, Ok(v)) if !v.trim().is_empty() => ("RUST_LOG", v),
        _ => ("the default", default.to_string()),
    };
    let filter = EnvFilter::try_new(&directives).unwrap_or_else(|e| {
        eprintln!("warning: {source}={directives:?} is not a log filter ({e}); using {default:?}");
        EnvFilter::new(default)
    });
    // Closing a span logs its duration: cheap, and only for spans the filter enables.
    let builder =
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_span_events(FmtSpan::CLOSE);
    let installed = match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).try_init(),
        LogFormat::Json => builder.json().with_current_span(true).with_span_list(true).try_init(),
    };
    if let Err(e) = installed {
        eprintln!("warning: logging was not set up: {e}");
    }
}
