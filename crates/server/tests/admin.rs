//! Key management through the admin API, and the admin key's boundaries.

use axum::http::StatusCode;
use serde_json::json;

use crate::common::{ADMIN, assert_error, call, fixture};

#[tokio::test]
async fn admin_creates_lists_and_revokes_keys() {
    let f = fixture();
    let (status, created) = call(&f.app, "POST", "/v1/admin/keys", ADMIN, Some(json!({"tenant": "initech"}))).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let key = created["key"].as_str().unwrap().to_string();
    let prefix = created["prefix"].as_str().unwrap().to_string();
    assert!(key.starts_with("mnemo_initech_") && key.starts_with(&prefix), "{created}");
    assert_eq!(key.len(), "mnemo_initech_".len() + 32);

    let (status, _) = call(&f.app, "GET", "/v1/memories", &key, None).await;
    assert_eq!(status, StatusCode::OK);

    let (_, list) = call(&f.app, "GET", "/v1/admin/keys?tenant=initech", ADMIN, None).await;
    let items = list["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{list}");
    assert_eq!(items[0]["prefix"], prefix.as_str());
    assert!(!list.to_string().contains(&key), "keys are never listed");
    let (_, all) = call(&f.app, "GET", "/v1/admin/keys", ADMIN, None).await;
    assert_eq!(all["items"].as_array().unwrap().len(), 3);

    let (status, _) = call(&f.app, "DELETE", &format!("/v1/admin/keys/{prefix}"), ADMIN, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_error(&call(&f.app, "GET", "/v1/memories", &key, None).await, StatusCode::UNAUTHORIZED, "unauthorized");
    assert_error(
        &call(&f.app, "DELETE", &format!("/v1/admin/keys/{prefix}"), ADMIN, None).await,
        StatusCode::NOT_FOUND,
        "not_found",
    );
    assert_error(
        &call(&f.app, "POST", "/v1/admin/keys", ADMIN, Some(json!({"tenant": ""}))).await,
        StatusCode::BAD_REQUEST,
        "invalid_request",
    );
}

#[tokio::test]
async fn tenant_keys_cannot_use_admin_routes() {
    let f = fixture();
    for (method, path, body) in [
        ("POST", "/v1/admin/keys", Some(json!({"tenant": "globex"}))),
        ("GET", "/v1/admin/keys", None),
        ("DELETE", "/v1/admin/keys/mnemo_globex_x", None),
        ("POST", "/v1/maintain", None),
    ] {
        assert_error(&call(&f.app, method, path, &f.a, body.clone()).await, StatusCode::FORBIDDEN, "forbidden");
        assert_error(&call(&f.app, method, path, "wrong", body).await, StatusCode::UNAUTHORIZED, "unauthorized");
    }
    let (status, report) = call(&f.app, "POST", "/v1/maintain", ADMIN, None).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    assert!(report["examined"].is_u64());
}

#[tokio::test]
async fn without_an_admin_key_admin_routes_are_closed() {
    let dir = tempfile::tempdir().unwrap();
    let config = mnemo::Config { data_dir: dir.path().to_path_buf(), ..mnemo::Config::default() };
    let store = std::sync::Arc::new(mnemo::store::SqliteStore::open(config.db_path()).unwrap());
    let memory = mnemo::Memory::from_parts(config, store, None, std::sync::Arc::new(mnemo::SystemClock));
    let keys = mnemo_server::KeyStore::in_memory().unwrap();
    let state = mnemo_server::AppState::new(std::sync::Arc::new(memory), keys).with_admin_key(Some("  ")).unwrap();
    let app = mnemo_server::app(state);
    for key in ["", "  ", "anything"] {
        let got = call(&app, "GET", "/v1/admin/keys", key, None).await;
        assert_error(&got, StatusCode::UNAUTHORIZED, "unauthorized");
    }
}

#[tokio::test]
async fn an_admin_key_is_trimmed_and_must_be_long() {
    let state = || {
        let dir = tempfile::tempdir().unwrap();
        let config = mnemo::Config { data_dir: dir.path().to_path_buf(), ..mnemo::Config::default() };
        let store = std::sync::Arc::new(mnemo::store::SqliteStore::open(config.db_path()).unwrap());
        let memory = mnemo::Memory::from_parts(config, store, None, std::sync::Arc::new(mnemo::SystemClock));
        (mnemo_server::AppState::new(std::sync::Arc::new(memory), mnemo_server::KeyStore::in_memory().unwrap()), dir)
    };
    for short in ["x", "  x  ", &"k".repeat(31), &format!(" {} \n", "k".repeat(31))] {
        let err = state().0.with_admin_key(Some(short)).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("MNEMO_ADMIN_KEY") && msg.contains("at least 32"), "{short:?}: {msg}");
    }
    // Pasted with spaces and a newline around it, the key still opens the admin routes.
    let key = "k".repeat(32);
    let (s, _dir) = state();
    let app = mnemo_server::app(s.with_admin_key(Some(&format!("  {key}\n"))).unwrap());
    let (status, body) = call(&app, "GET", "/v1/admin/keys", &key, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[test]
fn keys_are_stored_hashed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("keys.db");
    let store = mnemo_server::KeyStore::open(&path).unwrap();
    let (key, info) = store.create("acme").unwrap();
    assert_eq!(store.tenant_for(&key).unwrap().unwrap().as_str(), "acme");
    assert!(store.tenant_for(&format!("{key}x")).unwrap().is_none());
    drop(store);
    let bytes = std::fs::read(&path).unwrap();
    let secret = &key[info.prefix.len()..];
    assert!(!bytes.windows(secret.len()).any(|w| w == secret.as_bytes()), "the key's secret part is not on disk");
    // Reopening keeps the key working.
    let store = mnemo_server::KeyStore::open(&path).unwrap();
    assert!(store.tenant_for(&key).unwrap().is_some());
}
