//! Runs scenarios through the real engine: a fresh store per scenario (SQLite in a temporary
//! directory, or a throwaway database on the PostgreSQL server `database_url` names), a manual clock, the configured embedder (opened once per run), then the duplicate
//! replay and the leak re-runs that `docs/SCENARIOS.md` defines.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::Duration;
use mnemo::models::{Embedder, open_embedder};
use mnemo::store::{ListFilter, SqliteStore, Store};
use mnemo::{Config, ContextResult, HeldItem, HeldRef, ManualClock, Memory, MemoryScope, RecallResult};
use mnemo_core::detail::Detail;
use mnemo_core::window::{Bundle, PartName, ShedAction, Stage, UsageAdvice};
use mnemo_core::{
    ChatId, ContextBlock, Draft, Kind, Layer, Memory as Row, MemoryId, NewMessage, Policy, RecallItem, Scope,
    SectionName, StatusKind, TenantId, UserId,
};

use crate::error::EvalError;
use crate::report::{Report, ScenarioReport};
use crate::scenario::{Action, Scenario, Step, expected_alternatives};

/// At most this many memory contents are quoted in one failure line.
const QUOTE_LIMIT: usize = 8;

/// Runs every `*.toml` scenario in `dir` (sorted by file name) with `config`'s embedder,
/// extractor and tuning. Every file is parsed before anything runs, so a malformed file aborts
/// the run at once instead of after minutes of model work.
pub fn run_dir(dir: &Path, config: &Config) -> Result<Report, EvalError> {
    let scenarios = load_dir(dir)?;
    let embedder = open_embedder(&config.embedder).map_err(EvalError::Embedder)?;
    run_scenarios(&scenarios, config, &embedder)
}

/// Parses every `*.toml` file in `dir`, sorted by file name; names must be unique.
pub fn load_dir(dir: &Path) -> Result<Vec<Scenario>, EvalError> {
    let io = |source| EvalError::Io { path: dir.to_path_buf(), source };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .map(|e| e.map(|e| e.path()).map_err(io))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    if files.is_empty() {
        return Err(EvalError::NoScenarios { dir: dir.to_path_buf() });
    }
    let mut seen: HashMap<String, PathBuf> = HashMap::new();
    let mut out = Vec::with_capacity(files.len());
    for file in files {
        let s = Scenario::load(&file)?;
        if let Some(first) = seen.insert(s.name.clone(), file.clone()) {
            return Err(EvalError::DuplicateName { name: s.name, first, second: file });
        }
        out.push(s);
    }
    Ok(out)
}

/// Runs parsed scenarios with one shared embedder (loading a local model per scenario is slow).
pub fn run_scenarios(
    scenarios: &[Scenario],
    config: &Config,
    embedder: &Arc<dyn Embedder>,
) -> Result<Report, EvalError> {
    let reports = scenarios.iter().map(|s| run_scenario(s, config, embedder)).collect::<Result<Vec<_>, _>>()?;
    Ok(Report::from_scenarios(reports))
}

/// Runs one scenario on its own temporary store and returns its report.
pub fn run_scenario(
    scenario: &Scenario,
    config: &Config,
    embedder: &Arc<dyn Embedder>,
) -> Result<ScenarioReport, EvalError> {
    let tmp = tempfile::tempdir().map_err(|source| EvalError::Io { path: std::env::temp_dir(), source })?;
    let mut config = match scenario.tuning.is_empty() {
        true => config.clone(),
        false => config
            .with_tuning(&scenario.tuning, "tuning")
            .map_err(|source| EvalError::Setup { file: scenario.file.clone(), source })?,
    };
    config.data_dir = tmp.path().to_path_buf();
    config.memory_scope = scenario.memory_scope;
    let (store, _database) =
        isolated_store(&config).map_err(|source| EvalError::Setup { file: scenario.file.clone(), source })?;
    let start =
        scenario.steps.first().map(|s| s.at).unwrap_or_else(|| crate::scenario::DEFAULT_START.parse().expect("valid"));
    let clock = Arc::new(ManualClock::new(start));
    let memory = Memory::from_parts(config, Arc::clone(&store), Some(Arc::clone(embedder)), clock.clone());
    let mut run =
        Run { scenario, memory, store, clock, report: ScenarioReport::new(&scenario.name, scenario.file.clone()) };
    for step in &scenario.steps {
        run.step(step);
    }
    run.duplicates();
    run.leaks();
    run.report.finish();
    Ok(run.report)
}

/// What keeps a scenario's PostgreSQL database alive; dropping it drops the database.
#[cfg(feature = "postgres")]
type Isolation = Option<mnemo::store::TempDatabase>;
#[cfg(not(feature = "postgres"))]
type Isolation = ();

/// A store of this scenario's own, on the backend `config` selects: SQLite under the (temporary)
/// data directory, or a fresh database on the PostgreSQL server of `database_url`, dropped with
/// the returned guard. The configured database itself is never written to.
fn isolated_store(config: &Config) -> Result<(Arc<dyn Store>, Isolation), mnemo::Error> {
    match config.database_url.as_deref().filter(|u| !u.is_empty()) {
        None => Ok((Arc::new(SqliteStore::open(config.db_path())?), Isolation::default())),
        #[cfg(feature = "postgres")]
        Some(url) => {
            let db = mnemo::store::TempDatabase::create(url)?;
            let config = Config { database_url: Some(db.url().to_string()), ..config.clone() };
            Ok((mnemo::open_store(&config)?, Some(db)))
        }
        // Fails, saying this build has no PostgreSQL support.
        #[cfg(not(feature = "postgres"))]
        Some(_) => Ok((mnemo::open_store(config)?, ())),
    }
}

/// Case-insensitive substring, the format's only matching rule.
fn has(haystack: &str, needle: &str) -> bool {
    haystack.to_lowercase().contains(&needle.to_lowercase())
}

/// The first alternative of an expected substring (`"a|b"`: see [`expected_alternatives`]) that
/// `haystack` contains, case-insensitively. A positive check (`hit`, `contains`, `sections`)
/// passes when there is one; a negative check (`miss`, `lacks`, `section_lacks`) fails.
fn found<'a>(haystack: &str, expected: &'a str) -> Option<&'a str> {
    expected_alternatives(expected).into_iter().find(|alt| has(haystack, alt))
}

/// How a negative check's failure names what it found: the alternative too, when there were
/// several.
fn named(expected: &str, alt: &str) -> String {
    match expected == alt {
        true => format!("{expected:?}"),
        false => format!("{expected:?} (as {alt:?})"),
    }
}

fn quote_list<'a>(texts: impl IntoIterator<Item = &'a str>) -> String {
    let all: Vec<&str> = texts.into_iter().collect();
    let mut parts: Vec<String> = all.iter().take(QUOTE_LIMIT).map(|t| format!("{t:?}")).collect();
    if all.len() > QUOTE_LIMIT {
        parts.push(format!("... {} more", all.len() - QUOTE_LIMIT));
    }
    format!("[{}]", parts.join(", "))
}

fn statuses_text(statuses: &[StatusKind]) -> String {
    statuses.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("|")
}

/// Runs pending extraction before a check, so results never depend on batch timing: with the
/// heuristic extractor `ingest` extracted already; with the LLM extractor every chat's queued
/// batches run now (a model failure falls back to the heuristic, as in production).
fn flush(memory: &Memory) {
    if memory.config().extractor == mnemo::ExtractorKind::Llm {
        if let Err(e) = memory.flush_all() {
            tracing::warn!(error = %e, "flushing extraction before a check failed; the check sees what was extracted");
        }
    }
}

/// Why a check could not find the memories it acts on; reported as that check's failure.
#[derive(Debug, thiserror::Error)]
enum LookupError {
    /// Listing the memories of a scope failed in the engine.
    #[error("list failed: {0}")]
    List(#[source] mnemo::Error),
    /// A scope of the scenario could not be rebuilt from its key parts.
    #[error(transparent)]
    Scope(#[from] mnemo_core::CoreError),
    /// No memory of the status looked for (active; provisional for a candidate) contains the
    /// step's text: the scenario expects a memory it never got.
    #[error("no {status} memory contains it; {status}: {active}")]
    NotFound {
        /// The status looked for.
        status: StatusKind,
        /// The memories of that status, quoted.
        active: String,
    },
    /// Several memories of the status contain the text: the step's text should be more specific.
    #[error("ambiguous: {count} {status} memories contain it: {matches}")]
    Ambiguous {
        /// The status looked for.
        status: StatusKind,
        /// How many matched.
        count: usize,
        /// Those that matched, quoted.
        matches: String,
    },
    /// The pin, unpin, delete, approval or rejection itself failed.
    #[error("failed: {0}")]
    Action(#[source] mnemo::Error),
}

/// A recall item that reached a scope that must not see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Leak {
    /// The memory id (or block item id) that leaked.
    pub id: String,
    /// Its content, for the report.
    pub content: String,
    /// Its owner, when known.
    pub owner: Option<Scope>,
}

/// Whether a memory owned by `owner`, returned to `foreign`, is a leak: visibility is exactly
/// [`Scope::can_see`], so tenant-wide rows legitimately reach a foreign user of the same tenant.
pub fn is_leak(foreign: &Scope, owner: &Scope) -> bool {
    !foreign.can_see(owner)
}

/// The ranked and exact items of a recall that `foreign` must not see.
pub fn leaked_items<'a>(foreign: &Scope, items: impl IntoIterator<Item = &'a RecallItem>) -> Vec<Leak> {
    items
        .into_iter()
        .filter(|i| is_leak(foreign, &i.memory.owner))
        .map(|i| Leak {
            id: i.memory.id.to_string(),
            content: i.memory.content.clone(),
            owner: Some(i.memory.owner.clone()),
        })
        .collect()
}

/// Whether a policy returned to `foreign` binds a tenant or agent it does not belong to.
pub fn policy_leaks(foreign: &Scope, policy: &Policy) -> bool {
    policy.tenant != foreign.tenant || policy.agent.as_ref().is_some_and(|a| foreign.agent.as_ref() != Some(a))
}

/// Everything in a recall result that `foreign` must not see: ranked and exact memories, and
/// policies of another tenant or agent.
pub fn recall_leaks(foreign: &Scope, r: &RecallResult) -> Vec<Leak> {
    let mut out = leaked_items(foreign, r.items.iter().chain(&r.exact));
    out.extend(r.policies.iter().filter(|p| policy_leaks(foreign, p)).map(|p| Leak {
        id: format!("policy:{}@v{}", p.key, p.version),
        content: p.text.clone(),
        owner: None,
    }));
    out
}

/// The documents of a "researched before" answer that `foreign` must not see: visibility is
/// [`Scope::can_see`], so agent-wide research legitimately reaches another user of the agent.
pub fn document_leaks(foreign: &Scope, hits: &[mnemo::DocumentHit]) -> Vec<Leak> {
    hits.iter()
        .filter(|h| is_leak(foreign, &h.document.owner))
        .map(|h| Leak {
            id: h.document.id.to_string(),
            content: h.document.gist.clone(),
            owner: Some(h.document.owner.clone()),
        })
        .collect()
}

/// Everything in a context block that `foreign` must not see, given the owners of the scenario's
/// memories. A foreign scope never had messages of its own, so any raw message is a leak; a
/// policy line is one only under a foreign tenant (tenant policies reach every user of it); a
/// memory id whose owner is unknown cannot be vouched for and counts as a leak.
pub fn context_leaks(
    foreign: &Scope,
    block: &ContextBlock,
    owners: &HashMap<MemoryId, Scope>,
    home_tenant: &TenantId,
) -> Vec<Leak> {
    let mut out = Vec::new();
    for item in block.sections.iter().flat_map(|s| &s.items) {
        let leak = match item.kind.as_str() {
            "message" => Some(None),
            "policy" => (foreign.tenant != *home_tenant).then_some(None),
            _ => match item.id.parse::<MemoryId>() {
                Ok(id) => match owners.get(&id) {
                    Some(owner) => is_leak(foreign, owner).then(|| Some(owner.clone())),
                    None => Some(None),
                },
                Err(_) => Some(None),
            },
        };
        if let Some(owner) = leak {
            out.push(Leak { id: item.id.clone(), content: item.text.clone(), owner });
        }
    }
    out
}

/// Everything in a rotation's bundle that `foreign` must not see: a foreign scope has no
/// messages of its own, so a recent tail is a leak, and so is a memory whose owner it may not
/// see or whose owner is unknown.
pub fn bundle_leaks(foreign: &Scope, bundle: &Bundle, owners: &HashMap<MemoryId, Scope>) -> Vec<Leak> {
    let mut out = Vec::new();
    for part in &bundle.parts {
        if part.name == PartName::Recent {
            out.push(Leak { id: "recent".into(), content: part.text.clone(), owner: None });
        }
        for id in &part.memories {
            let owner = owners.get(id);
            if owner.is_none_or(|o| is_leak(foreign, o)) {
                out.push(Leak { id: id.to_string(), content: part.text.clone(), owner: owner.cloned() });
            }
        }
    }
    out
}

/// One scenario in progress.
struct Run<'a> {
    scenario: &'a Scenario,
    memory: Memory,
    /// The scenario's store, shared with `memory` (and with the engine of `embedder_down` steps).
    store: Arc<dyn Store>,
    clock: Arc<ManualClock>,
    report: ScenarioReport,
}

impl Run<'_> {
    /// Where the scenario's memories are visible from for memory checks: the user (and agent)
    /// when memories follow the user, the step's chat when they stay in their chat.
    fn view(&self, step: &Step) -> Scope {
        match self.scenario.memory_scope {
            MemoryScope::User => step.scope.without_chat(),
            MemoryScope::Chat => step.scope.clone(),
        }
    }

    fn message_ids(&self, step: &Step) -> (String, String) {
        (format!("{}-s{}-u", self.scenario.name, step.number), format!("{}-s{}-a", self.scenario.name, step.number))
    }

    fn messages(&self, step: &Step, user: &str, assistant: Option<&str>) -> Vec<NewMessage> {
        let (uid, aid) = self.message_ids(step);
        let mut batch = vec![NewMessage::user(user, step.at).with_id(uid)];
        if let Some(a) = assistant {
            batch.push(NewMessage::assistant(a, step.at + Duration::seconds(1)).with_id(aid));
        }
        batch
    }

    fn step(&mut self, step: &Step) {
        self.clock.set(step.at);
        let n = Some(step.number);
        let key = step.action.key();
        match &step.action {
            Action::Message { user, assistant, embedder_down } => {
                let batch = self.messages(step, user, assistant.as_deref());
                // The same store, clock and configuration; only the model is missing, as when
                // its server is down.
                let down;
                let memory = match embedder_down {
                    true => {
                        let config = self.memory.config().clone();
                        down = Memory::from_parts(config, Arc::clone(&self.store), None, self.clock.clone());
                        &down
                    }
                    false => &self.memory,
                };
                if let Err(e) = memory.ingest(&step.scope, batch) {
                    self.report.fail(n, key, format!("user {user:?}: ingest failed: {e}"));
                }
            }
            Action::Maintain => {
                flush(&self.memory);
                if let Err(e) = self.memory.maintain() {
                    self.report.fail(n, key, format!("maintain {}: failed: {e}", step.at.to_rfc3339()));
                }
            }
            Action::Remember { content, kind, key: mkey, layer } => {
                let mut draft = Draft::authored(*kind, content.clone());
                if *kind == Kind::Event {
                    draft.valid_from = Some(step.at);
                }
                draft.key = mkey.clone();
                let s = &step.scope;
                let owner = match layer {
                    None | Some(Layer::Chat) => s.clone(),
                    Some(Layer::Tenant) => Scope::tenant(s.tenant.clone()),
                    Some(Layer::TenantAgent) => Scope { user: None, chat: None, ..s.clone() },
                    Some(Layer::User) => Scope { agent: None, chat: None, ..s.clone() },
                    Some(Layer::UserAgent) => s.without_chat(),
                };
                match self.memory.add(&owner, draft) {
                    Ok(v) if v.memory().is_some() => {}
                    Ok(v) => self.report.fail(n, key, format!("remember {content:?}: the gate refused it: {v:?}")),
                    Err(e) => self.report.fail(n, key, format!("remember {content:?}: failed: {e}")),
                }
            }
            Action::ExpectMemory { alternatives, kind, statuses, count } => {
                flush(&self.memory);
                let mut desc = format!("expect_memory {:?}", alternatives.join("|"));
                if let Some(k) = kind {
                    desc.push_str(&format!(" (kind {k})"));
                }
                if statuses.as_slice() != [StatusKind::Active] {
                    desc.push_str(&format!(" (status {})", statuses_text(statuses)));
                }
                if let Some(c) = count {
                    desc.push_str(&format!(" (count {c})"));
                }
                let filter = ListFilter {
                    kinds: kind.iter().copied().collect(),
                    statuses: statuses.clone(),
                    ..Default::default()
                };
                let problem = match self.memory.list(&self.view(step), &filter) {
                    Err(e) => Some(format!("list failed: {e}")),
                    Ok(rows) => {
                        let matching: Vec<&Row> =
                            rows.iter().filter(|m| alternatives.iter().any(|a| has(&m.content, a))).collect();
                        let st = statuses_text(statuses);
                        match count {
                            None if matching.is_empty() => Some(format!(
                                "no {st} memory matched; {st}: {}",
                                quote_list(rows.iter().map(|m| m.content.as_str()))
                            )),
                            Some(c) if matching.len() != *c => Some(format!(
                                "{} {st} memories matched, expected {c}: {}",
                                matching.len(),
                                quote_list(matching.iter().map(|m| m.content.as_str()))
                            )),
                            _ => None,
                        }
                    }
                };
                self.report.memory_checks.record(problem.is_none());
                if let Some(p) = problem {
                    self.report.fail(n, key, format!("{desc}: {p}"));
                }
            }
            Action::ExpectNoMemory { alternatives, kind } => {
                flush(&self.memory);
                let mut desc = format!("expect_no_memory {:?}", alternatives.join("|"));
                if let Some(k) = kind {
                    desc.push_str(&format!(" (kind {k})"));
                }
                let filter = ListFilter {
                    kinds: kind.iter().copied().collect(),
                    statuses: vec![StatusKind::Active],
                    ..Default::default()
                };
                let problem = match self.memory.list(&self.view(step), &filter) {
                    Err(e) => Some(format!("list failed: {e}")),
                    Ok(rows) => {
                        let found: Vec<&str> = rows
                            .iter()
                            .filter(|m| alternatives.iter().any(|a| has(&m.content, a)))
                            .map(|m| m.content.as_str())
                            .collect();
                        (!found.is_empty()).then(|| format!("active memory contains it: {}", quote_list(found)))
                    }
                };
                self.report.memory_checks.record(problem.is_none());
                if let Some(p) = problem {
                    self.report.fail(n, key, format!("{desc}: {p}"));
                }
            }
            Action::Recall { query, top, hit, miss } => {
                flush(&self.memory);
                let desc = format!("recall {query:?} (top {top})");
                let problem = match self.memory.recall(&step.scope, query, Some(*top)) {
                    Err(e) => Some(format!("recall failed: {e}")),
                    Ok(r) => judge_recall(&r, *top, hit, miss),
                };
                self.report.hit_at_k.record(problem.is_none());
                if let Some(p) = problem {
                    self.report.fail(n, key, format!("{desc}: {p}"));
                }
            }
            Action::StoreDocument { text, kind, source, owner } => {
                match self.memory.store_document(&step.scope, *owner, *kind, source, text) {
                    Ok(s) if s.degraded.is_none() => {}
                    Ok(s) => self.report.fail(n, key, format!("store_document: stored without a vector: {s:?}")),
                    Err(e) => self.report.fail(n, key, format!("store_document: failed: {e}")),
                }
            }
            Action::SimilarDocuments { text, threshold, top, hit, miss } => {
                let desc = format!("similar_documents {text:?}");
                let problem = match self.memory.similar_documents(&step.scope, "", text, *threshold, *top) {
                    Err(e) => Some(format!("failed: {e}")),
                    Ok(hits) => {
                        let texts: Vec<&str> = hits.iter().map(|h| h.document.text.as_str()).collect();
                        judge_found(&texts, "documents found", hit, miss)
                    }
                };
                if let Some(p) = problem {
                    self.report.fail(n, key, format!("{desc}: {p}"));
                }
            }
            Action::Context { message, budget, contains, lacks, sections, section_lacks } => {
                flush(&self.memory);
                let desc = format!("context {message:?}");
                let problem = match self.memory.context(&step.scope, message, *budget) {
                    Err(e) => Some(format!("context failed: {e}")),
                    Ok(r) => judge_context(&r, contains, lacks, sections, section_lacks),
                };
                self.report.context_checks.record(problem.is_none());
                if let Some(p) = problem {
                    self.report.fail(n, key, format!("{desc}: {p}"));
                }
            }
            Action::Usage { used, capacity, hold, hold_documents, hold_recent, stage, keep, shed } => {
                flush(&self.memory);
                let desc = format!("usage {used} of {capacity}");
                let problem = match self.held(step, hold, hold_documents, *hold_recent) {
                    Err(e) => Some(e),
                    Ok((items, texts)) => match self.memory.session_usage(&step.scope, *used, *capacity, &items) {
                        Err(e) => Some(format!("failed: {e}")),
                        Ok(a) => judge_usage(&a, &texts, *stage, keep, shed),
                    },
                };
                self.report.context_checks.record(problem.is_none());
                if let Some(p) = problem {
                    self.report.fail(n, key, format!("{desc}: {p}"));
                }
            }
            Action::Rotate { budget, contains, lacks, parts } => {
                // No flush first: the rotation itself must extract what is still queued.
                let problem = match self.memory.rotate_session(&step.scope, *budget) {
                    Err(e) => Some(format!("failed: {e}")),
                    Ok(r) => judge_bundle(&r.bundle, contains, lacks, parts),
                };
                self.report.context_checks.record(problem.is_none());
                if let Some(p) = problem {
                    self.report.fail(n, key, format!("rotate: {p}"));
                }
            }
            Action::Policy { key: pkey, text, value } => {
                if let Err(e) = self.memory.put_policy(&step.scope, pkey, text, value.clone()) {
                    self.report.fail(n, key, format!("policy {pkey:?}: failed: {e}"));
                }
            }
            Action::Pin(text) | Action::Unpin(text) | Action::Delete(text) => {
                flush(&self.memory);
                let result = self.single(step, text, StatusKind::Active).and_then(|id| {
                    let r = match &step.action {
                        Action::Pin(_) => self.memory.pin(&self.view(step), id, true),
                        Action::Unpin(_) => self.memory.pin(&self.view(step), id, false),
                        _ => self.memory.forget(&self.view(step), id),
                    };
                    r.map_err(LookupError::Action)
                });
                if let Err(why) = result {
                    self.report.fail(n, key, format!("{key} {text:?}: {why}"));
                }
            }
            Action::Observe { args_summary, tool, outcome, note } => {
                match self.memory.observe(&step.scope, tool, args_summary, *outcome, note.as_deref()) {
                    Ok(s) if s.degraded.is_none() => {}
                    Ok(s) => self.report.fail(n, key, format!("observe: stored without a vector: {s:?}")),
                    Err(e) => self.report.fail(n, key, format!("observe: failed: {e}")),
                }
            }
            Action::Approve(text) | Action::Reject(text) => {
                let view = self.view(step);
                let result = self.single(step, text, StatusKind::Provisional).and_then(|id| {
                    let r = match &step.action {
                        Action::Approve(_) => self.memory.approve(&view, id),
                        _ => self.memory.reject(&view, id),
                    };
                    r.map(|_| ()).map_err(LookupError::Action)
                });
                if let Err(why) = result {
                    self.report.fail(n, key, format!("{key} {text:?}: {why}"));
                }
            }
            Action::EraseUser => {
                flush(&self.memory);
                if let Err(e) = self.memory.erase_user(&step.scope) {
                    self.report.fail(n, key, format!("erase_user: failed: {e}"));
                }
            }
        }
    }

    /// What a `usage` step holds, with each item's whole text (by position) for judging: the one
    /// active memory containing each `hold`, the one document of the step's scope containing
    /// each `hold_documents`, the chat's last `recent` messages as one range.
    fn held(
        &self,
        step: &Step,
        hold: &[String],
        documents: &[String],
        recent: usize,
    ) -> Result<(Vec<HeldItem>, Vec<String>), String> {
        let whole = |item| HeldItem { item, level: Detail::Full, tokens: None };
        let (mut items, mut texts) = (Vec::new(), Vec::new());
        for text in hold {
            let m = self.single_row(step, text, StatusKind::Active).map_err(|e| format!("hold {text:?}: {e}"))?;
            items.push(whole(HeldRef::Memory(m.id)));
            texts.push(m.content);
        }
        let stored = self.memory.documents(&step.scope, 500, 0).map_err(|e| format!("documents: {e}"))?;
        for text in documents {
            let found: Vec<_> = stored.iter().filter(|d| has(&d.text, text)).collect();
            let [d] = found.as_slice() else {
                return Err(format!("hold_documents {text:?}: {} documents contain it, not one", found.len()));
            };
            items.push(whole(HeldRef::Document(d.id)));
            texts.push(d.text.clone());
        }
        if recent > 0 {
            let ms = self.store.recent_messages(&step.scope, recent).map_err(|e| format!("hold_recent: {e}"))?;
            items.push(whole(HeldRef::Messages(ms.iter().map(|m| m.id.clone()).collect())));
            texts.push(ms.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n"));
        }
        Ok((items, texts))
    }

    /// The one memory of `status` visible to the step whose content contains `text`.
    fn single(&self, step: &Step, text: &str, status: StatusKind) -> Result<MemoryId, LookupError> {
        self.single_row(step, text, status).map(|m| m.id)
    }

    /// [`Run::single`], the whole row.
    fn single_row(&self, step: &Step, text: &str, status: StatusKind) -> Result<Row, LookupError> {
        let filter = ListFilter { statuses: vec![status], ..Default::default() };
        let rows = self.memory.list(&self.view(step), &filter).map_err(LookupError::List)?;
        let found: Vec<&Row> = rows.iter().filter(|m| has(&m.content, text)).collect();
        match found.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(LookupError::NotFound { status, active: quote_list(rows.iter().map(|m| m.content.as_str())) }),
            many => Err(LookupError::Ambiguous {
                status,
                count: many.len(),
                matches: quote_list(many.iter().map(|m| m.content.as_str())),
            }),
        }
    }

    /// Every scope the scenario's steps ran in (with their chats): listing each one sees every
    /// memory the scenario can have created.
    fn scopes(&self) -> BTreeSet<(String, String, String, String)> {
        self.scenario
            .steps
            .iter()
            .map(|s| {
                let [t, a, u, c] = s.scope.key_parts();
                (t.to_string(), a.to_string(), u.to_string(), c.to_string())
            })
            .collect()
    }

    /// Memories of the scenario with the given statuses (all when empty), by id.
    fn memories(&self, statuses: &[StatusKind]) -> Result<BTreeMap<MemoryId, Row>, LookupError> {
        let filter = ListFilter { statuses: statuses.to_vec(), ..Default::default() };
        let mut out = BTreeMap::new();
        for (t, a, u, c) in self.scopes() {
            let scope = Scope::from_key_parts(&t, &a, &u, &c)?;
            for m in self.memory.list(&scope, &filter).map_err(LookupError::List)? {
                out.insert(m.id, m);
            }
        }
        Ok(out)
    }

    /// Replays every message step through extraction again, at its original time and scope;
    /// each active memory that did not exist before is a duplicate. Messages a later erasure
    /// removed are not replayed.
    fn duplicates(&mut self) {
        let before = match self.memories(&[StatusKind::Active]) {
            Ok(b) => b,
            Err(e) => return self.report.fail(None, "duplicates", format!("duplicates: {e}")),
        };
        let mut seen: BTreeSet<MemoryId> = before.keys().copied().collect();
        let mut origin: BTreeMap<MemoryId, usize> = BTreeMap::new();
        let steps = &self.scenario.steps;
        for (i, step) in steps.iter().enumerate() {
            let Action::Message { user, assistant, .. } = &step.action else { continue };
            // A message a later `erase_user` removed no longer exists: it cannot be replayed.
            let erased = steps[i + 1..].iter().any(|later| {
                matches!(later.action, Action::EraseUser)
                    && later.scope.tenant == step.scope.tenant
                    && later.scope.user == step.scope.user
            });
            if erased {
                continue;
            }
            self.clock.set(step.at);
            let batch = self.messages(step, user, assistant.as_deref());
            if let Err(e) = self.memory.reextract(&step.scope, batch) {
                self.report.fail(Some(step.number), "duplicates", format!("replay of user {user:?} failed: {e}"));
                continue;
            }
            flush(&self.memory);
            match self.memories(&[StatusKind::Active]) {
                Ok(now) => {
                    for id in now.keys() {
                        if seen.insert(*id) {
                            origin.insert(*id, step.number);
                        }
                    }
                }
                Err(e) => self.report.fail(Some(step.number), "duplicates", format!("duplicates: {e}")),
            }
        }
        let after = match self.memories(&[StatusKind::Active]) {
            Ok(a) => a,
            Err(e) => return self.report.fail(None, "duplicates", format!("duplicates: {e}")),
        };
        for (id, m) in &after {
            if before.contains_key(id) {
                continue;
            }
            self.report.duplicates += 1;
            let step = origin.get(id).copied();
            self.report.fail(
                step,
                "duplicates",
                format!("duplicate on replay: a new active {} memory {:?} appeared", m.kind, m.content),
            );
        }
    }

    /// Re-runs every recall and context step under a foreign tenant, a foreign user of the same
    /// tenant and, when memories stay in their chat, a foreign chat of the same user. Foreign
    /// scopes own nothing, so the re-runs cannot change what the scenario's own steps saw.
    fn leaks(&mut self) {
        let owners: HashMap<MemoryId, Scope> = match self.memories(&[]) {
            Ok(all) => all.into_iter().map(|(id, m)| (id, m.owner)).collect(),
            Err(e) => return self.report.fail(None, "leak", format!("leak check: {e}")),
        };
        let steps = &self.scenario.steps;
        let tenant = fresh_name("eval-foreign-tenant", steps.iter().map(|s| s.scope.tenant.as_str()));
        let user =
            fresh_name("eval-foreign-user", steps.iter().filter_map(|s| s.scope.user.as_ref().map(UserId::as_str)));
        let chat =
            fresh_name("eval-foreign-chat", steps.iter().filter_map(|s| s.scope.chat.as_ref().map(ChatId::as_str)));
        for step in steps {
            if !matches!(
                step.action,
                Action::Recall { .. }
                    | Action::Context { .. }
                    | Action::SimilarDocuments { .. }
                    | Action::Rotate { .. }
            ) {
                continue;
            }
            let mut foreign: Vec<(&str, Scope)> = vec![
                (
                    "foreign tenant",
                    Scope { tenant: TenantId::new(tenant.clone()).expect("valid id"), ..step.scope.clone() },
                ),
                (
                    "foreign user",
                    Scope { user: Some(UserId::new(user.clone()).expect("valid id")), ..step.scope.clone() },
                ),
            ];
            if self.scenario.memory_scope == MemoryScope::Chat {
                foreign.push((
                    "foreign chat",
                    Scope { chat: Some(ChatId::new(chat.clone()).expect("valid id")), ..step.scope.clone() },
                ));
            }
            self.clock.set(step.at);
            for (label, scope) in foreign {
                let found = match &step.action {
                    Action::Recall { query, top, .. } => {
                        self.memory.recall(&scope, query, Some(*top)).map(|r| recall_leaks(&scope, &r))
                    }
                    Action::Context { message, budget, .. } => self
                        .memory
                        .context(&scope, message, *budget)
                        .map(|r: ContextResult| context_leaks(&scope, &r.block, &owners, &step.scope.tenant)),
                    // Under any threshold: a foreign scope must not even get a poor match.
                    Action::SimilarDocuments { text, top, .. } => self
                        .memory
                        .similar_documents(&scope, "", text, Some(-1.0), *top)
                        .map(|hits| document_leaks(&scope, &hits)),
                    Action::Rotate { budget, .. } => {
                        self.memory.rotate_session(&scope, *budget).map(|r| bundle_leaks(&scope, &r.bundle, &owners))
                    }
                    _ => unreachable!("filtered above"),
                };
                match found {
                    Err(e) => self.report.fail(
                        Some(step.number),
                        "leak",
                        format!("{} re-run under a {label} ({scope}) failed: {e}", step.action.key()),
                    ),
                    Ok(leaks) => {
                        for l in leaks {
                            self.report.leaks += 1;
                            let owner =
                                l.owner.map_or_else(|| "unknown owner".to_string(), |o| format!("owned by {o}"));
                            self.report.fail(
                                Some(step.number),
                                "leak",
                                format!(
                                    "leak: {} under a {label} ({scope}) returned {:?} ({}, {owner})",
                                    step.action.key(),
                                    l.content,
                                    l.id
                                ),
                            );
                        }
                    }
                }
            }
        }
    }
}

/// `base`, or `base-2`, `base-3`, ... whichever the scenario does not use itself.
fn fresh_name<'a>(base: &str, used: impl Iterator<Item = &'a str>) -> String {
    let used: BTreeSet<&str> = used.collect();
    let mut name = base.to_string();
    let mut n = 1;
    while used.contains(name.as_str()) {
        n += 1;
        name = format!("{base}-{n}");
    }
    name
}

fn judge_recall(r: &RecallResult, top: usize, hit: &[String], miss: &[String]) -> Option<String> {
    let items: Vec<&RecallItem> = r.items.iter().take(top).collect();
    judge_found(&items.iter().map(|i| i.memory.content.as_str()).collect::<Vec<_>>(), &format!("top {top}"), hit, miss)
}

/// Problems of a list of found texts (`what` names it: "top 3"): a `hit` none holds, a `miss`
/// one holds.
fn judge_found(texts: &[&str], what: &str, hit: &[String], miss: &[String]) -> Option<String> {
    let mut problems = Vec::new();
    for h in hit {
        if !texts.iter().any(|t| found(t, h).is_some()) {
            problems.push(format!("hit {h:?} not in the {what}"));
        }
    }
    for m in miss {
        if let Some((pos, alt)) = texts.iter().enumerate().find_map(|(p, t)| found(t, m).map(|a| (p, a))) {
            problems.push(format!("miss {} is #{}", named(m, alt), pos + 1));
        }
    }
    (!problems.is_empty()).then(|| format!("{}; {what}: {}", problems.join("; "), quote_list(texts.iter().copied())))
}

/// Problems of a usage advice: another stage than expected, a `keep` entry naming no held item
/// or one that is shed, a `shed` entry naming no held item or one that is kept. `texts` holds
/// each held item's whole text by its position.
fn judge_usage(
    a: &UsageAdvice,
    texts: &[String],
    stage: Option<Stage>,
    keep: &[String],
    shed: &[String],
) -> Option<String> {
    let mut problems = Vec::new();
    if let Some(want) = stage.filter(|s| *s != a.stage) {
        problems.push(format!("stage is {}, expected {want}", a.stage));
    }
    for (entries, kept, word) in [(keep, true, "keep"), (shed, false, "shed")] {
        for e in entries {
            let named: Vec<_> = a.items.iter().filter(|i| found(&texts[i.index], e).is_some()).collect();
            if named.is_empty() {
                problems.push(format!("{word} {e:?} names no held item"));
            }
            for i in named.iter().filter(|i| (i.action == ShedAction::Keep) != kept) {
                problems.push(format!("{word} {e:?}: item {} is advised {}", i.index, i.action));
            }
        }
    }
    (!problems.is_empty()).then(|| {
        let shape: Vec<String> = a
            .items
            .iter()
            .map(|i| {
                format!("#{} {} {} {}", i.index, i.kind, i.action, i.to.map_or("out".to_string(), |l| l.to_string()))
            })
            .collect();
        format!("{}; stage {}, items: {}", problems.join("; "), a.stage, shape.join(", "))
    })
}

/// Problems of a rotation's bundle: over its budget, lacking a `contains` entry or a part's
/// entry, holding a `lacks` entry.
fn judge_bundle(
    b: &Bundle,
    contains: &[String],
    lacks: &[String],
    parts: &BTreeMap<PartName, Vec<String>>,
) -> Option<String> {
    let mut problems = Vec::new();
    if b.tokens > b.budget {
        problems.push(format!("{} tokens exceed the budget of {}", b.tokens, b.budget));
    }
    judge_text(&b.text, "bundle", contains, lacks, &mut problems);
    for (name, subs) in parts {
        let text = b.parts.iter().find(|p| p.name == *name).map(|p| p.text.as_str()).unwrap_or_default();
        for s in subs {
            if found(text, s).is_none() {
                problems.push(format!("part {name} lacks {s:?}"));
            }
        }
    }
    (!problems.is_empty()).then(|| format!("{}; bundle ({} tokens): {:?}", problems.join("; "), b.tokens, b.text))
}

/// Adds to `problems` each `contains` entry `text` (named `what`: "block") lacks and each
/// `lacks` entry it holds.
fn judge_text(text: &str, what: &str, contains: &[String], lacks: &[String], problems: &mut Vec<String>) {
    for c in contains {
        if found(text, c).is_none() {
            problems.push(format!("{what} lacks {c:?}"));
        }
    }
    for l in lacks {
        if let Some(alt) = found(text, l) {
            problems.push(format!("{what} contains {}", named(l, alt)));
        }
    }
}

fn section_text(block: &ContextBlock, name: SectionName) -> String {
    block
        .section(name)
        .map(|s| s.items.iter().map(|i| i.text.as_str()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

fn judge_context(
    r: &ContextResult,
    contains: &[String],
    lacks: &[String],
    sections: &BTreeMap<SectionName, Vec<String>>,
    section_lacks: &BTreeMap<SectionName, Vec<String>>,
) -> Option<String> {
    let block = &r.block;
    let mut problems = Vec::new();
    judge_text(&block.text, "block", contains, lacks, &mut problems);
    for (name, subs) in sections {
        let text = section_text(block, *name);
        for s in subs {
            if found(&text, s).is_none() {
                problems.push(format!("section {name} lacks {s:?}"));
            }
        }
    }
    for (name, subs) in section_lacks {
        let text = section_text(block, *name);
        for s in subs {
            if let Some(alt) = found(&text, s) {
                problems.push(format!("section {name} contains {}", named(s, alt)));
            }
        }
    }
    (!problems.is_empty()).then(|| {
        let shape: Vec<String> = block
            .sections
            .iter()
            .map(|s| format!("{} {}", s.name, quote_list(s.items.iter().map(|i| i.text.as_str()))))
            .collect();
        format!(
            "{}; sections: {}",
            problems.join("; "),
            if shape.is_empty() { "none".to_string() } else { shape.join(", ") }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::{found, named};

    #[test]
    fn a_positive_check_passes_on_any_alternative() {
        assert_eq!(found("She lives in Porto now.", "Lisbon|porto"), Some("porto"));
        assert_eq!(found("She lives in Porto now.", "Lisbon | Oporto | PORTO"), Some("PORTO"));
        assert_eq!(found("She lives in Porto now.", "Lisbon|Braga"), None);
        assert_eq!(found("She lives in Porto now.", "porto|"), Some("porto"), "empty alternatives are dropped");
    }

    #[test]
    fn a_negative_check_fails_on_any_alternative() {
        // `miss`/`lacks`/`section_lacks` fail when `found` returns an alternative.
        assert_eq!(found("allergic to peanuts", "shellfish|peanut"), Some("peanut"));
        assert_eq!(found("allergic to peanuts", "shellfish|sesame"), None);
        assert_eq!(named("shellfish|peanut", "peanut"), "\"shellfish|peanut\" (as \"peanut\")");
    }

    #[test]
    fn a_string_without_a_bar_matches_as_before() {
        assert_eq!(found("in Lisbon", "lisbon"), Some("lisbon"));
        assert_eq!(found("in Lisbon", " Lisbon"), Some(" Lisbon"), "not trimmed: a leading space still counts");
        assert_eq!(found("Lisbon", " Lisbon"), None);
        assert_eq!(named("Lisbon", "Lisbon"), "\"Lisbon\"");
    }
}
