//! The server backend: PostgreSQL with pgvector, for several mnemo servers sharing one database.
//!
//! Same contract and behaviour as the SQLite backend; what differs is where the guarantees live:
//!
//! - **Isolation in storage.** Every request runs in a transaction that switches to the role
//!   `mnemo_app` (no superuser, no BYPASSRLS) and sets `mnemo.tenant` for that transaction only.
//!   Row-level security, forced on every tenant table, then hides other tenants' rows from any
//!   query, including one that forgot its tenant predicate; a transaction that set no tenant sees
//!   nothing at all. The one cross-tenant read, [`Memories::scan`](crate::Memories::scan) for jobs, runs as the separate
//!   role `mnemo_jobs`, which may only read memories. Only migrations run as the connecting
//!   role (the schema's owner), plus one SECURITY DEFINER function that creates a new model's
//!   vector index.
//! - **Vectors.** A `vector` column without a fixed dimension; each model's dimension is fixed by
//!   its first vector and gets a partial HNSW index (cosine) over active rows. Searches filter by
//!   scope before ranking and use pgvector's iterative index scans, so a selective scope still
//!   fills `limit`.
//! - **Lexical.** A generated `tsvector` (English stemming), read from a covering btree of the
//!   scope's rows, each match scored by how rare its matched terms are (see [`lexical_sql`]).
//! - **Jobs.** [`JobLocks::try_job_lock`](crate::JobLocks::try_job_lock) takes a session advisory lock so that, of several
//!   servers, one runs a given job at a time.
//!
//! Connections are plain TCP or Unix sockets without TLS.

mod apply;
mod documents;
mod lock;
mod memories;
mod messages;
mod observations;
mod policies;
mod pool;
mod queue;
mod rows;
mod schema;
mod search;
mod temp_db;
mod traces;
mod transfer;
mod users;

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mnemo_core::language::{self, Lang, Language};
use mnemo_core::{Memory, MemoryId, Scope, TenantId};
use postgres::Config;

use self::pool::{Params, Pool, Tx, pg};
use self::rows::{get, vector_text};
use crate::error::{Result, StoreError};
use crate::rows::decode;
use crate::sql::VISIBLE;
use crate::vectors::VectorCache;

pub use self::temp_db::TempDatabase;

/// Connections one store handle opens at most; callers beyond that wait for a free one.
const MAX_CONNECTIONS: usize = 16;

/// Who a transaction runs as.
#[derive(Clone, Copy)]
enum Actor<'a> {
    /// A request of one tenant: role `mnemo_app`, `mnemo.tenant` set.
    Tenant(&'a str),
    /// The jobs' cross-tenant scan: role `mnemo_jobs`, read-only.
    Jobs,
}

/// The PostgreSQL backend.
pub struct PostgresStore {
    label: String,
    pool: Pool,
    /// Models whose dimension (and HNSW index) are committed: saves a lookup per vector.
    models: Mutex<HashMap<String, usize>>,
    /// Set between `begin_bulk_load` and `finish_bulk_load`: new models' indexes wait.
    bulk: AtomicBool,
    /// Scopes with at most this many active rows are searched exactly (0: always the index).
    exact_scan_max: AtomicUsize,
    /// Scopes found bigger than that, and when: they go to the index for a while.
    big_scopes: Mutex<HashMap<[String; 4], Instant>>,
    /// The vectors of scopes searched exactly, per partition, kept while the partition's version
    /// in the database stands (the cache SQLite uses; see [`crate::vectors`]).
    vectors: VectorCache,
}

/// The default of [`PostgresStore::set_exact_scan_max`].
pub const EXACT_SCAN_MAX: usize = 20_000;

/// How long a scope found too big for an exact scan goes straight to the index.
const BIG_SCOPE_TTL: Duration = Duration::from_secs(600);

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore").field("database", &self.label).finish_non_exhaustive()
    }
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        // key=value form: drop any password=... pair.
        return url.split_whitespace().filter(|kv| !kv.starts_with("password=")).collect::<Vec<_>>().join(" ");
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{scheme}://{user}@{host}{path}")
        }
        None => url.to_string(),
    }
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user@host:port/db` or `host=... dbname=...`), creates the
    /// roles the store switches to if the cluster lacks them, and migrates the schema to the
    /// latest version.
    ///
    /// The connecting role owns the schema: a superuser, or (where the service allows no
    /// superuser) the database's owner, with pgvector installed there by an administrator and
    /// either CREATEROLE or `GRANT mnemo_app, mnemo_jobs TO <owner> WITH INHERIT FALSE`.
    pub fn connect(url: &str) -> Result<Self> {
        let label = redact(url);
        let open_err = |reason: String| StoreError::Open { path: label.clone().into(), reason };
        let mut config = Config::from_str(url).map_err(|e| open_err(format!("bad database URL: {e}")))?;
        if config.get_application_name().is_none() {
            config.application_name("mnemo");
        }
        // A plan per execution, never a generic one: tenants and users differ in size by orders
        // of magnitude (one plan cannot fit a user of ten rows and one of a hundred thousand),
        // and a generic plan would also re-evaluate every parameter cast (the query vector's
        // text, the tsqueries) once per row instead of once per query.
        let options = match config.get_options() {
            Some(o) if !o.is_empty() => format!("{o} -c plan_cache_mode=force_custom_plan"),
            _ => "-c plan_cache_mode=force_custom_plan".to_string(),
        };
        config.options(&options);
        let pool = Pool::new(config, MAX_CONNECTIONS);
        let mut client = pool.connect().map_err(|e| open_err(e.to_string()))?;
        schema::ensure_roles(&mut client, &label)?;
        schema::migrate(&mut client)?;
        schema::ensure_vector_indexes(&mut client)?;
        drop(client);
        Ok(Self {
            label,
            pool,
            models: Mutex::new(HashMap::new()),
            bulk: AtomicBool::new(false),
            exact_scan_max: AtomicUsize::new(EXACT_SCAN_MAX),
            big_scopes: Mutex::new(HashMap::new()),
            vectors: VectorCache::default(),
        })
    }

    /// The same store with its in-process vector cache held to `budgets` (PostgreSQL searches
    /// message vectors in the database, so only the memories' budget applies).
    pub fn with_cache_budgets(mut self, budgets: crate::CacheBudgets) -> Self {
        self.vectors = VectorCache::with_budget(budgets.memory_vectors);
        self
    }

    /// Vector searches of scopes holding at most `rows` active memories score every row exactly
    /// instead of walking the HNSW index (default [`EXACT_SCAN_MAX`]): an index walk filtered to
    /// a small share of the table visits thousands of nodes to find a few matches, while a
    /// user's few thousand rows are scored faster, and with nothing approximate. 0 always uses
    /// the index.
    pub fn set_exact_scan_max(&self, rows: usize) {
        self.exact_scan_max.store(rows, Ordering::Relaxed);
        self.big_scopes.lock().expect("big scopes lock").clear();
    }

    /// The database, as a URL without password.
    pub fn database(&self) -> &str {
        &self.label
    }

    /// Runs `f` in a transaction as `actor`; commits when it returns Ok, rolls back otherwise.
    fn tx<T>(
        &self,
        op: &'static str,
        actor: Actor<'_>,
        read_only: bool,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T>,
    ) -> Result<T> {
        let mut lease = self.pool.get(op)?;
        let mut tx = lease.begin(op, read_only)?;
        match actor {
            Actor::Tenant(tenant) => {
                tx.query(
                    "SELECT set_config('role', 'mnemo_app', true), set_config('mnemo.tenant', $1, true)",
                    &[&tenant],
                )?;
            }
            Actor::Jobs => {
                tx.query("SELECT set_config('role', 'mnemo_jobs', true)", &[])?;
            }
        }
        let out = f(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// A read-only transaction bound to `tenant`.
    fn read<T>(&self, op: &'static str, tenant: &str, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        self.tx(op, Actor::Tenant(tenant), true, f)
    }

    /// A read-write transaction bound to `tenant`.
    fn write<T>(&self, op: &'static str, tenant: &str, f: impl FnOnce(&mut Tx<'_>) -> Result<T>) -> Result<T> {
        self.tx(op, Actor::Tenant(tenant), false, f)
    }

    fn query_memories(&self, op: &'static str, tenant: &str, sql: &str, params: &Params<'_>) -> Result<Vec<Memory>> {
        self.read(op, tenant, |tx| tx.query(sql, params)?.iter().map(decode::memory).collect())
    }

    /// Runs `f` in a read-only transaction bound to `tenant`, exactly as every request of the
    /// store runs: as `mnemo_app` under row-level security. For queries the trait lacks (reports,
    /// exports) and for checking the isolation itself: whatever SQL `f` runs, rows of other
    /// tenants are invisible to it, with or without a tenant predicate.
    pub fn with_tenant<T>(
        &self,
        tenant: &TenantId,
        f: impl FnOnce(&mut postgres::Transaction<'_>) -> std::result::Result<T, postgres::Error>,
    ) -> Result<T> {
        let mut lease = self.pool.get("tenant query")?;
        let client = lease.client();
        let mut tx = client.build_transaction().read_only(true).start().map_err(pg("tenant query"))?;
        tx.execute(
            "SELECT set_config('role', 'mnemo_app', true), set_config('mnemo.tenant', $1, true)",
            &[&tenant.as_str()],
        )
        .map_err(pg("tenant query"))?;
        let out = f(&mut tx).map_err(pg("tenant query"))?;
        tx.commit().map_err(pg("tenant query"))?;
        Ok(out)
    }

    /// The plan PostgreSQL picks for the index path of [`Search::vector`](crate::Search::vector) (scopes bigger than
    /// [`PostgresStore::set_exact_scan_max`]) with these arguments (`EXPLAIN` text), so
    /// operators and tests can check that the HNSW index serves scope-filtered searches.
    pub fn explain_vector(&self, scope: &Scope, model: &str, query: &[f32], limit: usize) -> Result<String> {
        let Some(dim) = self.dim(scope.tenant.as_str(), model)? else {
            return Ok(String::new());
        };
        let sql = format!("EXPLAIN {}", vector_sql(dim));
        let [t, a, u, c] = scope.key_parts();
        let q = vector_text(query);
        self.read("explain vector search", t, |tx| {
            tune_vector_search(tx, limit)?;
            let rows = tx.query(&sql, &[&t, &a, &u, &c, &model, &q, &(limit as i64)])?;
            rows.iter().map(|r| get::<String>(r, 0)).collect::<Result<Vec<_>>>().map(|l| l.join("\n"))
        })
    }

    /// Runs `f`, a transaction that may register models, and records the models it registered
    /// once it has committed.
    fn with_models<T>(&self, f: impl FnOnce(&mut apply::Models<'_>) -> Result<T>) -> Result<T> {
        let known = self.models.lock().expect("models lock").clone();
        let mut registered = HashMap::new();
        let defer_index = self.bulk.load(Ordering::SeqCst);
        let out = f(&mut apply::Models { known: &known, registered: &mut registered, defer_index })?;
        self.models.lock().expect("models lock").extend(registered);
        Ok(out)
    }

    /// The dimension of `model`'s vectors, if any were stored.
    fn dim(&self, tenant: &str, model: &str) -> Result<Option<usize>> {
        if let Some(d) = self.models.lock().expect("models lock").get(model) {
            return Ok(Some(*d));
        }
        let dim: Option<i32> = self.read("vector search", tenant, |tx| {
            tx.query_opt("SELECT dim FROM embedding_models WHERE model = $1", &[&model])?
                .map(|r| get(&r, 0))
                .transpose()
        })?;
        let dim = dim.map(|d| d as usize);
        if let Some(d) = dim {
            self.models.lock().expect("models lock").insert(model.to_string(), d);
        }
        Ok(dim)
    }
}

/// Sets the HNSW search knobs for this transaction: iterative scans keep walking the graph
/// until `limit` rows pass the scope filter (relaxed order; the query re-sorts), with a
/// candidate list at least as long as the limit; custom plans, so the model's partial index
/// always matches the query.
fn tune_vector_search(tx: &mut Tx<'_>, limit: usize) -> Result<()> {
    let ef = limit.clamp(40, 1000).to_string();
    tx.query(
        "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', $1, true), \
         set_config('plan_cache_mode', 'force_custom_plan', true)",
        &[&ef],
    )?;
    Ok(())
}

/// Nearest active memories visible to $1..$4 with vectors of model $5 to the query $6, at most
/// $7, best first. The inner query is the index scan (the ORDER BY matches the partial index's
/// expression); the outer one restores exact order after a relaxed iterative scan.
fn vector_sql(dim: usize) -> String {
    format!(
        "WITH nearest AS MATERIALIZED (SELECT m.id, (m.embedding::vector({dim})) <=> $6::text::vector({dim}) AS distance \
         FROM memories m WHERE {VISIBLE} AND m.model = $5 AND m.status = 'active' ORDER BY distance LIMIT $7) \
         SELECT id, (1 - distance)::real FROM nearest ORDER BY distance, id"
    )
}

/// A lexical search's statement over `rows`, a `<table> m WHERE ...` the scope filters, with
/// the terms from parameter `$first` on: the ids of the rows matching any term and their
/// scores, best first, at most parameter `$limit`.
///
/// A row's score is the sum, over the terms it contains, of BM25's weight of a term (its inverse
/// document frequency) among the rows that match the query: a rare word counts for more than
/// one most of them share, as on SQLite, where FTS5's BM25 ranks. Memories and messages are a
/// sentence or a few, so a term's count within a row and the row's length, BM25's other
/// factors, add little. `ts_rank_cd` weighed every term alike and cost 6 µs a matching row
/// (41 ms of a 51 ms query matching 2,500 of a user's 10,000 memories); these weights cost a
/// membership test per term and row and one logarithm per term.
fn lexical_sql(rows: &str, first: usize, terms: &[String], limit: usize) -> String {
    let n = terms.len();
    let cte = terms_cte(first, terms);
    let weights: Vec<String> = (1..=n)
        .map(|i| {
            let has = format!("count(*) FILTER (WHERE h.tsv @@ q.q{i})");
            format!("ln(1 + (count(*) - {has} + 0.5::float8) / ({has} + 0.5::float8)) AS w{i}")
        })
        .collect();
    let weights = weights.join(", ");
    let score: String = (1..=n).map(|i| format!(" + CASE WHEN h.tsv @@ q.q{i} THEN w.w{i} ELSE 0 END")).collect();
    format!(
        "{cte}, hits AS MATERIALIZED (SELECT m.id, m.tsv FROM q, {rows} AND m.tsv @@ q.q), \
         w AS (SELECT {weights} FROM q, hits h) \
         SELECT h.id, (0{score})::real AS score FROM q, w, hits h ORDER BY score DESC, h.id LIMIT ${limit}"
    )
}

/// `WITH q AS (...)`: the terms from parameter `$first` on, each a phrase query, as one row
/// with `q`, all of them OR-ed, and `q1`..`qn`, each alone. User text never becomes tsquery
/// syntax (as FTS5 quotes each term), and a term of stop words only adds nothing.
///
/// Why a CTE rather than the calls inline: a statement the pool has prepared is planned
/// generically after a few runs, and a generic plan calls `phraseto_tsquery` on its parameters
/// for every row it filters or ranks; a query of four terms over a user's 10,000 memories took
/// 62 ms so and 21 ms with the query built once.
///
/// Each term is read under English and, when the terms read as another language, under that
/// language's configuration too ([`query_configs`]): messages are stemmed in their own language.
fn terms_cte(first: usize, terms: &[String]) -> String {
    let configs = query_configs(terms);
    let each: Vec<String> = (first..first + terms.len())
        .map(|i| {
            let alternatives: Vec<String> = configs.iter().map(|c| format!("phraseto_tsquery('{c}', ${i})")).collect();
            format!("({})", alternatives.join(" || "))
        })
        .collect();
    let named: String = each.iter().enumerate().map(|(i, q)| format!(", {q} AS q{}", i + 1)).collect();
    format!("WITH q AS MATERIALIZED (SELECT {} AS q{named})", each.join(" || "))
}

/// The text search configuration a text in `language` is stemmed with: PostgreSQL's own for
/// the languages it has a Snowball stemmer for, `simple` (no stemming) for any other told
/// language, English when the language cannot be told. Names from this fixed list are the
/// only configuration names that reach SQL.
pub(crate) fn text_search_config(language: Language) -> &'static str {
    let Language::Other(lang) = language else { return "english" };
    match lang {
        Lang::Ara => "arabic",
        Lang::Cat => "catalan",
        Lang::Dan => "danish",
        Lang::Nld => "dutch",
        Lang::Fin => "finnish",
        Lang::Fra => "french",
        Lang::Deu => "german",
        Lang::Ell => "greek",
        Lang::Hin => "hindi",
        Lang::Hun => "hungarian",
        Lang::Ind => "indonesian",
        Lang::Ita => "italian",
        Lang::Lit => "lithuanian",
        Lang::Nep => "nepali",
        Lang::Nob => "norwegian",
        Lang::Por => "portuguese",
        Lang::Ron => "romanian",
        Lang::Rus => "russian",
        Lang::Srp => "serbian",
        Lang::Spa => "spanish",
        Lang::Swe => "swedish",
        Lang::Tam => "tamil",
        Lang::Tur => "turkish",
        Lang::Yid => "yiddish",
        Lang::Eng => "english",
        _ => "simple",
    }
}

/// The configurations a query's `terms` are looked up under: English, and the configuration
/// of the language they read as together when it is another one.
fn query_configs(terms: &[String]) -> Vec<&'static str> {
    let other = text_search_config(language::detect(&terms.join(" ")));
    if other == "english" { vec!["english"] } else { vec!["english", other] }
}

fn ids_text(ids: &[MemoryId]) -> Vec<String> {
    ids.iter().map(MemoryId::to_string).collect()
}
