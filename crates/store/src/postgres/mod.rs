//! The server backend: PostgreSQL with pgvector, for several mnemo servers sharing one database.
//!
//! Same contract and behaviour as the SQLite backend; what differs is where the guarantees live:
//!
//! - **Isolation in storage.** Every request runs in a transaction that switches to the role
//!   `mnemo_app` (no superuser, no BYPASSRLS) and sets `mnemo.tenant` for that transaction only.
//!   Row-level security, forced on every tenant table, then hides other tenants' rows from any
//!   query, including one that forgot its tenant predicate; a transaction that set no tenant sees
//!   nothing at all. The one cross-tenant read, [`Store::scan`] for jobs, runs as the separate
//!   role `mnemo_jobs`, which may only read memories. Only migrations run as the connecting
//!   role (the schema's owner), plus one SECURITY DEFINER function that creates a new model's
//!   vector index.
//! - **Vectors.** A `vector` column without a fixed dimension; each model's dimension is fixed by
//!   its first vector and gets a partial HNSW index (cosine) over active rows. Searches filter by
//!   scope before ranking and use pgvector's iterative index scans, so a selective scope still
//!   fills `limit`.
//! - **Lexical.** A generated `tsvector` (English stemming) with a GIN index over active rows,
//!   ranked with `ts_rank_cd`.
//! - **Jobs.** [`Store::try_job_lock`] takes a session advisory lock so that, of several
//!   servers, one runs a given job at a time.
//!
//! Connections are plain TCP or Unix sockets without TLS.

mod apply;
mod lock;
mod pool;
mod queue;
mod retention;
mod rows;
mod schema;
mod temp_db;
mod transfer;
mod users;

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use mnemo_core::trace::{TraceEnvelope, TraceOp};
use mnemo_core::{
    HistoryEntry, Kind, Link, Memory, MemoryId, Message, MessageId, Policy, Scope, StatusKind, TenantId, UserId,
};
use postgres::Config;

use self::pool::{Params, Pool, Tx, pg};
use self::rows::{MEMORY_COLUMNS, VISIBLE, get, ms, ms_opt, parse, time, time_opt, vector_text};
use crate::error::{Result, StoreError};
use crate::neighbours::{Dialect, adjacent_sql};
use crate::store::{ChangeSet, DeletionEvent, Embedding, ListFilter, Store};

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
        })
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

    fn memories(&self, op: &'static str, tenant: &str, sql: &str, params: &Params<'_>) -> Result<Vec<Memory>> {
        self.read(op, tenant, |tx| tx.query(sql, params)?.iter().map(rows::memory).collect())
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

    /// The plan PostgreSQL picks for the index path of [`Store::vector`] (scopes bigger than
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

/// [`vector_sql`] without the index, for small scopes: every row of the scope scored exactly (the
/// function form of the distance never matches the HNSW index), reading at most $8 rows, whose
/// number comes back in the third column so the caller knows whether the scope fit.
fn exact_vector_sql(dim: usize) -> String {
    format!(
        "WITH scoped AS MATERIALIZED (SELECT m.id, cosine_distance(m.embedding::vector({dim}), $6::text::vector({dim})) \
         AS distance FROM memories m WHERE {VISIBLE} AND m.model = $5 AND m.status = 'active' LIMIT $8) \
         SELECT id, (1 - distance)::real, (SELECT count(*) FROM scoped) FROM scoped ORDER BY distance, id LIMIT $7"
    )
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

/// The terms from parameter `$first` on, each a phrase query, OR-ed: user text never becomes
/// tsquery syntax (as FTS5 quotes each term), and a term of stop words only adds nothing.
fn terms_tsquery(first: usize, n: usize) -> String {
    (first..first + n).map(|i| format!("phraseto_tsquery('english', ${i})")).collect::<Vec<_>>().join(" || ")
}

fn message(row: &postgres::Row) -> Result<Message> {
    Ok(Message {
        id: parse(row, 0)?,
        scope: rows::scope(row, 1)?,
        role: parse(row, 5)?,
        content: get(row, 6)?,
        at: time(row, 7)?,
    })
}

const MESSAGE_COLUMNS: &str = "id, tenant, agent, user_id, chat, role, content, at";

fn ids_text(ids: &[MemoryId]) -> Vec<String> {
    ids.iter().map(MemoryId::to_string).collect()
}

impl Store for PostgresStore {
    fn append_messages(&self, messages: &[Message]) -> Result<Vec<bool>> {
        let Some(first) = messages.first() else { return Ok(Vec::new()) };
        self.write("append messages", first.scope.tenant.as_str(), |tx| {
            let mut bound = first.scope.tenant.as_str();
            let mut out = Vec::with_capacity(messages.len());
            for m in messages {
                let [t, a, u, c] = m.scope.key_parts();
                if t != bound {
                    // A batch spanning tenants: rebind the transaction before each tenant's rows.
                    tx.query("SELECT set_config('mnemo.tenant', $1, true)", &[&t])?;
                    bound = t;
                }
                let n = tx.execute(
                    "INSERT INTO messages (id, tenant, agent, user_id, chat, role, content, at) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (tenant, id) DO NOTHING",
                    &[&m.id.as_str(), &t, &a, &u, &c, &m.role.as_str(), &m.content, &ms(m.at)],
                )?;
                out.push(n == 1);
            }
            Ok(out)
        })
    }

    fn embed_messages(&self, tenant: &TenantId, vectors: &[(MessageId, Embedding)]) -> Result<()> {
        if vectors.is_empty() {
            return Ok(());
        }
        self.write("embed messages", tenant.as_str(), |tx| {
            for (id, e) in vectors {
                tx.execute(
                    "UPDATE messages SET model = $3, embedding = $4::text::vector \
                     WHERE tenant = $1 AND id = $2 AND NOT withheld",
                    &[&tenant.as_str(), &id.as_str(), &e.model, &vector_text(&e.vector)],
                )?;
            }
            Ok(())
        })
    }

    fn search_messages(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MessageId, f32)>> {
        let [t, a, u, c] = scope.key_parts();
        if terms.is_empty() || u.is_empty() {
            return Ok(Vec::new());
        }
        let query = terms_tsquery(6, terms.len());
        // The user's words come from the covering btree `messages_lexical` (migration 6).
        let sql = format!(
            "SELECT id, ts_rank_cd(tsv, {query})::real AS score FROM messages \
             WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND $5 IN ('', chat) AND NOT withheld \
             AND tsv @@ ({query}) ORDER BY score DESC, id LIMIT $4"
        );
        let limit = limit as i64;
        let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&t, &a, &u, &limit, &c];
        params.extend(terms.iter().map(|t| t as &(dyn postgres::types::ToSql + Sync)));
        self.read("search messages", t, |tx| {
            tx.query(&sql, &params)?.iter().map(|r| Ok((parse(r, 0)?, get::<f32>(r, 1)?))).collect()
        })
    }

    fn adjacent_messages(
        &self,
        tenant: &TenantId,
        ids: &[MessageId],
        span: usize,
    ) -> Result<Vec<(MessageId, Message)>> {
        if ids.is_empty() || span == 0 {
            return Ok(Vec::new());
        }
        let dialect = Dialect { order: "seq", visible: "NOT n.withheld", params: ["$1", "$2", "$3"] };
        let sql = adjacent_sql(MESSAGE_COLUMNS, &dialect);
        self.read("adjacent messages", tenant.as_str(), |tx| {
            let mut out = Vec::new();
            for id in ids {
                for row in tx.query(&sql, &[&tenant.as_str(), &id.as_str(), &(span as i64)])? {
                    out.push((id.clone(), message(&row)?));
                }
            }
            Ok(out)
        })
    }

    fn nearest_messages(
        &self,
        scope: &Scope,
        model: &str,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<(MessageId, f32)>> {
        let [t, a, u, c] = scope.key_parts();
        if u.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let q = vector_text(query);
        self.read("nearest messages", t, |tx| {
            let dims: Option<i32> = tx
                .query_opt(
                    "SELECT vector_dims(embedding) FROM messages WHERE tenant = $1 AND agent = $2 AND user_id = $3 \
                     AND model = $4 LIMIT 1",
                    &[&t, &a, &u, &model],
                )?
                .map(|r| get(&r, 0))
                .transpose()?;
            match dims {
                None => return Ok(Vec::new()),
                Some(d) if d as usize != query.len() => {
                    return Err(StoreError::Dimension {
                        model: model.to_string(),
                        expected: d as usize,
                        got: query.len(),
                    });
                }
                Some(_) => {}
            }
            tx.query(
                "SELECT id, (1 - (embedding <=> $5::text::vector))::real AS cosine FROM messages \
                 WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND model = $4 AND $7 IN ('', chat) \
                 ORDER BY embedding <=> $5::text::vector, id LIMIT $6",
                &[&t, &a, &u, &model, &q, &(limit as i64), &c],
            )?
            .iter()
            .map(|r| Ok((parse(r, 0)?, get::<f32>(r, 1)?)))
            .collect()
        })
    }

    fn recent_messages(&self, scope: &Scope, limit: usize) -> Result<Vec<Message>> {
        let [t, a, u, c] = scope.key_parts();
        let mut out = self.read("recent messages", t, |tx| {
            tx.query(
                &format!(
                    "SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant = $1 AND agent = $2 AND user_id = $3 \
                     AND chat = $4 ORDER BY at DESC, seq DESC LIMIT $5"
                ),
                &[&t, &a, &u, &c, &(limit as i64)],
            )?
            .iter()
            .map(message)
            .collect::<Result<Vec<_>>>()
        })?;
        out.reverse();
        Ok(out)
    }

    fn messages(&self, tenant: &TenantId, ids: &[MessageId]) -> Result<Vec<Message>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<&str> = ids.iter().map(MessageId::as_str).collect();
        self.read("messages", tenant.as_str(), |tx| {
            tx.query(
                &format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant = $1 AND id = ANY($2) ORDER BY at, seq"),
                &[&tenant.as_str(), &ids],
            )?
            .iter()
            .map(message)
            .collect()
        })
    }

    fn get(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<Memory>> {
        self.read("get memory", tenant.as_str(), |tx| {
            tx.query_opt(
                &format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.tenant = $1 AND m.id = $2"),
                &[&tenant.as_str(), &id.to_string()],
            )?
            .as_ref()
            .map(rows::memory)
            .transpose()
        })
    }

    fn get_many(&self, scope: &Scope, ids: &[MemoryId]) -> Result<Vec<Memory>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        let sql = format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ANY($5) AND {VISIBLE}");
        let mut found = self.memories("get memories", t, &sql, &[&t, &a, &u, &c, &ids_text(ids)])?;
        let pos: HashMap<MemoryId, usize> = ids.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        found.sort_by_key(|m| pos.get(&m.id).copied().unwrap_or(usize::MAX));
        Ok(found)
    }

    fn list(&self, scope: &Scope, f: &ListFilter) -> Result<Vec<Memory>> {
        let [t, a, u, c] = scope.key_parts();
        let kinds: Vec<&str> = f.kinds.iter().map(|k| k.as_str()).collect();
        let statuses: Vec<&str> = f.statuses.iter().map(|s| s.as_str()).collect();
        let text = f.text.as_deref().filter(|t| !t.is_empty());
        let mut sql = format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE {VISIBLE}");
        let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&t, &a, &u, &c];
        if !kinds.is_empty() {
            params.push(&kinds);
            sql.push_str(&format!(" AND m.kind = ANY(${})", params.len()));
        }
        if !statuses.is_empty() {
            params.push(&statuses);
            sql.push_str(&format!(" AND m.status = ANY(${})", params.len()));
        }
        if let Some(text) = &text {
            params.push(text);
            sql.push_str(&format!(" AND strpos(lower(m.content), lower(${})) > 0", params.len()));
        }
        sql.push_str(" ORDER BY m.created_at DESC, m.id DESC");
        if f.limit > 0 {
            sql.push_str(&format!(" LIMIT {}", f.limit));
        }
        if f.offset > 0 {
            sql.push_str(&format!(" OFFSET {}", f.offset));
        }
        self.memories("list memories", t, &sql, &params)
    }

    fn by_hash(&self, scope: &Scope, hash: &str) -> Result<Vec<Memory>> {
        let [t, a, u, c] = scope.key_parts();
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m WHERE {VISIBLE} AND m.content_hash = $5 \
             ORDER BY m.created_at, m.id"
        );
        self.memories("find by hash", t, &sql, &[&t, &a, &u, &c, &hash])
    }

    fn find_by_key(&self, owner: &Scope, kind: Kind, key: &str) -> Result<Option<Memory>> {
        let [t, a, u, c] = owner.key_parts();
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.tenant = $1 AND m.agent = $2 AND m.user_id = $3 \
             AND m.chat = $4 AND m.kind = $5 AND m.key = $6 AND m.status = 'active' \
             ORDER BY m.created_at DESC, m.id DESC LIMIT 1"
        );
        Ok(self.memories("find by key", t, &sql, &[&t, &a, &u, &c, &kind.as_str(), &key])?.into_iter().next())
    }

    fn exact_candidates(&self, scope: &Scope, due_by: DateTime<Utc>) -> Result<Vec<Memory>> {
        let [t, a, u, c] = scope.key_parts();
        // One index probe per branch, as in SQLite; an OR across kinds or the pinned flag would
        // make the planner walk every active row of the user instead.
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m WHERE {VISIBLE} \
               AND m.status = 'active' AND m.kind = 'preference' AND m.key IS NOT NULL \
             UNION ALL SELECT {MEMORY_COLUMNS} FROM memories m WHERE {VISIBLE} AND m.status = 'active' \
               AND m.kind = 'protocol' \
             UNION ALL SELECT {MEMORY_COLUMNS} FROM memories m WHERE {VISIBLE} AND m.status = 'active' AND m.pinned \
             UNION ALL SELECT {MEMORY_COLUMNS} FROM memories m WHERE {VISIBLE} AND m.status = 'active' \
               AND m.kind = 'open_loop' AND m.due_at IS NOT NULL AND m.due_at <= $5"
        );
        self.memories("exact candidates", t, &sql, &[&t, &a, &u, &c, &ms(due_by)])
    }

    fn lexical(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<(MemoryId, f32)>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        let query = terms_tsquery(6, terms.len());
        // Scope and status in the WHERE clause, so ranking only ever sees rows the caller may see;
        // the scope's ids and words come from the covering btree `memories_lexical` (migration 6).
        let sql = format!(
            "SELECT m.id, ts_rank_cd(m.tsv, {query})::real AS score FROM memories m \
             WHERE {VISIBLE} AND m.status = 'active' AND m.tsv @@ ({query}) ORDER BY score DESC, m.id LIMIT $5"
        );
        let limit = limit as i64;
        let mut params: Vec<&(dyn postgres::types::ToSql + Sync)> = vec![&t, &a, &u, &c, &limit];
        params.extend(terms.iter().map(|t| t as &(dyn postgres::types::ToSql + Sync)));
        self.read("lexical search", t, |tx| {
            tx.query(&sql, &params)?.iter().map(|r| Ok((parse(r, 0)?, get::<f32>(r, 1)?))).collect()
        })
    }

    fn vector(&self, scope: &Scope, model: &str, query: &[f32], limit: usize) -> Result<Vec<(MemoryId, f32)>> {
        let [t, a, u, c] = scope.key_parts();
        let Some(dim) = self.dim(t, model)? else { return Ok(Vec::new()) };
        if dim != query.len() {
            return Err(StoreError::Dimension { model: model.to_string(), expected: dim, got: query.len() });
        }
        if limit == 0 {
            return Ok(Vec::new());
        }
        let q = vector_text(query);
        let row = |r: &postgres::Row| Ok((parse(r, 0)?, get::<f32>(r, 1)?));
        // Small scopes exactly: scoring a few thousand rows beats walking the graph until
        // enough of them pass the filter (a user with 1% of a million rows: 22 ms against 124),
        // and loses nothing. A scope found too big is remembered and goes to the index.
        let exact_max = self.exact_scan_max.load(Ordering::Relaxed);
        let key = scope.key_parts().map(str::to_string);
        let big =
            self.big_scopes.lock().expect("big scopes lock").get(&key).is_some_and(|at| at.elapsed() < BIG_SCOPE_TTL);
        if exact_max > 0 && !big {
            let sql = exact_vector_sql(dim);
            let cap = exact_max as i64 + 1;
            let rows = self
                .read("vector search", t, |tx| tx.query(&sql, &[&t, &a, &u, &c, &model, &q, &(limit as i64), &cap]))?;
            let scoped = rows.first().map_or(Ok(0), |r| get::<i64>(r, 2))?;
            if scoped < cap {
                return rows.iter().map(row).collect();
            }
            self.big_scopes.lock().expect("big scopes lock").insert(key, Instant::now());
        }
        let sql = vector_sql(dim);
        self.read("vector search", t, |tx| {
            tune_vector_search(tx, limit)?;
            tx.query(&sql, &[&t, &a, &u, &c, &model, &q, &(limit as i64)])?.iter().map(row).collect()
        })
    }

    fn cosines(&self, scope: &Scope, model: &str, query: &[f32], ids: &[MemoryId]) -> Result<Vec<(MemoryId, f32)>> {
        let [t, a, u, c] = scope.key_parts();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let Some(dim) = self.dim(t, model)? else { return Ok(Vec::new()) };
        if dim != query.len() {
            return Err(StoreError::Dimension { model: model.to_string(), expected: dim, got: query.len() });
        }
        let q = vector_text(query);
        let sql = format!(
            "SELECT m.id, (1 - ((m.embedding::vector({dim})) <=> $7::text::vector({dim})))::real FROM memories m \
             WHERE m.id = ANY($6) AND {VISIBLE} AND m.model = $5 AND m.status = 'active'"
        );
        let found: HashMap<MemoryId, f32> = self.read("cosines", t, |tx| {
            tx.query(&sql, &[&t, &a, &u, &c, &model, &ids_text(ids), &q])?
                .iter()
                .map(|r| Ok((parse(r, 0)?, get::<f32>(r, 1)?)))
                .collect()
        })?;
        Ok(ids.iter().filter_map(|id| found.get(id).map(|s| (*id, *s))).collect())
    }

    fn substring(&self, scope: &Scope, terms: &[String], limit: usize) -> Result<Vec<MemoryId>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        let lowered: Vec<String> = terms.iter().map(|t| t.to_lowercase()).collect();
        let sql = format!(
            "SELECT m.id FROM memories m WHERE {VISIBLE} AND m.status = 'active' \
             AND EXISTS (SELECT 1 FROM unnest($5::text[]) AS term WHERE strpos(lower(m.content), term) > 0) \
             ORDER BY m.updated_at DESC, m.id DESC LIMIT $6"
        );
        self.read("substring search", t, |tx| {
            tx.query(&sql, &[&t, &a, &u, &c, &lowered, &(limit as i64)])?.iter().map(|r| parse(r, 0)).collect()
        })
    }

    fn scan(&self, statuses: &[StatusKind], after: Option<MemoryId>, limit: usize) -> Result<Vec<Memory>> {
        if statuses.is_empty() {
            return Ok(Vec::new());
        }
        let statuses: Vec<&str> = statuses.iter().map(|s| s.as_str()).collect();
        let after = after.map(|a| a.to_string()).unwrap_or_default();
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id > $1 AND m.status = ANY($2) ORDER BY m.id LIMIT $3"
        );
        self.tx("scan", Actor::Jobs, true, |tx| {
            tx.query(&sql, &[&after, &statuses, &(limit as i64)])?.iter().map(rows::memory).collect()
        })
    }

    fn history(&self, tenant: &TenantId, id: MemoryId) -> Result<Vec<HistoryEntry>> {
        let dec = |s: &str| {
            serde_json::from_str(s).map_err(|e| StoreError::Corrupt { what: "history status", detail: e.to_string() })
        };
        self.read("history", tenant.as_str(), |tx| {
            tx.query(
                "SELECT memory_id, at, event, from_status, to_status, reason, sources FROM history \
                 WHERE tenant = $1 AND memory_id = $2 ORDER BY seq",
                &[&tenant.as_str(), &id.to_string()],
            )?
            .iter()
            .map(|r| {
                Ok(HistoryEntry {
                    memory: parse(r, 0)?,
                    at: time(r, 1)?,
                    event: parse(r, 2)?,
                    from_status: get::<Option<&str>>(r, 3)?.map(dec).transpose()?,
                    to_status: dec(get(r, 4)?)?,
                    reason: get(r, 5)?,
                    sources: rows::message_ids(r, 6)?,
                })
            })
            .collect()
        })
    }

    fn links(&self, tenant: &TenantId, id: MemoryId) -> Result<Vec<Link>> {
        self.read("links", tenant.as_str(), |tx| {
            tx.query(
                "SELECT from_id, to_id, kind, at FROM links WHERE tenant = $1 AND (from_id = $2 OR to_id = $2) \
                 ORDER BY at, seq",
                &[&tenant.as_str(), &id.to_string()],
            )?
            .iter()
            .map(|r| Ok(Link { from: parse(r, 0)?, to: parse(r, 1)?, kind: parse(r, 2)?, at: time(r, 3)? }))
            .collect()
        })
    }

    fn apply(&self, changes: &ChangeSet) -> Result<()> {
        if changes.changes.is_empty() {
            return Ok(());
        }
        self.with_models(|models| self.write("apply", changes.tenant.as_str(), |tx| apply::apply(tx, changes, models)))
    }

    fn erase_user(
        &self,
        tenant: &TenantId,
        user: &UserId,
        event: &DeletionEvent,
    ) -> Result<std::collections::BTreeMap<String, u64>> {
        let (t, u) = (tenant.as_str(), user.as_str());
        self.write("erase user", t, |tx| {
            let mut counts = std::collections::BTreeMap::new();
            let ids = "SELECT id FROM memories WHERE tenant = $1 AND user_id = $2";
            counts.insert(
                "links".to_string(),
                tx.execute(
                    &format!("DELETE FROM links WHERE tenant = $1 AND (from_id IN ({ids}) OR to_id IN ({ids}))"),
                    &[&t, &u],
                )?,
            );
            counts.insert(
                "history".to_string(),
                tx.execute(&format!("DELETE FROM history WHERE tenant = $1 AND memory_id IN ({ids})"), &[&t, &u])?,
            );
            counts.insert(
                "memory_sessions".to_string(),
                tx.execute(
                    &format!("DELETE FROM memory_sessions WHERE tenant = $1 AND memory_id IN ({ids})"),
                    &[&t, &u],
                )?,
            );
            // Vectors and the lexical projection live in the memory rows themselves.
            for table in ["memories", "messages", "traces", "extraction_queue", "chat_progress", "user_states"] {
                counts.insert(
                    table.to_string(),
                    tx.execute(&format!("DELETE FROM {table} WHERE tenant = $1 AND user_id = $2"), &[&t, &u])?,
                );
            }
            // Its partitions go too: a user id can itself be personal data (an e-mail address).
            tx.execute("DELETE FROM partitions WHERE tenant = $1 AND user_id = $2", &[&t, &u])?;
            let counts_json = serde_json::to_string(&counts).expect("counts serialise");
            tx.execute(
                "INSERT INTO deletions (tenant, subject, at, counts, digest) VALUES ($1, $2, $3, $4, $5)",
                &[&t, &event.subject, &ms(event.at), &counts_json, &event.digest],
            )?;
            Ok(counts)
        })
    }

    fn put_policy(&self, p: &Policy) -> Result<Policy> {
        let agent = p.agent.as_ref().map_or("", |a| a.as_str());
        let tenant = p.tenant.as_str();
        self.write("put policy", tenant, |tx| {
            // Serialises authors of the same key (several servers): each sees the other's version.
            tx.query(
                "SELECT pg_advisory_xact_lock(hashtext('mnemo.policy'), hashtext($1 || '/' || $2 || '/' || $3))",
                &[&tenant, &agent, &p.key],
            )?;
            let latest: Option<i32> = get(
                &tx.query_one(
                    "SELECT max(version) FROM policies WHERE tenant = $1 AND agent = $2 AND key = $3",
                    &[&tenant, &agent, &p.key],
                )?,
                0,
            )?;
            tx.execute(
                "UPDATE policies SET effective_until = $1 WHERE tenant = $2 AND agent = $3 AND key = $4 \
                 AND (effective_until IS NULL OR effective_until > $1)",
                &[&ms(p.effective_from), &tenant, &agent, &p.key],
            )?;
            let stored = Policy { version: latest.unwrap_or(0) as u32 + 1, ..p.clone() };
            tx.execute(
                "INSERT INTO policies (tenant, agent, key, version, text, value, effective_from, effective_until) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &tenant,
                    &agent,
                    &stored.key,
                    &(stored.version as i32),
                    &stored.text,
                    &stored.value.to_string(),
                    &ms(stored.effective_from),
                    &ms_opt(stored.effective_until),
                ],
            )?;
            Ok(stored)
        })
    }

    fn policies(&self, scope: &Scope) -> Result<Vec<Policy>> {
        let agent = scope.agent.as_ref().map_or("", |a| a.as_str());
        let tenant = scope.tenant.as_str();
        self.read("policies", tenant, |tx| {
            tx.query(
                "SELECT tenant, agent, key, version, text, value, effective_from, effective_until FROM policies \
                 WHERE tenant = $1 AND agent IN ('', $2) ORDER BY key, agent, version",
                &[&tenant, &agent],
            )?
            .iter()
            .map(|r| {
                let agent: &str = get(r, 1)?;
                let version: i32 = get(r, 3)?;
                Ok(Policy {
                    tenant: parse(r, 0)?,
                    agent: (!agent.is_empty()).then(|| agent.parse()).transpose().map_err(
                        |e: mnemo_core::CoreError| StoreError::Corrupt { what: "policy agent", detail: e.to_string() },
                    )?,
                    key: get(r, 2)?,
                    version: version as u32,
                    text: get(r, 4)?,
                    value: serde_json::from_str(get(r, 5)?).unwrap_or(serde_json::Value::Null),
                    effective_from: time(r, 6)?,
                    effective_until: time_opt(r, 7)?,
                })
            })
            .collect()
        })
    }

    fn record_turn(&self, env: &TraceEnvelope, accessed: &[MemoryId]) -> Result<()> {
        let [t, a, u, c] = env.scope.key_parts();
        let body = serde_json::to_string(env).expect("trace serialises");
        let surfaced = serde_json::to_string(&env.surfaced).expect("ids serialise");
        let session = env.scope.chat.as_ref().map(|c| c.as_str());
        let mut ids: Vec<MemoryId> = accessed.to_vec();
        ids.extend(env.surfaced.iter().filter(|id| !accessed.contains(id)));
        self.write("record turn", t, |tx| {
            tx.execute(
                "INSERT INTO traces (turn_id, tenant, agent, user_id, chat, op, at, surfaced, body) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                &[&env.turn_id, &t, &a, &u, &c, &env.op.as_str(), &ms(env.at), &surfaced, &body],
            )?;
            if ids.is_empty() {
                return Ok(());
            }
            // One statement for every item, not three round trips each: rows that still exist
            // count the access, a session new to a row counts once, surfaced rows are stamped.
            let id_texts: Vec<String> = ids.iter().map(MemoryId::to_string).collect();
            let surfaced: Vec<bool> = ids.iter().map(|id| env.surfaced.contains(id)).collect();
            tx.execute(
                "WITH touched AS (SELECT m.id, i.surfaced FROM memories m \
                     JOIN unnest($1::text[], $2::bool[]) AS i (id, surfaced) ON m.id = i.id WHERE m.tenant = $3), \
                 new_sessions AS (INSERT INTO memory_sessions (tenant, memory_id, session) \
                     SELECT $3, id, $4 FROM touched WHERE $4::text IS NOT NULL ON CONFLICT DO NOTHING \
                     RETURNING memory_id) \
                 UPDATE memories m SET access_count = access_count + 1, last_accessed = $5, \
                     distinct_sessions = distinct_sessions \
                         + (SELECT count(*) FROM new_sessions n WHERE n.memory_id = m.id), \
                     last_surfaced = CASE WHEN t.surfaced THEN $5 ELSE m.last_surfaced END \
                 FROM touched t WHERE m.tenant = $3 AND m.id = t.id",
                &[&id_texts, &surfaced, &t, &session, &ms(env.at)],
            )?;
            Ok(())
        })
    }

    fn trace(&self, tenant: &TenantId, turn_id: &str) -> Result<Option<TraceEnvelope>> {
        let body: Option<String> = self.read("get trace", tenant.as_str(), |tx| {
            tx.query_opt("SELECT body FROM traces WHERE tenant = $1 AND turn_id = $2", &[&tenant.as_str(), &turn_id])?
                .map(|r| get(&r, 0))
                .transpose()
        })?;
        body.map(|b| serde_json::from_str(&b).map_err(|e| StoreError::Corrupt { what: "trace", detail: e.to_string() }))
            .transpose()
    }

    fn recently_surfaced(&self, scope: &Scope, turns: usize) -> Result<Vec<MemoryId>> {
        if turns == 0 {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        let lists: Vec<String> = self.read("recently surfaced", t, |tx| {
            tx.query(
                "SELECT surfaced FROM traces WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4 \
                 AND op = $5 ORDER BY at DESC, seq DESC LIMIT $6",
                &[&t, &a, &u, &c, &TraceOp::Context.as_str(), &(turns as i64)],
            )?
            .iter()
            .map(|r| get(r, 0))
            .collect()
        })?;
        let mut out = Vec::new();
        for l in lists {
            let ids: Vec<MemoryId> = serde_json::from_str(&l)
                .map_err(|e| StoreError::Corrupt { what: "trace surfaced ids", detail: e.to_string() })?;
            out.extend(ids);
        }
        Ok(out)
    }

    fn try_job_lock(&self, name: &str) -> Result<Option<crate::JobLock>> {
        lock::try_job_lock(self, name)
    }

    fn export(&self, visit: &mut dyn FnMut(crate::Record) -> Result<()>) -> Result<()> {
        transfer::export(self, visit)
    }

    fn import(&self) -> Result<Box<dyn crate::Importer + '_>> {
        transfer::import(self)
    }

    fn begin_bulk_load(&self) -> Result<()> {
        let mut client = self.pool.connect().map_err(pg("bulk load"))?;
        self.bulk.store(true, Ordering::SeqCst);
        schema::drop_vector_indexes(&mut client)
    }

    fn finish_bulk_load(&self) -> Result<()> {
        let mut client = self.pool.connect().map_err(pg("bulk load"))?;
        schema::ensure_vector_indexes(&mut client)?;
        self.bulk.store(false, Ordering::SeqCst);
        Ok(())
    }

    fn counts(&self) -> Result<crate::transfer::Counts> {
        transfer::counts(self)
    }

    fn embedding(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<crate::Embedding>> {
        transfer::embedding(self, tenant, id)
    }

    fn enqueue(&self, scope: &Scope, messages: &[MessageId], extract: bool, at: DateTime<Utc>) -> Result<usize> {
        queue::enqueue(self, scope, messages, extract, at)
    }

    fn chats_with_work(
        &self,
        now: DateTime<Utc>,
        memo_every: usize,
        active_since: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<crate::ChatProgress>> {
        queue::chats_with_work(self, now, memo_every, active_since, limit)
    }

    fn chat_progress(&self, scope: &Scope) -> Result<Option<crate::ChatProgress>> {
        queue::chat_progress(self, scope)
    }

    fn claim_chat(&self, scope: &Scope, now: DateTime<Utc>, until: DateTime<Utc>) -> Result<bool> {
        queue::claim_chat(self, scope, now, until)
    }

    fn release_chat(&self, scope: &Scope) -> Result<()> {
        queue::release_chat(self, scope)
    }

    fn queued(
        &self,
        scope: &Scope,
        state: crate::QueueState,
        due_by: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<crate::Queued>> {
        queue::queued(self, scope, state, due_by, limit)
    }

    fn settle(&self, scope: &Scope, messages: &[MessageId], outcome: &crate::Settlement) -> Result<()> {
        queue::settle(self, scope, messages, outcome)
    }

    fn chat_messages(&self, scope: &Scope, offset: usize, limit: usize) -> Result<Vec<Message>> {
        queue::chat_messages(self, scope, offset, limit)
    }

    fn advance_cursor(
        &self,
        scope: &Scope,
        cursor: crate::ChatCursor,
        from: usize,
        to: usize,
        gap: Option<&str>,
    ) -> Result<bool> {
        queue::advance_cursor(self, scope, cursor, from, to, gap)
    }

    fn user_messages(
        &self,
        scope: &Scope,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        queue::user_messages(self, scope, from, to, limit)
    }

    fn user_state(&self, tenant: &TenantId, user: &UserId) -> Result<mnemo_core::UserState> {
        users::user_state(self, tenant, user)
    }

    fn set_user_state(
        &self,
        tenant: &TenantId,
        user: &UserId,
        state: mnemo_core::UserState,
        at: DateTime<Utc>,
    ) -> Result<()> {
        users::set_user_state(self, tenant, user, state, at)
    }

    fn sweep_traces(&self, op: mnemo_core::trace::TraceOp, before: DateTime<Utc>, limit: usize) -> Result<u64> {
        retention::sweep_traces(self, op, before, limit)
    }
}
