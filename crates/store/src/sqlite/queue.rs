//! The background-work queue on SQLite: one `extraction_queue` row per registered message, one
//! `chat_progress` row per chat whose counts are recomputed from the queue in the transaction
//! that changes it, so they can never drift.

use chrono::{DateTime, Utc};
use mnemo_core::{MemoryId, Message, MessageId, Scope};
use rusqlite::{OptionalExtension, Transaction, params, params_from_iter};

use super::rows::{ms, ms_opt, parse, time, time_opt};
use super::{MESSAGE_COLUMNS, SqliteStore, placeholders};
use crate::error::{Result, StoreError};
use crate::queue::{ChatCursor, ChatProgress, Queue, QueueState, Queued, SettledRow, Settlement};

const PROGRESS_COLUMNS: &str = "tenant, agent, user_id, chat, messages, pending, retrying, retry_at, last_message_at, \
     memo_covered, memo_gaps, last_error, episode_checked";

fn progress(row: &rusqlite::Row<'_>) -> rusqlite::Result<ChatProgress> {
    let n = |i: usize| row.get::<_, i64>(i).map(|v| v.max(0) as usize);
    Ok(ChatProgress {
        scope: super::rows::scope(row, 0)?,
        messages: n(4)?,
        pending: n(5)?,
        retrying: n(6)?,
        retry_at: time_opt(row, 7)?,
        last_message_at: time(row, 8)?,
        memo_covered: n(9)?,
        memo_gaps: n(10)?,
        last_error: row.get(11)?,
        episode_checked: n(12)?,
    })
}

/// Recomputes a chat's counts and earliest retry from its queue rows.
fn recount(tx: &Transaction<'_>, parts: [&str; 4]) -> Result<()> {
    let [t, a, u, c] = parts;
    tx.prepare_cached(
        "UPDATE chat_progress SET \
           pending = (SELECT count(*) FROM extraction_queue q WHERE q.tenant = ?1 AND q.agent = ?2 \
             AND q.user_id = ?3 AND q.chat = ?4 AND q.state = 'pending'), \
           retrying = (SELECT count(*) FROM extraction_queue q WHERE q.tenant = ?1 AND q.agent = ?2 \
             AND q.user_id = ?3 AND q.chat = ?4 AND q.state = 'fallback'), \
           retry_at = (SELECT min(q.retry_at) FROM extraction_queue q WHERE q.tenant = ?1 AND q.agent = ?2 \
             AND q.user_id = ?3 AND q.chat = ?4 AND q.state = 'fallback') \
         WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 AND chat = ?4",
    )
    .and_then(|mut s| s.execute(params![t, a, u, c]))
    .map_err(StoreError::sql("recount queue"))?;
    Ok(())
}

impl Queue for SqliteStore {
    fn enqueue(&self, scope: &Scope, messages: &[MessageId], extract: bool, at: DateTime<Utc>) -> Result<usize> {
        let parts = scope.key_parts();
        let [t, a, u, c] = parts;
        if messages.is_empty() {
            return Ok(0);
        }
        let state = if extract { QueueState::Pending } else { QueueState::Done };
        self.write("enqueue", |tx| {
            let mut insert = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO extraction_queue (tenant, agent, user_id, chat, message_id, state, queued_at) \
                     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE EXISTS (SELECT 1 FROM messages WHERE tenant = ?1 \
                     AND agent = ?2 AND user_id = ?3 AND chat = ?4 AND id = ?5)",
                )
                .map_err(StoreError::sql("enqueue"))?;
            let mut added = 0;
            for id in messages {
                added += insert
                    .execute(params![t, a, u, c, id.as_str(), state.as_str(), ms(at)])
                    .map_err(StoreError::sql("enqueue"))?;
            }
            if added == 0 {
                return Ok(0);
            }
            tx.prepare_cached(
                "INSERT INTO chat_progress (tenant, agent, user_id, chat, messages, last_message_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (tenant, agent, user_id, chat) DO UPDATE SET \
                 messages = messages + excluded.messages, last_message_at = max(last_message_at, excluded.last_message_at)",
            )
            .and_then(|mut s| s.execute(params![t, a, u, c, added as i64, ms(at)]))
            .map_err(StoreError::sql("enqueue"))?;
            recount(tx, parts)?;
            Ok(added)
        })
    }

    fn chats_with_work(
        &self,
        now: DateTime<Utc>,
        memo_every: usize,
        active_since: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ChatProgress>> {
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {PROGRESS_COLUMNS} FROM chat_progress WHERE pending > 0 OR retry_at <= ?1 \
                     OR messages - memo_covered >= ?2 OR last_message_at >= ?3 \
                     ORDER BY last_message_at, tenant, agent, user_id, chat LIMIT ?4"
                ))
                .map_err(StoreError::sql("chats with work"))?;
            stmt.query_map(
                params![ms(now), memo_every.clamp(1, i64::MAX as usize) as i64, ms(active_since), limit as i64],
                progress,
            )
            .and_then(|r| r.collect())
            .map_err(StoreError::sql("chats with work"))
        })
    }

    fn chat_progress(&self, scope: &Scope) -> Result<Option<ChatProgress>> {
        let [t, a, u, c] = scope.key_parts();
        self.read(|conn| {
            conn.prepare_cached(&format!(
                "SELECT {PROGRESS_COLUMNS} FROM chat_progress WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 AND chat = ?4"
            ))
            .and_then(|mut s| s.query_row(params![t, a, u, c], progress).optional())
            .map_err(StoreError::sql("chat progress"))
        })
    }

    fn claim_chat(&self, scope: &Scope, now: DateTime<Utc>, until: DateTime<Utc>) -> Result<bool> {
        let [t, a, u, c] = scope.key_parts();
        self.write("claim chat", |tx| {
            tx.prepare_cached(
                "UPDATE chat_progress SET claimed_until = ?5 WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 \
                 AND chat = ?4 AND (claimed_until IS NULL OR claimed_until <= ?6)",
            )
            .and_then(|mut s| s.execute(params![t, a, u, c, ms(until), ms(now)]))
            .map(|n| n == 1)
            .map_err(StoreError::sql("claim chat"))
        })
    }

    fn release_chat(&self, scope: &Scope) -> Result<()> {
        let [t, a, u, c] = scope.key_parts();
        self.write("release chat", |tx| {
            tx.prepare_cached(
                "UPDATE chat_progress SET claimed_until = NULL WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 AND chat = ?4",
            )
            .and_then(|mut s| s.execute(params![t, a, u, c]))
            .map_err(StoreError::sql("release chat"))?;
            Ok(())
        })
    }

    fn queued(&self, scope: &Scope, state: QueueState, due_by: DateTime<Utc>, limit: usize) -> Result<Vec<Queued>> {
        let [t, a, u, c] = scope.key_parts();
        let cols: String = MESSAGE_COLUMNS.split(", ").map(|col| format!("m.{col}")).collect::<Vec<_>>().join(", ");
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {cols}, q.state, q.attempts, q.retry_at, q.last_error, q.fallback FROM extraction_queue q \
                     JOIN messages m ON m.tenant = q.tenant AND m.id = q.message_id \
                     WHERE q.tenant = ?1 AND q.agent = ?2 AND q.user_id = ?3 AND q.chat = ?4 AND q.state = ?5 \
                     AND (q.state <> 'fallback' OR q.retry_at <= ?6) ORDER BY q.rowid LIMIT ?7"
                ))
                .map_err(StoreError::sql("queued messages"))?;
            stmt.query_map(params![t, a, u, c, state.as_str(), ms(due_by), limit as i64], |r| {
                let fallback: String = r.get(12)?;
                Ok(Queued {
                    message: super::message(r)?,
                    state: parse(r, 8)?,
                    attempts: r.get(9)?,
                    retry_at: time_opt(r, 10)?,
                    last_error: r.get(11)?,
                    fallback_memories: serde_json::from_str::<Vec<MemoryId>>(&fallback).map_err(|e| {
                        rusqlite::Error::FromSqlConversionFailure(12, rusqlite::types::Type::Text, e.into())
                    })?,
                })
            })
            .and_then(|r| r.collect())
            .map_err(StoreError::sql("queued messages"))
        })
    }

    fn settle(&self, scope: &Scope, messages: &[MessageId], outcome: &Settlement) -> Result<()> {
        let parts = scope.key_parts();
        let [t, a, u, c] = parts;
        if messages.is_empty() {
            return Ok(());
        }
        let SettledRow { state, attempts, retry_at, error, fallback } = outcome.row();
        self.write("settle batch", |tx| {
            let sql = format!(
                "UPDATE extraction_queue SET state = ?5, attempts = coalesce(?6, attempts), retry_at = ?7, \
                 last_error = coalesce(?8, last_error), fallback = coalesce(?9, fallback) \
                 WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 AND chat = ?4 AND message_id IN ({})",
                placeholders(messages.len(), 10)
            );
            let fixed: Vec<Box<dyn rusqlite::ToSql>> = vec![
                Box::new(t.to_string()),
                Box::new(a.to_string()),
                Box::new(u.to_string()),
                Box::new(c.to_string()),
                Box::new(state.as_str()),
                Box::new(attempts),
                Box::new(ms_opt(retry_at)),
                Box::new(error.map(str::to_string)),
                Box::new(fallback.clone()),
            ];
            let args = fixed.into_iter().chain(messages.iter().map(|m| Box::new(m.as_str().to_string()) as Box<_>));
            tx.execute(&sql, params_from_iter(args)).map_err(StoreError::sql("settle batch"))?;
            if let Some(e) = error {
                tx.prepare_cached(
                    "UPDATE chat_progress SET last_error = ?5 WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 AND chat = ?4",
                )
                .and_then(|mut s| s.execute(params![t, a, u, c, e]))
                .map_err(StoreError::sql("settle batch"))?;
            }
            recount(tx, parts)
        })
    }

    fn chat_messages(&self, scope: &Scope, offset: usize, limit: usize) -> Result<Vec<Message>> {
        let [t, a, u, c] = scope.key_parts();
        let cols: String = MESSAGE_COLUMNS.split(", ").map(|col| format!("m.{col}")).collect::<Vec<_>>().join(", ");
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {cols} FROM extraction_queue q JOIN messages m ON m.tenant = q.tenant AND m.id = q.message_id \
                     WHERE q.tenant = ?1 AND q.agent = ?2 AND q.user_id = ?3 AND q.chat = ?4 \
                     ORDER BY q.rowid LIMIT ?5 OFFSET ?6"
                ))
                .map_err(StoreError::sql("chat messages"))?;
            stmt.query_map(params![t, a, u, c, limit as i64, offset as i64], super::message)
                .and_then(|r| r.collect())
                .map_err(StoreError::sql("chat messages"))
        })
    }

    fn advance_cursor(
        &self,
        scope: &Scope,
        cursor: ChatCursor,
        from: usize,
        to: usize,
        gap: Option<&str>,
    ) -> Result<bool> {
        let [t, a, u, c] = scope.key_parts();
        let sql = match cursor {
            ChatCursor::Memo => {
                "UPDATE chat_progress SET memo_covered = ?6, memo_gaps = memo_gaps + (?7 IS NOT NULL), \
                 last_error = coalesce(?7, last_error) WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 AND chat = ?4 \
                 AND memo_covered = ?5 AND messages >= ?6"
            }
            ChatCursor::Episode => {
                "UPDATE chat_progress SET episode_checked = ?6, last_error = coalesce(?7, last_error) \
                 WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 AND chat = ?4 AND episode_checked = ?5 AND messages >= ?6"
            }
        };
        self.write("advance chat cursor", |tx| {
            tx.prepare_cached(sql)
                .and_then(|mut s| s.execute(params![t, a, u, c, from as i64, to as i64, gap]))
                .map(|n| n == 1)
                .map_err(StoreError::sql("advance chat cursor"))
        })
    }

    fn user_messages(
        &self,
        scope: &Scope,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        let [t, a, u, _] = scope.key_parts();
        if u.is_empty() {
            return Ok(Vec::new());
        }
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached(&format!(
                    "SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 \
                     AND at >= ?4 AND at < ?5 ORDER BY at, rowid LIMIT ?6"
                ))
                .map_err(StoreError::sql("user messages"))?;
            stmt.query_map(params![t, a, u, ms(from), ms(to), limit as i64], super::message)
                .and_then(|r| r.collect())
                .map_err(StoreError::sql("user messages"))
        })
    }
}
