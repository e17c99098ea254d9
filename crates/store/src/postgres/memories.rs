//! Memories on PostgreSQL: reads by id, scope, hash and key, history, links, and change sets;
//! the cross-tenant scan runs as the jobs role.

use chrono::{DateTime, Utc};
use mnemo_core::safety::Domains;
use mnemo_core::{HistoryEntry, Kind, Link, Memory, MemoryId, Scope, StatusKind, TenantId};

use super::{Actor, PostgresStore, apply, ids_text};
use crate::Memories;
use crate::error::Result;
use crate::memories::in_order;
use crate::rows::{MEMORY_COLUMNS, Row, decode, ms};
use crate::sql::{Dialect, VISIBLE, memories as sql};
use crate::{ChangeSet, ListFilter};

impl Memories for PostgresStore {
    fn get(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<Memory>> {
        self.read("get memory", tenant.as_str(), |tx| {
            tx.query_opt(&sql::get(), &[&tenant.as_str(), &id.to_string()])?.as_ref().map(decode::memory).transpose()
        })
    }

    fn get_many(&self, scope: &Scope, ids: &[MemoryId]) -> Result<Vec<Memory>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        let sql = format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id = ANY($5) AND {VISIBLE}");
        let found = self.query_memories("get memories", t, &sql, &[&t, &a, &u, &c, &ids_text(ids)])?;
        Ok(in_order(found, ids))
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
        self.query_memories("list memories", t, &sql, &params)
    }

    fn by_hash(&self, scope: &Scope, hash: &str) -> Result<Vec<Memory>> {
        let [t, a, u, c] = scope.key_parts();
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m WHERE {VISIBLE} AND m.content_hash = $5 \
             ORDER BY m.created_at, m.id"
        );
        self.query_memories("find by hash", t, &sql, &[&t, &a, &u, &c, &hash])
    }

    fn find_by_key(&self, owner: &Scope, kind: Kind, key: &str) -> Result<Option<Memory>> {
        let [t, a, u, c] = owner.key_parts();
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.tenant = $1 AND m.agent = $2 AND m.user_id = $3 \
             AND m.chat = $4 AND m.kind = $5 AND m.key = $6 AND m.status = 'active' \
             ORDER BY m.created_at DESC, m.id DESC LIMIT 1"
        );
        Ok(self.query_memories("find by key", t, &sql, &[&t, &a, &u, &c, &kind.as_str(), &key])?.into_iter().next())
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
        self.query_memories("exact candidates", t, &sql, &[&t, &a, &u, &c, &ms(due_by)])
    }

    fn constraints(&self, scope: &Scope, domains: Domains, limit: usize) -> Result<Vec<Memory>> {
        let [t, a, u, c] = scope.key_parts();
        let (bits, limit) = (i32::from(domains.bits()), limit as i64);
        self.query_memories("constraints", t, &sql::constraints(), &[&t, &a, &u, &c, &bits, &limit])
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
            tx.query(&sql, &[&after, &statuses, &(limit as i64)])?.iter().map(decode::memory).collect()
        })
    }

    fn owners(&self, tenant: &TenantId) -> Result<Vec<Scope>> {
        let sql = sql::owners();
        self.read("owners", tenant.as_str(), |tx| {
            tx.query(&sql, &[&tenant.as_str()])?.iter().map(|r| r.scope(0)).collect()
        })
    }

    fn history(&self, tenant: &TenantId, id: MemoryId) -> Result<Vec<HistoryEntry>> {
        let sql = sql::history(Dialect::Postgres);
        self.read("history", tenant.as_str(), |tx| {
            tx.query(&sql, &[&tenant.as_str(), &id.to_string()])?.iter().map(|r| decode::history(r, 0)).collect()
        })
    }

    fn links(&self, tenant: &TenantId, id: MemoryId) -> Result<Vec<Link>> {
        let sql = sql::links(Dialect::Postgres);
        self.read("links", tenant.as_str(), |tx| {
            tx.query(&sql, &[&tenant.as_str(), &id.to_string()])?.iter().map(|r| decode::link(r, 0)).collect()
        })
    }

    fn apply(&self, changes: &ChangeSet) -> Result<()> {
        if changes.changes.is_empty() {
            return Ok(());
        }
        let moved = self.with_models(|models| {
            self.write("apply", changes.tenant.as_str(), |tx| apply::apply(tx, changes, models))
        })?;
        // After the commit. Concurrent applies may hand their moves over in another order than
        // they committed in: a part takes a move only at the version the move started from, so
        // one that arrives early is skipped and the part is reloaded at its next read.
        self.vectors.advance(&moved);
        Ok(())
    }
}
