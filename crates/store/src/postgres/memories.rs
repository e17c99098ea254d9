//! Memories on PostgreSQL: reads by id, scope, hash and key, history, links, and change sets;
//! the cross-tenant scan runs as the jobs role.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use mnemo_core::{HistoryEntry, Kind, Link, Memory, MemoryId, Scope, StatusKind, TenantId};

use super::rows::{MEMORY_COLUMNS, VISIBLE, get, ms, parse, time};
use super::{Actor, PostgresStore, apply, ids_text, rows};
use crate::Memories;
use crate::error::{Result, StoreError};
use crate::{ChangeSet, ListFilter};

impl Memories for PostgresStore {
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
        let mut found = self.query_memories("get memories", t, &sql, &[&t, &a, &u, &c, &ids_text(ids)])?;
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
}
