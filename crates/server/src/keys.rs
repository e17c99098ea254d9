//! Per-tenant API keys: generated here, shown once, stored only as SHA-256 hashes in `keys.db`.
//!
//! A key looks like `mnemo_<tenant-hint>_<32 random alphanumerics>`. The hint is for people
//! reading their own config; the tenant itself comes from the stored row, never from the key
//! text. Each key also has a public `prefix` (the key up to its first 8 random characters) by which
//! admins list and revoke it without ever seeing the key again.

use std::path::Path;
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use mnemo::core::TenantId;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use sha2::{Digest, Sha256};
use utoipa::ToSchema;

/// Random characters in a key: 32 from 62 symbols is about 190 bits.
const SECRET_CHARS: usize = 32;
/// Random characters kept in the public prefix.
const PREFIX_CHARS: usize = 8;
const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Why the key store failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The SQLite file could not be opened or queried.
    #[error("key store {op}: {source}")]
    Sqlite {
        /// What was being done.
        op: &'static str,
        /// The driver's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The operating system's random source failed.
    #[error("no randomness available for a new key: {0}")]
    Random(String),
    /// The tenant id is not a valid identifier.
    #[error(transparent)]
    Tenant(#[from] mnemo::core::CoreError),
}

fn sql(op: &'static str) -> impl FnOnce(rusqlite::Error) -> KeyError {
    move |source| KeyError::Sqlite { op, source }
}

/// A key as admins see it: everything but the key itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
pub struct KeyInfo {
    /// Public prefix that names the key (`mnemo_acme_Ab3dEf9h`); enough to revoke it.
    pub prefix: String,
    /// The tenant every request with this key acts as.
    pub tenant: String,
    /// When it was created.
    pub created_at: DateTime<Utc>,
    /// When it was revoked, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<DateTime<Utc>>,
}

/// The hashed key table, behind a mutex: lookups are short and happen on the blocking pool.
#[derive(Debug)]
pub struct KeyStore {
    conn: Mutex<Connection>,
}

/// Where the key store lives under a data directory: `<data_dir>/keys.db`, beside the memory store.
pub fn key_file(data_dir: &Path) -> std::path::PathBuf {
    data_dir.join("keys.db")
}

/// SHA-256 of a key: what is stored and what a presented key is compared by.
pub fn hash_key(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares two digests without an early exit, so timing says nothing about where they differ.
pub fn digests_equal(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn random_chars(n: usize) -> Result<String, KeyError> {
    let mut out = String::with_capacity(n);
    let mut buf = [0u8; 64];
    while out.len() < n {
        getrandom::fill(&mut buf).map_err(|e| KeyError::Random(e.to_string()))?;
        // Rejection sampling keeps every symbol equally likely (248 = 4 * 62).
        for b in buf.iter().filter(|b| **b < 248) {
            if out.len() == n {
                break;
            }
            out.push(ALPHABET[usize::from(*b) % ALPHABET.len()] as char);
        }
    }
    Ok(out)
}

/// Up to 12 characters of the tenant id that are safe in a key, for people to recognise it.
fn tenant_hint(tenant: &TenantId) -> String {
    let hint: String = tenant.as_str().chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').take(12).collect();
    if hint.is_empty() { "t".to_string() } else { hint }
}

impl KeyStore {
    /// Opens (creating if needed) the key file, e.g. `<data_dir>/keys.db`.
    pub fn open(path: &Path) -> Result<Self, KeyError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // A missing directory surfaces as the open error below, which names the path.
            let _ = std::fs::create_dir_all(dir);
        }
        Self::init(Connection::open(path).map_err(sql("open"))?)
    }

    /// A throwaway store in memory, for tests.
    pub fn in_memory() -> Result<Self, KeyError> {
        Self::init(Connection::open_in_memory().map_err(sql("open"))?)
    }

    fn init(conn: Connection) -> Result<Self, KeyError> {
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE IF NOT EXISTS api_keys (
                 hash TEXT PRIMARY KEY,
                 prefix TEXT NOT NULL UNIQUE,
                 tenant TEXT NOT NULL,
                 created_at TEXT NOT NULL,
                 revoked_at TEXT
             );
             CREATE INDEX IF NOT EXISTS api_keys_tenant ON api_keys (tenant);",
        )
        .map_err(sql("create schema"))?;
        Ok(Self { conn: Mutex::new(conn) })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock cannot leave a half-written row (SQLite is atomic).
        self.conn.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Creates a key for `tenant` and returns it with its public info. The key itself is not
    /// stored and cannot be shown again.
    pub fn create(&self, tenant: &str) -> Result<(String, KeyInfo), KeyError> {
        let tenant = TenantId::new(tenant)?;
        let secret = random_chars(SECRET_CHARS)?;
        let key = format!("mnemo_{}_{secret}", tenant_hint(&tenant));
        let prefix = key[..key.len() - SECRET_CHARS + PREFIX_CHARS].to_string();
        let now = Utc::now();
        self.conn()
            .execute(
                "INSERT INTO api_keys (hash, prefix, tenant, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![hex(&hash_key(&key)), prefix, tenant.as_str(), now.to_rfc3339()],
            )
            .map_err(sql("insert"))?;
        Ok((key, KeyInfo { prefix, tenant: tenant.to_string(), created_at: now, revoked_at: None }))
    }

    /// The tenant a presented key acts as, or `None` for an unknown or revoked key.
    pub fn tenant_for(&self, key: &str) -> Result<Option<TenantId>, KeyError> {
        let tenant: Option<String> = self
            .conn()
            .query_row(
                "SELECT tenant FROM api_keys WHERE hash = ?1 AND revoked_at IS NULL",
                params![hex(&hash_key(key))],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql("lookup"))?;
        // A row that no longer parses as a tenant id grants nothing.
        Ok(tenant.and_then(|t| TenantId::new(t).ok()))
    }

    /// Keys, newest first; of one tenant when given.
    pub fn list(&self, tenant: Option<&str>) -> Result<Vec<KeyInfo>, KeyError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT prefix, tenant, created_at, revoked_at FROM api_keys
                 WHERE ?1 IS NULL OR tenant = ?1 ORDER BY created_at DESC, prefix",
            )
            .map_err(sql("list"))?;
        let rows = stmt
            .query_map(params![tenant], |r| {
                let at = |s: String| DateTime::parse_from_rfc3339(&s).map(|d| d.with_timezone(&Utc)).ok();
                Ok(KeyInfo {
                    prefix: r.get(0)?,
                    tenant: r.get(1)?,
                    created_at: at(r.get(2)?).unwrap_or_default(),
                    revoked_at: r.get::<_, Option<String>>(3)?.and_then(at),
                })
            })
            .map_err(sql("list"))?;
        rows.collect::<Result<_, _>>().map_err(sql("list"))
    }

    /// Revokes the key with this prefix. Returns whether an active key was revoked.
    pub fn revoke(&self, prefix: &str) -> Result<bool, KeyError> {
        let n = self
            .conn()
            .execute(
                "UPDATE api_keys SET revoked_at = ?2 WHERE prefix = ?1 AND revoked_at IS NULL",
                params![prefix, Utc::now().to_rfc3339()],
            )
            .map_err(sql("revoke"))?;
        Ok(n > 0)
    }
}
