//! Rows as both backends store them: the column lists, the values a write binds and the reader
//! a decode takes. A table's layout is written here once; a backend only binds [`Value`]s to its
//! driver and implements [`Row`] over its driver's rows.
//!
//! Times are milliseconds since the epoch on every backend, so both round a timestamp and sort
//! it the same way; id lists, statuses and counts are JSON text.

pub(crate) mod decode;
pub(crate) mod encode;

use std::str::FromStr;

use chrono::{DateTime, Utc};
use mnemo_core::{MemoryId, Scope, Status, StatusKind};
use serde::de::DeserializeOwned;

use crate::error::{Result, StoreError};

/// Columns of a memory row, in the order [`decode::memory`] reads them. Aliased `m`.
pub(crate) const MEMORY_COLUMNS: &str = "m.id, m.tenant, m.agent, m.user_id, m.chat, m.kind, m.content, m.key, \
    m.value, m.confidence, m.salience, m.pinned, m.surface, m.status, m.superseded_by, m.due_at, m.valid_from, \
    m.valid_until, m.sources, m.source_chat, m.extractor, m.extractor_version, m.content_hash, m.created_at, \
    m.updated_at, m.last_accessed, m.last_surfaced, m.access_count, m.distinct_sessions, m.reinforcements, \
    m.expires_at, m.sensitivity, m.rule, m.metadata";

/// Columns of a message row, in the order [`decode::message`] reads them.
pub(crate) const MESSAGE_COLUMNS: &str = "id, tenant, agent, user_id, chat, role, content, at";

/// Columns of a chat's progress row, in the order [`decode::progress`] reads them.
pub(crate) const PROGRESS_COLUMNS: &str = "tenant, agent, user_id, chat, messages, pending, retrying, retry_at, \
     last_message_at, memo_covered, memo_gaps, last_error, episode_checked";

/// [`MESSAGE_COLUMNS`] read through the alias `m`.
pub(crate) fn message_columns_of_m() -> String {
    MESSAGE_COLUMNS.split(", ").map(|col| format!("m.{col}")).collect::<Vec<_>>().join(", ")
}

/// One column value of a write. Typed even when null, because PostgreSQL checks a parameter's
/// type against its column's; SQLite stores each as its natural affinity.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    /// `text`.
    Text(Option<String>),
    /// `bigint`: times, counters.
    BigInt(Option<i64>),
    /// `integer`: policy versions, extraction attempts.
    Int(i32),
    /// `real`.
    Real(f32),
    /// `boolean` (an integer 0 or 1 on SQLite).
    Bool(bool),
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(Some(v.to_string()))
    }
}

impl From<String> for Value {
    fn from(v: String) -> Self {
        Value::Text(Some(v))
    }
}

impl From<Option<String>> for Value {
    fn from(v: Option<String>) -> Self {
        Value::Text(v)
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::BigInt(Some(v))
    }
}

impl From<Option<i64>> for Value {
    fn from(v: Option<i64>) -> Self {
        Value::BigInt(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Bool(v)
    }
}

/// Milliseconds since the epoch: sortable, compact, the same on every backend.
pub(crate) fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

/// Optional timestamp to milliseconds.
pub(crate) fn ms_opt(t: Option<DateTime<Utc>>) -> Option<i64> {
    t.map(ms)
}

/// A list (message ids, memory ids, counts) as the JSON text the rows hold.
pub(crate) fn json<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).expect("stored lists serialise")
}

/// A decoded column that does not hold what its table says it holds.
pub(crate) fn corrupt(what: &'static str, idx: usize, e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt { what, detail: format!("column {idx}: {e}") }
}

/// A result row of either backend, read by column index. The primitives are the backend's; the
/// provided readers turn them into domain values the same way everywhere.
pub(crate) trait Row {
    /// A non-null text column.
    fn text(&self, idx: usize) -> Result<String>;
    /// A nullable text column.
    fn opt_text(&self, idx: usize) -> Result<Option<String>>;
    /// A non-null integer column, of any width.
    fn int(&self, idx: usize) -> Result<i64>;
    /// A nullable integer column, of any width.
    fn opt_int(&self, idx: usize) -> Result<Option<i64>>;
    /// A non-null floating-point column.
    fn real(&self, idx: usize) -> Result<f32>;
    /// A boolean column.
    fn flag(&self, idx: usize) -> Result<bool>;
    /// A nullable vector column, in whatever form the backend stores vectors.
    fn vector(&self, idx: usize) -> Result<Option<Vec<f32>>>;

    /// A text column parsed into its domain type.
    fn parse<T: FromStr>(&self, idx: usize) -> Result<T>
    where
        T::Err: std::fmt::Display,
        Self: Sized,
    {
        self.text(idx)?.parse().map_err(|e| corrupt("value", idx, e))
    }

    /// A millisecond column as a time.
    fn time(&self, idx: usize) -> Result<DateTime<Utc>>
    where
        Self: Sized,
    {
        let v = self.int(idx)?;
        DateTime::from_timestamp_millis(v).ok_or_else(|| corrupt("timestamp", idx, format!("{v} out of range")))
    }

    /// A nullable millisecond column.
    fn time_opt(&self, idx: usize) -> Result<Option<DateTime<Utc>>>
    where
        Self: Sized,
    {
        self.opt_int(idx)?
            .map(|v| {
                DateTime::from_timestamp_millis(v).ok_or_else(|| corrupt("timestamp", idx, format!("{v} out of range")))
            })
            .transpose()
    }

    /// A JSON text column (`what` names it in the error).
    fn json<T: DeserializeOwned>(&self, idx: usize, what: &'static str) -> Result<T>
    where
        Self: Sized,
    {
        serde_json::from_str(&self.text(idx)?).map_err(|e| corrupt(what, idx, e))
    }

    /// A counter that is never negative: a negative one is refused rather than read as zero.
    fn count<T: TryFrom<i64>>(&self, idx: usize) -> Result<T>
    where
        T::Error: std::fmt::Display,
        Self: Sized,
    {
        let v = self.int(idx)?;
        T::try_from(v).map_err(|e| corrupt("counter", idx, format!("{v}: {e}")))
    }

    /// A scope from four columns (tenant, agent, user, chat).
    fn scope(&self, first: usize) -> Result<Scope>
    where
        Self: Sized,
    {
        let p = [self.text(first)?, self.text(first + 1)?, self.text(first + 2)?, self.text(first + 3)?];
        Scope::from_key_parts(&p[0], &p[1], &p[2], &p[3]).map_err(|e| corrupt("scope", first, e))
    }

    /// A status from its kind column and the successor column.
    fn status(&self, kind_idx: usize, by_idx: usize) -> Result<Status>
    where
        Self: Sized,
    {
        let kind: StatusKind = self.parse(kind_idx)?;
        let by = self.opt_text(by_idx)?.map(|s| s.parse::<MemoryId>()).transpose();
        let by = by.map_err(|e| corrupt("superseded_by", by_idx, e))?;
        Status::from_parts(kind, by).ok_or_else(|| corrupt("status", kind_idx, "superseded without superseded_by"))
    }
}
