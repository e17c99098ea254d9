//! Versioned migrations, tracked in `schema_migrations`; each runs in its own transaction under
//! an advisory lock, so several servers starting at once migrate a database exactly once.
//!
//! Isolation lives in the schema, not only in the queries: every table holding tenant data has
//! row-level security forced on, with one policy that lets the application role see the rows of
//! the tenant named by the transaction's `mnemo.tenant` setting and nothing else. The roles the
//! store switches to are created here too (see [`ensure_roles`]).

use postgres::Client;

use super::pool::pg;
use crate::error::{Result, StoreError};

/// The role every request runs as: no superuser, no BYPASSRLS, so the tenant policies bind it.
pub(crate) const APP_ROLE: &str = "mnemo_app";

/// The role of the one cross-tenant read (`Memories::scan`, for jobs): SELECT on memories only.
pub(crate) const JOBS_ROLE: &str = "mnemo_jobs";

/// Migrations in order; index + 1 is the schema version they produce. Never edit a shipped one.
const MIGRATIONS: &[&str] = &[
    r#"
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE messages (
    seq     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant  text NOT NULL,
    agent   text NOT NULL,
    user_id text NOT NULL,
    chat    text NOT NULL,
    id      text NOT NULL,
    role    text NOT NULL,
    content text NOT NULL,
    at      bigint NOT NULL,
    UNIQUE (tenant, id)
);
CREATE INDEX messages_by_chat ON messages (tenant, user_id, chat, at);

CREATE TABLE memories (
    -- "C": ids sort bytewise, as jobs' resumable scans (and SQLite) expect, whatever the
    -- database's collation.
    id                text COLLATE "C" PRIMARY KEY,
    tenant            text NOT NULL,
    agent             text NOT NULL,
    user_id           text NOT NULL,
    chat              text NOT NULL,
    kind              text NOT NULL,
    content           text NOT NULL,
    key               text,
    value             text,
    confidence        real NOT NULL,
    salience          real NOT NULL,
    pinned            boolean NOT NULL DEFAULT false,
    surface           text NOT NULL,
    status            text NOT NULL,
    superseded_by     text,
    due_at            bigint,
    valid_from        bigint,
    valid_until       bigint,
    sources           text NOT NULL,
    source_chat       text,
    extractor         text NOT NULL,
    extractor_version text NOT NULL,
    content_hash      text NOT NULL,
    created_at        bigint NOT NULL,
    updated_at        bigint NOT NULL,
    last_accessed     bigint,
    last_surfaced     bigint,
    access_count      bigint NOT NULL DEFAULT 0,
    distinct_sessions bigint NOT NULL DEFAULT 0,
    reinforcements    bigint NOT NULL DEFAULT 0,
    expires_at        bigint,
    sensitivity       text NOT NULL,
    -- The vector and the model that produced it. No fixed dimension: it is only known at the
    -- first insert of a model, and each model gets its own partial HNSW index then.
    model             text,
    embedding         vector,
    -- What the lexical index reads: the content plus the words its key stands for
    -- (mnemo_core::text::search_text, computed by the writer so every backend indexes the same text).
    search            text NOT NULL,
    tsv               tsvector GENERATED ALWAYS AS (to_tsvector('english', search)) STORED,
    CHECK (status <> 'superseded' OR superseded_by IS NOT NULL),
    CHECK ((model IS NULL) = (embedding IS NULL))
);
CREATE INDEX memories_by_scope ON memories (tenant, user_id, status, kind);
CREATE INDEX memories_by_hash ON memories (tenant, content_hash);
CREATE INDEX memories_by_key ON memories (tenant, kind, key) WHERE key IS NOT NULL;
CREATE INDEX memories_pinned ON memories (tenant, user_id, status) WHERE pinned;
CREATE INDEX memories_due ON memories (tenant, user_id, status, due_at) WHERE kind = 'open_loop' AND due_at IS NOT NULL;
-- Lexical index over ACTIVE memories only.
CREATE INDEX memories_lexical ON memories USING gin (tsv) WHERE status = 'active';

-- One dimension per model, across tenants: each model's HNSW index casts to that dimension.
-- Holds model names only, no tenant data, so it has no row-level security.
CREATE TABLE embedding_models (
    model text PRIMARY KEY,
    dim   integer NOT NULL CHECK (dim > 0)
);

-- Creates the partial HNSW index of one registered model (active rows only), once. Called by
-- the application role inside the apply that registers the model, so the index appears in the
-- same transaction as the model's first vectors (and vanishes with them on rollback); SECURITY
-- DEFINER because only the owner may create indexes. Safe to race: a concurrent creator's index
-- counts as ours.
CREATE FUNCTION mnemo_ensure_vector_index(p_model text, p_dim integer) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $fn$
DECLARE
    idx text := 'memories_hnsw_' || left(md5(p_model), 16) || '_' || p_dim;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM embedding_models WHERE model = p_model AND dim = p_dim) THEN
        RAISE EXCEPTION 'model % is not registered with dimension %', p_model, p_dim;
    END IF;
    IF to_regclass(quote_ident(idx)) IS NOT NULL THEN
        RETURN;
    END IF;
    BEGIN
        EXECUTE format(
            'CREATE INDEX IF NOT EXISTS %I ON memories USING hnsw ((embedding::vector(%s)) vector_cosine_ops) '
            'WHERE model = %L AND status = ''active''',
            idx, p_dim, p_model);
    EXCEPTION WHEN unique_violation OR duplicate_table THEN
        NULL;
    END;
END
$fn$;
REVOKE ALL ON FUNCTION mnemo_ensure_vector_index(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION mnemo_ensure_vector_index(text, integer) TO mnemo_app;

CREATE TABLE links (
    seq     bigint GENERATED ALWAYS AS IDENTITY,
    tenant  text NOT NULL,
    from_id text NOT NULL,
    to_id   text NOT NULL,
    kind    text NOT NULL,
    at      bigint NOT NULL,
    PRIMARY KEY (from_id, to_id, kind)
);
CREATE INDEX links_to ON links (to_id);

CREATE TABLE history (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant      text NOT NULL,
    memory_id   text NOT NULL,
    at          bigint NOT NULL,
    event       text NOT NULL,
    from_status text,
    to_status   text NOT NULL,
    reason      text NOT NULL,
    sources     text NOT NULL
);
CREATE INDEX history_by_memory ON history (memory_id);

CREATE TABLE memory_sessions (
    tenant    text NOT NULL,
    memory_id text NOT NULL,
    session   text NOT NULL,
    PRIMARY KEY (memory_id, session)
);

CREATE TABLE policies (
    tenant          text NOT NULL,
    agent           text NOT NULL,
    key             text NOT NULL,
    version         integer NOT NULL,
    text            text NOT NULL,
    value           text NOT NULL,
    effective_from  bigint NOT NULL,
    effective_until bigint,
    PRIMARY KEY (tenant, agent, key, version)
);

CREATE TABLE traces (
    seq      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    turn_id  text NOT NULL UNIQUE,
    tenant   text NOT NULL,
    agent    text NOT NULL,
    user_id  text NOT NULL,
    chat     text NOT NULL,
    op       text NOT NULL,
    at       bigint NOT NULL,
    surfaced text NOT NULL,
    body     text NOT NULL
);
CREATE INDEX traces_by_chat ON traces (tenant, user_id, chat, op, at);

-- What an erasure leaves behind: no user id, no content (see `DeletionEvent`).
CREATE TABLE deletions (
    seq     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant  text NOT NULL,
    subject text NOT NULL,
    at      bigint NOT NULL,
    counts  text NOT NULL,
    digest  text NOT NULL
);

-- One row per ownership partition; the version moves on every change that can alter which
-- rows of the partition are recallable, so caches of other processes know to reload.
CREATE TABLE partitions (
    tenant  text NOT NULL,
    agent   text NOT NULL,
    user_id text NOT NULL,
    chat    text NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (tenant, agent, user_id, chat)
);

-- Row-level security: forced, so it binds the tables' owner too; the only policies are for the
-- application role (its transaction's tenant) and the jobs role (read-only scan of memories).
-- Any other role, the owner included, sees no rows (superusers bypass RLS by design: never run
-- requests as one; the store switches to mnemo_app for every request).
DO $rls$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['messages', 'memories', 'links', 'history', 'memory_sessions', 'policies',
                             'traces', 'partitions', 'deletions'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I TO mnemo_app '
                       'USING (tenant = nullif(current_setting(''mnemo.tenant'', true), '''')) '
                       'WITH CHECK (tenant = nullif(current_setting(''mnemo.tenant'', true), ''''))', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO mnemo_app', t);
    END LOOP;
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO mnemo_app, mnemo_jobs', current_schema());
END
$rls$;
CREATE POLICY jobs_scan ON memories FOR SELECT TO mnemo_jobs USING (true);
GRANT SELECT ON memories TO mnemo_jobs;
GRANT SELECT, INSERT ON embedding_models TO mnemo_app;
"#,
    // 2: archival recall over the conversation itself: a generated tsvector with GIN for the
    // lexical half, and a vector per message (scored exactly within one user's messages).
    r#"
ALTER TABLE messages
    ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', content)) STORED,
    ADD COLUMN model text,
    ADD COLUMN embedding vector,
    -- Withheld messages (see `Change::Withhold`) are never archival excerpts.
    ADD COLUMN withheld boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT messages_model_with_embedding CHECK ((model IS NULL) = (embedding IS NULL));
CREATE INDEX messages_tsv ON messages USING gin (tsv);
CREATE INDEX messages_by_user ON messages (tenant, agent, user_id);
"#,
    // 3: background work (LLM extraction off the request path, memos, episodes): one queue row
    // per registered message, one progress row per chat (see `crate::queue`), tenant-isolated
    // like every other table; the jobs role may read chat progress across tenants.
    r#"
CREATE TABLE extraction_queue (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant     text NOT NULL,
    agent      text NOT NULL,
    user_id    text NOT NULL,
    chat       text NOT NULL,
    message_id text NOT NULL,
    state      text NOT NULL,
    attempts   integer NOT NULL DEFAULT 0,
    retry_at   bigint,
    last_error text,
    fallback   text NOT NULL DEFAULT '[]',
    queued_at  bigint NOT NULL,
    UNIQUE (tenant, message_id)
);
CREATE INDEX extraction_queue_by_chat ON extraction_queue (tenant, agent, user_id, chat, state);
CREATE TABLE chat_progress (
    tenant          text NOT NULL,
    agent           text NOT NULL,
    user_id         text NOT NULL,
    chat            text NOT NULL,
    messages        bigint NOT NULL DEFAULT 0,
    pending         bigint NOT NULL DEFAULT 0,
    retrying        bigint NOT NULL DEFAULT 0,
    retry_at        bigint,
    last_message_at bigint NOT NULL,
    memo_covered    bigint NOT NULL DEFAULT 0,
    memo_gaps       bigint NOT NULL DEFAULT 0,
    episode_checked bigint NOT NULL DEFAULT 0,
    last_error      text,
    claimed_until   bigint,
    PRIMARY KEY (tenant, agent, user_id, chat)
);
CREATE INDEX chat_progress_by_activity ON chat_progress (last_message_at);
DO $rls$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['extraction_queue', 'chat_progress'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY tenant_isolation ON %I TO mnemo_app '
                       'USING (tenant = nullif(current_setting(''mnemo.tenant'', true), '''')) '
                       'WITH CHECK (tenant = nullif(current_setting(''mnemo.tenant'', true), ''''))', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO mnemo_app', t);
    END LOOP;
END
$rls$;
CREATE POLICY jobs_scan ON chat_progress FOR SELECT TO mnemo_jobs USING (true);
GRANT SELECT ON chat_progress TO mnemo_jobs;
"#,
    // 4: per-user privacy switches (see `mnemo_core::UserState`): a row only for a user who is
    // not active; tenant-isolated like every other table.
    r#"
CREATE TABLE user_states (
    tenant     text NOT NULL,
    user_id    text NOT NULL,
    state      text NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (tenant, user_id)
);
ALTER TABLE user_states ENABLE ROW LEVEL SECURITY;
ALTER TABLE user_states FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON user_states TO mnemo_app
    USING (tenant = nullif(current_setting('mnemo.tenant', true), ''))
    WITH CHECK (tenant = nullif(current_setting('mnemo.tenant', true), ''));
GRANT SELECT, INSERT, UPDATE, DELETE ON user_states TO mnemo_app;
"#,
    // 5: retention sweeps: the jobs role may see which tenants hold envelopes of which class and
    // age (those three columns only, never a body); each tenant's old envelopes are then deleted
    // as that tenant, under its own row-level security.
    r#"
CREATE POLICY jobs_scan ON traces FOR SELECT TO mnemo_jobs USING (true);
GRANT SELECT (tenant, op, at) ON traces TO mnemo_jobs;
"#,
    // 6: the lexical half reads a scope's words from an index, not from its wide rows. Under
    // row-level security PostgreSQL cannot use a GIN index for `@@` (the operator is not
    // leakproof, so it may only run after the tenant policy, never as an index condition): the
    // GIN indexes of migrations 1 and 2 were never used by the application role, only written.
    // Lexical search walks the scope's rows by btree instead; these btrees carry each row's id
    // and tsvector, so the walk never touches the heap rows with their vectors (an index-only
    // scan: about a third less time for a user of 10,000 memories).
    r#"
DROP INDEX memories_lexical;
DROP INDEX messages_tsv;
CREATE INDEX memories_lexical ON memories (tenant, user_id, agent, chat) INCLUDE (id, tsv) WHERE status = 'active';
CREATE INDEX messages_lexical ON messages (tenant, user_id, agent, chat) INCLUDE (id, tsv) WHERE NOT withheld;
"#,
    // 7: the heuristic rule that proposed a memory (`Provenance::rule`), so `mnemo show` can say
    // why it was remembered; null for the model, the API, jobs and older rows.
    r#"
ALTER TABLE memories ADD COLUMN rule text;
"#,
    // 8: a message id is the client's, unique within its tenant, user and chat only: another
    // user of the tenant may send the same id without it counting as a duplicate of theirs.
    r#"
ALTER TABLE messages DROP CONSTRAINT messages_tenant_id_key;
ALTER TABLE messages ADD CONSTRAINT messages_owner_id_key UNIQUE (tenant, user_id, chat, id);
ALTER TABLE extraction_queue DROP CONSTRAINT extraction_queue_tenant_message_id_key;
ALTER TABLE extraction_queue ADD CONSTRAINT extraction_queue_owner_message_id_key
    UNIQUE (tenant, user_id, chat, message_id);
"#,
    // 9: documents an agent keeps (research, tool outputs, file summaries) at three levels, with
    // one vector each (see `crate::documents`); tenant-isolated like every other table. Scopes
    // hold thousands of documents, so similarity is an exact scan of the scope's rows by btree,
    // without an HNSW index.
    r#"
CREATE TABLE documents (
    id         text COLLATE "C" PRIMARY KEY,
    tenant     text NOT NULL,
    agent      text NOT NULL,
    user_id    text NOT NULL,
    kind       text NOT NULL,
    source     text NOT NULL,
    gist       text NOT NULL,
    overview   text NOT NULL,
    text       text NOT NULL,
    tokens     bigint NOT NULL,
    created_at bigint NOT NULL,
    model      text,
    embedding  vector,
    CHECK ((model IS NULL) = (embedding IS NULL))
);
-- Vectors stay in the row (out of line only when a row could not fit otherwise), and a long
-- text or overview moves out instead: a similarity scan reads every vector of a scope, and a
-- TOASTed vector costs it a dozen page reads per row (about 3x the time at 10,000 documents).
ALTER TABLE documents ALTER COLUMN embedding SET STORAGE MAIN;
CREATE INDEX documents_by_scope ON documents (tenant, agent, user_id, model);
ALTER TABLE documents ENABLE ROW LEVEL SECURITY;
ALTER TABLE documents FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON documents TO mnemo_app
    USING (tenant = nullif(current_setting('mnemo.tenant', true), ''))
    WITH CHECK (tenant = nullif(current_setting('mnemo.tenant', true), ''));
GRANT SELECT, INSERT, UPDATE, DELETE ON documents TO mnemo_app;
"#,
    // 10: a message looked up by id (provenance, an archival hit's neighbours) is found by
    // (tenant, id): the owner's unique key cannot serve a lookup that names no chat.
    r#"
CREATE INDEX messages_by_id ON messages (tenant, id);
"#,
    // 11: secrets of this installation, made once under the migration lock: `subject_key` keys
    // the erasure receipts' subjects (HMAC-SHA256), so a guessable user id cannot be confirmed
    // from a receipt. Two gen_random_uuid() (PostgreSQL's strong random source) give 244
    // random bits. Not tenant data: readable, never writable, by the application role.
    r#"
CREATE TABLE installation (
    name  text PRIMARY KEY,
    value bytea NOT NULL
);
INSERT INTO installation (name, value)
    VALUES ('subject_key', decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex'));
GRANT SELECT ON installation TO mnemo_app;
"#,
    // 12: observations an agent records of what it did (see `crate::observations`), mined by
    // consolidation into skill candidates; tenant-isolated like every other table. The jobs role
    // reads which (tenant, agent) partitions have any, nothing of their content.
    r#"
CREATE TABLE observations (
    id           text COLLATE "C" PRIMARY KEY,
    tenant       text NOT NULL,
    agent        text NOT NULL,
    user_id      text NOT NULL,
    chat         text NOT NULL,
    tool         text NOT NULL,
    args_summary text NOT NULL,
    outcome      text NOT NULL,
    text         text,
    at           bigint NOT NULL,
    model        text,
    embedding    real[],
    CHECK ((model IS NULL) = (embedding IS NULL))
);
CREATE INDEX observations_by_agent ON observations (tenant, agent, at);
CREATE INDEX observations_by_user ON observations (tenant, user_id, agent, chat);
ALTER TABLE observations ENABLE ROW LEVEL SECURITY;
ALTER TABLE observations FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON observations TO mnemo_app
    USING (tenant = nullif(current_setting('mnemo.tenant', true), ''))
    WITH CHECK (tenant = nullif(current_setting('mnemo.tenant', true), ''));
GRANT SELECT, INSERT, UPDATE, DELETE ON observations TO mnemo_app;
CREATE POLICY jobs_scan ON observations FOR SELECT TO mnemo_jobs USING (true);
GRANT SELECT (tenant, agent, at) ON observations TO mnemo_jobs;
"#,
    // 13: a longer message's passages get vectors of their own beside the whole message's (see
    // `MessageVectors`), in the message's row so withholding and erasure clear them with it.
    r#"
ALTER TABLE messages ADD COLUMN passages vector[];
"#,
    // 14: a client's key-value data on a memory (mem0's `metadata`, docs/mem0.md), JSON text;
    // null when none was given.
    r#"
ALTER TABLE memories ADD COLUMN metadata text;
"#,
    // 15: a user's latest messages in order, across chats: how widely a query's words are spread
    // over them (`Messages::term_spread`) reads a bounded stretch instead of sorting them all.
    r#"
CREATE INDEX messages_by_user_at ON messages (tenant, agent, user_id, at DESC, id DESC) WHERE NOT withheld;
"#,
    // 16: the domains a constraint in a memory bears on (`safety::constraint_domains`, one bit
    // per domain; 0 for a memory that states none), so the safety half of recall looks a user's
    // constraints up: searching their words cost 43 ms at 10,000 memories, since under
    // row-level security every row's tsvector is tested against the 45 words one by one.
    // Computed in Rust: the migration fills the older rows (`CONSTRAINTS_BACKFILL`).
    r#"
ALTER TABLE memories ADD COLUMN constraints integer NOT NULL DEFAULT 0;
CREATE INDEX memories_constraints ON memories (tenant, user_id, agent, chat) WHERE status = 'active' AND constraints <> 0;
"#,
    // 17: a message's words are stemmed in its own language (`super::text_search_config`, told
    // in Rust when it is stored): a German message no longer takes English stems. Older rows
    // keep English, what they were indexed with; queries look terms up under English too.
    // Written to run again over itself (a test replays the migrations from 16 on).
    r#"
ALTER TABLE messages ADD COLUMN IF NOT EXISTS lang regconfig NOT NULL DEFAULT 'english';
DROP INDEX IF EXISTS messages_lexical;
ALTER TABLE messages DROP COLUMN IF EXISTS tsv;
ALTER TABLE messages ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector(lang, content)) STORED;
CREATE INDEX messages_lexical ON messages (tenant, user_id, agent, chat) INCLUDE (id, tsv) WHERE NOT withheld;
"#,
];

/// The version whose migration fills `memories.constraints` for the rows stored before it.
const CONSTRAINTS_BACKFILL: i64 = 16;

/// The schema version this build writes.
pub(crate) const LATEST: i64 = MIGRATIONS.len() as i64;

/// Creates the two roles if this cluster lacks them (roles are cluster-wide, so another
/// database or a concurrent store may have made them first), lets the connecting role switch to
/// them, and refuses roles that would bypass row-level security.
pub(crate) fn ensure_roles(client: &mut Client, label: &str) -> Result<()> {
    client
        .batch_execute(
            r#"
DO $roles$
DECLARE r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['mnemo_app', 'mnemo_jobs'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
            BEGIN
                EXECUTE format('CREATE ROLE %I NOLOGIN NOSUPERUSER NOBYPASSRLS', r);
            EXCEPTION WHEN duplicate_object OR unique_violation THEN
                NULL;
            END;
        END IF;
        IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
           AND NOT pg_has_role(current_user, r, 'MEMBER') THEN
            BEGIN
                -- Without INHERIT (PostgreSQL 16+): the connecting role may SET ROLE to it but
                -- does not hold its rights, so its policies do not widen what that role reads.
                IF current_setting('server_version_num')::int >= 160000 THEN
                    EXECUTE format('GRANT %I TO %I WITH INHERIT FALSE', r, current_user);
                ELSE
                    EXECUTE format('GRANT %I TO %I', r, current_user);
                END IF;
            EXCEPTION WHEN unique_violation THEN
                NULL;
            END;
        END IF;
    END LOOP;
END
$roles$;
"#,
        )
        .map_err(pg("create roles"))?;
    let unsafe_roles: Vec<String> = client
        .query(
            "SELECT rolname::text FROM pg_roles WHERE rolname IN ($1, $2) AND (rolsuper OR rolbypassrls)",
            &[&APP_ROLE, &JOBS_ROLE],
        )
        .map_err(pg("check roles"))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if !unsafe_roles.is_empty() {
        return Err(StoreError::Open {
            path: label.into(),
            reason: format!(
                "role {} bypasses row-level security (SUPERUSER or BYPASSRLS), so tenants would not be \
                 isolated; run `ALTER ROLE {} NOSUPERUSER NOBYPASSRLS`",
                unsafe_roles.join(", "),
                unsafe_roles[0]
            ),
        });
    }
    Ok(())
}

/// Brings the database to [`LATEST`], refusing databases from the future.
/// Drops every model's HNSW index (owner only), for a bulk load; see [`ensure_vector_indexes`].
pub(crate) fn drop_vector_indexes(client: &mut Client) -> Result<()> {
    let names: Vec<String> = client
        .query(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'memories' \
             AND indexname LIKE 'memories\\_hnsw\\_%'",
            &[],
        )
        .map_err(pg("bulk load"))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    for name in names {
        client.batch_execute(&format!("DROP INDEX IF EXISTS \"{name}\"")).map_err(pg("bulk load"))?;
    }
    Ok(())
}

/// Builds the HNSW index of every registered model that lacks one: after a bulk load, and at
/// every open (a no-op unless a bulk load died half-way). One CREATE INDEX over loaded rows,
/// with memory for the graph, is much faster than the same rows inserted one by one.
pub(crate) fn ensure_vector_indexes(client: &mut Client) -> Result<()> {
    let models: Vec<(String, i32)> = client
        .query("SELECT model, dim FROM embedding_models ORDER BY model", &[])
        .map_err(pg("vector indexes"))?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    for (model, dim) in models {
        let mut tx = client.transaction().map_err(pg("vector indexes"))?;
        // Only raise it: a server configured with more keeps its own.
        tx.batch_execute(
            "SELECT set_config('maintenance_work_mem', '1GB', true) \
             WHERE pg_size_bytes(current_setting('maintenance_work_mem')) < pg_size_bytes('1GB')",
        )
        .map_err(pg("vector indexes"))?;
        tx.execute("SELECT mnemo_ensure_vector_index($1, $2)", &[&model, &dim]).map_err(pg("vector indexes"))?;
        tx.commit().map_err(pg("vector indexes"))?;
    }
    Ok(())
}

pub(crate) fn migrate(client: &mut Client) -> Result<()> {
    loop {
        let mut tx = client.transaction().map_err(pg("migrate"))?;
        // First, so that stores starting together queue here rather than race to create tables.
        tx.execute("SELECT pg_advisory_xact_lock(hashtext('mnemo.migrate'))", &[]).map_err(pg("migrate"))?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version bigint PRIMARY KEY, \
             applied_at timestamptz NOT NULL DEFAULT now())",
        )
        .map_err(pg("migrate"))?;
        let current: i64 = tx
            .query_one("SELECT coalesce(max(version), 0) FROM schema_migrations", &[])
            .map_err(pg("read schema version"))?
            .get(0);
        if current > LATEST {
            return Err(StoreError::SchemaTooNew { found: current, supported: LATEST });
        }
        if current == LATEST {
            return Ok(());
        }
        tx.batch_execute(MIGRATIONS[current as usize]).map_err(pg("migrate"))?;
        if current + 1 == CONSTRAINTS_BACKFILL {
            backfill_constraints(&mut tx).map_err(pg("migrate: fill memories.constraints"))?;
        }
        tx.execute("INSERT INTO schema_migrations (version) VALUES ($1)", &[&(current + 1)]).map_err(pg("migrate"))?;
        tx.commit().map_err(pg("migrate"))?;
    }
}

/// Gives every stored memory the constraint domains its content bears on, in pages of
/// [`BACKFILL_PAGE`] rows by id, so a large store never has its text in memory at once. Only
/// the few rows that state a constraint are written.
fn backfill_constraints(tx: &mut postgres::Transaction<'_>) -> std::result::Result<(), postgres::Error> {
    let mut after = String::new();
    loop {
        let rows =
            tx.query("SELECT id, content FROM memories WHERE id > $1 ORDER BY id LIMIT $2", &[&after, &BACKFILL_PAGE])?;
        let Some(last) = rows.last() else { return Ok(()) };
        after = last.get(0);
        let (mut ids, mut bits) = (Vec::new(), Vec::new());
        for r in &rows {
            let b = crate::rows::encode::constraint_bits(r.get(1));
            if b != 0 {
                ids.push(r.get::<_, String>(0));
                bits.push(i32::from(b));
            }
        }
        if !ids.is_empty() {
            tx.execute(
                "UPDATE memories m SET constraints = f.bits FROM unnest($1::text[], $2::int[]) AS f(id, bits) \
                 WHERE m.id = f.id",
                &[&ids, &bits],
            )?;
        }
    }
}

/// Rows the constraint backfill reads at a time.
const BACKFILL_PAGE: i64 = 10_000;
