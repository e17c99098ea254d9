//! Memories on SQLite: reads by id, scope, hash and key, history, links, and change sets.

use chrono::{DateTime, Utc};
use mnemo_core::safety::Domains;
use mnemo_core::{HistoryEntry, Kind, Link, Memory, MemoryId, Scope, StatusKind, TenantId};
use rusqlite::{params, params_from_iter};

use super::rows::{query, query_opt};
use super::{SqliteStore, apply, placeholders};
use crate::Memories;
use crate::error::Result;
use crate::memories::in_order;
use crate::rows::{MEMORY_COLUMNS, Row, decode, ms};
use crate::sql::{Dialect, VISIBLE, memories as sql};
use crate::{ChangeSet, ListFilter};

impl Memories for SqliteStore {
    fn get(&self, tenant: &TenantId, id: MemoryId) -> Result<Option<Memory>> {
        let args = params![tenant.as_str(), id.to_string()];
        self.read(|c| query_opt(c, "get memory", &sql::get(), args, |r| decode::memory(r)))
    }

    fn get_many(&self, scope: &Scope, ids: &[MemoryId]) -> Result<Vec<Memory>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let [t, a, u, c] = scope.key_parts();
        // Unary `+` keeps the planner on the unique id index: without statistics it would
        // otherwise walk the scope index, i.e. every row of the user. Scope still filters.
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id IN ({}) AND +m.tenant = ?1 AND +m.agent IN ('', ?2) \
             AND +m.user_id IN ('', ?3) AND +m.chat IN ('', ?4)",
            placeholders(ids.len(), 5)
        );
        let id_strs: Vec<String> = ids.iter().map(MemoryId::to_string).collect();
        let args = [t, a, u, c].into_iter().map(str::to_string).chain(id_strs);
        Ok(in_order(self.query_memories("get memories", &sql, params_from_iter(args))?, ids))
    }

    fn list(&self, scope: &Scope, f: &ListFilter) -> Result<Vec<Memory>> {
        let [t, a, u, c] = scope.key_parts();
        let mut sql = format!("SELECT {MEMORY_COLUMNS} FROM memories m WHERE {VISIBLE}");
        let mut args: Vec<String> = [t, a, u, c].into_iter().map(str::to_string).collect();
        if !f.kinds.is_empty() {
            sql.push_str(&format!(" AND m.kind IN ({})", placeholders(f.kinds.len(), args.len() + 1)));
            args.extend(f.kinds.iter().map(|k| k.as_str().to_string()));
        }
        if !f.statuses.is_empty() {
            sql.push_str(&format!(" AND m.status IN ({})", placeholders(f.statuses.len(), args.len() + 1)));
            args.extend(f.statuses.iter().map(|s| s.as_str().to_string()));
        }
        if let Some(text) = f.text.as_ref().filter(|t| !t.is_empty()) {
            sql.push_str(&format!(" AND instr(lower(m.content), lower(?{})) > 0", args.len() + 1));
            args.push(text.clone());
        }
        sql.push_str(" ORDER BY m.created_at DESC, m.id DESC");
        if f.limit > 0 {
            sql.push_str(&format!(" LIMIT {} OFFSET {}", f.limit, f.offset));
        } else if f.offset > 0 {
            sql.push_str(&format!(" LIMIT -1 OFFSET {}", f.offset));
        }
        self.query_memories("list memories", &sql, params_from_iter(args))
    }

    fn by_hash(&self, scope: &Scope, hash: &str) -> Result<Vec<Memory>> {
        let [t, a, u, c] = scope.key_parts();
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m INDEXED BY memories_by_hash WHERE {VISIBLE} \
             AND m.content_hash = ?5 ORDER BY m.created_at, m.id"
        );
        self.query_memories("find by hash", &sql, params![t, a, u, c, hash])
    }

    fn find_by_key(&self, owner: &Scope, kind: Kind, key: &str) -> Result<Option<Memory>> {
        let [t, a, u, c] = owner.key_parts();
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.tenant = ?1 AND m.agent = ?2 AND m.user_id = ?3 \
             AND m.chat = ?4 AND m.kind = ?5 AND m.key = ?6 AND m.status = 'active' ORDER BY m.created_at DESC LIMIT 1"
        );
        Ok(self.query_memories("find by key", &sql, params![t, a, u, c, kind.as_str(), key])?.into_iter().next())
    }

    fn exact_candidates(&self, scope: &Scope, due_by: DateTime<Utc>) -> Result<Vec<Memory>> {
        let [t, a, u, c] = scope.key_parts();
        // One index seek per branch; an OR across kinds or the pinned flag would make the planner
        // walk every active row of the user instead.
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m INDEXED BY memories_keyed WHERE {VISIBLE} \
               AND m.status = 'active' AND m.kind = 'preference' AND m.key IS NOT NULL \
             UNION ALL SELECT {MEMORY_COLUMNS} FROM memories m WHERE {VISIBLE} AND m.status = 'active' \
               AND m.kind = 'protocol' \
             UNION ALL SELECT {MEMORY_COLUMNS} FROM memories m INDEXED BY memories_pinned WHERE {VISIBLE} \
               AND m.status = 'active' AND m.pinned = 1 \
             UNION ALL SELECT {MEMORY_COLUMNS} FROM memories m INDEXED BY memories_due WHERE {VISIBLE} \
               AND m.status = 'active' AND m.kind = 'open_loop' AND m.due_at IS NOT NULL AND m.due_at <= ?5"
        );
        self.query_memories("exact candidates", &sql, params![t, a, u, c, ms(due_by)])
    }

    fn constraints(&self, scope: &Scope, domains: Domains, limit: usize) -> Result<Vec<Memory>> {
        let [t, a, u, c] = scope.key_parts();
        let sql = Dialect::Sqlite.sql(&sql::constraints()).into_owned();
        self.query_memories("constraints", &sql, params![t, a, u, c, domains.bits(), limit as i64])
    }

    fn scan(&self, statuses: &[StatusKind], after: Option<MemoryId>, limit: usize) -> Result<Vec<Memory>> {
        if statuses.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {MEMORY_COLUMNS} FROM memories m WHERE m.id > ?1 AND m.status IN ({}) ORDER BY m.id LIMIT {limit}",
            placeholders(statuses.len(), 2)
        );
        let args = std::iter::once(after.map(|a| a.to_string()).unwrap_or_default())
            .chain(statuses.iter().map(|s| s.as_str().to_string()));
        self.query_memories("scan", &sql, params_from_iter(args))
    }

    fn owners(&self, tenant: &TenantId) -> Result<Vec<Scope>> {
        let sql = Dialect::Sqlite.sql(&sql::owners()).into_owned();
        self.read(|c| query(c, "owners", &sql, params![tenant.as_str()], |r| r.scope(0)))
    }

    fn history(&self, tenant: &TenantId, id: MemoryId) -> Result<Vec<HistoryEntry>> {
        let args = params![tenant.as_str(), id.to_string()];
        self.read(|c| query(c, "history", &sql::history(Dialect::Sqlite), args, |r| decode::history(r, 0)))
    }

    fn links(&self, tenant: &TenantId, id: MemoryId) -> Result<Vec<Link>> {
        let args = params![tenant.as_str(), id.to_string()];
        self.read(|c| query(c, "links", &sql::links(Dialect::Sqlite), args, |r| decode::link(r, 0)))
    }

    fn apply(&self, changes: &ChangeSet) -> Result<()> {
        if changes.changes.is_empty() {
            return Ok(());
        }
        self.write_then("apply", |tx| apply::apply(tx, changes), |moved| self.vectors.advance(&moved))
    }
}
