//! The background-work queue on PostgreSQL: the shared statements of [`crate::sql::queue`] under
//! row-level security; the cross-tenant walk over `chat_progress` runs as the read-only jobs
//! role.

use chrono::{DateTime, Utc};
use mnemo_core::{Message, MessageId, Scope};

use super::pool::Tx;
use super::{Actor, PostgresStore};
use crate::error::Result;
use crate::messages::archive;
use crate::plan::queue::{self as plan, Settling};
use crate::queue::{ChatCursor, ChatProgress, Queue, QueueState, Queued, Settlement};
use crate::rows::{decode, ms, ms_opt};
use crate::sql::{Dialect, queue as sql};

fn recount(tx: &mut Tx<'_>, [t, a, u, c]: [&str; 4]) -> Result<()> {
    tx.execute(sql::RECOUNT, &[&t, &a, &u, &c]).map(drop)
}

impl Queue for PostgresStore {
    fn enqueue(&self, scope: &Scope, messages: &[MessageId], extract: bool, at: DateTime<Utc>) -> Result<usize> {
        let Some(reg) = plan::register(scope, messages, extract, at) else { return Ok(0) };
        let [t, a, u, c] = reg.chat;
        let ids: Vec<&str> = reg.messages.iter().map(MessageId::as_str).collect();
        self.write("enqueue", t, |tx| {
            // Registration order is the order of the ids given, as on SQLite.
            let added = tx.execute(
                "INSERT INTO extraction_queue (tenant, agent, user_id, chat, message_id, state, queued_at) \
                 SELECT $1, $2, $3, $4, i.id, $6, $7 FROM unnest($5::text[]) WITH ORDINALITY AS i (id, n) \
                 WHERE EXISTS (SELECT 1 FROM messages m WHERE m.tenant = $1 AND m.agent = $2 AND m.user_id = $3 \
                   AND m.chat = $4 AND m.id = i.id) ORDER BY i.n \
                 ON CONFLICT (tenant, user_id, chat, message_id) DO NOTHING",
                &[&t, &a, &u, &c, &ids, &reg.state.as_str(), &ms(reg.at)],
            )?;
            if added > 0 {
                tx.execute(sql::COUNT_REGISTERED, &[&t, &a, &u, &c, &(added as i64), &ms(reg.at)])?;
                recount(tx, reg.chat)?;
            }
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
        let every = plan::memo_threshold(memo_every);
        self.tx("chats with work", Actor::Jobs, true, |tx| {
            let rows = tx.query(&sql::chats_with_work(), &[&ms(now), &every, &ms(active_since), &(limit as i64)])?;
            rows.iter().map(decode::progress).collect()
        })
    }

    fn chat_progress(&self, scope: &Scope) -> Result<Option<ChatProgress>> {
        let [t, a, u, c] = scope.key_parts();
        self.read("chat progress", t, |tx| {
            tx.query_opt(&sql::chat_progress(), &[&t, &a, &u, &c])?.as_ref().map(decode::progress).transpose()
        })
    }

    fn claim_chat(&self, scope: &Scope, now: DateTime<Utc>, until: DateTime<Utc>) -> Result<bool> {
        let [t, a, u, c] = scope.key_parts();
        self.write("claim chat", t, |tx| Ok(tx.execute(sql::CLAIM, &[&t, &a, &u, &c, &ms(until), &ms(now)])? == 1))
    }

    fn release_chat(&self, scope: &Scope) -> Result<()> {
        let [t, a, u, c] = scope.key_parts();
        self.write("release chat", t, |tx| tx.execute(sql::RELEASE, &[&t, &a, &u, &c]).map(drop))
    }

    fn queued(&self, scope: &Scope, state: QueueState, due_by: DateTime<Utc>, limit: usize) -> Result<Vec<Queued>> {
        let [t, a, u, c] = scope.key_parts();
        let sql = sql::queued(Dialect::Postgres);
        self.read("queued messages", t, |tx| {
            let rows = tx.query(&sql, &[&t, &a, &u, &c, &state.as_str(), &ms(due_by), &(limit as i64)])?;
            rows.iter().map(decode::queued).collect()
        })
    }

    fn settle(&self, scope: &Scope, messages: &[MessageId], outcome: &Settlement) -> Result<()> {
        let Some(Settling { chat, messages, row }) = plan::settle(scope, messages, outcome) else { return Ok(()) };
        let [t, a, u, c] = chat;
        // `attempts` is an `integer` column here.
        let attempts = row.attempts.map(|n| n as i32);
        let ids: Vec<&str> = messages.iter().map(MessageId::as_str).collect();
        let sql = sql::settle(Dialect::Postgres, ids.len());
        self.write("settle batch", t, |tx| {
            let args: [&(dyn postgres::types::ToSql + Sync); 10] = [
                &t,
                &a,
                &u,
                &c,
                &row.state.as_str(),
                &attempts,
                &ms_opt(row.retry_at),
                &row.error,
                &row.fallback,
                &ids,
            ];
            tx.execute(&sql, &args)?;
            if let Some(e) = row.error {
                tx.execute(sql::KEEP_ERROR, &[&t, &a, &u, &c, &e])?;
            }
            recount(tx, chat)
        })
    }

    fn chat_messages(&self, scope: &Scope, offset: usize, limit: usize) -> Result<Vec<Message>> {
        let [t, a, u, c] = scope.key_parts();
        let sql = sql::chat_messages(Dialect::Postgres);
        self.read("chat messages", t, |tx| {
            tx.query(&sql, &[&t, &a, &u, &c, &(limit as i64), &(offset as i64)])?.iter().map(decode::message).collect()
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
        self.write("advance chat cursor", t, |tx| {
            Ok(tx.execute(sql::advance(cursor), &[&t, &a, &u, &c, &(from as i64), &(to as i64), &gap])? == 1)
        })
    }

    fn user_messages(
        &self,
        scope: &Scope,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<Message>> {
        let Some([t, a, u, _]) = archive(scope) else { return Ok(Vec::new()) };
        let sql = sql::user_messages(Dialect::Postgres);
        self.read("user messages", t, |tx| {
            tx.query(&sql, &[&t, &a, &u, &ms(from), &ms(to), &(limit as i64)])?.iter().map(decode::message).collect()
        })
    }
}
