//! Per-user privacy: the pause and disable switches, and erasure with its content-free receipt.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use mnemo_core::{TenantId, UserId, UserState};
use serde::{Deserialize, Serialize};

use crate::error::Result;

/// The content-free record an erasure leaves behind: that it happened, when, and how much.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeletionEvent {
    /// HMAC-SHA256 of tenant and user id under the installation's [`Users::subject_key`]: lets
    /// an operator of this installation confirm an erasure of a known user without the store
    /// keeping the id, while anyone else holding the receipt cannot test guesses (an e-mail)
    /// against it.
    pub subject: String,
    /// When.
    pub at: DateTime<Utc>,
    /// Digest of the receipt (subject, time, counts), for the requester's records.
    pub digest: String,
}

/// How many users [`Users::erase_users`] erases per transaction: enough that a reset of
/// hundreds of users takes a handful of commits, few enough that the transaction holding the
/// writer (on SQLite, the only one of the whole database) stays short and other tenants' writes
/// interleave.
pub const ERASURES_PER_TRANSACTION: usize = 32;

/// Per-user privacy: the switch read on every ingest and recall, and erasure.
pub trait Users {
    /// The privacy switch of one user of a tenant: [`UserState::Active`] when nobody set one
    /// (or after an erasure, which deletes it). Read on every ingest and recall, so it is one
    /// keyed lookup.
    fn user_state(&self, tenant: &TenantId, user: &UserId) -> Result<UserState>;

    /// Sets the switch of one user of a tenant as of `at`. Setting `Active` removes the row, so
    /// a user who was never switched and one switched back look the same.
    fn set_user_state(&self, tenant: &TenantId, user: &UserId, state: UserState, at: DateTime<Utc>) -> Result<()>;

    /// Erases everything of one user of a tenant, in one transaction: memories with their
    /// vectors, lexical entries, links, history and sessions; messages; traces — across all
    /// agents and chats. Keeps only a content-free deletion event. Backends then purge what the
    /// files could still hold (free pages, logs). Returns rows deleted per table.
    ///
    /// [`Users::erase_users`] with one user: the same statements and the same purge.
    fn erase_user(&self, tenant: &TenantId, user: &UserId, event: &DeletionEvent) -> Result<BTreeMap<String, u64>> {
        let mut counts = self.erase_users(tenant, &[(user.clone(), event.clone())])?;
        Ok(counts.pop().expect("one erasure, one set of counts"))
    }

    /// Erases several users of a tenant (a tenant's reset), each exactly as
    /// [`Users::erase_user`] would, with its own deletion event and counts, returned in the
    /// order of `erasures` — but purges the files once, at the end, rather than once per user.
    ///
    /// Why: the purge is the expensive part of an erasure and is not the tenant's alone (SQLite's
    /// `VACUUM` rewrites the whole file, every tenant's rows; PostgreSQL's `VACUUM` scans whole
    /// tables and their indexes), so a reset that erased user by user made every other tenant
    /// wait through one purge per user. Here the deletes go in transactions of up to
    /// [`ERASURES_PER_TRANSACTION`] users, so that the writer is never held for long either.
    ///
    /// A failed transaction stops the erasure: the users of the transactions committed before it
    /// stay erased, and are purged, before the error is returned; the rest are untouched, so the
    /// call can be repeated.
    fn erase_users(
        &self,
        tenant: &TenantId,
        erasures: &[(UserId, DeletionEvent)],
    ) -> Result<Vec<BTreeMap<String, u64>>>;

    /// Every user of `tenant` the store holds anything of (memories in any status, messages,
    /// traces, queued work, switches, documents, observations), sorted: what a reset erases.
    fn known_users(&self, tenant: &TenantId) -> Result<Vec<UserId>>;

    /// The installation's secret key for erasure subjects: 32 random bytes made once, with the
    /// schema, and the same for every server on the database, so a subject is stable per
    /// installation. Read within `tenant`'s transaction, as every request is.
    fn subject_key(&self, tenant: &TenantId) -> Result<Vec<u8>>;
}
