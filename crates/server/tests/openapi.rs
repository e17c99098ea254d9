//! The committed OpenAPI document matches what the code generates.

use std::path::PathBuf;

#[test]
fn openapi_document_matches_the_committed_copy() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("openapi.json");
    let generated = mnemo_server::openapi::document_json();
    if std::env::var_os("MNEMO_UPDATE_OPENAPI").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "crates/server/openapi.json is out of date with the code. Regenerate it with\n  \
         cargo run -p mnemo-server --example dump-openapi > crates/server/openapi.json\n\
         or MNEMO_UPDATE_OPENAPI=1 cargo nextest run -p mnemo-server openapi"
    );
}

#[test]
fn every_route_is_documented_with_the_error_shape() {
    let doc: serde_json::Value = serde_json::from_str(&mnemo_server::openapi::document_json()).unwrap();
    assert_eq!(doc["openapi"], "3.1.0");
    let paths = doc["paths"].as_object().unwrap();
    for p in [
        "/v1/messages",
        "/v1/recall",
        "/v1/context",
        "/v1/memories",
        "/v1/memories/{id}",
        "/v1/memories/{id}/pin",
        "/v1/memories/{id}/unpin",
        "/v1/policies",
        "/v1/sessions/{chat_id}/usage",
        "/v1/sessions/{chat_id}/rotate",
        "/v1/observations",
        "/v1/traces/{turn_id}",
        "/v1/maintain",
        "/v1/admin/keys",
        "/v1/admin/keys/{prefix}",
        "/healthz",
        "/metrics",
    ] {
        assert!(paths.contains_key(p), "{p} is documented");
    }
    assert!(doc["components"]["schemas"]["ErrorBody"].is_object());
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());
}

#[test]
fn the_kind_schema_is_every_kind_with_its_description() {
    use mnemo::core::Kind;
    let doc: serde_json::Value = serde_json::from_str(&mnemo_server::openapi::document_json()).unwrap();
    let schema = &doc["components"]["schemas"]["Kind"];
    let listed: Vec<&str> = schema["enum"].as_array().unwrap().iter().filter_map(|v| v.as_str()).collect();
    assert_eq!(listed, Kind::ALL.iter().map(|k| k.as_str()).collect::<Vec<_>>());
    let prose = schema["description"].as_str().unwrap();
    for k in Kind::ALL {
        assert!(prose.contains(&format!("`{k}`: {}", k.spec().description)), "{k} described");
    }
    let add = &doc["components"]["schemas"]["AddMemoryRequest"]["properties"]["kind"];
    assert_eq!(add["$ref"], "#/components/schemas/Kind", "{add}");
}

/// The router and the document are one list: every documented operation is served (none falls
/// to the 404 or 405 fallback), every one that names the `bearer` scheme refuses a request
/// without a key, and `/openapi.json` serves the committed document.
#[tokio::test]
async fn every_documented_operation_is_served_with_its_security() {
    use axum::http::StatusCode;
    use axum::http::header::CONTENT_TYPE;
    use tower::ServiceExt;

    use crate::common::{fixture, request, send};

    let f = fixture();
    let doc: serde_json::Value = serde_json::from_str(&mnemo_server::openapi::document_json()).unwrap();
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        // Any value fills a path parameter: the check is routing and auth, not the resource.
        let uri = path.replace("{id}", "01J0000000000000000000000").replace(['{', '}'], "");
        for (method, op) in item.as_object().unwrap() {
            let secured = op["security"].as_array().is_some_and(|s| s.iter().any(|r| r.get("bearer").is_some()));
            let (status, body) = send(&f.app, request(&method.to_uppercase(), &uri, None, None)).await;
            assert_ne!(status, StatusCode::NOT_FOUND, "{method} {path} is routed: {body}");
            assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path} is routed: {body}");
            if secured {
                assert_eq!(status, StatusCode::UNAUTHORIZED, "{method} {path} needs a key: {body}");
            } else {
                assert_eq!(status, StatusCode::OK, "{method} {path} is open: {body}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 46, "every operation of the document was checked");

    let (status, served) = send(&f.app, request("GET", "/openapi.json", None, None)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(served, doc, "/openapi.json serves the generated document");
    let res = f.app.clone().oneshot(request("GET", "/openapi.json", None, None)).await.unwrap();
    assert_eq!(res.headers()[CONTENT_TYPE], "application/json");
}
