//! Versioned migrations, tracked in `PRAGMA user_version`; each runs in its own transaction.

use rusqlite::Connection;

use super::fts;
use crate::error::{Result, StoreError};

/// Migrations in order; index + 1 is the schema version they produce. Never edit a shipped one.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE messages (
    rowid     INTEGER PRIMARY KEY,
    tenant    TEXT NOT NULL,
    agent     TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    chat      TEXT NOT NULL,
    id        TEXT NOT NULL,
    role      TEXT NOT NULL,
    content   TEXT NOT NULL,
    at        INTEGER NOT NULL,
    UNIQUE (tenant, id)
);
CREATE INDEX messages_by_chat ON messages (tenant, user_id, chat, at);

CREATE TABLE memories (
    rowid             INTEGER PRIMARY KEY,
    id                TEXT NOT NULL UNIQUE,
    tenant            TEXT NOT NULL,
    agent             TEXT NOT NULL,
    user_id           TEXT NOT NULL,
    chat              TEXT NOT NULL,
    kind              TEXT NOT NULL,
    content           TEXT NOT NULL,
    key               TEXT,
    value             TEXT,
    confidence        REAL NOT NULL,
    salience          REAL NOT NULL,
    pinned            INTEGER NOT NULL DEFAULT 0,
    surface           TEXT NOT NULL,
    status            TEXT NOT NULL,
    superseded_by     TEXT,
    due_at            INTEGER,
    valid_from        INTEGER,
    valid_until       INTEGER,
    sources           TEXT NOT NULL,
    source_chat       TEXT,
    extractor         TEXT NOT NULL,
    extractor_version TEXT NOT NULL,
    content_hash      TEXT NOT NULL,
    created_at        INTEGER NOT NULL,
    updated_at        INTEGER NOT NULL,
    last_accessed     INTEGER,
    last_surfaced     INTEGER,
    access_count      INTEGER NOT NULL DEFAULT 0,
    distinct_sessions INTEGER NOT NULL DEFAULT 0,
    reinforcements    INTEGER NOT NULL DEFAULT 0,
    expires_at        INTEGER,
    sensitivity       TEXT NOT NULL,
    CHECK (status <> 'superseded' OR superseded_by IS NOT NULL)
);
CREATE INDEX memories_by_scope ON memories (tenant, user_id, status, kind);
CREATE INDEX memories_by_hash ON memories (tenant, content_hash);
CREATE INDEX memories_by_key ON memories (tenant, kind, key) WHERE key IS NOT NULL;
CREATE INDEX memories_keyed ON memories (tenant, user_id, status, kind) WHERE key IS NOT NULL;
CREATE INDEX memories_pinned ON memories (tenant, user_id, status) WHERE pinned = 1;
CREATE INDEX memories_due ON memories (tenant, user_id, status, due_at) WHERE kind = 'open_loop' AND due_at IS NOT NULL;

-- Lexical index over ACTIVE memories only. `part` holds the row's partition token so the scope
-- filter is part of the MATCH itself: rows of other scopes never enter the ranked set.
CREATE VIRTUAL TABLE memory_fts USING fts5 (content, part, tokenize = 'porter unicode61');

CREATE TABLE embeddings (
    memory_rowid INTEGER PRIMARY KEY REFERENCES memories (rowid),
    model        TEXT NOT NULL,
    dim          INTEGER NOT NULL,
    vector       BLOB NOT NULL
);

CREATE TABLE links (
    tenant  TEXT NOT NULL,
    from_id TEXT NOT NULL,
    to_id   TEXT NOT NULL,
    kind    TEXT NOT NULL,
    at      INTEGER NOT NULL,
    PRIMARY KEY (from_id, to_id, kind)
);
CREATE INDEX links_to ON links (to_id);

CREATE TABLE history (
    rowid       INTEGER PRIMARY KEY,
    tenant      TEXT NOT NULL,
    memory_id   TEXT NOT NULL,
    at          INTEGER NOT NULL,
    event       TEXT NOT NULL,
    from_status TEXT,
    to_status   TEXT NOT NULL,
    reason      TEXT NOT NULL,
    sources     TEXT NOT NULL
);
CREATE INDEX history_by_memory ON history (memory_id);

CREATE TABLE memory_sessions (
    memory_rowid INTEGER NOT NULL,
    session      TEXT NOT NULL,
    PRIMARY KEY (memory_rowid, session)
) WITHOUT ROWID;

CREATE TABLE policies (
    tenant          TEXT NOT NULL,
    agent           TEXT NOT NULL,
    key             TEXT NOT NULL,
    version         INTEGER NOT NULL,
    text            TEXT NOT NULL,
    value           TEXT NOT NULL,
    effective_from  INTEGER NOT NULL,
    effective_until INTEGER,
    PRIMARY KEY (tenant, agent, key, version)
);

CREATE TABLE traces (
    rowid    INTEGER PRIMARY KEY,
    turn_id  TEXT NOT NULL UNIQUE,
    tenant   TEXT NOT NULL,
    agent    TEXT NOT NULL,
    user_id  TEXT NOT NULL,
    chat     TEXT NOT NULL,
    op       TEXT NOT NULL,
    at       INTEGER NOT NULL,
    surfaced TEXT NOT NULL,
    body     TEXT NOT NULL
);
CREATE INDEX traces_by_chat ON traces (tenant, user_id, chat, op, at);

-- What an erasure leaves behind: no user id, no content (see `DeletionEvent`).
CREATE TABLE deletions (
    rowid   INTEGER PRIMARY KEY,
    tenant  TEXT NOT NULL,
    subject TEXT NOT NULL,
    at      INTEGER NOT NULL,
    counts  TEXT NOT NULL,
    digest  TEXT NOT NULL
);

-- One row per ownership partition; the version moves on every change that can alter which
-- rows of the partition are recallable, so caches of other processes know to reload.
CREATE TABLE partitions (
    tenant  TEXT NOT NULL,
    agent   TEXT NOT NULL,
    user_id TEXT NOT NULL,
    chat    TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (tenant, agent, user_id, chat)
) WITHOUT ROWID;
"#,
    // 2: archival recall over the conversation itself. The lexical index is tagged with the
    // message's (tenant, agent, user) partition token, like `memory_fts`; rows that existed
    // before this version are indexed by `backfill_message_fts`.
    r#"
CREATE VIRTUAL TABLE message_fts USING fts5 (content, part, tokenize = 'porter unicode61');
CREATE TABLE message_embeddings (
    message_rowid INTEGER PRIMARY KEY REFERENCES messages (rowid),
    model         TEXT NOT NULL,
    dim           INTEGER NOT NULL,
    vector        BLOB NOT NULL
);
CREATE INDEX messages_by_user ON messages (tenant, agent, user_id);
-- Withheld messages (see `Change::Withhold`) also leave both archival indexes.
ALTER TABLE messages ADD COLUMN withheld INTEGER NOT NULL DEFAULT 0;
"#,
    // 3: background work (LLM extraction off the request path, memos, episodes): one queue row
    // per registered message, one progress row per chat (see `crate::queue`).
    r#"
CREATE TABLE extraction_queue (
    rowid      INTEGER PRIMARY KEY,
    tenant     TEXT NOT NULL,
    agent      TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    chat       TEXT NOT NULL,
    message_id TEXT NOT NULL,
    state      TEXT NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    retry_at   INTEGER,
    last_error TEXT,
    fallback   TEXT NOT NULL DEFAULT '[]',
    queued_at  INTEGER NOT NULL,
    UNIQUE (tenant, message_id)
);
CREATE INDEX extraction_queue_by_chat ON extraction_queue (tenant, agent, user_id, chat, state);
CREATE TABLE chat_progress (
    tenant          TEXT NOT NULL,
    agent           TEXT NOT NULL,
    user_id         TEXT NOT NULL,
    chat            TEXT NOT NULL,
    messages        INTEGER NOT NULL DEFAULT 0,
    pending         INTEGER NOT NULL DEFAULT 0,
    retrying        INTEGER NOT NULL DEFAULT 0,
    retry_at        INTEGER,
    last_message_at INTEGER NOT NULL,
    memo_covered    INTEGER NOT NULL DEFAULT 0,
    memo_gaps       INTEGER NOT NULL DEFAULT 0,
    episode_checked INTEGER NOT NULL DEFAULT 0,
    last_error      TEXT,
    claimed_until   INTEGER,
    PRIMARY KEY (tenant, agent, user_id, chat)
) WITHOUT ROWID;
CREATE INDEX chat_progress_by_activity ON chat_progress (last_message_at);
"#,
    // 4: per-user privacy switches (see `mnemo_core::UserState`): a row only for a user who is
    // not active, so the common case costs one missed lookup.
    r#"
CREATE TABLE user_states (
    tenant     TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    state      TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, user_id)
) WITHOUT ROWID;
"#,
    // 5: per-partition lexical indexes. Rows are tokenized and stemmed in Rust and every token
    // carries its partition (see `lexicon`), so BM25 reads one partition's doclists instead of
    // the whole store's. The `part` column goes; `fts::rebuild` indexes every row again.
    r#"
DROP TABLE memory_fts;
DROP TABLE message_fts;
CREATE VIRTUAL TABLE memory_fts USING fts5 (content, tokenize = 'unicode61');
CREATE VIRTUAL TABLE message_fts USING fts5 (content, tokenize = 'unicode61');
"#,
    // 6: the heuristic rule that proposed a memory (`Provenance::rule`), so `mnemo show` can say
    // why it was remembered; null for the model, the API, jobs and older rows.
    r#"
ALTER TABLE memories ADD COLUMN rule TEXT;
"#,
    // 7: a message id is the client's, unique within its tenant, user and chat only: another
    // user of the tenant may send the same id without it counting as a duplicate of theirs. SQLite
    // cannot drop a UNIQUE constraint, so both tables are rebuilt; rowids are kept, as the
    // message vectors, the lexical index and the queue's order refer to them.
    r#"
CREATE TABLE messages_v7 (
    rowid     INTEGER PRIMARY KEY,
    tenant    TEXT NOT NULL,
    agent     TEXT NOT NULL,
    user_id   TEXT NOT NULL,
    chat      TEXT NOT NULL,
    id        TEXT NOT NULL,
    role      TEXT NOT NULL,
    content   TEXT NOT NULL,
    at        INTEGER NOT NULL,
    withheld  INTEGER NOT NULL DEFAULT 0,
    UNIQUE (tenant, user_id, chat, id)
);
INSERT INTO messages_v7 (rowid, tenant, agent, user_id, chat, id, role, content, at, withheld)
    SELECT rowid, tenant, agent, user_id, chat, id, role, content, at, withheld FROM messages;
DROP TABLE messages;
ALTER TABLE messages_v7 RENAME TO messages;
CREATE INDEX messages_by_chat ON messages (tenant, user_id, chat, at);
CREATE INDEX messages_by_user ON messages (tenant, agent, user_id);

CREATE TABLE extraction_queue_v7 (
    rowid      INTEGER PRIMARY KEY,
    tenant     TEXT NOT NULL,
    agent      TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    chat       TEXT NOT NULL,
    message_id TEXT NOT NULL,
    state      TEXT NOT NULL,
    attempts   INTEGER NOT NULL DEFAULT 0,
    retry_at   INTEGER,
    last_error TEXT,
    fallback   TEXT NOT NULL DEFAULT '[]',
    queued_at  INTEGER NOT NULL,
    UNIQUE (tenant, user_id, chat, message_id)
);
INSERT INTO extraction_queue_v7 SELECT rowid, tenant, agent, user_id, chat, message_id, state, attempts, retry_at,
    last_error, fallback, queued_at FROM extraction_queue;
DROP TABLE extraction_queue;
ALTER TABLE extraction_queue_v7 RENAME TO extraction_queue;
CREATE INDEX extraction_queue_by_chat ON extraction_queue (tenant, agent, user_id, chat, state);
"#,
    // 8: documents an agent keeps (research, tool outputs, file summaries) at three levels, with
    // one vector each (see `crate::documents`). Owned by a tenant, an agent ('' for every agent)
    // and a user ('' for every user); never by a chat. Vectors live in a narrow table of their
    // own with the owner's columns, so a similarity scan reads vectors, not texts (4x faster
    // at 10,000 documents), and leave with their document.
    r#"
CREATE TABLE documents (
    id         TEXT PRIMARY KEY,
    tenant     TEXT NOT NULL,
    agent      TEXT NOT NULL,
    user_id    TEXT NOT NULL,
    kind       TEXT NOT NULL,
    source     TEXT NOT NULL,
    gist       TEXT NOT NULL,
    overview   TEXT NOT NULL,
    text       TEXT NOT NULL,
    tokens     INTEGER NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX documents_by_scope ON documents (tenant, agent, user_id);
CREATE TABLE document_vectors (
    document_id TEXT NOT NULL UNIQUE REFERENCES documents (id) ON DELETE CASCADE,
    tenant      TEXT NOT NULL,
    agent       TEXT NOT NULL,
    user_id     TEXT NOT NULL,
    model       TEXT NOT NULL,
    dim         INTEGER NOT NULL,
    vector      BLOB NOT NULL
);
CREATE INDEX document_vectors_by_scope ON document_vectors (tenant, agent, user_id, model, dim);
"#,
    // 9: a message looked up by id (provenance, an archival hit's neighbours) is found by
    // (tenant, id). The owner's unique key cannot serve a lookup that names no chat, and without
    // this index SQLite walked every message of the tenant for each of a hit's neighbours.
    r#"
CREATE INDEX messages_by_id ON messages (tenant, id);
"#,
    // 10: secrets of this installation, made once: `subject_key` keys the erasure receipts'
    // subjects (HMAC-SHA256), so a guessable user id cannot be confirmed from a receipt.
    // randomblob draws from SQLite's generator, seeded by the operating system.
    r#"
CREATE TABLE installation (
    name  TEXT PRIMARY KEY,
    value BLOB NOT NULL
);
INSERT INTO installation (name, value) VALUES ('subject_key', randomblob(32));
"#,
    // 11: observations an agent records of what it did (see `crate::observations`), mined by
    // consolidation into skill candidates: read per agent, newest first, and erased with their
    // user. The vector is read back for mining, never searched, so it stays in the row.
    r#"
CREATE TABLE observations (
    id           TEXT PRIMARY KEY,
    tenant       TEXT NOT NULL,
    agent        TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    chat         TEXT NOT NULL,
    tool         TEXT NOT NULL,
    args_summary TEXT NOT NULL,
    outcome      TEXT NOT NULL,
    text         TEXT,
    at           INTEGER NOT NULL,
    model        TEXT,
    embedding    BLOB,
    CHECK ((model IS NULL) = (embedding IS NULL))
);
CREATE INDEX observations_by_agent ON observations (tenant, agent, at);
CREATE INDEX observations_by_user ON observations (tenant, user_id, agent, chat);
"#,
    // 12: a longer message's passages get vectors of their own beside the whole message's (see
    // `MessageVectors`): little-endian f32s, `dim` each, back to back; NULL when it has none.
    // They live in the message's vector row, so withholding and erasure remove them with it.
    r#"
ALTER TABLE message_embeddings ADD COLUMN passages BLOB;
"#,
    // 13: a client's key-value data on a memory (mem0's `metadata`, docs/mem0.md), JSON text;
    // null when none was given.
    r#"
ALTER TABLE memories ADD COLUMN metadata TEXT;
"#,
    // 14: the domains a constraint in a memory bears on (`safety::constraint_domains`, one bit
    // per domain; 0 for a memory that states none), so the safety half of recall looks a user's
    // constraints up instead of searching their words. Computed in Rust: the migration fills
    // the older rows (`CONSTRAINTS_BACKFILL`).
    r#"
ALTER TABLE memories ADD COLUMN constraints INTEGER NOT NULL DEFAULT 0;
CREATE INDEX memories_constraints ON memories (tenant, user_id, agent, chat) WHERE status = 'active' AND constraints <> 0;
"#,
    // 15: a version per user that every write of the user's message vectors moves (stored,
    // withheld, erased, imported), so each handle's in-process copy of them
    // (`crate::message_vectors`) is used only while current. Users with vectors stored before
    // it start at 1; a row made later starts at the time in microseconds (see `bump_version`).
    r#"
CREATE TABLE message_versions (
    tenant  TEXT NOT NULL,
    user_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    PRIMARY KEY (tenant, user_id)
) WITHOUT ROWID;
INSERT INTO message_versions (tenant, user_id, version)
    SELECT DISTINCT m.tenant, m.user_id, 1 FROM messages m JOIN message_embeddings e ON e.message_rowid = m.rowid;
"#,
    // 16: both lexical indexes delete in place (FTS5's `secure-delete`), and are written anew
    // from their rows once, so no deleted row's words stay in them. A plain FTS5 delete appends
    // a delete marker that carries the term, i.e. the deleted word; a merge drops markers only
    // when its output is the index's last level. Once a small index's one segment had been
    // moved down to level 0 beside a new one, 'optimize' merged the two onto a level with empty
    // levels above it and kept the markers, and every later 'optimize' left the single segment
    // alone: an erased user's words stayed in `message_fts_data`, invisible to queries and to
    // the integrity check. With `secure-delete` a delete removes the row's entries from the
    // segments holding them (a term whose last entry goes, with it), so no marker is written;
    // 'rebuild' drops the markers earlier deletes (withholds, archived memories, erasures) left.
    r#"
INSERT INTO memory_fts (memory_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO message_fts (message_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO memory_fts (memory_fts) VALUES ('rebuild');
INSERT INTO message_fts (message_fts) VALUES ('rebuild');
"#,
];

/// The version whose migration rebuilds both lexical indexes from the rows (their bodies are
/// computed in Rust, so SQL alone cannot fill them).
const LEXICAL_REBUILD: usize = 5;

/// The version whose migration rebuilds `messages`, which `message_embeddings` refers to: it
/// runs with foreign keys off (SQLite's way to rebuild a referenced table), checked before commit.
const MESSAGES_REBUILD: usize = 7;

/// The version whose migration fills `memories.constraints` for the rows stored before it.
const CONSTRAINTS_BACKFILL: usize = 14;

/// The schema version this build writes.
pub(crate) const LATEST: i64 = MIGRATIONS.len() as i64;

/// Brings the database to [`LATEST`], refusing databases from the future.
pub(crate) fn migrate(conn: &mut Connection) -> Result<()> {
    let current: i64 =
        conn.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(StoreError::sql("read schema version"))?;
    if current > LATEST {
        return Err(StoreError::SchemaTooNew { found: current, supported: LATEST });
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let rebuild = i + 1 == MESSAGES_REBUILD;
        if rebuild {
            conn.pragma_update(None, "foreign_keys", false).map_err(StoreError::sql("migrate"))?;
        }
        let tx = conn.transaction().map_err(StoreError::sql("migrate"))?;
        tx.execute_batch(sql).map_err(StoreError::sql("migrate"))?;
        if rebuild {
            let broken: i64 = tx
                .query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| r.get(0))
                .map_err(StoreError::sql("migrate: check foreign keys"))?;
            if broken > 0 {
                return Err(StoreError::Open {
                    path: "schema version 7".into(),
                    reason: format!("{broken} rows refer to missing rows after rebuilding the messages table"),
                });
            }
        }
        // Version 2 once indexed the messages stored before it; version 5 indexes everything
        // again, so nothing older needs a backfill of its own.
        if i + 1 == LEXICAL_REBUILD {
            fts::rebuild(&tx).map_err(StoreError::sql("migrate: rebuild the lexical indexes"))?;
        }
        if i + 1 == CONSTRAINTS_BACKFILL {
            backfill_constraints(&tx).map_err(StoreError::sql("migrate: fill memories.constraints"))?;
        }
        tx.pragma_update(None, "user_version", (i + 1) as i64).map_err(StoreError::sql("migrate"))?;
        tx.commit().map_err(StoreError::sql("migrate"))?;
        if rebuild {
            conn.pragma_update(None, "foreign_keys", true).map_err(StoreError::sql("migrate"))?;
        }
    }
    Ok(())
}

/// Gives every stored memory the constraint domains its content bears on. Only the few rows
/// that state a constraint are written; rows are streamed, not collected.
fn backfill_constraints(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
    let mut update = tx.prepare("UPDATE memories SET constraints = ?2 WHERE rowid = ?1")?;
    let mut select = tx.prepare("SELECT rowid, content FROM memories")?;
    let mut rows = select.query([])?;
    while let Some(r) = rows.next()? {
        let bits = crate::rows::encode::constraint_bits(&r.get::<_, String>(1)?);
        if bits != 0 {
            update.execute(rusqlite::params![r.get::<_, i64>(0)?, bits])?;
        }
    }
    Ok(())
}
