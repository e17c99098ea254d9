//! `mnemo mcp`: the MCP server over stdio for one tenant, the one whose key is in `MNEMO_API_KEY`.
//!
//! Standard output carries only JSON-RPC; everything for people goes to standard error.

use std::io::{BufWriter, stdin, stdout};

use anyhow::{Context, Result, bail};
use mnemo::{Config, Memory};
use mnemo_server::mcp::{StdioError, serve_stdio, tenant_for_key};
use mnemo_server::{KeyStore, key_file};

/// Checks the key, opens the store and serves MCP on stdin/stdout until stdin closes.
pub(crate) fn run(config: Config) -> Result<()> {
    let key = std::env::var("MNEMO_API_KEY").unwrap_or_default();
    let key = key.trim();
    if key.is_empty() {
        bail!(
            "mnemo mcp needs a tenant key: set MNEMO_API_KEY to a key from `mnemo keys create --tenant NAME` \
             (the same keys as the HTTP API, in {})",
            key_file(&config.data_dir).display()
        );
    }
    let keys_path = key_file(&config.data_dir);
    let keys = KeyStore::open(&keys_path).with_context(|| format!("opening the key store {}", keys_path.display()))?;
    let tenant = match tenant_for_key(&keys, key) {
        Err(StdioError::InvalidKey) => bail!(
            "MNEMO_API_KEY is not a valid key in {} (unknown or revoked); create one with \
             `mnemo keys create --tenant NAME` using the same data directory",
            keys_path.display()
        ),
        other => other?,
    };
    let dir = config.data_dir.clone();
    let memory = Memory::open(config).with_context(|| format!("opening the store in {}", dir.display()))?;
    eprintln!("mnemo mcp: serving tenant {tenant} on stdio (store {})", dir.display());
    serve_stdio(&memory, &keys, key, stdin().lock(), BufWriter::new(stdout().lock())).context("serving MCP on stdio")
}
