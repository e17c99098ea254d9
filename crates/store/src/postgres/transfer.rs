//! Whole-store copy for PostgreSQL: export every row as [`Record`]s from one snapshot, import
//! planned records into an empty database (the tsvector is generated from the row; each
//! model's registry entry and HNSW index are created with its first vector), count rows per
//! table.
//!
//! These are the only operations that read every tenant's rows with the connecting role itself,
//! not as `mnemo_app` bound to one tenant. Row-level security is forced on every tenant table,
//! so that role must bypass it (a superuser, or a role with BYPASSRLS); otherwise they refuse
//! with an error saying so, rather than count or copy nothing.

use std::sync::atomic::Ordering;

use mnemo_core::{MemoryId, TenantId};
use postgres::IsolationLevel;

use super::apply::{Models, insert, insert_memory, register_model};
use super::pool::{Tx, pg};
use super::rows::{get, params, vector_text};
use super::{PostgresStore, schema};
use crate::Embedding;
use crate::error::{Result, StoreError};
use crate::plan::import::{self as plan, Step};
use crate::rows::{MEMORY_COLUMNS, decode};
use crate::sql::transfer::export_sql;
use crate::sql::{BUMP_PARTITION, Dialect};
use crate::transfer::{Counts, Importer, Record, TABLES, Transfer, empty_counts, out_of_order, refuse_unless_empty};

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

/// The query counting one table of [`TABLES`]: vectors live in the memory and document rows here.
fn count_sql(table: &str) -> String {
    match table {
        "embeddings" => "SELECT count(*) FROM memories WHERE embedding IS NOT NULL".into(),
        "document_vectors" => "SELECT count(*) FROM documents WHERE embedding IS NOT NULL".into(),
        "message_embeddings" => "SELECT count(*) FROM messages WHERE embedding IS NOT NULL".into(),
        _ => format!("SELECT count(*) FROM {table}"),
    }
}

/// The export query of a table laid out the PostgreSQL way: vectors in the rows they belong to,
/// sessions keyed by memory id.
fn own_export_sql(table: &str) -> String {
    match table {
        "message_embeddings" => "SELECT tenant, agent, user_id, chat, id, model, embedding::real[], \
             ARRAY(SELECT x FROM unnest(passages) WITH ORDINALITY u(p, o), unnest(p::real[]) WITH ORDINALITY w(x, j) \
             ORDER BY o, j) FROM messages WHERE embedding IS NOT NULL \
             ORDER BY seq"
            .into(),
        "memories" => format!("SELECT {MEMORY_COLUMNS}, m.model, m.embedding::real[] FROM memories m ORDER BY m.id"),
        "documents" => {
            format!(
                "SELECT {}, m.model, m.embedding::real[] FROM documents m ORDER BY m.id",
                crate::sql::documents::COLUMNS
            )
        }
        "memory_sessions" => {
            "SELECT tenant, memory_id, session FROM memory_sessions ORDER BY memory_id COLLATE \"C\", \
             session COLLATE \"C\""
                .into()
        }
        other => unreachable!("{other} has a shared export query"),
    }
}

struct PostgresImporter<'a> {
    store: &'a PostgresStore,
}

impl Importer for PostgresImporter<'_> {
    fn write(&mut self, batch: &[Record]) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        let plan = plan::plan(batch)?;
        self.store.with_models(|models| {
            let mut lease = self.store.pool.get("import")?;
            let mut tx = lease.begin("import", false)?;
            write_batch(&mut tx, &plan, models)?;
            tx.commit()?;
            Ok(())
        })
    }
}

fn write_batch(tx: &mut Tx<'_>, plan: &plan::Plan<'_>, models: &mut Models<'_>) -> Result<()> {
    for step in &plan.steps {
        match step {
            Step::Row { insert: row, requires } => {
                if let Some(r) = requires
                    && tx.query_opt(r.sql, &params(&r.params))?.is_none()
                {
                    return Err(r.refusal());
                }
                insert(tx, row)?;
            }
            Step::Message { insert: row, .. } => insert(tx, row)?,
            Step::MessageEmbedding { scope, message, vectors } => {
                let [t, _, u, c] = scope.key_parts();
                let v = &vectors.embedding;
                let passages = super::rows::vector_array_text(&vectors.passages);
                let n = tx.execute(
                    "UPDATE messages SET model = $3, embedding = $4::real[]::vector, passages = $7::text::vector[] \
                     WHERE tenant = $1 AND id = $2 AND user_id = $5 AND chat = $6",
                    &[&t, &message.as_str(), &v.model, &v.vector, &u, &c, &passages],
                )?;
                if n != 1 {
                    return Err(out_of_order("a message vector", &format!("message {message}")));
                }
            }
            Step::Memory { memory, embedding } => {
                if let Some(e) = embedding {
                    register_model(tx, e, models)?;
                }
                insert_memory(tx, memory, embedding.map(|e| (e.model.as_str(), vector_text(&e.vector))))?;
            }
            Step::Document { document, embedding } => super::documents::write(tx, document, *embedding)?,
            Step::Observation { observation, embedding } => super::observations::write(tx, observation, *embedding)?,
            Step::Session { tenant, memory, session } => {
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
        }
    }
    for [t, a, u, c] in &plan.partitions {
        tx.execute(BUMP_PARTITION, &[t, a, u, c])?;
    }
    Ok(())
}

impl Transfer for PostgresStore {
    /// Streams every row to `visit`, table by table, from one repeatable-read snapshot, fetching
    /// `FETCH` rows per round trip so memory stays flat however large the store.
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
        for table in decode::exported_tables() {
            let query = export_sql(table, Dialect::Postgres).unwrap_or_else(|| own_export_sql(table));
            let portal = tx.bind(query.as_str(), &[]).map_err(pg("export"))?;
            loop {
                let rows = tx.query_portal(&portal, FETCH).map_err(pg("export"))?;
                if rows.is_empty() {
                    break;
                }
                for row in &rows {
                    visit(decode::record(table, row)?)?;
                }
            }
        }
        tx.commit().map_err(pg("export"))
    }

    /// Starts an import, refusing a database that holds any row of a copied table.
    fn import(&self) -> Result<Box<dyn Importer + '_>> {
        refuse_unless_empty(self.counts()?, self.database())?;
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
        // Until autovacuum passes, the loaded rows' pages are not marked all-visible and the
        // planner's statistics predate them: the lexical half's index-only scans would visit the
        // heap for every row (10,000 rows of a user: 12 ms instead of 6). Finish the job now,
        // as pg_restore's users are told to.
        client.batch_execute("VACUUM (ANALYZE) memories, messages").map_err(pg("bulk load"))
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
