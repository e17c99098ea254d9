//! Rows from domain values, once for every backend: what a live write or an import stores in
//! each column. A backend binds the [`Value`]s; the statement comes from
//! [`Dialect::insert`](crate::sql::Dialect::insert) over the same column list.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use mnemo_core::{Document, HistoryEntry, Link, Memory, Message, Observation, Policy, TenantId, UserId, UserState};

use super::{Value, json, ms, ms_opt};
use crate::queue::ChatProgress;
use crate::transfer::{QueueRow, TraceRow};
use crate::users::DeletionEvent;

/// A row to insert: its table, its columns and their values, in the same order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Insert {
    /// The table.
    pub(crate) table: &'static str,
    /// Its columns, as [`Dialect::insert`](crate::sql::Dialect::insert) takes them.
    pub(crate) columns: &'static [&'static str],
    /// One value per column.
    pub(crate) values: Vec<Value>,
}

/// The columns of a memory row: every one the domain type has, then what the store derives
/// from them (`constraints`, the domains a constraint in the content bears on).
pub(crate) const MEMORY: &[&str] = &[
    "id",
    "tenant",
    "agent",
    "user_id",
    "chat",
    "kind",
    "content",
    "key",
    "value",
    "confidence",
    "salience",
    "pinned",
    "surface",
    "status",
    "superseded_by",
    "due_at",
    "valid_from",
    "valid_until",
    "sources",
    "source_chat",
    "extractor",
    "extractor_version",
    "content_hash",
    "created_at",
    "updated_at",
    "last_accessed",
    "last_surfaced",
    "access_count",
    "distinct_sessions",
    "reinforcements",
    "expires_at",
    "sensitivity",
    "rule",
    "metadata",
    "constraints",
];

/// A memory row exactly as given: a live insert and an import write it through the same list.
pub(crate) fn memory(m: &Memory) -> Vec<Value> {
    let [t, a, u, c] = m.owner.key_parts();
    vec![
        m.id.to_string().into(),
        t.into(),
        a.into(),
        u.into(),
        c.into(),
        m.kind.as_str().into(),
        m.content.clone().into(),
        m.key.clone().into(),
        m.value.clone().into(),
        Value::Real(m.confidence),
        Value::Real(m.salience),
        m.pinned.into(),
        m.surface.as_str().into(),
        m.status.kind().as_str().into(),
        m.status.superseded_by().map(|x| x.to_string()).into(),
        ms_opt(m.due_at).into(),
        ms_opt(m.valid_from).into(),
        ms_opt(m.valid_until).into(),
        json(&m.provenance.sources).into(),
        m.provenance.chat.as_ref().map(|c| c.to_string()).into(),
        m.provenance.extractor.clone().into(),
        m.provenance.extractor_version.clone().into(),
        m.content_hash.clone().into(),
        ms(m.created_at).into(),
        ms(m.updated_at).into(),
        ms_opt(m.last_accessed).into(),
        ms_opt(m.last_surfaced).into(),
        i64::from(m.access_count).into(),
        i64::from(m.distinct_sessions).into(),
        i64::from(m.reinforcements).into(),
        ms_opt(m.expires_at).into(),
        m.sensitivity.as_str().into(),
        m.provenance.rule.clone().into(),
        m.metadata.as_ref().map(json).into(),
        Value::Int(i32::from(constraint_bits(&m.content))),
    ]
}

/// The `constraints` column of a memory with this content: how `Memories::constraints` finds a
/// user's allergies and conditions without searching their words. Also what a migration fills
/// older rows with, so every row's column comes from the same function.
pub(crate) fn constraint_bits(content: &str) -> u8 {
    mnemo_core::safety::constraint_domains(content).bits()
}

/// The columns of a message row, withheld flag last.
pub(crate) const MESSAGE: &[&str] = &["id", "tenant", "agent", "user_id", "chat", "role", "content", "at", "withheld"];

/// A message row with its withheld flag.
pub(crate) fn message(m: &Message, withheld: bool) -> Vec<Value> {
    let [t, a, u, c] = m.scope.key_parts();
    vec![
        m.id.as_str().into(),
        t.into(),
        a.into(),
        u.into(),
        c.into(),
        m.role.as_str().into(),
        m.content.clone().into(),
        ms(m.at).into(),
        withheld.into(),
    ]
}

/// One history row: the encoding of statuses and sources every reader of history expects.
pub(crate) fn history(tenant: &TenantId, h: &HistoryEntry) -> Insert {
    let status = |s: &mnemo_core::Status| json(s);
    Insert {
        table: "history",
        columns: &["tenant", "memory_id", "at", "event", "from_status", "to_status", "reason", "sources"],
        values: vec![
            tenant.as_str().into(),
            h.memory.to_string().into(),
            ms(h.at).into(),
            h.event.as_str().into(),
            h.from_status.as_ref().map(status).into(),
            status(&h.to_status).into(),
            h.reason.clone().into(),
            json(&h.sources).into(),
        ],
    }
}

/// One typed edge.
pub(crate) fn link(tenant: &TenantId, l: &Link) -> Insert {
    Insert {
        table: "links",
        columns: &["tenant", "from_id", "to_id", "kind", "at"],
        values: vec![
            tenant.as_str().into(),
            l.from.to_string().into(),
            l.to.to_string().into(),
            l.kind.as_str().into(),
            ms(l.at).into(),
        ],
    }
}

/// One document without its vector (each backend stores vectors its own way).
pub(crate) fn document(d: &Document) -> Insert {
    let [tenant, agent, user, _] = d.owner.key_parts();
    Insert {
        table: "documents",
        columns: &[
            "id",
            "tenant",
            "agent",
            "user_id",
            "kind",
            "source",
            "gist",
            "overview",
            "text",
            "tokens",
            "created_at",
        ],
        values: vec![
            d.id.to_string().into(),
            tenant.into(),
            agent.into(),
            user.into(),
            d.kind.as_str().into(),
            d.source.clone().into(),
            d.gist.clone().into(),
            d.overview.clone().into(),
            d.text.clone().into(),
            (d.tokens as i64).into(),
            ms(d.created_at).into(),
        ],
    }
}

/// One observation without its vector (each backend binds vectors its own way).
pub(crate) fn observation(o: &Observation) -> Insert {
    let [tenant, agent, user, chat] = o.owner.key_parts();
    Insert {
        table: "observations",
        columns: &["id", "tenant", "agent", "user_id", "chat", "tool", "args_summary", "outcome", "text", "at"],
        values: vec![
            o.id.to_string().into(),
            tenant.into(),
            agent.into(),
            user.into(),
            chat.into(),
            o.tool.clone().into(),
            o.args_summary.clone().into(),
            o.outcome.as_str().into(),
            o.text.clone().into(),
            ms(o.at).into(),
        ],
    }
}

/// One policy version (the agent-wide key is the empty agent).
pub(crate) fn policy(p: &Policy) -> Insert {
    Insert {
        table: "policies",
        columns: &["tenant", "agent", "key", "version", "text", "value", "effective_from", "effective_until"],
        values: vec![
            p.tenant.as_str().into(),
            p.agent.as_ref().map_or("", |a| a.as_str()).into(),
            p.key.clone().into(),
            Value::Int(p.version as i32),
            p.text.clone().into(),
            p.value.to_string().into(),
            ms(p.effective_from).into(),
            ms_opt(p.effective_until).into(),
        ],
    }
}

/// One trace envelope as stored: its JSON body, and the surfaced ids the over-reference guard
/// reads without parsing the body.
pub(crate) fn trace(t: &TraceRow) -> Insert {
    let [tn, a, u, c] = t.scope.key_parts();
    Insert {
        table: "traces",
        columns: &["turn_id", "tenant", "agent", "user_id", "chat", "op", "at", "surfaced", "body"],
        values: vec![
            t.turn_id.clone().into(),
            tn.into(),
            a.into(),
            u.into(),
            c.into(),
            t.op.clone().into(),
            ms(t.at).into(),
            json(&t.surfaced).into(),
            t.body.clone().into(),
        ],
    }
}

/// What an erasure leaves: no user id, no content.
pub(crate) fn deletion(tenant: &TenantId, event: &DeletionEvent, counts: &BTreeMap<String, u64>) -> Insert {
    Insert {
        table: "deletions",
        columns: &["tenant", "subject", "at", "counts", "digest"],
        values: vec![
            tenant.as_str().into(),
            event.subject.clone().into(),
            ms(event.at).into(),
            json(counts).into(),
            event.digest.clone().into(),
        ],
    }
}

/// One queue row, every column.
pub(crate) fn queued(q: &QueueRow, attempts: i32) -> Insert {
    let [t, a, u, c] = q.scope.key_parts();
    Insert {
        table: "extraction_queue",
        columns: &[
            "tenant",
            "agent",
            "user_id",
            "chat",
            "message_id",
            "state",
            "attempts",
            "retry_at",
            "last_error",
            "fallback",
            "queued_at",
        ],
        values: vec![
            t.into(),
            a.into(),
            u.into(),
            c.into(),
            q.message.as_str().into(),
            q.state.as_str().into(),
            Value::Int(attempts),
            ms_opt(q.retry_at).into(),
            q.last_error.clone().into(),
            json(&q.fallback).into(),
            ms(q.queued_at).into(),
        ],
    }
}

/// One chat's progress row with its claim, every column.
pub(crate) fn progress(p: &ChatProgress, claimed_until: Option<DateTime<Utc>>) -> Insert {
    let [t, a, u, c] = p.scope.key_parts();
    let n = |v: usize| Value::from(v as i64);
    Insert {
        table: "chat_progress",
        columns: &[
            "tenant",
            "agent",
            "user_id",
            "chat",
            "messages",
            "pending",
            "retrying",
            "retry_at",
            "last_message_at",
            "memo_covered",
            "memo_gaps",
            "episode_checked",
            "last_error",
            "claimed_until",
        ],
        values: vec![
            t.into(),
            a.into(),
            u.into(),
            c.into(),
            n(p.messages),
            n(p.pending),
            n(p.retrying),
            ms_opt(p.retry_at).into(),
            ms(p.last_message_at).into(),
            n(p.memo_covered),
            n(p.memo_gaps),
            n(p.episode_checked),
            p.last_error.clone().into(),
            ms_opt(claimed_until).into(),
        ],
    }
}

/// One user's privacy switch.
pub(crate) fn user_state(tenant: &TenantId, user: &UserId, state: UserState, at: DateTime<Utc>) -> Insert {
    Insert {
        table: "user_states",
        columns: &["tenant", "user_id", "state", "updated_at"],
        values: vec![tenant.as_str().into(), user.as_str().into(), state.as_str().into(), ms(at).into()],
    }
}
