//! SQL text both backends run: written once with PostgreSQL's `$N` placeholders and rewritten
//! for SQLite by [`Dialect::sql`]. Only what the dialects spell differently (insertion order,
//! bytewise collation, casts) is a [`Dialect`] method; statements whose logic differs live with
//! their backend.

pub(crate) mod documents;
pub(crate) mod memories;
pub(crate) mod messages;
pub(crate) mod observations;
pub(crate) mod policies;
pub(crate) mod queue;
pub(crate) mod traces;
pub(crate) mod transfer;
pub(crate) mod users;

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The SQL dialect of a backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Dialect {
    /// SQLite: `?N` placeholders, `rowid` order.
    Sqlite,
    /// PostgreSQL: `$N` placeholders, `seq` identity columns.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Postgres,
}

impl Dialect {
    /// `text`, written with `$N` placeholders, in this dialect (`?N` for SQLite; nothing else
    /// in the shared statements differs by placeholder).
    pub(crate) fn sql(self, text: &str) -> Cow<'_, str> {
        match self {
            Dialect::Postgres => Cow::Borrowed(text),
            Dialect::Sqlite => {
                let mut out = String::with_capacity(text.len());
                let mut chars = text.chars().peekable();
                while let Some(c) = chars.next() {
                    let placeholder = c == '$' && chars.peek().is_some_and(char::is_ascii_digit);
                    out.push(if placeholder { '?' } else { c });
                }
                Cow::Owned(out)
            }
        }
    }

    /// The placeholder of parameter `i` (from 1).
    pub(crate) fn param(self, i: usize) -> String {
        match self {
            Dialect::Sqlite => format!("?{i}"),
            Dialect::Postgres => format!("${i}"),
        }
    }

    /// The column that orders a table's rows by insertion (`rowid`; PostgreSQL's tables carry an
    /// identity column `seq` for it).
    pub(crate) fn seq(self) -> &'static str {
        match self {
            Dialect::Sqlite => "rowid",
            Dialect::Postgres => "seq",
        }
    }

    /// The membership test of a list of `n` values from parameter `first` on: SQLite binds one
    /// parameter per value, PostgreSQL one array.
    pub(crate) fn any(self, first: usize, n: usize) -> String {
        match self {
            Dialect::Sqlite => {
                format!("IN ({})", (first..first + n).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", "))
            }
            Dialect::Postgres => format!("= ANY(${first})"),
        }
    }

    /// The collation suffix that orders text bytewise, as SQLite does by default.
    pub(crate) fn bytewise(self) -> &'static str {
        match self {
            Dialect::Sqlite => "",
            Dialect::Postgres => " COLLATE \"C\"",
        }
    }

    /// An INSERT of one row into `table`. A column written `name::type` binds its parameter
    /// with that cast (PostgreSQL's vectors arrive as text).
    pub(crate) fn insert<'c>(self, table: &str, columns: impl IntoIterator<Item = &'c str>) -> String {
        let (names, params): (Vec<&str>, Vec<String>) = columns
            .into_iter()
            .enumerate()
            .map(|(i, col)| match col.split_once("::") {
                Some((name, cast)) => (name, format!("{}::{cast}", self.param(i + 1))),
                None => (col, self.param(i + 1)),
            })
            .unzip();
        format!("INSERT INTO {table} ({}) VALUES ({})", names.join(", "), params.join(", "))
    }

    /// [`Dialect::insert`] of a column list fixed at compile time, built once per thread and
    /// dialect: bulk loads insert hundreds of thousands of rows through a handful of statements.
    pub(crate) fn insert_of(self, table: &'static str, columns: &'static [&'static str]) -> Rc<str> {
        thread_local! {
            static BUILT: RefCell<HashMap<(Dialect, usize), Rc<str>>> = RefCell::new(HashMap::new());
        }
        BUILT.with(|built| {
            let key = (self, columns.as_ptr() as usize);
            built.borrow_mut().entry(key).or_insert_with(|| self.insert(table, columns.iter().copied()).into()).clone()
        })
    }

    /// [`Dialect::insert`] that skips a row whose key is taken.
    pub(crate) fn insert_or_ignore<'c>(self, table: &str, columns: impl IntoIterator<Item = &'c str>) -> String {
        format!("{} ON CONFLICT DO NOTHING", self.insert(table, columns))
    }
}

/// The visibility predicate of [`Scope::can_see`](mnemo_core::Scope::can_see) over parameters
/// 1 to 4 (the scope's key parts) and the alias `m`. Placed in the WHERE clause of every read,
/// before any ORDER BY, so rows of other scopes can never shape a candidate set (PostgreSQL's
/// row-level security filters by tenant underneath it as well).
pub(crate) const VISIBLE: &str =
    "m.tenant = $1 AND m.agent IN ('', $2) AND m.user_id IN ('', $3) AND m.chat IN ('', $4)";

/// Bumps the version of a partition (parameters 1 to 4) that gained or lost recallable rows, so
/// caches of other processes reload it; returns the version this statement's snapshot saw
/// (NULL when there was no row) and the version after, which this handle's vector cache
/// follows, as SQLite's bump reports them (`sqlite::apply::bump_partition`). A concurrent bump
/// committed in between makes the two differ by more than one: the caller then reports no
/// version before, and the cache reloads the part. A new row starts at the current time in
/// microseconds, as SQLite's does: its key may have had a row before (deleted by an erasure)
/// whose versions another process still caches, and that row cannot have counted past the time
/// of its last write, so a version never repeats.
#[cfg(feature = "postgres")]
pub(crate) const BUMP_PARTITION: &str = "WITH before AS (SELECT version FROM partitions \
     WHERE tenant = $1 AND agent = $2 AND user_id = $3 AND chat = $4) \
     INSERT INTO partitions (tenant, agent, user_id, chat, version) \
     VALUES ($1, $2, $3, $4, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint) \
     ON CONFLICT (tenant, agent, user_id, chat) DO UPDATE SET version = partitions.version + 1 \
     RETURNING (SELECT version FROM before), version";

#[cfg(test)]
mod tests {
    use super::Dialect;

    #[test]
    fn sqlite_placeholders_are_numbered_like_postgres_ones() {
        assert_eq!(Dialect::Sqlite.sql("a = $1 AND b IN ('$', $12)"), "a = ?1 AND b IN ('$', ?12)");
        assert_eq!(Dialect::Postgres.sql("a = $1"), "a = $1");
    }

    #[test]
    fn inserts_bind_every_column_in_order_with_its_cast() {
        assert_eq!(
            Dialect::Postgres.insert("t", ["a", "v::text::vector"]),
            "INSERT INTO t (a, v) VALUES ($1, $2::text::vector)"
        );
        assert_eq!(
            Dialect::Sqlite.insert_or_ignore("t", ["a"]),
            "INSERT INTO t (a) VALUES (?1) ON CONFLICT DO NOTHING"
        );
    }
}
