//! The storage contract every backend implements, as one trait per concern.
//!
//! [`Store`] is the whole contract: anything implementing every part is a store (a blanket
//! impl), so callers hold one `dyn Store` while a backend is written, and checked by the
//! conformance suite, concern by concern.

use crate::documents::Documents;
use crate::lock::JobLocks;
use crate::memories::Memories;
use crate::messages::Messages;
use crate::observations::Observations;
use crate::policies::Policies;
use crate::queue::Queue;
use crate::search::Search;
use crate::traces::Traces;
use crate::transfer::Transfer;
use crate::users::Users;

/// Durable memory storage. Synchronous: every call is short and CPU/disk bound; async servers
/// call it from a blocking pool. Implemented for every type that implements all its parts.
pub trait Store:
    Messages
    + Memories
    + Search
    + Policies
    + Documents
    + Observations
    + Traces
    + Users
    + Queue
    + Transfer
    + JobLocks
    + Send
    + Sync
{
}

impl<T> Store for T where
    T: Messages
        + Memories
        + Search
        + Policies
        + Documents
        + Observations
        + Traces
        + Users
        + Queue
        + Transfer
        + JobLocks
        + Send
        + Sync
{
}
