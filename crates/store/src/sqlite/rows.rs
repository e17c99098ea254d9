//! Row <-> domain conversions, and the scope predicate every query uses.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use mnemo_core::{Memory, MemoryId, MessageId, Provenance, Scope, Status, StatusKind};
use rusqlite::Row;
use rusqlite::types::Type;

/// Columns of a memory row, in the order [`memory`] reads them. Aliased `m`.
pub(crate) const MEMORY_COLUMNS: &str = "m.id, m.tenant, m.agent, m.user_id, m.chat, m.kind, m.content, m.key, \
    m.value, m.confidence, m.salience, m.pinned, m.surface, m.status, m.superseded_by, m.due_at, m.valid_from, \
    m.valid_until, m.sources, m.source_chat, m.extractor, m.extractor_version, m.content_hash, m.created_at, \
    m.updated_at, m.last_accessed, m.last_surfaced, m.access_count, m.distinct_sessions, m.reinforcements, \
    m.expires_at, m.sensitivity";

/// The visibility predicate of [`Scope::can_see`] in SQL, over parameters ?1..?4 = key parts.
///
/// Placed in the WHERE clause of every read, before any ORDER BY, so rows of other scopes can
/// never shape a candidate set.
pub(crate) const VISIBLE: &str =
    "m.tenant = ?1 AND m.agent IN ('', ?2) AND m.user_id IN ('', ?3) AND m.chat IN ('', ?4)";

/// Milliseconds since the epoch: sortable, compact, the same on every backend.
pub(crate) fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

/// Optional timestamp to milliseconds.
pub(crate) fn ms_opt(t: Option<DateTime<Utc>>) -> Option<i64> {
    t.map(ms)
}

fn bad(idx: usize, e: impl std::fmt::Display) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, e.to_string().into())
}

/// Reads a text column and parses it.
pub(crate) fn parse<T: FromStr>(row: &Row<'_>, idx: usize) -> rusqlite::Result<T>
where
    T::Err: std::fmt::Display,
{
    let s: String = row.get(idx)?;
    s.parse().map_err(|e| bad(idx, e))
}

/// Reads a millisecond column as a time.
pub(crate) fn time(row: &Row<'_>, idx: usize) -> rusqlite::Result<DateTime<Utc>> {
    let v: i64 = row.get(idx)?;
    DateTime::from_timestamp_millis(v).ok_or_else(|| bad(idx, format!("timestamp {v} out of range")))
}

/// Reads an optional millisecond column.
pub(crate) fn time_opt(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<DateTime<Utc>>> {
    let v: Option<i64> = row.get(idx)?;
    v.map(|v| DateTime::from_timestamp_millis(v).ok_or_else(|| bad(idx, format!("timestamp {v} out of range"))))
        .transpose()
}

/// Reads a JSON array of message ids.
pub(crate) fn message_ids(row: &Row<'_>, idx: usize) -> rusqlite::Result<Vec<MessageId>> {
    let s: String = row.get(idx)?;
    serde_json::from_str(&s).map_err(|e| bad(idx, e))
}

/// Encodes message ids as a JSON array.
pub(crate) fn ids_json(ids: &[MessageId]) -> String {
    serde_json::to_string(ids).expect("ids serialise")
}

/// Reads a scope from four columns.
pub(crate) fn scope(row: &Row<'_>, first: usize) -> rusqlite::Result<Scope> {
    let p: [String; 4] = [row.get(first)?, row.get(first + 1)?, row.get(first + 2)?, row.get(first + 3)?];
    Scope::from_key_parts(&p[0], &p[1], &p[2], &p[3]).map_err(|e| bad(first, e))
}

/// Reads a status from its kind column and the successor column.
pub(crate) fn status(row: &Row<'_>, kind_idx: usize, by_idx: usize) -> rusqlite::Result<Status> {
    let kind: StatusKind = parse(row, kind_idx)?;
    let by: Option<String> = row.get(by_idx)?;
    let by = by.map(|s| s.parse::<MemoryId>()).transpose().map_err(|e| bad(by_idx, e))?;
    Status::from_parts(kind, by).ok_or_else(|| bad(kind_idx, "superseded without superseded_by"))
}

/// Decodes a memory row selected with [`MEMORY_COLUMNS`].
pub(crate) fn memory(row: &Row<'_>) -> rusqlite::Result<Memory> {
    let source_chat: Option<String> = row.get(19)?;
    Ok(Memory {
        id: parse(row, 0)?,
        owner: scope(row, 1)?,
        kind: parse(row, 5)?,
        content: row.get(6)?,
        key: row.get(7)?,
        value: row.get(8)?,
        confidence: row.get::<_, f64>(9)? as f32,
        salience: row.get::<_, f64>(10)? as f32,
        pinned: row.get(11)?,
        surface: parse(row, 12)?,
        status: status(row, 13, 14)?,
        due_at: time_opt(row, 15)?,
        valid_from: time_opt(row, 16)?,
        valid_until: time_opt(row, 17)?,
        provenance: Provenance {
            sources: message_ids(row, 18)?,
            chat: source_chat.map(|c| c.parse()).transpose().map_err(|e| bad(19, e))?,
            extractor: row.get(20)?,
            extractor_version: row.get(21)?,
        },
        content_hash: row.get(22)?,
        created_at: time(row, 23)?,
        updated_at: time(row, 24)?,
        last_accessed: time_opt(row, 25)?,
        last_surfaced: time_opt(row, 26)?,
        access_count: row.get(27)?,
        distinct_sessions: row.get(28)?,
        reinforcements: row.get(29)?,
        expires_at: time_opt(row, 30)?,
        sensitivity: parse(row, 31)?,
    })
}

/// Encodes a vector as little-endian f32 bytes.
pub(crate) fn vector_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Decodes a little-endian f32 blob.
pub(crate) fn blob_vector(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// The FTS token naming one ownership partition: a hash of its four key parts.
///
/// Always `zp` and 16 hex digits: a fixed length, so the lexical index can glue a stem behind
/// it and still tell the two apart (see `lexicon`).
pub(crate) fn partition_token(parts: [&str; 4]) -> String {
    // FNV-1a 64: stable across platforms and releases, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain(std::iter::once(0xff)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("zp{h:016x}")
}

/// The partition token of archival recall over a user's messages with one agent: across all
/// chats when `chat` is empty, within that chat otherwise. A message is indexed under both.
pub(crate) fn message_partition(tenant: &str, agent: &str, user: &str, chat: &str) -> String {
    partition_token([tenant, agent, user, &format!("\u{1}messages\u{1}{chat}")])
}
