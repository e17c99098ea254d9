//! Privacy operations: erasure of everything a user ever told the system.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use mnemo_core::Scope;
use mnemo_store::DeletionEvent;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::Memory;
use crate::error::Result;

/// What an erasure returns to the requester: proof of what was removed, with no content in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErasureReceipt {
    /// The tenant.
    pub tenant: String,
    /// SHA-256 of tenant and user id (the store keeps only this).
    pub subject: String,
    /// When.
    pub at: DateTime<Utc>,
    /// Rows removed per table.
    pub counts: BTreeMap<String, u64>,
    /// SHA-256 over subject, time and counts: quote it to prove which erasure you mean.
    pub digest: String,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Memory {
    /// Erases everything of the scope's user in its tenant — memories, vectors, lexical
    /// entries, links, history, messages and traces, across all agents and chats — in one
    /// transaction, then purges free pages and logs. Only a content-free deletion event remains.
    pub fn erase_user(&self, scope: &Scope) -> Result<ErasureReceipt> {
        let user = scope.require_user()?;
        let at = self.clock.now();
        let subject = hex(&Sha256::digest(format!("{}\u{0}{}", scope.tenant, user).as_bytes()));
        let digest = hex(&Sha256::digest(format!("{subject}\u{0}{}", at.to_rfc3339()).as_bytes()));
        let event = DeletionEvent { subject: subject.clone(), at, digest };
        let counts = self.store.erase_user(&scope.tenant, user, &event)?;
        let counts_json = serde_json::to_string(&counts).expect("counts serialise");
        let digest = hex(&Sha256::digest(format!("{}\u{0}{counts_json}", event.digest).as_bytes()));
        Ok(ErasureReceipt { tenant: scope.tenant.to_string(), subject, at, counts, digest })
    }
}
