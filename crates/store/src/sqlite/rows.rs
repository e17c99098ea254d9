//! SQLite's side of the shared rows: [`Row`] over rusqlite's rows, [`Value`] bound as its
//! parameters, the statement helpers every module runs its shared SQL through, and what only
//! this backend stores (vector blobs, partition tokens).

use std::str::FromStr;

use rusqlite::types::{ToSqlOutput, Type};
use rusqlite::{Connection, Params, ToSql};

use crate::error::{Result, StoreError};
use crate::rows::{Row, Value, corrupt};
use crate::sql::Dialect;

impl Row for rusqlite::Row<'_> {
    fn text(&self, idx: usize) -> Result<String> {
        self.get(idx).map_err(|e| corrupt("row", idx, e))
    }

    fn opt_text(&self, idx: usize) -> Result<Option<String>> {
        self.get(idx).map_err(|e| corrupt("row", idx, e))
    }

    fn int(&self, idx: usize) -> Result<i64> {
        self.get(idx).map_err(|e| corrupt("row", idx, e))
    }

    fn opt_int(&self, idx: usize) -> Result<Option<i64>> {
        self.get(idx).map_err(|e| corrupt("row", idx, e))
    }

    fn real(&self, idx: usize) -> Result<f32> {
        self.get::<_, f64>(idx).map(|v| v as f32).map_err(|e| corrupt("row", idx, e))
    }

    fn flag(&self, idx: usize) -> Result<bool> {
        self.get(idx).map_err(|e| corrupt("row", idx, e))
    }

    fn vector(&self, idx: usize) -> Result<Option<Vec<f32>>> {
        let blob: Option<Vec<u8>> = self.get(idx).map_err(|e| corrupt("row", idx, e))?;
        Ok(blob.map(|b| blob_vector(&b)))
    }
}

impl ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            Value::Text(v) => v.to_sql(),
            Value::BigInt(v) => v.to_sql(),
            Value::Int(v) => v.to_sql(),
            Value::Real(v) => Ok(ToSqlOutput::from(f64::from(*v))),
            Value::Bool(v) => v.to_sql(),
        }
    }
}

/// Rows of the shared statement `sql` (`$N` placeholders), each decoded by `decode`.
pub(crate) fn query<T>(
    conn: &Connection,
    op: &'static str,
    sql: &str,
    params: impl Params,
    decode: impl Fn(&rusqlite::Row<'_>) -> Result<T>,
) -> Result<Vec<T>> {
    let mut stmt = conn.prepare_cached(&Dialect::Sqlite.sql(sql)).map_err(StoreError::sql(op))?;
    let mut rows = stmt.query(params).map_err(StoreError::sql(op))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(StoreError::sql(op))? {
        out.push(decode(row)?);
    }
    Ok(out)
}

/// The first row of the shared statement `sql`, decoded, if there is one.
pub(crate) fn query_opt<T>(
    conn: &Connection,
    op: &'static str,
    sql: &str,
    params: impl Params,
    decode: impl Fn(&rusqlite::Row<'_>) -> Result<T>,
) -> Result<Option<T>> {
    let mut stmt = conn.prepare_cached(&Dialect::Sqlite.sql(sql)).map_err(StoreError::sql(op))?;
    let mut rows = stmt.query(params).map_err(StoreError::sql(op))?;
    rows.next().map_err(StoreError::sql(op))?.map(decode).transpose()
}

/// Runs the shared statement `sql`; returns the rows it changed.
pub(crate) fn execute(conn: &Connection, op: &'static str, sql: &str, params: impl Params) -> Result<usize> {
    conn.prepare_cached(&Dialect::Sqlite.sql(sql)).and_then(|mut s| s.execute(params)).map_err(StoreError::sql(op))
}

/// Writes one planned row through its shared column list.
pub(crate) fn insert(conn: &Connection, op: &'static str, row: &crate::rows::encode::Insert) -> Result<usize> {
    let sql = Dialect::Sqlite.insert_of(row.table, row.columns);
    conn.prepare_cached(&sql)
        .and_then(|mut s| s.execute(rusqlite::params_from_iter(&row.values)))
        .map_err(StoreError::sql(op))
}

/// Reads a text column and parses it, inside rusqlite's own row callbacks.
pub(crate) fn parse<T: FromStr>(row: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<T>
where
    T::Err: std::fmt::Display,
{
    let s: String = row.get(idx)?;
    s.parse().map_err(|e: T::Err| rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, e.to_string().into()))
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
