//! Row <-> domain conversions for PostgreSQL, and the scope predicate every query uses.
//!
//! Times are stored as milliseconds since the epoch (`bigint`) exactly as the SQLite backend
//! stores them, so both backends round a timestamp the same way and sort it the same way.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use mnemo_core::{Memory, MessageId, Provenance, Scope, Status, StatusKind};
use postgres::Row;
use postgres::types::FromSql;

use crate::error::{Result, StoreError};

/// Columns of a memory row, in the order [`memory`] reads them. Aliased `m`.
pub(crate) const MEMORY_COLUMNS: &str = "m.id, m.tenant, m.agent, m.user_id, m.chat, m.kind, m.content, m.key, \
    m.value, m.confidence, m.salience, m.pinned, m.surface, m.status, m.superseded_by, m.due_at, m.valid_from, \
    m.valid_until, m.sources, m.source_chat, m.extractor, m.extractor_version, m.content_hash, m.created_at, \
    m.updated_at, m.last_accessed, m.last_surfaced, m.access_count, m.distinct_sessions, m.reinforcements, \
    m.expires_at, m.sensitivity";

/// The visibility predicate of [`Scope::can_see`] in SQL, over parameters $1..$4 = key parts.
///
/// Placed in the WHERE clause of every read, before any ORDER BY, so rows of other scopes can
/// never shape a candidate set. Row-level security filters by tenant underneath it as well.
pub(crate) const VISIBLE: &str =
    "m.tenant = $1 AND m.agent IN ('', $2) AND m.user_id IN ('', $3) AND m.chat IN ('', $4)";

/// Milliseconds since the epoch: sortable, compact, the same on every backend.
pub(crate) fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

/// Optional timestamp to milliseconds.
pub(crate) fn ms_opt(t: Option<DateTime<Utc>>) -> Option<i64> {
    t.map(ms)
}

fn corrupt(what: &'static str, idx: usize, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt { what, detail: format!("column {idx}: {e}") }
}

/// Reads a column, reporting a type mismatch as a corrupt row.
pub(crate) fn get<'a, T: FromSql<'a>>(row: &'a Row, idx: usize) -> Result<T> {
    row.try_get(idx).map_err(|e| corrupt("row", idx, e))
}

/// Reads a text column and parses it.
pub(crate) fn parse<T: FromStr>(row: &Row, idx: usize) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    let s: &str = get(row, idx)?;
    s.parse().map_err(|e| corrupt("value", idx, e))
}

/// Reads a millisecond column as a time.
pub(crate) fn time(row: &Row, idx: usize) -> Result<DateTime<Utc>> {
    let v: i64 = get(row, idx)?;
    DateTime::from_timestamp_millis(v).ok_or_else(|| corrupt("timestamp", idx, format!("{v} out of range")))
}

/// Reads an optional millisecond column.
pub(crate) fn time_opt(row: &Row, idx: usize) -> Result<Option<DateTime<Utc>>> {
    let v: Option<i64> = get(row, idx)?;
    v.map(|v| DateTime::from_timestamp_millis(v).ok_or_else(|| corrupt("timestamp", idx, format!("{v} out of range"))))
        .transpose()
}

/// Reads a counter stored as `bigint`.
fn count(row: &Row, idx: usize) -> Result<u32> {
    let v: i64 = get(row, idx)?;
    u32::try_from(v).map_err(|e| corrupt("counter", idx, e))
}

/// Decodes a JSON array of message ids.
pub(crate) fn message_ids(row: &Row, idx: usize) -> Result<Vec<MessageId>> {
    let s: &str = get(row, idx)?;
    serde_json::from_str(s).map_err(|e| corrupt("message ids", idx, e))
}

/// Encodes message ids as a JSON array.
pub(crate) fn ids_json(ids: &[MessageId]) -> String {
    serde_json::to_string(ids).expect("ids serialise")
}

/// Reads a scope from four columns.
pub(crate) fn scope(row: &Row, first: usize) -> Result<Scope> {
    let p: [&str; 4] = [get(row, first)?, get(row, first + 1)?, get(row, first + 2)?, get(row, first + 3)?];
    Scope::from_key_parts(p[0], p[1], p[2], p[3]).map_err(|e| corrupt("scope", first, e))
}

/// Reads a status from its kind column and the successor column.
pub(crate) fn status(row: &Row, kind_idx: usize, by_idx: usize) -> Result<Status> {
    let kind: StatusKind = parse(row, kind_idx)?;
    let by: Option<&str> = get(row, by_idx)?;
    let by = by.map(str::parse).transpose().map_err(|e| corrupt("superseded_by", by_idx, e))?;
    Status::from_parts(kind, by).ok_or_else(|| corrupt("status", kind_idx, "superseded without superseded_by"))
}

/// Decodes a memory row selected with [`MEMORY_COLUMNS`].
pub(crate) fn memory(row: &Row) -> Result<Memory> {
    let source_chat: Option<&str> = get(row, 19)?;
    Ok(Memory {
        id: parse(row, 0)?,
        owner: scope(row, 1)?,
        kind: parse(row, 5)?,
        content: get(row, 6)?,
        key: get(row, 7)?,
        value: get(row, 8)?,
        confidence: get(row, 9)?,
        salience: get(row, 10)?,
        pinned: get(row, 11)?,
        surface: parse(row, 12)?,
        status: status(row, 13, 14)?,
        due_at: time_opt(row, 15)?,
        valid_from: time_opt(row, 16)?,
        valid_until: time_opt(row, 17)?,
        provenance: Provenance {
            sources: message_ids(row, 18)?,
            chat: source_chat.map(str::parse).transpose().map_err(|e| corrupt("source chat", 19, e))?,
            extractor: get(row, 20)?,
            extractor_version: get(row, 21)?,
        },
        content_hash: get(row, 22)?,
        created_at: time(row, 23)?,
        updated_at: time(row, 24)?,
        last_accessed: time_opt(row, 25)?,
        last_surfaced: time_opt(row, 26)?,
        access_count: count(row, 27)?,
        distinct_sessions: count(row, 28)?,
        reinforcements: count(row, 29)?,
        expires_at: time_opt(row, 30)?,
        sensitivity: parse(row, 31)?,
    })
}

/// pgvector's text form of a vector, `[x,y,...]`; Rust prints the shortest text that reads
/// back as the same `f32`, so nothing is lost on the way.
pub(crate) fn vector_text(v: &[f32]) -> String {
    let mut s = String::with_capacity(v.len() * 12 + 2);
    s.push('[');
    for (i, x) in v.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&x.to_string());
    }
    s.push(']');
    s
}
