//! `/v1/admin/keys`: tenant keys, managed with the admin key.
//!
//! A key is shown once at creation and never again; the list answers carry only what identifies
//! a key, never the key itself.

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// `POST /v1/admin/keys`: a new key for a tenant.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateKeyRequest {
    /// The tenant the key will act as.
    pub tenant: String,
}

/// `GET /v1/admin/keys`: filter.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct KeysQuery {
    /// Only this tenant's keys.
    #[serde(default)]
    pub tenant: Option<String>,
}

/// A key, shown once at creation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CreatedKey {
    /// The key: send as `Authorization: Bearer <key>`. It is not stored and cannot be shown again.
    pub key: String,
    /// Everything else about it.
    #[serde(flatten)]
    pub info: crate::keys::KeyInfo,
}

/// Keys, without the keys themselves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct KeyList {
    /// Newest first.
    pub items: Vec<crate::keys::KeyInfo>,
}
