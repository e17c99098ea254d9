//! `GET /healthz`: what a load balancer or an operator's probe reads.
//!
//! The version rides along so a rolling upgrade can be watched from the probe alone.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// `GET /healthz`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok`.
    pub status: String,
    /// Server version.
    pub version: String,
}
