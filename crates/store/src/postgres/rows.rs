//! PostgreSQL's side of the shared rows: [`Row`] over the driver's rows, [`Value`]s as its
//! parameters, and pgvector's text form of a vector.

use postgres::types::{FromSql, ToSql, Type};

use crate::error::Result;
use crate::rows::{Row, Value, corrupt};

/// Reads a column, reporting a type mismatch as a corrupt row.
pub(crate) fn get<'a, T: FromSql<'a>>(row: &'a postgres::Row, idx: usize) -> Result<T> {
    row.try_get(idx).map_err(|e| corrupt("row", idx, e))
}

impl Row for postgres::Row {
    fn text(&self, idx: usize) -> Result<String> {
        get(self, idx)
    }

    fn opt_text(&self, idx: usize) -> Result<Option<String>> {
        get(self, idx)
    }

    fn int(&self, idx: usize) -> Result<i64> {
        self.opt_int(idx)?.ok_or_else(|| corrupt("row", idx, "null"))
    }

    fn opt_int(&self, idx: usize) -> Result<Option<i64>> {
        match *self.columns()[idx].type_() {
            Type::INT2 => Ok(get::<Option<i16>>(self, idx)?.map(i64::from)),
            Type::INT4 => Ok(get::<Option<i32>>(self, idx)?.map(i64::from)),
            _ => get(self, idx),
        }
    }

    fn real(&self, idx: usize) -> Result<f32> {
        match *self.columns()[idx].type_() {
            Type::FLOAT8 => get::<f64>(self, idx).map(|v| v as f32),
            _ => get(self, idx),
        }
    }

    fn flag(&self, idx: usize) -> Result<bool> {
        get(self, idx)
    }

    fn vector(&self, idx: usize) -> Result<Option<Vec<f32>>> {
        get(self, idx)
    }
}

/// The driver's view of a value: its natural Rust type, so PostgreSQL checks it against the
/// column's type.
pub(crate) fn param(v: &Value) -> &(dyn ToSql + Sync) {
    match v {
        Value::Text(v) => v,
        Value::BigInt(v) => v,
        Value::Int(v) => v,
        Value::Real(v) => v,
        Value::Bool(v) => v,
    }
}

/// The driver's view of several values.
pub(crate) fn params(values: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    values.iter().map(param).collect()
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

/// Vectors as a `vector[]` literal (`{"[1,2]","[3,4]"}`), NULL for none: a message's passages.
pub(crate) fn vector_array_text(vectors: &[Vec<f32>]) -> Option<String> {
    (!vectors.is_empty()).then(|| {
        let items: Vec<String> = vectors.iter().map(|v| format!("\"{}\"", vector_text(v))).collect();
        format!("{{{}}}", items.join(","))
    })
}
