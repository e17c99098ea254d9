//! The two FTS5 tables of lexical recall: `memory_fts` (active memories) and `message_fts`
//! (messages not withheld). Every row is written and every search made through here, so a row's
//! body (partition-prefixed stems, see [`lexicon`]) is built in one place.

use mnemo_core::common::{SAMPLE, TermSpread};
use mnemo_core::{MemoryId, MessageId, Scope};
use rusqlite::{Connection, OptionalExtension, params};

use super::lexicon;
use super::rows::{message_partition, parse, partition_token};

/// Indexes one active memory under its owner's partition; `text` is its search text
/// (`Memory::search_text`: the content plus the words its key stands for).
pub(crate) fn index_memory(conn: &Connection, rowid: i64, owner: [&str; 4], text: &str) -> rusqlite::Result<()> {
    let part = partition_token(owner);
    conn.prepare_cached("INSERT INTO memory_fts (rowid, content) VALUES (?1, ?2)")?
        .execute(params![rowid, lexicon::document(&[part.as_str()], text)])?;
    Ok(())
}

/// Takes a memory out of the lexical index (it stopped being active).
pub(crate) fn unindex_memory(conn: &Connection, rowid: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM memory_fts WHERE rowid = ?1")?.execute([rowid])?;
    Ok(())
}

/// Indexes one message under both partitions archival recall searches: its user's (every chat
/// with that agent) and its chat's. `scope` is the message's tenant, agent, user and chat.
pub(crate) fn index_message(conn: &Connection, rowid: i64, scope: [&str; 4], content: &str) -> rusqlite::Result<()> {
    let [t, a, u, c] = scope;
    let (user, chat) = (message_partition(t, a, u, ""), message_partition(t, a, u, c));
    conn.prepare_cached("INSERT INTO message_fts (rowid, content) VALUES (?1, ?2)")?
        .execute(params![rowid, lexicon::document(&[user.as_str(), chat.as_str()], content)])?;
    Ok(())
}

/// Takes a message out of the lexical index (it was withheld).
pub(crate) fn unindex_message(conn: &Connection, rowid: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM message_fts WHERE rowid = ?1")?.execute([rowid])?;
    Ok(())
}

/// Empties both tables and indexes again every active memory and every message not withheld:
/// how a migration that changes the bodies brings old rows along. Rows are streamed, not
/// collected, so a large store does not need its text in memory at once.
pub(crate) fn rebuild(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch("DELETE FROM memory_fts; DELETE FROM message_fts;")?;
    let mut memories = conn.prepare(
        "SELECT rowid, tenant, agent, user_id, chat, content, key FROM memories WHERE status = 'active' ORDER BY rowid",
    )?;
    let mut rows = memories.query([])?;
    while let Some(r) = rows.next()? {
        let (t, a, u, c): (String, String, String, String) = (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?);
        let (content, key): (String, Option<String>) = (r.get(5)?, r.get(6)?);
        let text = mnemo_core::text::search_text(&content, key.as_deref());
        index_memory(conn, r.get(0)?, [&t, &a, &u, &c], &text)?;
    }
    let mut messages = conn.prepare(
        "SELECT rowid, tenant, agent, user_id, chat, content FROM messages WHERE withheld = 0 ORDER BY rowid",
    )?;
    let mut rows = messages.query([])?;
    while let Some(r) = rows.next()? {
        let (t, a, u, c): (String, String, String, String) = (r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?);
        index_message(conn, r.get(0)?, [&t, &a, &u, &c], &r.get::<_, String>(5)?)?;
    }
    conn.execute_batch(
        "INSERT INTO memory_fts (memory_fts) VALUES ('optimize'); \
         INSERT INTO message_fts (message_fts) VALUES ('optimize');",
    )
}

/// Active memories visible to `scope` matching any of `terms`, with their BM25 score (higher is
/// better), best first. Each doclist bm25 reads is one partition's, so the cost and the ranking
/// depend on the scope's partitions only, never on how big the rest of the store is.
pub(crate) fn search_memories(
    conn: &Connection,
    scope: &Scope,
    terms: &[String],
    limit: usize,
) -> rusqlite::Result<Vec<(MemoryId, f32)>> {
    let partitions = populated_partitions(conn, scope)?;
    match bounded_query(conn, "memory_fts", &partitions, terms)? {
        Some(expr) => ranked(conn, ("memory_fts", "memories"), &expr, limit),
        None => Ok(Vec::new()),
    }
}

/// Most rows one lexical query ranks.
///
/// `bm25()` costs a lookup of the row's length for every row the expression matches, so a query
/// whose words are common in a very large user's memories (100,000 of them) ranked tens of
/// thousands of rows: 20 ms, as much as the rest of recall. Below this bound nothing changes;
/// above it, the commonest terms are left out of the expression (see [`within_bound`]). A term
/// that many rows share weighs little in BM25 (its IDF is low) and the vector half still ranks
/// those rows, so recall loses little; a user with fewer rows than this never sees a difference.
const MAX_RANKED_ROWS: usize = 2_000;

/// The MATCH expression of `terms` over `partitions` in `index`, bounded to about
/// [`MAX_RANKED_ROWS`] matching rows. One bounded count of the whole expression settles the
/// usual case (a user of ordinary size: one statement, however many terms); past the bound, each
/// term's rows are counted (each count stops past the bound, so the check never walks a long
/// doclist to its end) and the rarest terms kept while their rows fit.
fn bounded_query(
    conn: &Connection,
    index: &str,
    partitions: &[String],
    terms: &[String],
) -> rusqlite::Result<Option<String>> {
    let stemmings = lexicon::Stemming::for_query(terms);
    let Some(all) = lexicon::query(partitions, terms, &stemmings) else { return Ok(None) };
    if matching_rows(conn, index, &all)? <= MAX_RANKED_ROWS {
        return Ok(Some(all));
    }
    let mut counted = Vec::with_capacity(terms.len());
    for term in terms {
        if let Some(expr) = lexicon::query(partitions, std::slice::from_ref(term), &stemmings) {
            counted.push((matching_rows(conn, index, &expr)?, term.clone()));
        }
    }
    Ok(lexicon::query(partitions, &within_bound(counted, MAX_RANKED_ROWS), &stemmings))
}

/// Rows of `index` matching `expr`, counted up to one past [`MAX_RANKED_ROWS`].
fn matching_rows(conn: &Connection, index: &str, expr: &str) -> rusqlite::Result<usize> {
    conn.prepare_cached(&format!("SELECT count(*) FROM (SELECT 1 FROM {index} WHERE {index} MATCH ?1 LIMIT ?2)"))?
        .query_row(params![expr, (MAX_RANKED_ROWS + 1) as i64], |r| r.get::<_, i64>(0))
        .map(|n| n as usize)
}

/// The terms to rank, rarest first, while their rows add up to at most `bound` (a row matching
/// two terms counts twice, so the sum errs on the side of fewer rows). Empty when even the rarest
/// term matches more than `bound` rows: such a query has no lexical signal worth its cost.
fn within_bound<T>(mut counted: Vec<(usize, T)>, bound: usize) -> Vec<T> {
    counted.sort_by_key(|(n, _)| *n);
    let mut total = 0;
    let mut kept = Vec::new();
    for (n, term) in counted {
        total += n;
        if total > bound {
            break;
        }
        kept.push(term);
    }
    kept
}

/// The ids of the rows of `table` whose entry in `index` matches `expr`, best BM25 first, with
/// scores made "higher is better".
fn ranked<T: std::str::FromStr>(
    conn: &Connection,
    (index, table): (&str, &str),
    expr: &str,
    limit: usize,
) -> rusqlite::Result<Vec<(T, f32)>>
where
    T::Err: std::fmt::Display,
{
    conn.prepare_cached(&format!(
        "SELECT m.id, f.score FROM (SELECT rowid, bm25({index}) AS score FROM {index} \
         WHERE {index} MATCH ?1 ORDER BY score LIMIT ?2) f JOIN {table} m ON m.rowid = f.rowid \
         ORDER BY f.score, m.id"
    ))?
    .query_map(params![expr, limit as i64], |r| Ok((parse::<T>(r, 0)?, -(r.get::<_, f64>(1)? as f32))))?
    .collect()
}

/// Tokens of the partitions visible to `scope` (tenant × {none, agent} × {none, user} × {none,
/// chat}) that have ever held a memory. Every writer of memories (apply, import) records the
/// partition in `partitions`, as the vector cache also relies on; skipping the empty ones spares
/// each query term a lookup in every index segment per absent partition (a user scope naming a
/// chat usually has one populated partition of four).
fn populated_partitions(conn: &Connection, scope: &Scope) -> rusqlite::Result<Vec<String>> {
    let [t, a, u, c] = scope.key_parts();
    conn.prepare_cached(
        "SELECT agent, user_id, chat FROM partitions \
         WHERE tenant = ?1 AND agent IN ('', ?2) AND user_id IN ('', ?3) AND chat IN ('', ?4)",
    )?
    .query_map(params![t, a, u, c], |r| {
        let (agent, user, chat): (String, String, String) = (r.get(0)?, r.get(1)?, r.get(2)?);
        Ok(partition_token([t, &agent, &user, &chat]))
    })?
    .collect()
}

/// Messages indexed under `partition` (see [`message_partition`]) matching any of `terms`, with
/// their BM25 score (higher is better), best first.
pub(crate) fn search_messages(
    conn: &Connection,
    partition: &str,
    terms: &[String],
    limit: usize,
) -> rusqlite::Result<Vec<(MessageId, f32)>> {
    match bounded_query(conn, "message_fts", &[partition.to_string()], terms)? {
        Some(expr) => ranked(conn, ("message_fts", "messages"), &expr, limit),
        None => Ok(Vec::new()),
    }
}

/// How widely each of `terms` is spread over the latest [`SAMPLE`] unwithheld messages of
/// `owner`'s archive (`partition` is its token): the rowid where that stretch starts is read
/// once from the user's index, and every count stops there, so the cost is bounded by the
/// sample whatever the user's size.
pub(crate) fn term_spread(
    conn: &Connection,
    owner: [&str; 4],
    partition: &str,
    terms: &[String],
) -> rusqlite::Result<TermSpread> {
    let [t, a, u, c] = owner;
    const WITHIN: &str =
        "FROM messages WHERE tenant = ?1 AND agent = ?2 AND user_id = ?3 AND ?4 IN ('', chat) AND withheld = 0";
    let from: i64 = conn
        .prepare_cached(&format!("SELECT rowid {WITHIN} ORDER BY rowid DESC LIMIT 1 OFFSET ?5"))?
        .query_row(params![t, a, u, c, (SAMPLE - 1) as i64], |r| r.get(0))
        .optional()?
        .unwrap_or(i64::MIN);
    let messages: i64 = conn
        .prepare_cached(&format!("SELECT count(*) FROM (SELECT 1 {WITHIN} AND rowid >= ?5)"))?
        .query_row(params![t, a, u, c, from], |r| r.get(0))?;
    let mut containing = Vec::with_capacity(terms.len());
    let stemmings = lexicon::Stemming::for_query(terms);
    for term in terms {
        let n: i64 = match lexicon::query(&[partition], std::slice::from_ref(term), &stemmings) {
            Some(expr) => conn
                .prepare_cached("SELECT count(*) FROM message_fts WHERE message_fts MATCH ?1 AND rowid >= ?2")?
                .query_row(params![expr, from], |r| r.get(0))?,
            None => 0,
        };
        containing.push(n as usize);
    }
    Ok(TermSpread { messages: messages as usize, containing })
}

#[cfg(test)]
mod tests {
    use super::within_bound;

    #[test]
    fn the_rarest_terms_are_kept_while_their_rows_fit_the_bound() {
        let counted = vec![(900, "walk"), (40, "lisbon"), (1_500, "today"), (300, "sister")];
        assert_eq!(within_bound(counted.clone(), 2_000), ["lisbon", "sister", "walk"]);
        assert_eq!(within_bound(counted.clone(), 340), ["lisbon", "sister"]);
        assert_eq!(within_bound(counted.clone(), 5_000), ["lisbon", "sister", "walk", "today"]);
        assert!(within_bound(counted, 39).is_empty());
        assert!(within_bound(Vec::<(usize, &str)>::new(), 10).is_empty());
    }
}
