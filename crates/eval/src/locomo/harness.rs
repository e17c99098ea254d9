//! Running LoCoMo through the product: each conversation into its own store, session by session
//! at the session's date-time; then every question through the real `context()` at each token
//! budget, its block's text scored against the gold answer and the evidence turns' words (and
//! the evidence ids its items name, as a diagnostic), and `recall()` for the top k; beside it
//! three baselines over the same turns (BM25, dense, their fusion), each packed into the same
//! budget and scored on the same text.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use chrono::Duration;
use mnemo::models::Embedder;
use mnemo::store::{ListFilter, SqliteStore};
use mnemo::{Config, ManualClock, Memory};
use mnemo_core::{NewMessage, Scope, StatusKind, tokens};
use serde::{Deserialize, Serialize};

use super::baselines::{self, EMBED_BATCH, RRF_K};
use super::bm25::Bm25;
use super::data::{Conversation, Dataset, Speakers, TurnRendering};
use super::error::LocomoError;
use super::metrics::{Hit, System, referenced_count};
use super::sources::{block_sources, recall_sources};
use super::textscore::{BlockWords, Reference, TextScore};

/// The tenant every conversation is ingested under (one user per conversation).
pub const TENANT: &str = "locomo";

/// What to measure and how to feed the conversations in.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocomoOptions {
    /// Token budgets for `context()`, in cl100k tokens.
    pub budgets: Vec<usize>,
    /// Prefix lengths of `recall()`'s ranking for recall@k; the largest is the k asked for.
    pub ks: Vec<usize>,
    /// Conversations skipped from the start (5 gives the held-out split 5–9).
    pub skip: usize,
    /// Only the first N conversations after the skipped ones (all when `None`).
    pub conversations: Option<usize>,
    /// Only the first N questions of each conversation (all when `None`).
    pub questions: Option<usize>,
    /// How turns become message text.
    pub rendering: TurnRendering,
    /// Keep each question's outcome in the report (for finding what retrieval misses).
    pub per_question: bool,
    /// Keep the text of every scored block (mnemo's and each baseline's) in the run, for
    /// `--dump-blocks`: reading blocks is how a person checks what the numbers mean.
    pub keep_blocks: bool,
    /// A directory of ingested conversations to reuse (`--stores DIR`): each conversation is
    /// ingested once into a copy kept there, under a name that carries its sample id and a
    /// fingerprint of the settings ingestion reads, and later runs ask their questions of a
    /// fresh copy of it. For trying read-path changes without paying for ingestion each time;
    /// the fingerprint cannot see a change to the ingestion code itself, so empty the
    /// directory after one.
    pub stores: Option<PathBuf>,
    /// Time each call as an application sees it (`--embed-each-call`): its own wall time, the
    /// question embedded inside the call, beside the store's reads. The engine's own cache of
    /// recent texts still answers a question asked again, as it would in an application, so
    /// the first budget's call is the one that embeds. By default the harness embeds a
    /// question once and adds that time to every call's own.
    pub embed_each_call: bool,
}

impl Default for LocomoOptions {
    fn default() -> Self {
        Self {
            budgets: vec![250, 500, 1000, 2000],
            ks: vec![5, 10, 25, 50],
            skip: 0,
            conversations: None,
            questions: None,
            rendering: TurnRendering::default(),
            per_question: false,
            keep_blocks: false,
            stores: None,
            embed_each_call: false,
        }
    }
}

impl LocomoOptions {
    fn validate(&self) -> Result<(), LocomoError> {
        let bad = |m: &str| Err(LocomoError::Options(m.to_string()));
        if self.budgets.is_empty() || self.budgets.contains(&0) {
            return bad("give at least one token budget, each above zero (e.g. 250 500 1000 2000)");
        }
        if self.ks.is_empty() || self.ks.contains(&0) {
            return bad("give at least one k for recall@k, each above zero (e.g. 5 10 25 50)");
        }
        if self.conversations == Some(0) || self.questions == Some(0) {
            return bad("--conversations and --questions must be at least 1 when given");
        }
        Ok(())
    }
}

/// One question's outcome for every system; vectors follow the order of the options' budgets
/// and ks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QuestionOutcome {
    /// The conversation's sample id.
    pub conversation: String,
    /// Position in the conversation's `qa` list (0-based).
    pub index: usize,
    /// LoCoMo category id.
    pub category: u8,
    /// The question.
    pub question: String,
    /// The gold answer.
    pub answer: String,
    /// Resolved evidence dialog ids.
    pub evidence: Vec<String>,
    /// The words said in each evidence turn, in `evidence`'s order: the turn as ingested less
    /// the speaker's name (what the text metrics look for).
    pub evidence_texts: Vec<String>,
    /// Each system's block per budget.
    pub budgets: Vec<BudgetOutcome>,
    /// Evidence turns named by the top k of mnemo's `recall()`, per k.
    pub mnemo_referenced_at_k: Vec<Hit>,
    /// Evidence turns among BM25's top k turns, per k.
    pub bm25_referenced_at_k: Vec<Hit>,
}

/// Every system's block for one question at one budget.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetOutcome {
    /// The token budget.
    pub budget: usize,
    /// mnemo's `context()` block.
    pub mnemo: ScoredBlock,
    /// BM25 over turns, packed.
    pub bm25: ScoredBlock,
    /// Cosine over turns with the run's model, packed.
    pub dense: ScoredBlock,
    /// The fusion of the two rankings, packed.
    pub rrf: ScoredBlock,
}

impl BudgetOutcome {
    /// One system's block.
    pub fn system(&self, system: System) -> &ScoredBlock {
        match system {
            System::Mnemo => &self.mnemo,
            System::Bm25 => &self.bm25,
            System::Dense => &self.dense,
            System::Rrf => &self.rrf,
        }
    }
}

/// One block as the application would receive it, scored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoredBlock {
    /// cl100k tokens of its text.
    pub tokens: usize,
    /// Evidence turns its items name by id or provenance (a diagnostic).
    pub referenced: Hit,
    /// Its text metrics.
    #[serde(flatten)]
    pub score: TextScore,
    /// Its text, kept only with [`LocomoOptions::keep_blocks`].
    #[serde(skip)]
    pub text: Option<String>,
}

/// What ingesting one conversation took and produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationStats {
    /// The sample id.
    pub sample_id: String,
    /// Sessions ingested.
    pub sessions: usize,
    /// Turns ingested as messages.
    pub turns: usize,
    /// cl100k tokens of every ingested message, one per line: what "put the whole conversation
    /// in the prompt" would cost.
    pub tokens: usize,
    /// Questions asked (with resolvable evidence).
    pub questions: usize,
    /// Wall time of the `ingest` calls (and of `flush` at the end of each session).
    pub ingest_seconds: f64,
    /// Active memories after ingest.
    pub active_memories: usize,
    /// Ops the extractor proposed.
    pub ops_proposed: usize,
}

/// Everything measured; [`super::report::LocomoReport`] summarises it.
#[derive(Debug, Clone, Serialize)]
pub struct LocomoRun {
    /// The options it ran with.
    pub options: LocomoOptions,
    /// The embedder's id.
    pub embedder: String,
    /// The extractor configured (`heuristic`, `llm`).
    pub extractor: String,
    /// Where the dataset came from.
    pub dataset: String,
    /// Per conversation.
    pub conversations: Vec<ConversationStats>,
    /// Per question with resolvable evidence.
    pub questions: Vec<QuestionOutcome>,
    /// Questions skipped because none of their evidence names a turn, per category.
    pub questions_without_evidence: Vec<(String, usize, u8)>,
    /// Evidence entries that name no turn, as (conversation, entry).
    pub unresolved_evidence: Vec<(String, String)>,
    /// Evidence entries repaired by normalisation, as (conversation, entry).
    pub normalised_evidence: Vec<(String, String)>,
    /// `context()` end-to-end time per call in ms, per budget: the call's own time excluding
    /// the query embedding, plus the question's embedding time (measured once per question);
    /// with `embed_each_call`, each call's own wall time.
    pub context_ms: Vec<Vec<f64>>,
    /// `context()` wall time per call in ms not spent embedding the query, per budget.
    pub context_ms_excluding_embedding: Vec<Vec<f64>>,
    /// `recall()` end-to-end time per call in ms, counted as for `context_ms`.
    pub recall_ms: Vec<f64>,
    /// Embedding each question with the real model, in ms (once per question).
    pub query_embedding_ms: Vec<f64>,
    /// Wall time of the whole run.
    pub seconds: f64,
}

/// Progress lines for a person watching a long run.
pub type Progress<'a> = &'a mut dyn FnMut(&str);

/// Runs the benchmark over `dataset` with the engine configured by `config` (its store settings
/// are ignored: every conversation gets a fresh embedded store in a temporary directory).
pub fn run_locomo(
    dataset: &Dataset,
    config: &Config,
    embedder: &Arc<dyn Embedder>,
    options: &LocomoOptions,
    progress: Progress<'_>,
) -> Result<LocomoRun, LocomoError> {
    options.validate()?;
    if options.skip >= dataset.conversations.len() {
        return Err(LocomoError::Options(format!(
            "--skip {} leaves nothing to run: the file holds {} conversations",
            options.skip,
            dataset.conversations.len()
        )));
    }
    let started = Instant::now();
    let take = options.conversations.unwrap_or(usize::MAX);
    let mut run = LocomoRun {
        options: options.clone(),
        embedder: embedder.id().to_string(),
        extractor: serde_json::to_value(config.extractor)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default(),
        dataset: dataset.path.display().to_string(),
        conversations: Vec::new(),
        questions: Vec::new(),
        questions_without_evidence: Vec::new(),
        unresolved_evidence: Vec::new(),
        normalised_evidence: Vec::new(),
        context_ms: vec![Vec::new(); options.budgets.len()],
        context_ms_excluding_embedding: vec![Vec::new(); options.budgets.len()],
        recall_ms: Vec::new(),
        query_embedding_ms: Vec::new(),
        seconds: 0.0,
    };
    for conv in dataset.conversations.iter().skip(options.skip).take(take) {
        run_conversation(conv, config, embedder, options, &mut run, progress)?;
    }
    run.seconds = started.elapsed().as_secs_f64();
    Ok(run)
}

/// A conversation ingested into its own throwaway store, as an application would have fed it;
/// the engine's clock is left an hour after the last session.
pub(super) struct Ingested {
    /// The engine over the conversation's store.
    pub(super) memory: Memory,
    /// What ingesting took and produced.
    pub(super) stats: ConversationStats,
    /// Keeps the store's directory alive as long as the engine.
    _dir: tempfile::TempDir,
}

/// Turns an engine error into the harness's, saying which conversation and what it was doing.
pub(super) fn engine_error(conversation: &str, during: impl Into<String>) -> impl FnOnce(mnemo::Error) -> LocomoError {
    let (conversation, during) = (conversation.to_string(), during.into());
    move |source| LocomoError::Engine { conversation, during, source: Box::new(source) }
}

/// The scope a conversation's chat is ingested or asked under (one user per conversation).
pub(super) fn chat_scope(conv: &Conversation, chat: Option<&str>) -> Result<Scope, LocomoError> {
    Scope::parse(TENANT, None, Some(&conv.sample_id), chat)
        .map_err(|e| engine_error(&conv.sample_id, format!("scope for chat {chat:?}"))(e.into()))
}

/// Refuses to split the speakers' roles in a conversation that does not name both speakers.
pub(super) fn check_speakers(conv: &Conversation, rendering: TurnRendering) -> Result<(), LocomoError> {
    if rendering.speakers == Speakers::BothUser || conv.speakers.len() == 2 {
        return Ok(());
    }
    Err(LocomoError::Options(format!(
        "--speaker-as needs \"speaker_a\" and \"speaker_b\", and {} names {:?}",
        conv.sample_id, conv.speakers
    )))
}

/// Ingests `conv` into a fresh embedded store: session by session at the session's date-time,
/// a turn 30 seconds apart, each turn's dialog id as its message id (so provenance names turns)
/// and its role as the rendering says, flushing at the end of each session as an application
/// would at the end of a conversation.
pub(super) fn ingest_conversation(
    conv: &Conversation,
    config: &Config,
    embedder: Arc<dyn Embedder>,
    rendering: TurnRendering,
    progress: Progress<'_>,
) -> Result<Ingested, LocomoError> {
    check_speakers(conv, rendering)?;
    let id = conv.sample_id.as_str();
    let tmp = tempfile::tempdir().map_err(|source| LocomoError::TempDir { conversation: id.to_string(), source })?;
    let mut config = config.clone();
    config.data_dir = tmp.path().to_path_buf();
    config.database_url = None;
    let store = SqliteStore::open(config.db_path()).map_err(|e| engine_error(id, "opening its store")(e.into()))?;
    let first = conv.sessions[0].at;
    let clock = Arc::new(ManualClock::new(first));
    let memory = Memory::from_parts(config, Arc::new(store), Some(embedder), clock.clone());
    let texts: Vec<String> = conv.turns().map(|(_, t)| t.render(rendering)).collect();
    let mut stats = ConversationStats {
        sample_id: id.to_string(),
        sessions: conv.sessions.len(),
        turns: texts.len(),
        tokens: texts.iter().map(|t| tokens::count(t) + 1).sum(),
        questions: 0,
        ingest_seconds: 0.0,
        active_memories: 0,
        ops_proposed: 0,
    };
    for session in &conv.sessions {
        clock.set(session.at);
        let chat = format!("session_{}", session.number);
        let batch: Vec<NewMessage> = session
            .turns
            .iter()
            .enumerate()
            .map(|(i, t)| NewMessage {
                id: Some(t.dia_id.clone()),
                role: rendering.role(conv, t),
                content: t.render(rendering),
                at: Some(session.at + Duration::seconds(30 * i as i64)),
            })
            .collect();
        let session_scope = chat_scope(conv, Some(&chat))?;
        let t = Instant::now();
        let report = memory.ingest(&session_scope, batch).map_err(engine_error(id, format!("ingesting {chat}")))?;
        // The end of a session is the end of a conversation: whatever extraction an
        // asynchronous extractor still has queued for it runs now, as an application would ask.
        memory.flush(&session_scope).map_err(engine_error(id, format!("flushing {chat}")))?;
        stats.ingest_seconds += t.elapsed().as_secs_f64();
        stats.ops_proposed += report.ops.len();
    }
    let last = conv.sessions.iter().map(|s| s.at).max().unwrap_or(first);
    clock.set(last + Duration::hours(1));
    let active = ListFilter { statuses: vec![StatusKind::Active], ..ListFilter::default() };
    stats.active_memories =
        memory.list(&chat_scope(conv, None)?, &active).map_err(engine_error(id, "listing memories"))?.len();
    progress(&format!(
        "{id}: {} sessions, {} turns ingested in {:.1} s; {} active memories",
        stats.sessions, stats.turns, stats.ingest_seconds, stats.active_memories
    ));
    Ok(Ingested { memory, stats, _dir: tmp })
}

/// `conv` from `stores` when an earlier run left it there under the same fingerprint (copied
/// into a fresh directory, so questions never write into the kept copy); otherwise ingested,
/// and kept there for the next run.
fn reuse_or_ingest(
    conv: &Conversation,
    config: &Config,
    embedder: Arc<dyn Embedder>,
    rendering: TurnRendering,
    stores: &Path,
    progress: Progress<'_>,
) -> Result<Ingested, LocomoError> {
    let id = conv.sample_id.as_str();
    let io = |source: std::io::Error| LocomoError::TempDir { conversation: id.to_string(), source };
    let kept = stores.join(format!("{id}-{:016x}", ingest_fingerprint(config, embedder.id(), rendering)));
    let stats_file = kept.join("stats.json");
    if !stats_file.exists() {
        let ingested = ingest_conversation(conv, config, embedder, rendering, progress)?;
        let partial = kept.with_extension("partial");
        let _ = std::fs::remove_dir_all(&partial);
        copy_dir(ingested._dir.path(), &partial).map_err(io)?;
        let stats = serde_json::to_vec_pretty(&ingested.stats).expect("stats serialise");
        std::fs::write(partial.join("stats.json"), stats).map_err(io)?;
        std::fs::rename(&partial, &kept).map_err(io)?;
        return Ok(ingested);
    }
    let tmp = tempfile::tempdir().map_err(io)?;
    copy_dir(&kept, tmp.path()).map_err(io)?;
    let bad = |e: serde_json::Error| io(std::io::Error::other(format!("{}: {e}", stats_file.display())));
    let mut stats: ConversationStats = serde_json::from_slice(&std::fs::read(&stats_file).map_err(io)?).map_err(bad)?;
    stats.ingest_seconds = 0.0;
    let mut config = config.clone();
    config.data_dir = tmp.path().to_path_buf();
    config.database_url = None;
    let store =
        SqliteStore::open(config.db_path()).map_err(|e| engine_error(id, "opening its kept store")(e.into()))?;
    let last = conv.sessions.iter().map(|s| s.at).max().unwrap_or(conv.sessions[0].at);
    let clock = Arc::new(ManualClock::new(last + Duration::hours(1)));
    let memory = Memory::from_parts(config, Arc::new(store), Some(embedder), clock);
    progress(&format!("{id}: reused the store ingested earlier in {}", kept.display()));
    Ok(Ingested { memory, stats, _dir: tmp })
}

/// What ingestion reads from the settings (everything but where the store is, and the read
/// path's ranking and assembly, less the two ranking settings applied when a message is
/// embedded), the embedder and the rendering, hashed: a kept store is reused only under the
/// same fingerprint. The speakers' roles are hashed only when split, so stores kept before the
/// roles could be split keep their fingerprint.
fn ingest_fingerprint(config: &Config, embedder: &str, rendering: TurnRendering) -> u64 {
    let mut c = config.clone();
    c.data_dir = PathBuf::new();
    c.database_url = None;
    c.assembly = Default::default();
    let (turn_context, max_passages) = (c.ranking.turn_context, c.ranking.max_passages);
    c.ranking = Default::default();
    c.ranking.turn_context = turn_context;
    c.ranking.max_passages = max_passages;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ingest_settings(c).hash(&mut h);
    (embedder, rendering.speaker_prefix, rendering.captions).hash(&mut h);
    if rendering.speakers != Speakers::BothUser {
        rendering.speakers.hash(&mut h);
    }
    h.finish()
}

/// `config` as JSON for the fingerprint, without the caches' budgets: they change no stored
/// byte, and left out (they are the last field) stores kept before they existed keep theirs.
fn ingest_settings(mut config: Config) -> String {
    config.cache = Default::default();
    let json = serde_json::to_string(&config).expect("the config serialises");
    let cache = format!(",\"cache\":{}}}", serde_json::to_string(&config.cache).expect("the budgets serialise"));
    match json.strip_suffix(&cache) {
        Some(rest) => format!("{rest}}}"),
        None => json,
    }
}

/// Copies the files of `from` (one level: a store's database and its journals) into `to`.
fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// A conversation's turns as the baselines see them: the ingested texts, their dialog ids and
/// line costs, the BM25 index and every turn's vector.
struct Turns<'c> {
    texts: Vec<String>,
    dia_ids: Vec<&'c str>,
    costs: Vec<usize>,
    bm25: Bm25,
    vectors: Vec<Vec<f32>>,
}

impl<'c> Turns<'c> {
    fn new(
        conv: &'c Conversation,
        rendering: TurnRendering,
        embedder: &dyn Embedder,
        progress: Progress<'_>,
    ) -> Result<Self, LocomoError> {
        let texts: Vec<String> = conv.turns().map(|(_, t)| t.render(rendering)).collect();
        let t = Instant::now();
        let vectors = baselines::embed_in_batches(embedder, &texts, EMBED_BATCH)
            .map_err(|e| engine_error(&conv.sample_id, "embedding turns for the dense baseline")(e.into()))?;
        progress(&format!(
            "{}: {} turns embedded for the dense baseline in {:.1} s",
            conv.sample_id,
            texts.len(),
            t.elapsed().as_secs_f64()
        ));
        Ok(Self {
            dia_ids: conv.turns().map(|(_, t)| t.dia_id.as_str()).collect(),
            costs: texts.iter().map(|t| baselines::line_cost(t)).collect(),
            bm25: Bm25::new(&texts),
            vectors,
            texts,
        })
    }

    /// The block a ranking packs into `budget`, and the dialog ids of the turns in it.
    fn pack(&self, ranking: &[(usize, f64)], budget: usize) -> (String, Vec<String>) {
        let (chosen, _) = baselines::pack(ranking, &self.costs, budget);
        let text = baselines::block_text(chosen.iter().map(|&d| self.texts[d].as_str()));
        (text, chosen.iter().map(|&d| self.dia_ids[d].to_string()).collect())
    }
}

fn run_conversation(
    conv: &Conversation,
    config: &Config,
    embedder: &Arc<dyn Embedder>,
    options: &LocomoOptions,
    run: &mut LocomoRun,
    progress: Progress<'_>,
) -> Result<(), LocomoError> {
    check_speakers(conv, options.rendering)?;
    let id = conv.sample_id.clone();
    let engine = |during: String| engine_error(&id, during);
    let queries: Arc<dyn Embedder> = if options.embed_each_call {
        Arc::clone(embedder)
    } else {
        Arc::new(OncePerQuestion::new(Arc::clone(embedder)))
    };
    let Ingested { memory, mut stats, _dir } = match &options.stores {
        Some(stores) => reuse_or_ingest(conv, config, queries, options.rendering, stores, progress)?,
        None => ingest_conversation(conv, config, queries, options.rendering, progress)?,
    };
    let scope = |chat: &str| chat_scope(conv, Some(chat));
    // The baselines index exactly the ingested text; the raw model embeds for them, outside
    // every timed call, so none of their work is charged to mnemo.
    let turns = Turns::new(conv, options.rendering, embedder.as_ref(), progress)?;
    let said: HashMap<&str, String> =
        conv.turns().map(|(_, t)| (t.dia_id.as_str(), t.said(options.rendering))).collect();
    let max_k = options.ks.iter().copied().max().unwrap_or(1);

    for q in conv.questions.iter().take(options.questions.unwrap_or(usize::MAX)) {
        for e in &q.unresolved {
            run.unresolved_evidence.push((id.clone(), e.clone()));
        }
        for e in &q.normalised {
            run.normalised_evidence.push((id.clone(), e.clone()));
        }
        if q.evidence.is_empty() {
            run.questions_without_evidence.push((id.clone(), q.index, q.category));
            continue;
        }
        let of = q.evidence.len();
        let hit = |ids: &[String]| Hit { referenced: referenced_count(&q.evidence, ids), of };
        let evidence_texts: Vec<String> = q.evidence.iter().map(|e| said[e.as_str()].clone()).collect();
        let reference = Reference::new(&q.answer, &evidence_texts);
        let scored = |text: String, tokens: usize, ids: &[String]| ScoredBlock {
            tokens,
            referenced: hit(ids),
            score: reference.score(&BlockWords::new(&text)),
            text: options.keep_blocks.then_some(text),
        };

        // A fresh chat per call: no recent-message window answers for free, and no earlier
        // question's block triggers the over-reference guard.
        // The question is embedded for real by the first call and reused by the others (see
        // `OncePerQuestion`); every call is charged that one embedding time.
        let mut embed_ms: Option<f64> = None;
        let mut mnemo_blocks = Vec::with_capacity(options.budgets.len());
        for (b, &budget) in options.budgets.iter().enumerate() {
            let chat = format!("q{}-b{budget}", q.index);
            let t = Instant::now();
            let ctx = memory
                .context(&scope(&chat)?, &q.text, Some(budget))
                .map_err(engine(format!("context for question {}", q.index + 1)))?;
            let ms = t.elapsed().as_secs_f64() * 1e3;
            let own_embed = ctx.embed_micros as f64 / 1e3;
            let embed = *embed_ms.get_or_insert(own_embed);
            let excluding = (ms - own_embed).max(0.0);
            run.context_ms_excluding_embedding[b].push(excluding);
            run.context_ms[b].push(if options.embed_each_call { ms } else { excluding + embed });
            let ids: Vec<String> = block_sources(&ctx.block).into_iter().flatten().collect();
            mnemo_blocks.push(scored(ctx.block.text, ctx.block.tokens, &ids));
        }
        let t = Instant::now();
        let r = memory
            .recall(&scope(&format!("q{}-k", q.index))?, &q.text, Some(max_k))
            .map_err(engine(format!("recall for question {}", q.index + 1)))?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let own_embed = r.embed_micros as f64 / 1e3;
        let embed = embed_ms.unwrap_or(own_embed);
        run.recall_ms.push(if options.embed_each_call { ms } else { (ms - own_embed).max(0.0) + embed });
        run.query_embedding_ms.push(embed);
        let ranked = recall_sources(&r);
        let mnemo_referenced_at_k =
            options.ks.iter().map(|&k| hit(&ranked.iter().take(k).flatten().cloned().collect::<Vec<_>>())).collect();

        // The baselines, after mnemo's timed calls.
        let bm25 = turns.bm25.rank(&q.text);
        let query = embedder
            .embed(&[q.text.as_str()])
            .map_err(|e| engine(format!("embedding question {} for the dense baseline", q.index + 1))(e.into()))?;
        let dense = baselines::dense_rank(&query[0], &turns.vectors);
        let rrf = baselines::rrf(&[&bm25, &dense], RRF_K);
        let baseline = |ranking: &[(usize, f64)], budget: usize| {
            let (text, ids) = turns.pack(ranking, budget);
            let tokens = tokens::count(&text);
            scored(text, tokens, &ids)
        };
        let budgets = options
            .budgets
            .iter()
            .zip(mnemo_blocks)
            .map(|(&budget, mnemo)| BudgetOutcome {
                budget,
                mnemo,
                bm25: baseline(&bm25, budget),
                dense: baseline(&dense, budget),
                rrf: baseline(&rrf, budget),
            })
            .collect();
        let bm25_referenced_at_k = options
            .ks
            .iter()
            .map(|&k| hit(&bm25.iter().take(k).map(|&(d, _)| turns.dia_ids[d].to_string()).collect::<Vec<_>>()))
            .collect();
        stats.questions += 1;
        run.questions.push(QuestionOutcome {
            conversation: id.clone(),
            index: q.index,
            category: q.category,
            question: q.text.clone(),
            answer: q.answer.clone(),
            evidence: q.evidence.clone(),
            evidence_texts,
            budgets,
            mnemo_referenced_at_k,
            bm25_referenced_at_k,
        });
    }
    progress(&format!("{id}: {} questions asked", stats.questions));
    run.conversations.push(stats);
    Ok(())
}

/// The real embedder, except that a query embedded again right after itself is answered from
/// the previous call: the harness asks each question at every budget and once more for recall,
/// and an application would embed it once. A query is a call of one text, or of two (the
/// query and its form without the words most messages share, which recall averages); only the
/// latest call is kept, so the vectors are exactly the model's; larger batches (ingest) always
/// pass through.
struct OncePerQuestion {
    inner: Arc<dyn Embedder>,
    last: Mutex<Option<QueryCall>>,
}

/// The texts of one query call and the vectors the model gave them.
type QueryCall = (Vec<String>, Vec<Vec<f32>>);

impl OncePerQuestion {
    fn new(inner: Arc<dyn Embedder>) -> Self {
        Self { inner, last: Mutex::new(None) }
    }
}

impl Embedder for OncePerQuestion {
    fn id(&self) -> &str {
        self.inner.id()
    }

    fn dim(&self) -> usize {
        self.inner.dim()
    }

    fn embed(&self, texts: &[&str]) -> mnemo::models::Result<Vec<Vec<f32>>> {
        if texts.is_empty() || texts.len() > 2 {
            return self.inner.embed(texts);
        }
        let mut last = self.last.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, v)) = last.as_ref().filter(|(t, _)| t.iter().map(String::as_str).eq(texts.iter().copied())) {
            return Ok(v.clone());
        }
        let v = self.inner.embed(texts)?;
        *last = Some((texts.iter().map(|t| t.to_string()).collect(), v.clone()));
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use mnemo::models::HashEmbedder;

    use super::*;

    /// The hashing embedder, counting the texts it is asked to embed.
    struct Counting(HashEmbedder, AtomicUsize);

    impl Embedder for Counting {
        fn id(&self) -> &str {
            self.0.id()
        }
        fn dim(&self) -> usize {
            self.0.dim()
        }
        fn embed(&self, texts: &[&str]) -> mnemo::models::Result<Vec<Vec<f32>>> {
            self.1.fetch_add(texts.len(), Ordering::SeqCst);
            self.0.embed(texts)
        }
    }

    #[test]
    fn the_fingerprint_leaves_the_cache_budgets_out() {
        let mut config = Config::default();
        config.cache.memory_vectors_mib = 1;
        let json: serde_json::Value = serde_json::from_str(&ingest_settings(config.clone())).unwrap();
        assert!(json.get("cache").is_none() && json.get("proxy").is_some(), "{json}");
        let rendering = TurnRendering::default();
        let other = Config::default();
        assert_eq!(ingest_fingerprint(&config, "e", rendering), ingest_fingerprint(&other, "e", rendering));
    }

    #[test]
    fn a_repeated_question_is_embedded_once_and_batches_pass_through() {
        let inner = Arc::new(Counting(HashEmbedder::new(64), AtomicUsize::new(0)));
        let e = OncePerQuestion::new(inner.clone());
        let a = e.embed(&["where is Clara moving?"]).unwrap();
        let b = e.embed(&["where is Clara moving?"]).unwrap();
        assert_eq!(a, b);
        assert_eq!(a, inner.0.embed(&["where is Clara moving?"]).unwrap(), "the model's own vector");
        assert_eq!(inner.1.load(Ordering::SeqCst), 1);
        e.embed(&["another question"]).unwrap();
        e.embed(&["where is Clara moving?"]).unwrap();
        assert_eq!(inner.1.load(Ordering::SeqCst), 3, "only the latest text is kept");
        e.embed(&["x", "y", "z"]).unwrap();
        e.embed(&["x", "y", "z"]).unwrap();
        assert_eq!(inner.1.load(Ordering::SeqCst), 9, "batches always reach the model");
        // A query with its form without the common words is one query.
        e.embed(&["what does Ann do?", "what does do?"]).unwrap();
        e.embed(&["what does Ann do?", "what does do?"]).unwrap();
        assert_eq!(inner.1.load(Ordering::SeqCst), 11);
        assert_eq!((e.id(), e.dim()), (inner.id(), 64));
    }
}
