//! `/v1/users/{user_id}`: privacy operations on everything one user told the system.

use axum::extract::State;

use crate::AppState;
use crate::auth::Tenant;
use crate::dto::ErasureOut;
use crate::error::{ApiError, ErrorBody, Json, Path};

/// Erases the user: memories, vectors, lexical entries, links, history, messages and traces,
/// across all agents and chats of the key's tenant, in one transaction, then purges free pages
/// and logs. Only a content-free deletion event remains. Erasing an unknown user is not an error
/// (nothing to remove), so the answer never reveals whether a user existed.
#[utoipa::path(
    post, path = "/v1/users/{user_id}/erase", tag = "users",
    params(("user_id" = String, Path, description = "The user to erase")),
    responses(
        (status = 200, description = "Erased; the receipt", body = ErasureOut),
        (status = 400, description = "Invalid user id", body = ErrorBody),
        (status = 401, description = "Missing or invalid key", body = ErrorBody),
    ),
    security(("bearer" = []))
)]
pub(crate) async fn erase(
    State(state): State<AppState>,
    Tenant(tenant): Tenant,
    Path(user_id): Path<String>,
) -> Result<Json<ErasureOut>, ApiError> {
    let scope = super::scope(&tenant, None, Some(&user_id), None)?;
    let receipt = crate::blocking(&state, move |memory| Ok(memory.erase_user(&scope)?)).await?;
    Ok(Json(ErasureOut::from(receipt)))
}
