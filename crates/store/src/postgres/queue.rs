//! The background-work queue on PostgreSQL: the same tables and rules as the SQLite backend
//! (one `extraction_queue` row per registered message, one `chat_progress` row per chat, counts
//! recomputed in the transaction that changes the queue), under row-level security; the
//! cross-tenant walk over `chat_progress` runs as the read-only jobs role.

use chrono::{DateTime, Utc};
use mnemo_core::{MemoryId, Message, MessageId, Scope};

use super::pool::Tx;
use super::rows::{get, ms, ms_opt, parse, time, time_opt};
use super::{Actor, MESSAGE_COLUMNS, PostgresStore};
use crate::error::{Result, StoreError};
use crate::queue::{ChatCursor, ChatProgress, Queue, QueueState, Queued, SettledRow, Settlement};

const PROGRESS_COLUMNS: &str = "tenant, agent, user_id, chat, messages, pending, retrying, retry_at, last_message_at, \
     memo_covered, memo_gaps, last_error, episode_checked";

fn progress(row: &postgres::Row) -> Result<ChatProgress> {
    let n = |i: usize| get::<i64>(row, i).map(|v| v.max(0) as usize);
    Ok(ChatProgress {
        scope: super::rows::scope(row, 0)?,
        messages: n(4)?,
        pending: n(5)?,
        retrying: n(6)?,
        retry_at: time_opt(row, 7)?,
        last_message_at: time(row, 8)?,
        memo_covered: n(9)?,
        memo_gaps: n(10)?,
        last_error: get(row, 11)?,
        episode_checked: n(12)?,
    })
}

/// Message columns prefixed with the alias `m`.
fn message_columns() -> String {
    MESSAGE_COLUMNS.split(", ").map(|col| format!("m.{col}")).collect::<Vec<_>>().join(", ")
}

/// Recomputes a chat's counts and earliest retry from its queue rows.
fn recount(tx: &mut Tx<'_>, [t, a, u, c]: [&str; 4]) -> Result<()> {
    tx.execute(
        "UPDATE chat_progress p SET pending = s.pending, retrying = s.retrying, retry_at = s.retry_at FROM ( \
           SELECT count(*) FILTER (WHERE state = 'pending') AS pending, \
                  count(*) FILTER (WHERE state = 'fallback') AS retrying, \
                  min(retry_at) FILTER (WHERE state = 'fallback') AS retry_at \
           FROM extraction_queue WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4) s \
         WHERE p.tenant = $1 AND p.agent = $2 AND p.user_id = $3 AND p.chat = $4",
        &[&t, &a, &u, &c],
    )?;
    Ok(())
}

impl Queue for PostgresStore {
    fn enqueue(&self, scope: &Scope, messages: &[MessageId], extract: bool, at: DateTime<Utc>) -> Result<usize> {
        let parts = scope.key_parts();
        let [t, a, u, c] = parts;
        if messages.is_empty() {
            return Ok(0);
        }
        let state = if extract { QueueState::Pending } else { QueueState::Done }.as_str();
        let ids: Vec<&str> = messages.iter().map(MessageId::as_str).collect();
        self.write("enqueue", t, |tx| {
            // Registration order is the order of the ids given, as on SQLite.
            let added = tx.execute(
                "INSERT INTO extraction_queue (tenant, agent, user_id, chat, message_id, state, queued_at) \
                 SELECT $1, $2, $3, $4, i.id, $6, $7 FROM unnest($5::text[]) WITH ORDINALITY AS i (id, n) \
                 WHERE EXISTS (SELECT 1 FROM messages m WHERE m.tenant = $1 AND m.agent = $2 AND m.user_id = $3 \
                   AND m.chat = $4 AND m.id = i.id) ORDER BY i.n \
                 ON CONFLICT (tenant, message_id) DO NOTHING",
                &[&t, &a, &u, &c, &ids, &state, &ms(at)],
            )?;
            if added == 0 {
                return Ok(0);
            }
            tx.execute(
                "INSERT INTO chat_progress (tenant, agent, user_id, chat, messages, last_message_at) \
                 VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tenant, agent, user_id, chat) DO UPDATE SET \
                 messages = chat_progress.messages + excluded.messages, \
                 last_message_at = greatest(chat_progress.last_message_at, excluded.last_message_at)",
                &[&t, &a, &u, &c, &(added as i64), &ms(at)],
            )?;
            recount(tx, parts)?;
            Ok(added as usize)
        })
    }

    fn chats_with_work(
        &self,
        now: DateTime<Utc>,
        memo_every: usize,
        active_since: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ChatProgress>> {
        let sql = format!(
            "SELECT {PROGRESS_COLUMNS} FROM chat_progress WHERE pending > 0 OR retry_at <= $1 \
             OR messages - memo_covered >= $2 OR last_message_at >= $3 \
             ORDER BY last_message_at, tenant, agent, user_id, chat LIMIT $4"
        );
        self.tx("chats with work", Actor::Jobs, true, |tx| {
            tx.query(
                &sql,
                &[&ms(now), &(memo_every.clamp(1, i64::MAX as usize) as i64), &ms(active_since), &(limit as i64)],
            )?
            .iter()
            .map(progress)
            .collect()
        })
    }

    fn chat_progress(&self, scope: &Scope) -> Result<Option<ChatProgress>> {
        let [t, a, u, c] = scope.key_parts();
        let sql = format!(
            "SELECT {PROGRESS_COLUMNS} FROM chat_progress WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4"
        );
        self.read("chat progress", t, |tx| tx.query_opt(&sql, &[&t, &a, &u, &c])?.as_ref().map(progress).transpose())
    }

    fn claim_chat(&self, scope: &Scope, now: DateTime<Utc>, until: DateTime<Utc>) -> Result<bool> {
        let [t, a, u, c] = scope.key_parts();
        self.write("claim chat", t, |tx| {
            let n = tx.execute(
                "UPDATE chat_progress SET claimed_until = $5 WHERE tenant = $1 AND agent = $2 AND user_id = $3 \
                 AND chat = $4 AND (claimed_until IS NULL OR claimed_until <= $6)",
                &[&t, &a, &u, &c, &ms(until), &ms(now)],
            )?;
            Ok(n == 1)
        })
    }

    fn release_chat(&self, scope: &Scope) -> Result<()> {
        let [t, a, u, c] = scope.key_parts();
        self.write("release chat", t, |tx| {
            tx.execute(
                "UPDATE chat_progress SET claimed_until = NULL WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4",
                &[&t, &a, &u, &c],
            )?;
            Ok(())
        })
    }

    fn queued(&self, scope: &Scope, state: QueueState, due_by: DateTime<Utc>, limit: usize) -> Result<Vec<Queued>> {
        let [t, a, u, c] = scope.key_parts();
        let sql = format!(
            "SELECT {}, q.state, q.attempts, q.retry_at, q.last_error, q.fallback FROM extraction_queue q \
             JOIN messages m ON m.tenant = q.tenant AND m.id = q.message_id \
             WHERE q.tenant = $1 AND q.agent = $2 AND q.user_id = $3 AND q.chat = $4 AND q.state = $5 \
             AND (q.state <> 'fallback' OR q.retry_at <= $6) ORDER BY q.seq LIMIT $7",
            message_columns()
        );
        self.read("queued messages", t, |tx| {
            tx.query(&sql, &[&t, &a, &u, &c, &state.as_str(), &ms(due_by), &(limit as i64)])?
                .iter()
                .map(|r| {
                    let fallback: &str = get(r, 12)?;
                    Ok(Queued {
                        message: super::message(r)?,
                        state: parse(r, 8)?,
                        attempts: get::<i32>(r, 9)?.max(0) as u32,
                        retry_at: time_opt(r, 10)?,
                        last_error: get(r, 11)?,
                        fallback_memories: serde_json::from_str::<Vec<MemoryId>>(fallback).map_err(|e| {
                            StoreError::Corrupt { what: "queue fallback memories", detail: e.to_string() }
                        })?,
                    })
                })
                .collect()
        })
    }

    fn settle(&self, scope: &Scope, messages: &[MessageId], outcome: &Settlement) -> Result<()> {
        let parts = scope.key_parts();
        let [t, a, u, c] = parts;
        if messages.is_empty() {
            return Ok(());
        }
        let SettledRow { state, attempts, retry_at, error, fallback } = outcome.row();
        let attempts = attempts.map(|n| n as i32);
        let ids: Vec<&str> = messages.iter().map(MessageId::as_str).collect();
        self.write("settle batch", t, |tx| {
            tx.execute(
                "UPDATE extraction_queue SET state = $6, attempts = coalesce($7, attempts), retry_at = $8, \
                 last_error = coalesce($9, last_error), fallback = coalesce($10, fallback) \
                 WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4 AND message_id = ANY($5)",
                &[&t, &a, &u, &c, &ids, &state.as_str(), &attempts, &ms_opt(retry_at), &error, &fallback],
            )?;
            if let Some(e) = error {
                tx.execute(
                    "UPDATE chat_progress SET last_error = $5 WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4",
                    &[&t, &a, &u, &c, &e],
                )?;
            }
            recount(tx, parts)
        })
    }

    fn chat_messages(&self, scope: &Scope, offset: usize, limit: usize) -> Result<Vec<Message>> {
        let [t, a, u, c] = scope.key_parts();
        let sql = format!(
            "SELECT {} FROM extraction_queue q JOIN messages m ON m.tenant = q.tenant AND m.id = q.message_id \
             WHERE q.tenant = $1 AND q.agent = $2 AND q.user_id = $3 AND q.chat = $4 ORDER BY q.seq LIMIT $5 OFFSET $6",
            message_columns()
        );
        self.read("chat messages", t, |tx| {
            tx.query(&sql, &[&t, &a, &u, &c, &(limit as i64), &(offset as i64)])?.iter().map(super::message).collect()
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
                "UPDATE chat_progress SET memo_covered = $6, \
                 memo_gaps = memo_gaps + CASE WHEN $7::text IS NULL THEN 0 ELSE 1 END, \
                 last_error = coalesce($7, last_error) WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4 \
                 AND memo_covered = $5 AND messages >= $6"
            }
            ChatCursor::Episode => {
                "UPDATE chat_progress SET episode_checked = $6, last_error = coalesce($7, last_error) \
                 WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4 AND episode_checked = $5 AND messages >= $6"
            }
        };
        self.write("advance chat cursor", t, |tx| {
            Ok(tx.execute(sql, &[&t, &a, &u, &c, &(from as i64), &(to as i64), &gap])? == 1)
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
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages WHERE tenant = $1 AND agent = $2 AND user_id = $3 \
             AND at >= $4 AND at < $5 ORDER BY at, seq LIMIT $6"
        );
        self.read("user messages", t, |tx| {
            tx.query(&sql, &[&t, &a, &u, &ms(from), &ms(to), &(limit as i64)])?.iter().map(super::message).collect()
        })
    }
}
