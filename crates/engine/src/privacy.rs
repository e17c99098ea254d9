//! Privacy operations: erasure of everything a user ever told the system.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use mnemo_core::{Scope, TenantId, UserId};
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
    /// HMAC-SHA256 of tenant and user id under the installation's secret key (the store keeps
    /// only this): stable for the user on this installation, so its operator can confirm which
    /// erasure concerned a user, yet nobody holding a receipt can test a guessed id (an e-mail).
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

/// HMAC-SHA256 (RFC 2104) of `message` under `key`, on the SHA-256 the engine already uses.
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new().chain_update(pad(0x36)).chain_update(message).finalize();
    Sha256::new().chain_update(pad(0x5c)).chain_update(inner).finalize().into()
}

impl Memory {
    /// Erases everything of the scope's user in its tenant — memories, vectors, lexical
    /// entries, links, history, messages and traces, across all agents and chats — in one
    /// transaction, then purges free pages and logs. Only a content-free deletion event remains.
    pub fn erase_user(&self, scope: &Scope) -> Result<ErasureReceipt> {
        let user = scope.require_user()?;
        let mut receipts = self.erase_users(&scope.tenant, std::slice::from_ref(user))?;
        Ok(receipts.pop().expect("one user, one receipt"))
    }

    /// Erases each of `users` of the tenant as [`Memory::erase_user`] would, each with its own
    /// receipt (one per distinct user, in the order of `users`), but with one purge of the files
    /// at the end instead of one per user, and the deletes batched into few transactions: how a
    /// tenant is reset. The purge is not the tenant's alone (SQLite rewrites the whole file), so
    /// one per user made a reset slow every other tenant for as long. A user named twice is
    /// erased once. On an error, the users erased before it stay erased (and purged).
    pub fn erase_users(&self, tenant: &TenantId, users: &[UserId]) -> Result<Vec<ErasureReceipt>> {
        let at = self.clock.now();
        // A turn still queued would be written after the erasure and leave the user's query.
        self.turns.settle_tenant(tenant);
        let key = self.store.subject_key(tenant)?;
        let mut seen = std::collections::BTreeSet::new();
        let erasures: Vec<(UserId, DeletionEvent)> = users
            .iter()
            .filter(|u| seen.insert(u.as_str()))
            .map(|user| {
                let subject = hex(&hmac_sha256(&key, format!("{tenant}\u{0}{user}").as_bytes()));
                let digest = hex(&Sha256::digest(format!("{subject}\u{0}{}", at.to_rfc3339()).as_bytes()));
                (user.clone(), DeletionEvent { subject, at, digest })
            })
            .collect();
        let counts = self.store.erase_users(tenant, &erasures)?;
        Ok(erasures
            .into_iter()
            .zip(counts)
            .map(|((_, event), counts)| {
                let counts_json = serde_json::to_string(&counts).expect("counts serialise");
                let digest = hex(&Sha256::digest(format!("{}\u{0}{counts_json}", event.digest).as_bytes()));
                ErasureReceipt { tenant: tenant.to_string(), subject: event.subject, at, counts, digest }
            })
            .collect())
    }

    /// Every user of the tenant the store holds anything of, memories or not: a user with only
    /// messages, a trace or a switch is still someone a tenant's reset must erase.
    pub fn known_users(&self, tenant: &TenantId) -> Result<Vec<UserId>> {
        self.turns.settle_tenant(tenant);
        Ok(self.store.known_users(tenant)?)
    }
}

#[cfg(test)]
mod tests {
    use super::{hex, hmac_sha256};

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test cases 2 (a short key) and 6 (a key longer than the block, hashed first).
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex(&hmac_sha256(&[0xaa; 131], b"Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }
}
