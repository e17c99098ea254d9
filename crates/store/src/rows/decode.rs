//! Domain values from rows, once for every backend: each decoder reads the columns its table's
//! column list (or the query it names) selects, in that order.

use std::collections::BTreeMap;

use mnemo_core::archive::Adjacent;
use mnemo_core::{HistoryEntry, Link, Memory, Message, MessageId, Policy, Provenance, Status};

use super::{Row, corrupt};
use crate::memories::Embedding;
use crate::messages::MessageVectors;
use crate::queue::{ChatProgress, Queued};
use crate::transfer::{QueueRow, Record, TraceRow};
use crate::users::DeletionEvent;

/// A memory selected with [`MEMORY_COLUMNS`](super::MEMORY_COLUMNS).
pub(crate) fn memory<R: Row>(r: &R) -> crate::Result<Memory> {
    Ok(Memory {
        id: r.parse(0)?,
        owner: r.scope(1)?,
        kind: r.parse(5)?,
        content: r.text(6)?,
        key: r.opt_text(7)?,
        value: r.opt_text(8)?,
        confidence: r.real(9)?,
        salience: r.real(10)?,
        pinned: r.flag(11)?,
        surface: r.parse(12)?,
        status: r.status(13, 14)?,
        due_at: r.time_opt(15)?,
        valid_from: r.time_opt(16)?,
        valid_until: r.time_opt(17)?,
        provenance: Provenance {
            sources: r.json(18, "message ids")?,
            chat: r.opt_text(19)?.map(|c| c.parse()).transpose().map_err(|e| corrupt("source chat", 19, e))?,
            extractor: r.text(20)?,
            extractor_version: r.text(21)?,
            rule: r.opt_text(32)?,
        },
        content_hash: r.text(22)?,
        created_at: r.time(23)?,
        updated_at: r.time(24)?,
        last_accessed: r.time_opt(25)?,
        last_surfaced: r.time_opt(26)?,
        access_count: r.count(27)?,
        distinct_sessions: r.count(28)?,
        reinforcements: r.count(29)?,
        expires_at: r.time_opt(30)?,
        sensitivity: r.parse(31)?,
        metadata: r
            .opt_text(33)?
            .map(|t| serde_json::from_str(&t))
            .transpose()
            .map_err(|e| corrupt("metadata", 33, e))?,
    })
}

/// A message selected with [`MESSAGE_COLUMNS`](super::MESSAGE_COLUMNS).
pub(crate) fn message<R: Row>(r: &R) -> crate::Result<Message> {
    Ok(Message { id: r.parse(0)?, scope: r.scope(1)?, role: r.parse(5)?, content: r.text(6)?, at: r.time(7)? })
}

/// A neighbour of archival hit `hit`, selected by [`crate::sql::messages::adjacent`]: a
/// message, then whether it came after the hit.
pub(crate) fn adjacent<R: Row>(r: &R, hit: &MessageId) -> crate::Result<Adjacent> {
    Ok(Adjacent { hit: hit.clone(), message: message(r)?, after: r.flag(8)? })
}

/// A chat's progress selected with [`PROGRESS_COLUMNS`](super::PROGRESS_COLUMNS).
pub(crate) fn progress<R: Row>(r: &R) -> crate::Result<ChatProgress> {
    // Counts are recomputed from the queue in the transaction that changes it; a negative one
    // cannot happen, and reads as zero rather than failing the worker.
    progress_with(r, |i| r.int(i).map(|v| v.max(0) as usize))
}

/// A chat's progress, its counts read by `count`.
fn progress_with<R: Row>(r: &R, count: impl Fn(usize) -> crate::Result<usize>) -> crate::Result<ChatProgress> {
    Ok(ChatProgress {
        scope: r.scope(0)?,
        messages: count(4)?,
        pending: count(5)?,
        retrying: count(6)?,
        retry_at: r.time_opt(7)?,
        last_message_at: r.time(8)?,
        memo_covered: count(9)?,
        memo_gaps: count(10)?,
        last_error: r.opt_text(11)?,
        episode_checked: count(12)?,
    })
}

/// A queued message: the message's columns, then `state, attempts, retry_at, last_error,
/// fallback` of its queue row.
pub(crate) fn queued<R: Row>(r: &R) -> crate::Result<Queued> {
    Ok(Queued {
        message: message(r)?,
        state: r.parse(8)?,
        attempts: r.int(9)?.max(0) as u32,
        retry_at: r.time_opt(10)?,
        last_error: r.opt_text(11)?,
        fallback_memories: r.json(12, "queue fallback memories")?,
    })
}

/// A history row from `memory_id, at, event, from_status, to_status, reason, sources` at
/// column `first` on.
pub(crate) fn history<R: Row>(r: &R, first: usize) -> crate::Result<HistoryEntry> {
    Ok(HistoryEntry {
        memory: r.parse(first)?,
        at: r.time(first + 1)?,
        event: r.parse(first + 2)?,
        from_status: r
            .opt_text(first + 3)?
            .map(|s| serde_json::from_str::<Status>(&s))
            .transpose()
            .map_err(|e| corrupt("history status", first + 3, e))?,
        to_status: r.json(first + 4, "history status")?,
        reason: r.text(first + 5)?,
        sources: r.json(first + 6, "message ids")?,
    })
}

/// A link from `from_id, to_id, kind, at` at column `first` on.
pub(crate) fn link<R: Row>(r: &R, first: usize) -> crate::Result<Link> {
    Ok(Link { from: r.parse(first)?, to: r.parse(first + 1)?, kind: r.parse(first + 2)?, at: r.time(first + 3)? })
}

/// How a policy's JSON value that does not parse is read.
#[derive(Clone, Copy)]
pub(crate) enum PolicyValue {
    /// As null: a request still gets its policies (the text is what binds the agent).
    Lenient,
    /// As an error: a copy never silently changes a row.
    Strict,
}

/// A document selected with [`COLUMNS`](crate::sql::documents::COLUMNS).
pub(crate) fn document<R: Row>(r: &R) -> crate::Result<mnemo_core::Document> {
    Ok(mnemo_core::Document {
        id: r.parse(0)?,
        owner: r.scope(1)?,
        kind: r.parse(5)?,
        source: r.text(6)?,
        gist: r.text(7)?,
        overview: r.text(8)?,
        text: r.text(9)?,
        tokens: r.count(10)?,
        created_at: r.time(11)?,
    })
}

/// An observation selected with [`COLUMNS`](crate::sql::observations::COLUMNS).
pub(crate) fn observation<R: Row>(r: &R) -> crate::Result<mnemo_core::Observation> {
    Ok(mnemo_core::Observation {
        id: r.parse(0)?,
        owner: r.scope(1)?,
        tool: r.text(5)?,
        args_summary: r.text(6)?,
        outcome: r.parse(7)?,
        text: r.opt_text(8)?,
        at: r.time(9)?,
    })
}

/// A policy from `tenant, agent, key, version, text, value, effective_from, effective_until`.
pub(crate) fn policy<R: Row>(r: &R, value: PolicyValue) -> crate::Result<Policy> {
    let agent = r.text(1)?;
    let json: serde_json::Result<serde_json::Value> = serde_json::from_str(&r.text(5)?);
    Ok(Policy {
        tenant: r.parse(0)?,
        agent: (!agent.is_empty()).then(|| agent.parse()).transpose().map_err(|e| corrupt("policy agent", 1, e))?,
        key: r.text(2)?,
        version: r.count(3)?,
        text: r.text(4)?,
        value: match value {
            PolicyValue::Lenient => json.unwrap_or(serde_json::Value::Null),
            PolicyValue::Strict => json.map_err(|e| corrupt("policy value", 5, e))?,
        },
        effective_from: r.time(6)?,
        effective_until: r.time_opt(7)?,
    })
}

/// What [`plan::apply`](crate::plan::apply) needs of a stored memory, from
/// [`STORED_COLUMNS`](crate::plan::apply::STORED_COLUMNS) at column `first` on.
pub(crate) fn stored<R: Row>(r: &R, first: usize) -> crate::Result<crate::plan::apply::Stored> {
    Ok(crate::plan::apply::Stored {
        status: r.status(first, first + 1)?,
        owner: [r.text(first + 2)?, r.text(first + 3)?, r.text(first + 4)?, r.text(first + 5)?],
        sources: r.json::<Vec<MessageId>>(first + 6, "memory sources")?,
    })
}

/// The tables an export streams, in [`TABLES`](crate::transfer::TABLES) order: every one but
/// `embeddings` and `document_vectors`, whose vectors travel with their memories and documents.
pub(crate) fn exported_tables() -> impl Iterator<Item = &'static str> {
    crate::transfer::TABLES.iter().copied().filter(|t| !["embeddings", "document_vectors"].contains(t))
}

/// A row of `table`'s export query as a record. Each backend's query for a table selects the
/// columns read here: [`export_sql`](crate::sql::transfer::export_sql) where the layouts agree,
/// the backend's own for vectors and sessions.
pub(crate) fn record<R: Row>(table: &str, r: &R) -> crate::Result<Record> {
    Ok(match table {
        "messages" => Record::Message { message: message(r)?, withheld: r.flag(8)? },
        "message_embeddings" => {
            let vector = r.vector(6)?.ok_or_else(|| corrupt("message vector", 6, "null"))?;
            // Passages come back as one run of floats, each the whole vector's length.
            let passages = r.vector(7)?.unwrap_or_default();
            if vector.is_empty() || passages.len() % vector.len() != 0 {
                return Err(corrupt("message passages", 7, "not whole vectors of the message's dimension"));
            }
            let passages = passages.chunks_exact(vector.len()).map(<[f32]>::to_vec).collect();
            Record::MessageEmbedding {
                scope: r.scope(0)?,
                message: r.parse(4)?,
                vectors: MessageVectors { embedding: Embedding { model: r.text(5)?, vector }, passages },
            }
        }
        "memories" => Record::Memory {
            memory: memory(r)?,
            embedding: r.opt_text(34)?.zip(r.vector(35)?).map(|(model, vector)| Embedding { model, vector }),
        },
        "history" => Record::History { tenant: r.parse(0)?, entry: history(r, 1)? },
        "links" => Record::Link { tenant: r.parse(0)?, link: link(r, 1)? },
        "memory_sessions" => Record::Session { tenant: r.parse(0)?, memory: r.parse(1)?, session: r.text(2)? },
        "policies" => Record::Policy(policy(r, PolicyValue::Strict)?),
        "traces" => Record::Trace(TraceRow {
            turn_id: r.text(0)?,
            scope: r.scope(1)?,
            op: r.text(5)?,
            at: r.time(6)?,
            surfaced: r.json(7, "trace surfaced ids")?,
            body: r.text(8)?,
        }),
        "deletions" => Record::Deletion {
            tenant: r.parse(0)?,
            event: DeletionEvent { subject: r.text(1)?, at: r.time(2)?, digest: r.text(4)? },
            counts: r.json::<BTreeMap<String, u64>>(3, "deletion counts")?,
        },
        "extraction_queue" => Record::Queued(QueueRow {
            scope: r.scope(0)?,
            message: r.parse(4)?,
            state: r.parse(5)?,
            attempts: r.count(6)?,
            retry_at: r.time_opt(7)?,
            last_error: r.opt_text(8)?,
            fallback: r.json(9, "queue fallback memories")?,
            queued_at: r.time(10)?,
        }),
        // A copy refuses a negative count rather than copying it as zero.
        "chat_progress" => {
            Record::ChatProgress { progress: progress_with(r, |i| r.count(i))?, claimed_until: r.time_opt(13)? }
        }
        "user_states" => {
            Record::UserState { tenant: r.parse(0)?, user: r.parse(1)?, state: r.parse(2)?, updated_at: r.time(3)? }
        }
        "observations" => Record::Observation {
            observation: observation(r)?,
            embedding: r.opt_text(10)?.zip(r.vector(11)?).map(|(model, vector)| Embedding { model, vector }),
        },
        "documents" => Record::Document {
            document: document(r)?,
            embedding: r.opt_text(12)?.zip(r.vector(13)?).map(|(model, vector)| Embedding { model, vector }),
        },
        other => unreachable!("{other} is not a copied table"),
    })
}
