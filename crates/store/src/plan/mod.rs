//! What a write means, decided once for every backend: pure functions from a request (a change
//! set, a batch of records) and the stored state it depends on to the rows to write. A backend
//! reads that state, hands it over, and executes the planned rows in its own SQL; no backend
//! decides what a change writes.

pub(crate) mod apply;
pub(crate) mod import;
pub(crate) mod queue;
pub(crate) mod turn;
