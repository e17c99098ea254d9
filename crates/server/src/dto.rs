//! The API's own request and response types, one module per resource as in `routes/`.
//!
//! The wire format is a contract of its own: engine types can grow fields without the API
//! changing by accident, and these types carry the OpenAPI schemas (`ToSchema`). Every request
//! type refuses unknown fields, so a typo is a 422 instead of a silently ignored option.
//!
//! Types more than one resource answers with (scope, provenance, score parts, verdicts, source
//! messages, the user's switch, the `Kind` schema) are in `common`. Everything is re-exported
//! here, so handlers and MCP tools name `crate::dto::X` whatever module `X` lives in.

mod admin;
mod common;
mod context;
pub mod documents;
mod health;
mod maintain;
mod memories;
mod memos;
mod messages;
pub mod observations;
mod policies;
mod recall;
pub mod sessions;
mod traces;
mod users;

pub use admin::*;
pub use common::*;
pub use context::*;
pub use health::*;
pub use maintain::*;
pub use memories::*;
pub use memos::*;
pub use messages::*;
pub use policies::*;
pub use recall::*;
pub use traces::*;
pub use users::*;
