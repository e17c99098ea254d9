//! The scenario file format (the contract is `docs/SCENARIOS.md`): TOML read by hand rather than by
//! derived serde types, so every error can name the file, the step (1-based) and the key.
//!
//! Parsing also resolves what the format leaves implicit: each step's effective scope (file
//! defaults plus step overrides, the last message chat when none is named) and its clock time
//! (steps without `at` keep the last time), so the runner never has to track either.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use chrono::{DateTime, Utc};
use mnemo::{DocumentOwner, MemoryScope};
use mnemo_core::window::{PartName, Stage};
use mnemo_core::{
    AgentId, ChatId, CoreError, DocumentKind, Kind, Layer, Outcome, Scope, SectionName, StatusKind, TenantId, UserId,
};
use toml::{Table, Value};

use crate::error::EvalError;

/// The clock before the first step that sets one, so scenarios without any `at` still replay
/// identically.
pub const DEFAULT_START: &str = "2026-01-01T00:00:00Z";
/// The chat of message steps before any step names one.
pub const DEFAULT_CHAT: &str = "c1";
/// How many recall results a `recall` step looks at when `top` is absent.
pub const DEFAULT_TOP: usize = 3;

/// Scenario names become message-id prefixes, which the engine caps at 128 bytes.
const MAX_NAME_LEN: usize = 100;

const TOP_KEYS: &[&str] = &["name", "about", "tenant", "user_id", "agent", "memory_scope", "tuning", "step"];
const ACTION_KEYS: &[&str] = &[
    "user",
    "maintain",
    "expect_memory",
    "expect_no_memory",
    "recall",
    "context",
    "policy",
    "pin",
    "unpin",
    "delete",
    "erase_user",
    "remember",
    "store_document",
    "similar_documents",
    "observe",
    "approve",
    "reject",
    "usage",
    "rotate",
];
const COMMON_KEYS: &[&str] = &["tenant", "user_id", "agent", "at"];

/// Keys (besides the action key and the common ones) each action accepts.
fn extra_keys(action: &str) -> &'static [&'static str] {
    match action {
        "user" => &["assistant", "chat", "embedder_down"],
        "expect_memory" => &["kind", "status", "count", "chat"],
        "expect_no_memory" => &["kind", "chat"],
        "recall" => &["chat", "top", "hit", "miss"],
        "context" => &["chat", "contains", "lacks", "sections", "section_lacks", "budget"],
        "pin" | "unpin" | "delete" => &["chat"],
        "remember" => &["kind", "chat", "key", "layer"],
        "store_document" => &["kind", "source", "owner"],
        "similar_documents" => &["threshold", "top", "hit", "miss"],
        "observe" => &["tool", "outcome", "note", "chat"],
        "usage" => &["capacity", "chat", "hold", "hold_documents", "hold_recent", "stage", "keep", "shed"],
        "rotate" => &["chat", "budget", "contains", "lacks", "parts"],
        _ => &[],
    }
}

fn is_known_key(key: &str) -> bool {
    ACTION_KEYS.contains(&key) || COMMON_KEYS.contains(&key) || ACTION_KEYS.iter().any(|a| extra_keys(a).contains(&key))
}

/// One parsed scenario file.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Unique kebab-case name; prefixes message ids and report lines.
    pub name: String,
    /// What the scenario demonstrates, in words.
    pub about: String,
    /// The file it came from, as it will be named in reports.
    pub file: PathBuf,
    /// Whether extracted memories follow the user or stay in their chat.
    pub memory_scope: MemoryScope,
    /// Thresholds and periods this scenario runs with, laid over the run's configuration
    /// (`[tuning.lifecycle]`, ...: the tuning sections of `mnemo.toml`), so a transition that
    /// takes 500 memories by default can be shown with three. Empty: the run's tuning as is.
    pub tuning: Table,
    /// The steps, in file order.
    pub steps: Vec<Step>,
}

/// One step with its implicit context made explicit.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// 1-based position in the file, as reports name it.
    pub number: usize,
    /// The clock for this step: its `at` (or `maintain` time), else the previous step's.
    pub at: DateTime<Utc>,
    /// Tenant, agent and user (file defaults plus overrides) and the chat (named, else the last
    /// message step's, else `c1`).
    pub scope: Scope,
    /// What the step does.
    pub action: Action,
}

/// What a step does or checks.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A user message, optionally answered by the assistant one second later.
    Message {
        /// The user's words.
        user: String,
        /// The assistant's reply.
        assistant: Option<String>,
        /// The embedding model is unreachable during this step: the exchange is ingested the
        /// way a deployment ingests while its model server is down (gate dedup by content
        /// hash only, no vectors stored), for the jobs that repair that afterwards.
        embedder_down: bool,
    },
    /// Runs the lifecycle jobs as of the step's time.
    Maintain,
    /// Some memory must exist.
    ExpectMemory {
        /// Substrings, any of which may match (case-insensitive).
        alternatives: Vec<String>,
        /// Only memories of this kind count.
        kind: Option<Kind>,
        /// Statuses that count (default: active).
        statuses: Vec<StatusKind>,
        /// Exactly this many memories must match.
        count: Option<usize>,
    },
    /// No active memory may contain any alternative.
    ExpectNoMemory {
        /// Substrings none of which may appear.
        alternatives: Vec<String>,
        /// Only memories of this kind count.
        kind: Option<Kind>,
    },
    /// Hybrid recall, judged on path B's top results.
    Recall {
        /// The query.
        query: String,
        /// How many ranked results are looked at.
        top: usize,
        /// Each must appear in one of the top results; an entry may list alternatives separated
        /// by `|` ([`expected_alternatives`]), any one of which is enough.
        hit: Vec<String>,
        /// None may appear in any of the top results; for an entry listing alternatives
        /// separated by `|`, none of them may.
        miss: Vec<String>,
    },
    /// The assembled block for a new turn.
    Context {
        /// The user's new message.
        message: String,
        /// Token budget (the configured default when absent).
        budget: Option<usize>,
        /// Substrings the block must contain; an entry `a|b` is satisfied by either alternative.
        contains: Vec<String>,
        /// Substrings the block must not contain; an entry `a|b` fails on either alternative.
        lacks: Vec<String>,
        /// Substrings each section must contain (a missing section is empty); an entry `a|b` is
        /// satisfied by either alternative.
        sections: BTreeMap<SectionName, Vec<String>>,
        /// Substrings each section must not contain; an entry `a|b` fails on either alternative.
        section_lacks: BTreeMap<SectionName, Vec<String>>,
    },
    /// Authors a tenant policy.
    Policy {
        /// Stable policy key.
        key: String,
        /// The rule in words.
        text: String,
        /// Structured value (null when absent).
        value: serde_json::Value,
    },
    /// Pins the single active memory containing the substring.
    Pin(String),
    /// Unpins the single active memory containing the substring.
    Unpin(String),
    /// Deletes (archives) the single active memory containing the substring.
    Delete(String),
    /// Erases everything about the user.
    EraseUser,
    /// An agent stores a document (research, tool output, file summary) with
    /// `Memory::store_document`.
    StoreDocument {
        /// The full text.
        text: String,
        /// What it is (`research` when absent).
        kind: DocumentKind,
        /// Where it came from (empty when absent).
        source: String,
        /// `agent` (default) or `user`.
        owner: DocumentOwner,
    },
    /// "Has this been researched before?": `Memory::similar_documents`, judged on the documents
    /// it returns (their full text).
    SimilarDocuments {
        /// The question or would-be result.
        text: String,
        /// The similarity threshold (the configured one when absent).
        threshold: Option<f32>,
        /// Most documents looked at (the configured default when absent).
        top: Option<usize>,
        /// Each must appear in a returned document; `a|b` for alternatives.
        hit: Vec<String>,
        /// None may appear in any returned document.
        miss: Vec<String>,
    },
    /// An agent records what it did in the step's session (`Memory::observe`,
    /// `POST /v1/observations`).
    Observe {
        /// What it was applied to (`args_summary`).
        args_summary: String,
        /// The tool.
        tool: String,
        /// How it ended.
        outcome: Outcome,
        /// What was learned (`text`), if anything.
        note: Option<String>,
    },
    /// A person approves the single candidate (provisional memory) visible to the step's scope
    /// whose content contains the substring (`Memory::approve`).
    Approve(String),
    /// A person rejects it (`Memory::reject`).
    Reject(String),
    /// A coding agent reports how full its context window is and what it holds
    /// (`Memory::session_usage`); the advice is judged.
    Usage {
        /// Tokens in use.
        used: usize,
        /// The window's size.
        capacity: usize,
        /// Memories held (whole), each the one active memory containing the substring.
        hold: Vec<String>,
        /// Documents held (whole), each the one document of the step's scope containing it.
        hold_documents: Vec<String>,
        /// The chat's last messages held as one range (0: none).
        hold_recent: usize,
        /// The stage the advice must report.
        stage: Option<Stage>,
        /// Held items whose text contains one of these must be kept.
        keep: Vec<String>,
        /// Held items whose text contains one of these must be stepped down or released.
        shed: Vec<String>,
    },
    /// The session's segment rotates (`Memory::rotate_session`); the bundle is judged, and must
    /// fit its budget.
    Rotate {
        /// Token budget of the bundle (the configured one when absent).
        budget: Option<usize>,
        /// Substrings the bundle must contain.
        contains: Vec<String>,
        /// Substrings it must not contain.
        lacks: Vec<String>,
        /// Substrings each part must contain (a missing part is empty).
        parts: BTreeMap<PartName, Vec<String>>,
    },
    /// A memory the application adds itself (`POST /v1/memories`, `Memory::add`), through the
    /// same gate as extraction; an event is dated at the step's time.
    Remember {
        /// The memory's content.
        content: String,
        /// Its kind (`fact` when absent).
        kind: Kind,
        /// Its exact-lookup key (a keyed preference), if any.
        key: Option<String>,
        /// The layer that owns it (the step's scope, chat included, when absent): `tenant` and
        /// `tenant_agent` writes are provisional until an `approve` step.
        layer: Option<Layer>,
    },
}

impl Action {
    /// The key that names the action in the file, for report lines.
    pub fn key(&self) -> &'static str {
        match self {
            Action::Message { .. } => "user",
            Action::Maintain => "maintain",
            Action::ExpectMemory { .. } => "expect_memory",
            Action::ExpectNoMemory { .. } => "expect_no_memory",
            Action::Recall { .. } => "recall",
            Action::Context { .. } => "context",
            Action::Policy { .. } => "policy",
            Action::Pin(_) => "pin",
            Action::Unpin(_) => "unpin",
            Action::Delete(_) => "delete",
            Action::EraseUser => "erase_user",
            Action::Remember { .. } => "remember",
            Action::StoreDocument { .. } => "store_document",
            Action::SimilarDocuments { .. } => "similar_documents",
            Action::Observe { .. } => "observe",
            Action::Approve(_) => "approve",
            Action::Reject(_) => "reject",
            Action::Usage { .. } => "usage",
            Action::Rotate { .. } => "rotate",
        }
    }
}

/// Where an error is: the file, and the step when inside one.
struct At<'a> {
    file: &'a Path,
    step: Option<usize>,
}

impl At<'_> {
    fn err(&self, key: Option<&str>, message: impl Into<String>) -> EvalError {
        EvalError::Parse {
            file: self.file.to_path_buf(),
            step: self.step,
            key: key.map(str::to_string),
            message: message.into(),
        }
    }

    fn string(&self, t: &Table, key: &str) -> Result<Option<String>, EvalError> {
        match t.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.err(Some(key), format!("{key:?} must be a string"))),
        }
    }

    fn text(&self, t: &Table, key: &str) -> Result<Option<String>, EvalError> {
        match self.string(t, key)? {
            Some(s) if s.trim().is_empty() => Err(self.err(Some(key), format!("{key:?} must not be empty"))),
            other => Ok(other),
        }
    }

    /// A string or an array of strings (a lone string is a one-element list).
    fn strings(&self, t: &Table, key: &str) -> Result<Vec<String>, EvalError> {
        let bad = || self.err(Some(key), format!("{key:?} must be a string or an array of strings"));
        let list = match t.get(key) {
            None => return Ok(Vec::new()),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => {
                a.iter().map(|v| v.as_str().map(str::to_string).ok_or_else(bad)).collect::<Result<_, _>>()?
            }
            Some(_) => return Err(bad()),
        };
        if list.iter().any(|s| s.trim().is_empty()) {
            return Err(self.err(Some(key), format!("{key:?} holds an empty string, which every text contains")));
        }
        if let Some(s) = list.iter().find(|s| expected_alternatives(s).is_empty()) {
            return Err(self.err(Some(key), format!("{key:?} holds {s:?}, which names no substring between its \"|\"")));
        }
        Ok(list)
    }

    fn count(&self, t: &Table, key: &str, min: i64) -> Result<Option<usize>, EvalError> {
        let what = if min > 0 { "a positive integer" } else { "a non-negative integer" };
        match t.get(key) {
            None => Ok(None),
            Some(Value::Integer(i)) if *i >= min => Ok(Some(*i as usize)),
            Some(_) => Err(self.err(Some(key), format!("{key:?} must be {what}"))),
        }
    }

    fn time(&self, t: &Table, key: &str) -> Result<Option<DateTime<Utc>>, EvalError> {
        let raw = match t.get(key) {
            None => return Ok(None),
            Some(Value::String(s)) => s.clone(),
            Some(Value::Datetime(d)) => d.to_string(),
            Some(_) => return Err(self.err(Some(key), format!("{key:?} is not an RFC 3339 time"))),
        };
        DateTime::parse_from_rfc3339(raw.trim()).map(|d| d.with_timezone(&Utc)).map(Some).map_err(|_| {
            self.err(Some(key), format!("{key:?} is not an RFC 3339 time (got {raw:?}; e.g. \"2026-03-02T09:00:00Z\")"))
        })
    }

    fn id<T: FromStr<Err = CoreError>>(&self, t: &Table, key: &str) -> Result<Option<T>, EvalError> {
        match self.string(t, key)? {
            None => Ok(None),
            Some(s) => T::from_str(&s).map(Some).map_err(|e| self.err(Some(key), format!("{key:?}: {e}"))),
        }
    }

    /// `[step.sections]` / `[step.section_lacks]`: section name → substrings.
    fn sections(&self, t: &Table, key: &str) -> Result<BTreeMap<SectionName, Vec<String>>, EvalError> {
        let names: Vec<&str> = SectionName::ALL.iter().map(|s| s.as_str()).collect();
        self.named_lists(t, key, "section", &names)
    }

    /// `[step.parts]` of a `rotate` step: bundle part name → substrings.
    fn parts(&self, t: &Table) -> Result<BTreeMap<PartName, Vec<String>>, EvalError> {
        let names: Vec<&str> = PartName::ALL.iter().map(|p| p.as_str()).collect();
        self.named_lists(t, "parts", "part", &names)
    }

    /// A table of `what` name (one of `names`) → substrings.
    fn named_lists<N: FromStr + Ord>(
        &self,
        t: &Table,
        key: &str,
        what: &str,
        names: &[&str],
    ) -> Result<BTreeMap<N, Vec<String>>, EvalError> {
        let table = match t.get(key) {
            None => return Ok(BTreeMap::new()),
            Some(Value::Table(s)) => s,
            Some(_) => return Err(self.err(Some(key), format!("{key:?} must be a table of {what} = [substrings]"))),
        };
        let mut out = BTreeMap::new();
        for name in table.keys() {
            let parsed = N::from_str(name).map_err(|_| {
                self.err(
                    Some(&format!("{key}.{name}")),
                    format!("unknown {what} \"{key}.{name}\"; {what}s are {}", names.join(", ")),
                )
            })?;
            out.insert(parsed, self.strings(table, name)?);
        }
        Ok(out)
    }
}

/// The alternatives of one expected substring of a `hit`, `miss`, `contains`, `lacks`,
/// `sections` or `section_lacks` list: `"Porto|Oporto"` is `["Porto", "Oporto"]` (each trimmed,
/// empty ones dropped), and a string without `|` is its own single alternative, verbatim (so
/// every file written before alternatives existed reads the same). A positive check passes when
/// any alternative is found; a negative check fails when any is.
pub fn expected_alternatives(raw: &str) -> Vec<&str> {
    if !raw.contains('|') {
        return vec![raw];
    }
    raw.split('|').map(str::trim).filter(|s| !s.is_empty()).collect()
}

/// Splits `a|b|c` into trimmed, non-empty alternatives.
fn alternatives(at: &At<'_>, key: &str, raw: &str) -> Result<Vec<String>, EvalError> {
    let alts: Vec<String> = raw.split('|').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
    if alts.is_empty() {
        return Err(at.err(Some(key), format!("{key:?} must name at least one substring")));
    }
    Ok(alts)
}

fn quoted(keys: &[&str]) -> String {
    keys.iter().map(|k| format!("{k:?}")).collect::<Vec<_>>().join(", ")
}

fn is_kebab(name: &str) -> bool {
    !name.is_empty()
        && name
            .split('-')
            .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()))
}

/// Scope parts in force: the file's defaults, overridden per step.
#[derive(Clone)]
struct Defaults {
    tenant: Option<TenantId>,
    user: Option<UserId>,
    agent: Option<AgentId>,
}

impl Scenario {
    /// Parses one scenario file's text; `file` is how errors and reports name it.
    pub fn parse(file: &Path, text: &str) -> Result<Self, EvalError> {
        let top = At { file, step: None };
        let root: Table =
            toml::from_str(text).map_err(|e| top.err(None, format!("invalid TOML: {}", e.to_string().trim_end())))?;
        if let Some(key) = root.keys().find(|k| !TOP_KEYS.contains(&k.as_str())) {
            return Err(top.err(Some(key), format!("unknown key {key:?}; top-level keys are {}", quoted(TOP_KEYS))));
        }
        let name = top.text(&root, "name")?.ok_or_else(|| top.err(Some("name"), "missing key \"name\""))?;
        if !is_kebab(&name) || name.len() > MAX_NAME_LEN {
            return Err(top.err(
                Some("name"),
                format!(
                    "\"name\" must be kebab-case (a-z, 0-9, single dashes), at most {MAX_NAME_LEN} bytes; got {name:?}"
                ),
            ));
        }
        let about = top.string(&root, "about")?.unwrap_or_default();
        let memory_scope = match top.string(&root, "memory_scope")?.as_deref() {
            None | Some("user") => MemoryScope::User,
            Some("chat") => MemoryScope::Chat,
            Some(other) => {
                return Err(top.err(
                    Some("memory_scope"),
                    format!("\"memory_scope\" must be \"user\" or \"chat\"; got {other:?}"),
                ));
            }
        };
        let tuning = match root.get("tuning") {
            None => Table::new(),
            Some(Value::Table(t)) => {
                mnemo::Config::default()
                    .with_tuning(t, "tuning")
                    .map_err(|e| top.err(Some("tuning"), e.to_string()))?;
                t.clone()
            }
            Some(_) => {
                return Err(top.err(Some("tuning"), "\"tuning\" must be a table: write [tuning.lifecycle] and so on"));
            }
        };
        let defaults = Defaults {
            tenant: top.id(&root, "tenant")?,
            user: top.id(&root, "user_id")?,
            agent: top.id(&root, "agent")?,
        };
        let tables: Vec<&Table> = match root.get("step") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    v.as_table().ok_or_else(|| {
                        At { file, step: Some(i + 1) }.err(Some("step"), "each step must be a [[step]] table")
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(top.err(Some("step"), "\"step\" must be an array of tables: write [[step]]")),
        };
        if tables.is_empty() {
            return Err(top.err(Some("step"), "no [[step]] tables: a scenario needs at least one step"));
        }

        let mut now: DateTime<Utc> = DEFAULT_START.parse().expect("default start is RFC 3339");
        let mut last_chat = ChatId::new(DEFAULT_CHAT).expect("default chat id is valid");
        let mut steps = Vec::with_capacity(tables.len());
        for (i, t) in tables.into_iter().enumerate() {
            let at = At { file, step: Some(i + 1) };
            let step = parse_step(&at, t, &defaults, &mut now, &mut last_chat)?;
            steps.push(step);
        }
        Ok(Scenario { name, about, file: file.to_path_buf(), memory_scope, tuning, steps })
    }

    /// Reads and parses a scenario file.
    pub fn load(file: &Path) -> Result<Self, EvalError> {
        let text =
            std::fs::read_to_string(file).map_err(|source| EvalError::Io { path: file.to_path_buf(), source })?;
        Self::parse(file, &text)
    }
}

fn parse_step(
    at: &At<'_>,
    t: &Table,
    defaults: &Defaults,
    now: &mut DateTime<Utc>,
    last_chat: &mut ChatId,
) -> Result<Step, EvalError> {
    if let Some(key) = t.keys().find(|k| !is_known_key(k)) {
        return Err(at.err(Some(key), format!("unknown key {key:?}")));
    }
    let actions: Vec<&str> = ACTION_KEYS.iter().copied().filter(|k| t.contains_key(*k)).collect();
    let action = match actions.as_slice() {
        [one] => *one,
        [] => {
            let key = t.keys().next().map(String::as_str);
            return Err(at.err(key, format!("the step does nothing: it needs one of {}", quoted(ACTION_KEYS))));
        }
        [first, second, ..] => {
            return Err(
                at.err(Some(second), format!("mixes {first:?} and {second:?}; each step does exactly one thing"))
            );
        }
    };
    let allowed = extra_keys(action);
    if let Some(key) = t.keys().find(|k| {
        let k = k.as_str();
        k != action && !allowed.contains(&k) && !(COMMON_KEYS.contains(&k) && !(action == "maintain" && k == "at"))
    }) {
        let hint = if action == "maintain" && key == "at" {
            "; the maintain time is the step's clock".to_string()
        } else {
            String::new()
        };
        return Err(at.err(Some(key), format!("key {key:?} does not belong in a {action:?} step{hint}")));
    }

    // Scope: defaults, overrides, then the chat.
    let tenant = at.id(t, "tenant")?.or_else(|| defaults.tenant.clone());
    let user = at.id(t, "user_id")?.or_else(|| defaults.user.clone());
    let agent = at.id(t, "agent")?.or_else(|| defaults.agent.clone());
    let chat: Option<ChatId> = at.id(t, "chat")?;
    let tenant = tenant.ok_or_else(|| {
        at.err(Some("tenant"), "missing key \"tenant\" (set it at the top of the file or in the step)")
    })?;
    let user = user.ok_or_else(|| {
        at.err(Some("user_id"), "missing key \"user_id\" (set it at the top of the file or in the step)")
    })?;
    if action == "user" {
        if let Some(c) = &chat {
            *last_chat = c.clone();
        }
    }
    let scope = Scope { tenant, agent, user: Some(user), chat: Some(chat.unwrap_or_else(|| last_chat.clone())) };

    // Clock.
    if action == "maintain" {
        *now = at.time(t, "maintain")?.expect("the action key is present");
    } else if let Some(time) = at.time(t, "at")? {
        *now = time;
    }

    let required = |key: &str| -> Result<String, EvalError> {
        at.text(t, key)?.ok_or_else(|| at.err(Some(key), format!("{key:?} must be a string")))
    };
    let action = match action {
        "user" => Action::Message {
            user: required("user")?,
            assistant: at.text(t, "assistant")?,
            embedder_down: match t.get("embedder_down") {
                None => false,
                Some(Value::Boolean(b)) => *b,
                Some(_) => return Err(at.err(Some("embedder_down"), "\"embedder_down\" must be true or false")),
            },
        },
        "maintain" => Action::Maintain,
        "expect_memory" => {
            let raw = required("expect_memory")?;
            let statuses = match at.string(t, "status")? {
                None => vec![StatusKind::Active],
                Some(s) => alternatives(at, "status", &s)?
                    .iter()
                    .map(|s| StatusKind::from_str(s).map_err(|e| at.err(Some("status"), format!("\"status\": {e}"))))
                    .collect::<Result<_, _>>()?,
            };
            Action::ExpectMemory {
                alternatives: alternatives(at, "expect_memory", &raw)?,
                kind: kind(at, t)?,
                statuses,
                count: at.count(t, "count", 0)?,
            }
        }
        "expect_no_memory" => {
            let raw = required("expect_no_memory")?;
            Action::ExpectNoMemory { alternatives: alternatives(at, "expect_no_memory", &raw)?, kind: kind(at, t)? }
        }
        "recall" => Action::Recall {
            query: required("recall")?,
            top: at.count(t, "top", 1)?.unwrap_or(DEFAULT_TOP),
            hit: at.strings(t, "hit")?,
            miss: at.strings(t, "miss")?,
        },
        "context" => Action::Context {
            message: required("context")?,
            budget: at.count(t, "budget", 1)?,
            contains: at.strings(t, "contains")?,
            lacks: at.strings(t, "lacks")?,
            sections: at.sections(t, "sections")?,
            section_lacks: at.sections(t, "section_lacks")?,
        },
        "policy" => policy(at, t)?,
        "pin" => Action::Pin(required("pin")?),
        "unpin" => Action::Unpin(required("unpin")?),
        "delete" => Action::Delete(required("delete")?),
        "remember" => Action::Remember {
            content: required("remember")?,
            kind: kind(at, t)?.unwrap_or(Kind::Fact),
            key: at.string(t, "key")?,
            layer: match at.string(t, "layer")?.as_deref() {
                None => None,
                Some("tenant") => Some(Layer::Tenant),
                Some("tenant_agent") if scope.agent.is_some() => Some(Layer::TenantAgent),
                Some("tenant_agent") => {
                    return Err(
                        at.err(Some("layer"), "layer \"tenant_agent\" needs an \"agent\" (in the step or at the top)")
                    );
                }
                Some("user") => Some(Layer::User),
                Some("user_agent") => Some(Layer::UserAgent),
                Some("chat") => Some(Layer::Chat),
                Some(other) => {
                    let expected = "\"tenant\", \"tenant_agent\", \"user\", \"user_agent\" or \"chat\"";
                    return Err(at.err(Some("layer"), format!("\"layer\" must be {expected}, not {other:?}")));
                }
            },
        },
        "store_document" => Action::StoreDocument {
            text: required("store_document")?,
            kind: match at.string(t, "kind")? {
                None => DocumentKind::Research,
                Some(s) => s.parse().map_err(|e| at.err(Some("kind"), format!("\"kind\": {e}")))?,
            },
            source: at.string(t, "source")?.unwrap_or_default(),
            owner: match at.string(t, "owner")?.as_deref() {
                None | Some("agent") => DocumentOwner::Agent,
                Some("user") => DocumentOwner::User,
                Some(o) => {
                    return Err(at.err(Some("owner"), format!("\"owner\" must be \"agent\" or \"user\", not {o:?}")));
                }
            },
        },
        "similar_documents" => Action::SimilarDocuments {
            text: required("similar_documents")?,
            threshold: match t.get("threshold") {
                None => None,
                Some(Value::Float(f)) if (-1.0..=1.0).contains(f) => Some(*f as f32),
                Some(_) => return Err(at.err(Some("threshold"), "\"threshold\" must be a number in -1.0..=1.0")),
            },
            top: at.count(t, "top", 1)?,
            hit: at.strings(t, "hit")?,
            miss: at.strings(t, "miss")?,
        },
        "observe" => Action::Observe {
            args_summary: required("observe")?,
            tool: required("tool")?,
            outcome: required("outcome")?.parse().map_err(|e| at.err(Some("outcome"), format!("\"outcome\": {e}")))?,
            note: at.string(t, "note")?,
        },
        "approve" => Action::Approve(required("approve")?),
        "reject" => Action::Reject(required("reject")?),
        "usage" => Action::Usage {
            used: at.count(t, "usage", 0)?.expect("the action key is present"),
            capacity: at
                .count(t, "capacity", 1)?
                .ok_or_else(|| at.err(Some("capacity"), "missing key \"capacity\""))?,
            hold: at.strings(t, "hold")?,
            hold_documents: at.strings(t, "hold_documents")?,
            hold_recent: at.count(t, "hold_recent", 0)?.unwrap_or(0),
            stage: match at.string(t, "stage")? {
                None => None,
                Some(s) => Some(s.parse().map_err(|e| at.err(Some("stage"), format!("\"stage\": {e}")))?),
            },
            keep: at.strings(t, "keep")?,
            shed: at.strings(t, "shed")?,
        },
        "rotate" => match t.get("rotate") {
            Some(Value::Boolean(true)) => Action::Rotate {
                budget: at.count(t, "budget", 1)?,
                contains: at.strings(t, "contains")?,
                lacks: at.strings(t, "lacks")?,
                parts: at.parts(t)?,
            },
            _ => return Err(at.err(Some("rotate"), "\"rotate\" must be true")),
        },
        "erase_user" => match t.get("erase_user") {
            Some(Value::Boolean(true)) => Action::EraseUser,
            _ => return Err(at.err(Some("erase_user"), "\"erase_user\" must be true")),
        },
        other => unreachable!("action key {other} has no parser"),
    };
    Ok(Step { number: at.step.expect("inside a step"), at: *now, scope, action })
}

fn kind(at: &At<'_>, t: &Table) -> Result<Option<Kind>, EvalError> {
    match at.string(t, "kind")? {
        None => Ok(None),
        Some(s) => Kind::from_str(&s).map(Some).map_err(|e| at.err(Some("kind"), format!("\"kind\": {e}"))),
    }
}

fn policy(at: &At<'_>, t: &Table) -> Result<Action, EvalError> {
    let Some(Value::Table(p)) = t.get("policy") else {
        return Err(at.err(Some("policy"), "\"policy\" must be a table: policy = { key = \"...\", text = \"...\" }"));
    };
    if let Some(key) = p.keys().find(|k| !["key", "text", "value"].contains(&k.as_str())) {
        return Err(at.err(Some(&format!("policy.{key}")), format!("unknown key \"policy.{key}\"")));
    }
    let field = |name: &str| -> Result<String, EvalError> {
        match p.get(name) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            _ => Err(at.err(Some(&format!("policy.{name}")), format!("\"policy.{name}\" must be a non-empty string"))),
        }
    };
    let value = match p.get("value") {
        None => serde_json::Value::Null,
        Some(v) => serde_json::to_value(v).map_err(|e| {
            at.err(Some("policy.value"), format!("\"policy.value\" cannot be represented as JSON: {e}"))
        })?,
    };
    Ok(Action::Policy { key: field("key")?, text: field("text")?, value })
}
