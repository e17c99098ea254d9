//! Whole-store copy for PostgreSQL: export every row as [`Record`]s from one snapshot, import
//! records verbatim into an empty database (the tsvector is generated from the row; each
//! model's registry entry and HNSW index are created with its first vector), count rows per
//! table.
//!
//! These are the only operations that read every tenant's rows with the connecting role itself,
//! not as `mnemo_app` bound to one tenant. Row-level security is forced on every tenant table,
//! so that role must bypass it (a superuser, or a role with BYPASSRLS); otherwise they refuse
//! with an error saying so, rather than count or copy nothing.

use std::collections::{BTreeMap, BTreeSet};

use mnemo_core::{HistoryEntry, Link, MemoryId, Status, TenantId};
use postgres::{IsolationLevel, Row};

use std::sync::atomic::Ordering;

use super::apply::{Models, insert_memory, register_model};
use super::pool::{Tx, pg};
use super::rows::{MEMORY_COLUMNS, get, ids_json, message_ids, ms, ms_opt, parse, time, time_opt, vector_text};
use super::{PostgresStore, schema};
use crate::error::{Result, StoreError};
use crate::queue::ChatProgress;
use crate::transfer::{
    Counts, Importer, QueueRow, Record, TABLES, TraceRow, Transfer, empty_counts, not_empty, out_of_order,
};
use crate::{DeletionEvent, Embedding};

/// Rows fetched per round trip while exporting.
const FETCH: i32 = 500;

/// Refuses whole-store work to a role that row-level security binds: it would see no rows.
fn require_rls_bypass(store: &PostgresStore, op: &'static str) -> Result<()> {
    let mut lease = store.pool.get(op)?;
    let row = lease
        .client()
        .query_one(
            "SELECT current_user::text, rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user",
            &[],
        )
        .map_err(pg(op))?;
    let (user, bypass): (String, bool) = (row.get(0), row.get(1));
    if bypass {
        return Ok(());
    }
    Err(StoreError::Transfer {
        op,
        reason: format!(
            "role {user} cannot read every tenant of {}: row-level security is forced on mnemo's tables and \
             binds every role except superusers and roles with BYPASSRLS. Connect the copy as a superuser, or \
             have one run `ALTER ROLE {user} BYPASSRLS` for the time of the copy",
            store.database()
        ),
    })
}

/// The query counting one table of [`TABLES`]: vectors live in the memory rows here.
fn count_sql(table: &str) -> String {
    match table {
        "embeddings" => "SELECT count(*) FROM memories WHERE embedding IS NOT NULL".into(),
        "message_embeddings" => "SELECT count(*) FROM messages WHERE embedding IS NOT NULL".into(),
        _ => format!("SELECT count(*) FROM {table}"),
    }
}

type Decode = fn(&Row) -> Result<Record>;

/// The export of every table, in [`TABLES`] order (embeddings travel with their memories).
/// Orders match the SQLite backend's: insertion order where the schema keeps one, else bytewise.
fn exports() -> Vec<(&'static str, String, Decode)> {
    let decode_memory: Decode = |r| {
        let model: Option<String> = get(r, 32)?;
        let vector: Option<Vec<f32>> = get(r, 33)?;
        let embedding = model.zip(vector).map(|(model, vector)| Embedding { model, vector });
        Ok(Record::Memory { memory: super::rows::memory(r)?, embedding })
    };
    let decode_history: Decode = |r| {
        let dec = |s: &str| {
            serde_json::from_str(s).map_err(|e| StoreError::Corrupt { what: "history status", detail: e.to_string() })
        };
        Ok(Record::History {
            tenant: parse(r, 0)?,
            entry: HistoryEntry {
                memory: parse(r, 1)?,
                at: time(r, 2)?,
                event: parse(r, 3)?,
                from_status: get::<Option<&str>>(r, 4)?.map(dec).transpose()?,
                to_status: dec(get(r, 5)?)?,
                reason: get(r, 6)?,
                sources: message_ids(r, 7)?,
            },
        })
    };
    let decode_policy: Decode = |r| {
        let agent: &str = get(r, 1)?;
        let version: i32 = get(r, 3)?;
        let value: &str = get(r, 5)?;
        Ok(Record::Policy(mnemo_core::Policy {
            tenant: parse(r, 0)?,
            agent: (!agent.is_empty()).then(|| agent.parse()).transpose().map_err(|e: mnemo_core::CoreError| {
                StoreError::Corrupt { what: "policy agent", detail: e.to_string() }
            })?,
            key: get(r, 2)?,
            version: version as u32,
            text: get(r, 4)?,
            value: serde_json::from_str(value)
                .map_err(|e| StoreError::Corrupt { what: "policy value", detail: e.to_string() })?,
            effective_from: time(r, 6)?,
            effective_until: time_opt(r, 7)?,
        }))
    };
    let decode_trace: Decode = |r| {
        Ok(Record::Trace(TraceRow {
            turn_id: get(r, 0)?,
            scope: super::rows::scope(r, 1)?,
            op: get(r, 5)?,
            at: time(r, 6)?,
            surfaced: serde_json::from_str(get(r, 7)?)
                .map_err(|e| StoreError::Corrupt { what: "trace surfaced ids", detail: e.to_string() })?,
            body: get(r, 8)?,
        }))
    };
    let decode_deletion: Decode = |r| {
        Ok(Record::Deletion {
            tenant: parse(r, 0)?,
            event: DeletionEvent { subject: get(r, 1)?, at: time(r, 2)?, digest: get(r, 4)? },
            counts: serde_json::from_str::<BTreeMap<String, u64>>(get(r, 3)?)
                .map_err(|e| StoreError::Corrupt { what: "deletion counts", detail: e.to_string() })?,
        })
    };
    let decode_queued: Decode = |r| {
        let attempts: i32 = get(r, 6)?;
        Ok(Record::Queued(QueueRow {
            scope: super::rows::scope(r, 0)?,
            message: parse(r, 4)?,
            state: parse(r, 5)?,
            attempts: u32::try_from(attempts)
                .map_err(|e| StoreError::Corrupt { what: "queue attempts", detail: format!("{attempts}: {e}") })?,
            retry_at: time_opt(r, 7)?,
            last_error: get(r, 8)?,
            fallback: serde_json::from_str(get(r, 9)?)
                .map_err(|e| StoreError::Corrupt { what: "queue fallback memories", detail: e.to_string() })?,
            queued_at: time(r, 10)?,
        }))
    };
    let decode_progress: Decode = |r| {
        Ok(Record::ChatProgress {
            progress: ChatProgress {
                scope: super::rows::scope(r, 0)?,
                messages: counter(r, 4)?,
                pending: counter(r, 5)?,
                retrying: counter(r, 6)?,
                retry_at: time_opt(r, 7)?,
                last_message_at: time(r, 8)?,
                memo_covered: counter(r, 9)?,
                memo_gaps: counter(r, 10)?,
                episode_checked: counter(r, 11)?,
                last_error: get(r, 12)?,
            },
            claimed_until: time_opt(r, 13)?,
        })
    };
    vec![
        ("messages", format!("SELECT {}, withheld FROM messages ORDER BY seq", super::MESSAGE_COLUMNS), |r| {
            Ok(Record::Message { message: super::message(r)?, withheld: get(r, 8)? })
        }),
        (
            "message_embeddings",
            "SELECT tenant, id, model, embedding::real[] FROM messages WHERE embedding IS NOT NULL ORDER BY seq".into(),
            |r| {
                Ok(Record::MessageEmbedding {
                    tenant: parse(r, 0)?,
                    message: parse(r, 1)?,
                    embedding: Embedding { model: get(r, 2)?, vector: get(r, 3)? },
                })
            },
        ),
        (
            "memories",
            format!("SELECT {MEMORY_COLUMNS}, m.model, m.embedding::real[] FROM memories m ORDER BY m.id"),
            decode_memory,
        ),
        (
            "history",
            "SELECT tenant, memory_id, at, event, from_status, to_status, reason, sources FROM history ORDER BY seq"
                .into(),
            decode_history,
        ),
        ("links", "SELECT tenant, from_id, to_id, kind, at FROM links ORDER BY seq".into(), |r| {
            Ok(Record::Link {
                tenant: parse(r, 0)?,
                link: Link { from: parse(r, 1)?, to: parse(r, 2)?, kind: parse(r, 3)?, at: time(r, 4)? },
            })
        }),
        (
            "memory_sessions",
            "SELECT tenant, memory_id, session FROM memory_sessions ORDER BY memory_id COLLATE \"C\", \
             session COLLATE \"C\""
                .into(),
            |r| Ok(Record::Session { tenant: parse(r, 0)?, memory: parse(r, 1)?, session: get(r, 2)? }),
        ),
        (
            "policies",
            "SELECT tenant, agent, key, version, text, value, effective_from, effective_until FROM policies \
             ORDER BY tenant COLLATE \"C\", agent COLLATE \"C\", key COLLATE \"C\", version"
                .into(),
            decode_policy,
        ),
        (
            "traces",
            "SELECT turn_id, tenant, agent, user_id, chat, op, at, surfaced, body FROM traces ORDER BY seq".into(),
            decode_trace,
        ),
        ("deletions", "SELECT tenant, subject, at, counts, digest FROM deletions ORDER BY seq".into(), decode_deletion),
        (
            "extraction_queue",
            "SELECT tenant, agent, user_id, chat, message_id, state, attempts, retry_at, last_error, fallback, \
             queued_at FROM extraction_queue ORDER BY seq"
                .into(),
            decode_queued,
        ),
        (
            "chat_progress",
            "SELECT tenant, agent, user_id, chat, messages, pending, retrying, retry_at, last_message_at, \
             memo_covered, memo_gaps, episode_checked, last_error, claimed_until FROM chat_progress \
             ORDER BY tenant COLLATE \"C\", agent COLLATE \"C\", user_id COLLATE \"C\", chat COLLATE \"C\""
                .into(),
            decode_progress,
        ),
        (
            "user_states",
            "SELECT tenant, user_id, state, updated_at FROM user_states \
             ORDER BY tenant COLLATE \"C\", user_id COLLATE \"C\""
                .into(),
            |r| {
                Ok(Record::UserState {
                    tenant: parse(r, 0)?,
                    user: parse(r, 1)?,
                    state: parse(r, 2)?,
                    updated_at: time(r, 3)?,
                })
            },
        ),
    ]
}

/// Reads a count column stored as `bigint` (never negative; a negative one is refused rather
/// than copied as zero).
fn counter(row: &Row, idx: usize) -> Result<usize> {
    let v: i64 = get(row, idx)?;
    usize::try_from(v).map_err(|e| StoreError::Corrupt { what: "chat progress count", detail: format!("{v}: {e}") })
}

struct PostgresImporter<'a> {
    store: &'a PostgresStore,
}

impl Importer for PostgresImporter<'_> {
    fn write(&mut self, batch: &[Record]) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        self.store.with_models(|models| {
            let mut lease = self.store.pool.get("import")?;
            let mut tx = lease.begin("import", false)?;
            write_batch(&mut tx, batch, models)?;
            tx.commit()?;
            Ok(())
        })
    }
}

fn write_batch(tx: &mut Tx<'_>, batch: &[Record], models: &mut Models<'_>) -> Result<()> {
    let mut touched: BTreeSet<[String; 4]> = BTreeSet::new();
    for record in batch {
        match record {
            Record::Message { message: m, withheld } => {
                let [t, a, u, c] = m.scope.key_parts();
                tx.execute(
                    "INSERT INTO messages (id, tenant, agent, user_id, chat, role, content, at, withheld) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                    &[&m.id.as_str(), &t, &a, &u, &c, &m.role.as_str(), &m.content, &ms(m.at), withheld],
                )?;
            }
            Record::MessageEmbedding { tenant, message, embedding: v } => {
                let n = tx.execute(
                    "UPDATE messages SET model = $3, embedding = $4::real[]::vector WHERE tenant = $1 AND id = $2",
                    &[&tenant.as_str(), &message.as_str(), &v.model, &v.vector],
                )?;
                if n != 1 {
                    return Err(out_of_order("a message vector", &format!("message {message}")));
                }
            }
            Record::Memory { memory, embedding } => {
                if let Some(e) = embedding {
                    register_model(tx, e, models)?;
                }
                let vector = embedding.as_ref().map(|e| (e.model.as_str(), vector_text(&e.vector)));
                insert_memory(tx, memory, vector)?;
                touched.insert(memory.owner.key_parts().map(str::to_string));
            }
            Record::History { tenant, entry: h } => {
                let enc = |s: &Status| serde_json::to_string(s).expect("status serialises");
                tx.execute(
                    "INSERT INTO history (tenant, memory_id, at, event, from_status, to_status, reason, sources) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    &[
                        &tenant.as_str(),
                        &h.memory.to_string(),
                        &ms(h.at),
                        &h.event.as_str(),
                        &h.from_status.as_ref().map(enc),
                        &enc(&h.to_status),
                        &h.reason,
                        &ids_json(&h.sources),
                    ],
                )?;
            }
            Record::Link { tenant, link } => {
                tx.execute(
                    "INSERT INTO links (tenant, from_id, to_id, kind, at) VALUES ($1, $2, $3, $4, $5)",
                    &[
                        &tenant.as_str(),
                        &link.from.to_string(),
                        &link.to.to_string(),
                        &link.kind.as_str(),
                        &ms(link.at),
                    ],
                )?;
            }
            Record::Session { tenant, memory, session } => {
                let id = memory.to_string();
                if tx
                    .query_opt("SELECT 1 FROM memories WHERE tenant = $1 AND id = $2", &[&tenant.as_str(), &id])?
                    .is_none()
                {
                    return Err(out_of_order("a session", &format!("memory {memory}")));
                }
                tx.execute(
                    "INSERT INTO memory_sessions (tenant, memory_id, session) VALUES ($1, $2, $3)",
                    &[&tenant.as_str(), &id, session],
                )?;
            }
            Record::Policy(p) => {
                tx.execute(
                    "INSERT INTO policies (tenant, agent, key, version, text, value, effective_from, effective_until) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                    &[
                        &p.tenant.as_str(),
                        &p.agent.as_ref().map_or("", |a| a.as_str()),
                        &p.key,
                        &(p.version as i32),
                        &p.text,
                        &p.value.to_string(),
                        &ms(p.effective_from),
                        &ms_opt(p.effective_until),
                    ],
                )?;
            }
            Record::Trace(t) => {
                let [tn, a, u, c] = t.scope.key_parts();
                let surfaced = serde_json::to_string(&t.surfaced).expect("ids serialise");
                tx.execute(
                    "INSERT INTO traces (turn_id, tenant, agent, user_id, chat, op, at, surfaced, body) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                    &[&t.turn_id, &tn, &a, &u, &c, &t.op, &ms(t.at), &surfaced, &t.body],
                )?;
            }
            Record::Deletion { tenant, event, counts } => {
                let counts = serde_json::to_string(counts).expect("counts serialise");
                tx.execute(
                    "INSERT INTO deletions (tenant, subject, at, counts, digest) VALUES ($1, $2, $3, $4, $5)",
                    &[&tenant.as_str(), &event.subject, &ms(event.at), &counts, &event.digest],
                )?;
            }
            Record::Queued(q) => {
                let [t, a, u, c] = q.scope.key_parts();
                let id = q.message.as_str();
                if tx
                    .query_opt(
                        "SELECT 1 FROM messages WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4 \
                         AND id = $5",
                        &[&t, &a, &u, &c, &id],
                    )?
                    .is_none()
                {
                    return Err(out_of_order("a queue row", &format!("message {} of {}", q.message, q.scope)));
                }
                let attempts = i32::try_from(q.attempts).map_err(|_| StoreError::Transfer {
                    op: "import",
                    reason: format!(
                        "the queue row of message {} counts {} attempts, more than PostgreSQL's integer column \
                         holds; fix the source row's attempts before copying",
                        q.message, q.attempts
                    ),
                })?;
                let fallback = serde_json::to_string(&q.fallback).expect("ids serialise");
                // `seq` grows in insertion order, so export order is registration order again.
                tx.execute(
                    "INSERT INTO extraction_queue (tenant, agent, user_id, chat, message_id, state, attempts, \
                     retry_at, last_error, fallback, queued_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                    &[
                        &t,
                        &a,
                        &u,
                        &c,
                        &id,
                        &q.state.as_str(),
                        &attempts,
                        &ms_opt(q.retry_at),
                        &q.last_error,
                        &fallback,
                        &ms(q.queued_at),
                    ],
                )?;
            }
            Record::ChatProgress { progress: p, claimed_until } => {
                let [t, a, u, c] = p.scope.key_parts();
                let n = |v: usize| v as i64;
                tx.execute(
                    "INSERT INTO chat_progress (tenant, agent, user_id, chat, messages, pending, retrying, retry_at, \
                     last_message_at, memo_covered, memo_gaps, episode_checked, last_error, claimed_until) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
                    &[
                        &t,
                        &a,
                        &u,
                        &c,
                        &n(p.messages),
                        &n(p.pending),
                        &n(p.retrying),
                        &ms_opt(p.retry_at),
                        &ms(p.last_message_at),
                        &n(p.memo_covered),
                        &n(p.memo_gaps),
                        &n(p.episode_checked),
                        &p.last_error,
                        &ms_opt(*claimed_until),
                    ],
                )?;
            }
            Record::UserState { tenant, user, state, updated_at } => {
                tx.execute(
                    "INSERT INTO user_states (tenant, user_id, state, updated_at) VALUES ($1, $2, $3, $4)",
                    &[&tenant.as_str(), &user.as_str(), &state.as_str(), &ms(*updated_at)],
                )?;
            }
        }
    }
    // Sorted (a BTreeSet), as apply does, so concurrent writers lock partition rows in one order.
    for [t, a, u, c] in &touched {
        tx.execute(
            "INSERT INTO partitions (tenant, agent, user_id, chat, version) VALUES ($1, $2, $3, $4, 1) \
             ON CONFLICT (tenant, agent, user_id, chat) DO UPDATE SET version = partitions.version + 1",
            &[t, a, u, c],
        )?;
    }
    Ok(())
}

impl Transfer for PostgresStore {
    /// Streams every row to `visit`, table by table, from one repeatable-read snapshot, fetching
    /// [`FETCH`] rows per round trip so memory stays flat however large the self.
    fn export(&self, visit: &mut dyn FnMut(Record) -> Result<()>) -> Result<()> {
        require_rls_bypass(self, "export")?;
        let mut lease = self.pool.get("export")?;
        let mut tx = lease
            .client()
            .build_transaction()
            .isolation_level(IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(pg("export"))?;
        for (_table, query, decode) in exports() {
            let portal = tx.bind(query.as_str(), &[]).map_err(pg("export"))?;
            loop {
                let rows = tx.query_portal(&portal, FETCH).map_err(pg("export"))?;
                if rows.is_empty() {
                    break;
                }
                for row in &rows {
                    visit(decode(row)?)?;
                }
            }
        }
        tx.commit().map_err(pg("export"))
    }

    /// Starts an import, refusing a database that holds any row of a copied table.
    fn import(&self) -> Result<Box<dyn Importer + '_>> {
        let held: BTreeMap<String, u64> = self.counts()?.into_iter().filter(|(_, n)| *n > 0).collect();
        if !held.is_empty() {
            return Err(not_empty(self.database(), &held));
        }
        Ok(Box::new(PostgresImporter { store: self }))
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

    /// How many rows each table of [`TABLES`] holds, across tenants.
    fn counts(&self) -> Result<Counts> {
        require_rls_bypass(self, "count rows")?;
        let mut lease = self.pool.get("count rows")?;
        let mut tx = lease.begin("count rows", true)?;
        let mut out = empty_counts();
        for table in TABLES {
            let n: i64 = get(&tx.query_one(&count_sql(table), &[])?, 0)?;
            out.insert(table.to_string(), n as u64);
        }
        tx.commit()?;
        Ok(out)
    }

    /// The stored vector of one memory of the tenant.
    fn embedding(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<Embedding>> {
        self.read("get embedding", tenant.as_str(), |tx| {
            tx.query_opt(
                "SELECT model, embedding::real[] FROM memories WHERE tenant = $1 AND id = $2 AND embedding IS NOT NULL",
                &[&tenant.as_str(), &id.to_string()],
            )?
            .map(|r| Ok(Embedding { model: get(&r, 0)?, vector: get(&r, 1)? }))
            .transpose()
        })
    }
}

#[cfg(test)]
mod tests {
    /// The export streams every copied table in `TABLES` order (vectors ride with their memories).
    #[test]
    fn exports_follow_the_table_list() {
        let exported: Vec<&str> = super::exports().iter().map(|e| e.0).collect();
        let listed: Vec<&str> = super::TABLES.iter().copied().filter(|t| *t != "embeddings").collect();
        assert_eq!(exported, listed);
    }
}
