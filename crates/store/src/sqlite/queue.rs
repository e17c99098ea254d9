//! The background-work queue on SQLite: the shared statements of [`crate::sql::queue`], run on
//! the writer for changes (one IMMEDIATE transaction each) and on a reader otherwise.

use chrono::{DateTime, Utc};
use mnemo_core::{Message, MessageId, Scope};
use rusqlite::{Transaction, params, params_from_iter};

use super::SqliteStore;
use super::rows::{execute, query, query_opt};
use crate::error::{Result, StoreError};
use crate::messages::archive;
use crate::plan::queue::{self as plan, Settling};
use crate::queue::{ChatCursor, ChatProgress, Queue, QueueState, Queued, Settlement};
use crate::rows::{Value, decode, ms, ms_opt};
use crate::sql::{Dialect, queue as sql};

fn recount(tx: &Transaction<'_>, [t, a, u, c]: [&str; 4]) -> Result<()> {
    execute(tx, "recount queue", sql::RECOUNT, params![t, a, u, c]).map(drop)
}

impl Queue for SqliteStore {
    fn enqueue(&self, scope: &Scope, messages: &[MessageId], extract: bool, at: DateTime<Utc>) -> Result<usize> {
        let Some(reg) = plan::register(scope, messages, extract, at) else { return Ok(0) };
        let [t, a, u, c] = reg.chat;
        self.write("enqueue", |tx| {
            let mut insert = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO extraction_queue (tenant, agent, user_id, chat, message_id, state, queued_at) \
                     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE EXISTS (SELECT 1 FROM messages WHERE tenant = ?1 \
                     AND agent = ?2 AND user_id = ?3 AND chat = ?4 AND id = ?5)",
                )
                .map_err(StoreError::sql("enqueue"))?;
            let mut added = 0;
            for id in reg.messages {
                added += insert
                    .execute(params![t, a, u, c, id.as_str(), reg.state.as_str(), ms(reg.at)])
                    .map_err(StoreError::sql("enqueue"))?;
            }
            if added > 0 {
                execute(tx, "enqueue", sql::COUNT_REGISTERED, params![t, a, u, c, added as i64, ms(reg.at)])?;
                recount(tx, reg.chat)?;
            }
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
        let every = plan::memo_threshold(memo_every);
        self.read(|conn| {
            let args = params![ms(now), every, ms(active_since), limit as i64];
            query(conn, "chats with work", &sql::chats_with_work(), args, |r| decode::progress(r))
        })
    }

    fn chat_progress(&self, scope: &Scope) -> Result<Option<ChatProgress>> {
        let [t, a, u, c] = scope.key_parts();
        self.read(|conn| {
            query_opt(conn, "chat progress", &sql::chat_progress(), params![t, a, u, c], |r| decode::progress(r))
        })
    }

    fn claim_chat(&self, scope: &Scope, now: DateTime<Utc>, until: DateTime<Utc>) -> Result<bool> {
        let [t, a, u, c] = scope.key_parts();
        self.write("claim chat", |tx| {
            Ok(execute(tx, "claim chat", sql::CLAIM, params![t, a, u, c, ms(until), ms(now)])? == 1)
        })
    }

    fn release_chat(&self, scope: &Scope) -> Result<()> {
        let [t, a, u, c] = scope.key_parts();
        self.write("release chat", |tx| execute(tx, "release chat", sql::RELEASE, params![t, a, u, c]).map(drop))
    }

    fn queued(&self, scope: &Scope, state: QueueState, due_by: DateTime<Utc>, limit: usize) -> Result<Vec<Queued>> {
        let [t, a, u, c] = scope.key_parts();
        let args = params![t, a, u, c, state.as_str(), ms(due_by), limit as i64];
        self.read(|conn| query(conn, "queued messages", &sql::queued(Dialect::Sqlite), args, |r| decode::queued(r)))
    }

    fn settle(&self, scope: &Scope, messages: &[MessageId], outcome: &Settlement) -> Result<()> {
        let Some(Settling { chat, messages, row }) = plan::settle(scope, messages, outcome) else { return Ok(()) };
        let [t, a, u, c] = chat;
        let mut args: Vec<Value> = vec![t.into(), a.into(), u.into(), c.into(), row.state.as_str().into()];
        args.extend([
            Value::BigInt(row.attempts.map(i64::from)),
            ms_opt(row.retry_at).into(),
            row.error.map(str::to_string).into(),
            row.fallback.into(),
        ]);
        args.extend(messages.iter().map(|m| Value::from(m.as_str())));
        self.write("settle batch", |tx| {
            execute(tx, "settle batch", &sql::settle(Dialect::Sqlite, messages.len()), params_from_iter(&args))?;
            if let Some(e) = row.error {
                execute(tx, "settle batch", sql::KEEP_ERROR, params![t, a, u, c, e])?;
            }
            recount(tx, chat)
        })
    }

    fn chat_messages(&self, scope: &Scope, offset: usize, limit: usize) -> Result<Vec<Message>> {
        let [t, a, u, c] = scope.key_parts();
        let args = params![t, a, u, c, limit as i64, offset as i64];
        self.read(|conn| {
            query(conn, "chat messages", &sql::chat_messages(Dialect::Sqlite), args, |r| decode::message(r))
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
        let args = params![t, a, u, c, from as i64, to as i64, gap];
        self.write("advance chat cursor", |tx| Ok(execute(tx, "advance chat cursor", sql::advance(cursor), args)? == 1))
    }

    fn user_messages(
        &self,
        scope: &Scope,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        let Some([t, a, u, _]) = archive(scope) else { return Ok(Vec::new()) };
        let args = params![t, a, u, ms(from), ms(to), limit as i64];
        self.read(|conn| {
            query(conn, "user messages", &sql::user_messages(Dialect::Sqlite), args, |r| decode::message(r))
        })
    }
}
