//! Two tenants, two users: nothing one writes is visible to the other through any route, and a
//! foreign id answers 404 exactly like an id that never existed. The fuzz at the end tries
//! every route of the served OpenAPI document with every method and with the other tenant's,
//! the other user's, made-up, malformed and huge ids, in path parameters, query strings and
//! request bodies, then mem0's routes and the MCP tools the same way, and compares the victims'
//! data before and after.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::common::{
    ADMIN, assert_error, call, configured, dana_messages, example, fields, fixture, request, send, with_value,
    without_rate_limit,
};
use crate::mcp::{V2025_06, initialize, rpc};

fn contents(v: &Value, field: &str) -> String {
    v[field].as_array().map(|a| a.iter().map(|i| i["content"].to_string()).collect()).unwrap_or_default()
}

#[tokio::test]
async fn tenant_b_sees_nothing_of_tenant_a() {
    let f = fixture();
    let (status, report) = call(&f.app, "POST", "/v1/messages", &f.a, Some(dana_messages("dana", "c1"))).await;
    assert_eq!(status, StatusCode::OK);
    let a_turn = report["turn_id"].as_str().unwrap().to_string();
    let (_, added) = call(
        &f.app,
        "POST",
        "/v1/memories",
        &f.a,
        Some(json!({"user_id": "dana", "kind": "fact", "content": "Dana's server runs on Debian 12"})),
    )
    .await;
    let a_id = added["verdict"]["memory_id"].as_str().unwrap().to_string();
    call(&f.app, "POST", "/v1/policies", &f.a, Some(json!({"key": "tone", "text": "Be formal with acme users."})))
        .await;
    let (_, a_ctx) = call(
        &f.app,
        "POST",
        "/v1/context",
        &f.a,
        Some(json!({"user_id": "dana", "chat_id": "c1", "message": "Where do I live?"})),
    )
    .await;
    let a_ctx_turn = a_ctx["turn_id"].as_str().unwrap().to_string();
    assert!(a_ctx["text"].as_str().unwrap().contains("Lisbon"), "tenant A sees its own: {a_ctx}");

    // Tenant B asks with the very same user and chat ids.
    let b = &f.b;
    let (status, list) = call(&f.app, "GET", "/v1/memories?user_id=dana&chat_id=c1", b, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["items"], json!([]), "{list}");
    let (_, list) = call(&f.app, "GET", "/v1/memories", b, None).await;
    assert_eq!(list["items"], json!([]), "{list}");

    let (_, recall) = call(
        &f.app,
        "POST",
        "/v1/recall",
        b,
        Some(json!({"user_id": "dana", "chat_id": "c1", "query": "Lisbon Debian name short answers"})),
    )
    .await;
    assert_eq!(recall["items"], json!([]), "{recall}");
    assert_eq!(recall["exact"], json!([]), "{recall}");
    assert_eq!(recall["policies"], json!([]), "{recall}");

    let (_, ctx) = call(
        &f.app,
        "POST",
        "/v1/context",
        b,
        Some(json!({"user_id": "dana", "chat_id": "c1", "message": "Where do I live?"})),
    )
    .await;
    let text = ctx["text"].as_str().unwrap();
    for leak in ["Lisbon", "Dana", "Debian", "formal", "short answers"] {
        assert!(!text.contains(leak), "{leak} leaked into tenant B's block: {text}");
    }

    let (_, policies) = call(&f.app, "GET", "/v1/policies", b, None).await;
    assert_eq!(policies["items"], json!([]));

    for turn in [&a_turn, &a_ctx_turn] {
        let got = call(&f.app, "GET", &format!("/v1/traces/{turn}"), b, None).await;
        assert_error(&got, StatusCode::NOT_FOUND, "not_found");
    }

    // A's memory id through every id route with B's key: 404, the same as a made-up id.
    let never = mnemo::core::MemoryId::new().to_string();
    for id in [&a_id, &never] {
        for (method, path) in [
            ("GET", format!("/v1/memories/{id}?user_id=dana")),
            ("POST", format!("/v1/memories/{id}/pin?user_id=dana")),
            ("POST", format!("/v1/memories/{id}/unpin?user_id=dana")),
            ("DELETE", format!("/v1/memories/{id}?user_id=dana")),
        ] {
            let got = call(&f.app, method, &path, b, None).await;
            assert_error(&got, StatusCode::NOT_FOUND, "not_found");
            assert!(!got.1["message"].as_str().unwrap().contains("acme"), "{}", got.1);
        }
    }

    // And A's memory is untouched by B's attempts.
    let (_, detail) = call(&f.app, "GET", &format!("/v1/memories/{a_id}?user_id=dana"), &f.a, None).await;
    assert_eq!(detail["memory"]["status"], "active", "{detail}");
    assert_eq!(detail["memory"]["pinned"], false);

    // B writing the same ids creates B's own, separate data.
    let (_, b_report) = call(&f.app, "POST", "/v1/messages", b, Some(dana_messages("dana", "c1"))).await;
    assert_eq!(b_report["appended"], 3, "message ids are per tenant: {b_report}");
}

#[tokio::test]
async fn users_of_one_tenant_do_not_see_each_other() {
    let f = fixture();
    call(&f.app, "POST", "/v1/messages", &f.a, Some(dana_messages("dana", "c1"))).await;
    let (_, added) = call(
        &f.app,
        "POST",
        "/v1/memories",
        &f.a,
        Some(json!({"user_id": "dana", "kind": "fact", "content": "Dana's server runs on Debian 12"})),
    )
    .await;
    let id = added["verdict"]["memory_id"].as_str().unwrap();

    let (_, list) = call(&f.app, "GET", "/v1/memories?user_id=eve&chat_id=c1", &f.a, None).await;
    assert_eq!(list["items"], json!([]), "{list}");
    let (_, recall) =
        call(&f.app, "POST", "/v1/recall", &f.a, Some(json!({"user_id": "eve", "query": "Lisbon Debian"}))).await;
    assert!(!contents(&recall, "items").contains("Lisbon") && !contents(&recall, "exact").contains("Debian"));
    let got = call(&f.app, "GET", &format!("/v1/memories/{id}?user_id=eve"), &f.a, None).await;
    assert_error(&got, StatusCode::NOT_FOUND, "not_found");
}

/// What one tenant wrote for the fuzz below: ids of every kind, and the marker that each
/// user's (and the tenant's) text carries, which no answer to anyone else may contain.
struct Seeded {
    key: String,
    users: [&'static str; 2],
    /// Per user: memory, memo, document ids and the turn of a context call.
    memories: Vec<String>,
    memos: Vec<String>,
    documents: Vec<String>,
    turns: Vec<String>,
    /// Tenant-wide provisional memories: candidates.
    candidates: Vec<String>,
    /// The secret marker of each user, then the tenant's.
    secrets: Vec<String>,
}

fn chat_of(user: &str) -> String {
    format!("{user}-chat")
}

fn secret_of(owner: &str) -> String {
    format!("Zq{}Secret", owner.replace('-', ""))
}

/// The id under `pointer` of a 2xx answer to `method path`.
async fn written(app: &axum::Router, key: &str, method: &str, path: &str, body: Value, pointer: &str) -> String {
    let (status, out) = call(app, method, path, key, Some(body)).await;
    assert!(status.is_success(), "{method} {path}: {status} {out}");
    out.pointer(pointer).and_then(Value::as_str).unwrap_or_else(|| panic!("{path}: no {pointer} in {out}")).to_string()
}

/// Writes, for each of `users` of the tenant of `key`, a message, a memory, a memo, a
/// user-owned document, an observation and a context call (a trace), and one tenant-wide
/// candidate; every text carries its owner's secret marker.
async fn seed(app: &axum::Router, key: &str, tenant: &str, users: [&'static str; 2]) -> Seeded {
    let mut s = Seeded {
        key: key.to_string(),
        users,
        memories: vec![],
        memos: vec![],
        documents: vec![],
        turns: vec![],
        candidates: vec![],
        secrets: vec![],
    };
    for user in users {
        let (secret, chat) = (secret_of(&format!("{tenant}{user}")), chat_of(user));
        let messages = json!({"user_id": user, "chat_id": chat, "messages": [
            {"id": format!("{user}-m1"), "role": "user", "content": format!("My name is {secret} and I live in Porto.")}
        ]});
        let (status, out) = call(app, "POST", "/v1/messages", key, Some(messages)).await;
        assert_eq!(status, StatusCode::OK, "{out}");
        let memory = json!({"user_id": user, "kind": "fact", "content": format!("{secret} keeps bees on the roof")});
        s.memories.push(written(app, key, "POST", "/v1/memories", memory, "/verdict/memory_id").await);
        let memo = json!({"user_id": user, "chat_id": chat, "text": format!("{secret} asked about the bees")});
        s.memos.push(written(app, key, "POST", "/v1/memos", memo, "/id").await);
        let document = json!({"user_id": user, "owner": "user", "kind": "note", "text": format!("{secret} hive inspection notes")});
        s.documents.push(written(app, key, "POST", "/v1/documents", document, "/document/id").await);
        let observation = json!({"user_id": user, "chat_id": chat, "tool": "edit_file", "outcome": "success", "args_summary": "hive.log",
                                 "text": format!("{secret} edited the hive log")});
        let (status, out) = call(app, "POST", "/v1/observations", key, Some(observation)).await;
        assert_eq!(status, StatusCode::CREATED, "{out}");
        let context = json!({"user_id": user, "chat_id": chat, "message": "What do I keep on the roof?"});
        s.turns.push(written(app, key, "POST", "/v1/context", context, "/turn_id").await);
        s.secrets.push(secret);
    }
    let secret = secret_of(tenant);
    let candidate = json!({"kind": "fact", "content": format!("{secret}: the office is closed on holidays")});
    s.candidates.push(written(app, key, "POST", "/v1/memories", candidate, "/memory/id").await);
    s.secrets.push(secret);
    s
}

/// Everything of `users` (and the tenant's candidates) that the routes can show, as the owner
/// sees it: exports (less their time), memos, documents, observations, traces, user states.
async fn snapshot(app: &axum::Router, s: &Seeded, users: &[&str]) -> Vec<Value> {
    let mut shown = Vec::new();
    let mut paths = vec!["/v1/candidates".to_string()];
    for user in users {
        let chat = chat_of(user);
        paths.extend([
            format!("/v1/users/{user}/export"),
            format!("/v1/users/{user}"),
            format!("/v1/memos?user_id={user}&chat_id={chat}"),
            format!("/v1/documents?user_id={user}"),
            format!("/v1/observations?user_id={user}"),
            format!("/v1/memories?user_id={user}"),
        ]);
    }
    paths.extend(s.turns.iter().map(|t| format!("/v1/traces/{t}")));
    for path in paths {
        let (status, mut out) = call(app, "GET", &path, &s.key, None).await;
        assert_eq!(status, StatusCode::OK, "{path}: {out}");
        if let Some(o) = out.as_object_mut() {
            o.remove("exported_at");
        }
        shown.push(json!({"path": path, "answer": out}));
    }
    shown
}

/// Ids no store holds: a well-formed one never issued, malformed ones, injection and traversal
/// attempts (percent-encoded, as they travel in a path), and a huge one.
fn junk_ids() -> Vec<String> {
    let mut ids: Vec<String> = [
        "0",
        "-1",
        "not-an-id",
        "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "%00",
        "%27%20OR%201%3D1--",
        "%F0%9F%90%9D",
        "%ff%fe",
        "mnemo_acme_",
    ]
    .map(String::from)
    .into();
    ids.push(mnemo::core::MemoryId::new().to_string());
    ids.push("7".repeat(20_000));
    ids
}

/// One fuzzing pass's attacker and victims.
struct Attack<'a> {
    /// The attacker's key.
    key: &'a str,
    /// The user the attacker names as its scope (query and body) wherever a route takes one.
    user: &'a str,
    /// Whether the key is another tenant's: then every route is scoped by it; within one tenant
    /// only a route that takes a user is a user's (a trace, say, is the tenant's).
    other_tenant: bool,
    /// The values tried for each path parameter.
    ids: Vec<String>,
    /// The victims' object ids (memories, memos, documents, candidates, turns).
    owned: Vec<String>,
    /// The victims' secret markers.
    secrets: &'a [String],
    /// Path templates not to try.
    skip: fn(&str) -> bool,
}

impl Attack<'_> {
    /// Asserts that one answer, to a request with `id` in it, is no server error, holds no
    /// victim's secret and, where the id names a victim's object in a scoped request
    /// (`names_theirs`), is no success (a `null` is mem0's server's "not found").
    #[track_caller]
    fn judge(&self, at: &str, id: &str, status: StatusCode, out: &Value, names_theirs: bool) {
        let shown = out.to_string();
        let at = format!("{at} ({} chars of id)", id.len());
        assert!(!status.is_server_error(), "{at}: {status} {shown}");
        for secret in self.secrets {
            assert!(!shown.contains(secret), "{at}: {status} reveals {secret}: {shown}");
        }
        if names_theirs && self.owned.iter().any(|o| o == id) {
            assert!(!status.is_success() || out.is_null(), "{at}: another's object answered {status}: {shown}");
        }
    }

    /// Whether a body or query field is one to put the attack's ids in, and whether it then
    /// names an object (`Some(true)`) or a scope (`Some(false)`). A scope (`user_id`, `chat_id`,
    /// `agent_id`) only across tenants: within one, naming any of its users is the tenant's
    /// right. A message's own `id` names nothing stored before and is no slot.
    fn slot(&self, field: &[String]) -> Option<bool> {
        let name = field.last()?.as_str();
        if field.iter().any(|f| f == "messages") {
            return None;
        }
        match name {
            "id" | "ids" | "memory_id" => Some(true),
            "user_id" | "chat_id" | "agent_id" if self.other_tenant => Some(false),
            _ => None,
        }
    }

    /// Values of `schema` (references resolved in `doc`): an example with one of the attack's
    /// ids in one [slot](Self::slot), for every id and slot (and a held item's every kind),
    /// each with its id and whether the slot names an object.
    fn filled(&self, doc: &Value, schema: &Value, kinds: &[Value]) -> Vec<(&str, Value, bool)> {
        let chat = chat_of(self.user);
        let mut out = Vec::new();
        for field in fields(doc, schema, &|_, _| true) {
            let Some(object) = self.slot(&field) else { continue };
            for id in &self.ids {
                let value = if field.last().is_some_and(|f| f == "ids") { json!([id]) } else { json!(id) };
                let filled = with_value(doc, schema, &field, value, self.user, &chat);
                out.extend(each_kind(filled, kinds).into_iter().map(|v| (id.as_str(), v, object)));
            }
        }
        out
    }
}

/// One fuzzing pass: every documented path with a parameter, every method, each parameter set
/// to each of the attack's ids, asked with the attacker's key as its user. Asserts no answer is
/// a server error or contains a victim's secret, and that a victim's object id in an `{id}` or
/// `{turn_id}` parameter is never answered with success where the request is scoped. Returns
/// the number of requests sent.
async fn fuzz(app: &axum::Router, doc: &Value, attack: &Attack<'_>) -> usize {
    let mut sent = 0;
    for (template, item) in doc["paths"].as_object().unwrap() {
        let Some(param) = template.split('{').nth(1).and_then(|p| p.split('}').next()) else { continue };
        if (attack.skip)(template) {
            continue;
        }
        for id in &attack.ids {
            let path = template.replace(&format!("{{{param}}}"), id);
            let chat = if param == "chat_id" { id.clone() } else { chat_of(attack.user) };
            for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
                let op = &item[method.to_ascii_lowercase()];
                let mut query = Vec::new();
                for p in op["parameters"].as_array().into_iter().flatten().filter(|p| p["in"] == "query") {
                    match p["name"].as_str() {
                        Some("user_id") => query.push(format!("user_id={}", attack.user)),
                        Some("chat_id") => query.push(format!("chat_id={}", chat_of(attack.user))),
                        _ => {}
                    }
                }
                let uri = if query.is_empty() { path.clone() } else { format!("{path}?{}", query.join("&")) };
                let body = op
                    .pointer("/requestBody/content/application~1json/schema")
                    .map(|schema| example(doc, schema, "", attack.user, &chat));
                let scoped = attack.other_tenant
                    || query.iter().any(|q| q.starts_with("user_id="))
                    || body.as_ref().is_some_and(|b| b.get("user_id").is_some());
                let (status, out) = call(app, method, &uri, attack.key, body).await;
                sent += 1;
                let at = format!("{method} {}", uri.chars().take(120).collect::<String>());
                let names_theirs = scoped && (param == "id" || param == "turn_id");
                attack.judge(&at, id, status, &out, names_theirs);
            }
        }
    }
    sent
}

/// A path template with its parameters set to the attacker's own values (a made-up object id).
fn own_path(template: &str, user: &str) -> String {
    template
        .replace("{id}", &mnemo::core::MemoryId::new().to_string())
        .replace("{turn_id}", &mnemo::core::MemoryId::new().to_string())
        .replace("{chat_id}", &chat_of(user))
        .replace("{user_id}", user)
}

/// What a held item (of a context-usage report) may be, from the document.
fn held_kinds(doc: &Value) -> Vec<Value> {
    doc.pointer("/components/schemas/HeldKindName/enum").and_then(Value::as_array).unwrap().clone()
}

/// `body` once for each kind its held item may be, so each kind's ids are tried; or as it is.
fn each_kind(body: Value, kinds: &[Value]) -> Vec<Value> {
    if body.pointer("/items/0/kind").is_none() {
        return vec![body];
    }
    kinds
        .iter()
        .map(|kind| {
            let mut body = body.clone();
            body["items"][0]["kind"] = kind.clone();
            body
        })
        .collect()
}

/// The second fuzzing pass: every documented operation with its path its own, each id of the
/// attack put in each query parameter and body field that names a scope or an object (see
/// [`Attack::slot`]; a held item's, once for each kind it may be). Returns the requests sent.
async fn fuzz_fields(app: &axum::Router, doc: &Value, attack: &Attack<'_>) -> usize {
    let kinds = held_kinds(doc);
    let chat = chat_of(attack.user);
    let mut sent = 0;
    for (template, item) in doc["paths"].as_object().unwrap() {
        if (attack.skip)(template) || template.contains("/admin/") {
            continue;
        }
        let path = own_path(template, attack.user);
        for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
            let op = &item[method.to_ascii_lowercase()];
            let query: Vec<&str> = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|p| p["in"] == "query")
                .filter_map(|p| p["name"].as_str())
                .collect();
            let own_query = |name: &str| match name {
                "user_id" => Some(attack.user.to_string()),
                "chat_id" => Some(chat.clone()),
                _ => None,
            };
            let schema = op.pointer("/requestBody/content/application~1json/schema");
            let own_body = schema.map(|s| example(doc, s, "", attack.user, &chat));
            // The requests: the query with one parameter set to the id, or the body with one field.
            let mut tries: Vec<(&str, String, Option<Value>, bool)> = Vec::new();
            let with = |name: &str, id: &str| {
                let q: Vec<String> = query
                    .iter()
                    .filter_map(|n| {
                        if *n == name { Some(id.to_string()) } else { own_query(n) }.map(|v| format!("{n}={v}"))
                    })
                    .collect();
                if q.is_empty() { path.clone() } else { format!("{path}?{}", q.join("&")) }
            };
            for id in &attack.ids {
                for name in query.iter().filter(|n| attack.slot(&[n.to_string()]).is_some()) {
                    tries.push((id, with(name, id), own_body.clone(), false));
                }
            }
            for (id, body, object) in schema.map(|s| attack.filled(doc, s, &kinds)).unwrap_or_default() {
                tries.push((id, with("", ""), Some(body), object));
            }
            for (id, uri, body, object) in tries {
                let shown_body = body.as_ref().map(|b| b.to_string().chars().take(160).collect::<String>());
                let (status, out) = call(app, method, &uri, attack.key, body).await;
                sent += 1;
                let at = format!("{method} {} {shown_body:?}", uri.chars().take(120).collect::<String>());
                attack.judge(&at, id, status, &out, object);
            }
        }
    }
    sent
}

/// mem0's routes (not in the document), the platform's under `/mem0` and the self-hosted
/// server's at the root, each with `{id}` in its path, query or body, and whether the id there
/// names an object (a memory, an add's event) rather than a scope.
const MEM0: &[(&str, &str, Option<&str>, bool)] = &[
    ("GET", "/mem0/v1/memories/{id}/", None, true),
    ("PUT", "/mem0/v1/memories/{id}/", Some(r#"{"text": "fuzzing text about bees"}"#), true),
    ("DELETE", "/mem0/v1/memories/{id}/", None, true),
    ("GET", "/mem0/v1/memories/{id}/history/", None, true),
    ("GET", "/mem0/v1/event/{id}/", None, true),
    (
        "PUT",
        "/mem0/v1/batch/",
        Some(r#"{"memories": [{"memory_id": "{id}", "text": "fuzzing text about bees"}]}"#),
        true,
    ),
    ("DELETE", "/mem0/v1/batch/", Some(r#"{"memories": [{"memory_id": "{id}"}]}"#), true),
    ("POST", "/mem0/v1/feedback/", Some(r#"{"memory_id": "{id}", "feedback": "POSITIVE"}"#), true),
    ("POST", "/mem0/v3/memories/", Some(r#"{"filters": {"user_id": "{id}"}}"#), false),
    ("POST", "/mem0/v2/memories/", Some(r#"{"filters": {"OR": [{"user_id": "{id}"}, {"run_id": "{id}"}]}}"#), false),
    (
        "POST",
        "/mem0/v3/memories/search/",
        Some(r#"{"query": "bees on the roof", "filters": {"user_id": "{id}"}}"#),
        false,
    ),
    ("POST", "/mem0/v2/memories/search/", Some(r#"{"query": "bees on the roof", "agent_id": "{id}"}"#), false),
    (
        "POST",
        "/mem0/v3/memories/add/",
        Some(r#"{"messages": "I keep bees", "user_id": "{id}", "infer": false}"#),
        false,
    ),
    ("POST", "/mem0/v1/memories/", Some(r#"{"messages": "I keep bees", "user_id": "{id}", "run_id": "{id}"}"#), false),
    ("DELETE", "/mem0/v1/memories/?user_id={id}", None, false),
    ("DELETE", "/mem0/v2/entities/user/{id}/", None, false),
    ("DELETE", "/mem0/v2/entities/run/{id}/", None, false),
    ("GET", "/memories/{id}", None, true),
    ("PUT", "/memories/{id}", Some(r#"{"text": "fuzzing text about bees"}"#), true),
    ("DELETE", "/memories/{id}", None, true),
    ("GET", "/memories/{id}/history", None, true),
    ("GET", "/memories?user_id={id}", None, false),
    ("DELETE", "/memories?run_id={id}", None, false),
    ("POST", "/search", Some(r#"{"query": "bees on the roof", "user_id": "{id}"}"#), false),
    (
        "POST",
        "/memories",
        Some(r#"{"messages": [{"role": "user", "content": "I keep bees"}], "user_id": "{id}"}"#),
        false,
    ),
];

/// The third pass, across tenants only (mem0's routes act for the tenant, whichever of its
/// users a memory is): every route of [`MEM0`] with each id. Returns the requests sent.
async fn fuzz_mem0(app: &axum::Router, attack: &Attack<'_>) -> usize {
    let mut sent = 0;
    for (method, template, body, object) in MEM0 {
        for id in &attack.ids {
            let uri = template.replace("{id}", id);
            let body = body.map(|b| serde_json::from_str::<Value>(&b.replace("{id}", id)).unwrap());
            let (status, out) = call(app, method, &uri, attack.key, body).await;
            sent += 1;
            attack.judge(&format!("{method} {}", uri.chars().take(120).collect::<String>()), id, status, &out, *object);
        }
    }
    sent
}

/// The fourth pass: every MCP tool, in a session of the attacker's key, with each id in each
/// argument that names a scope or an object (see [`Attack::slot`]; the tools' input schemas
/// walked as the document's are). A tool's failure counts as a refusal, an internal one as a
/// server error. Returns the calls made.
async fn fuzz_tools(app: &axum::Router, doc: &Value, attack: &Attack<'_>) -> usize {
    let kinds = held_kinds(doc);
    let (session, _) = initialize(app, attack.key, V2025_06).await;
    let (_, listed) = rpc(app, attack.key, &session, "tools/list", json!({})).await;
    let mut sent = 0;
    for tool in listed["result"]["tools"].as_array().unwrap() {
        let (name, schema) = (tool["name"].as_str().unwrap(), &tool["inputSchema"]);
        for (id, arguments, object) in attack.filled(schema, schema, &kinds) {
            let at = format!("tool {name} {}", arguments.to_string().chars().take(160).collect::<String>());
            let call = json!({"name": name, "arguments": arguments});
            let (status, reply) = rpc(app, attack.key, &session, "tools/call", call).await;
            sent += 1;
            let text = reply["result"]["content"][0]["text"].as_str().unwrap_or_default();
            let internal = reply["error"]["code"] == -32603 || text.starts_with("internal error");
            let refused = reply["error"].is_object() || reply["result"]["isError"] == true;
            let status = match (internal, refused) {
                (true, _) => StatusCode::INTERNAL_SERVER_ERROR,
                (false, true) if status.is_success() => StatusCode::BAD_REQUEST,
                _ => status,
            };
            attack.judge(&at, id, status, &reply, object);
        }
    }
    sent
}

#[tokio::test]
async fn no_route_reveals_or_changes_another_tenants_or_users_data_whatever_the_ids() {
    let f = configured(without_rate_limit);
    let a = seed(&f.app, &f.a, "acme", ["ann", "amos"]).await;
    let b = seed(&f.app, &f.b, "globex", ["bea", "bob"]).await;
    let (status, doc) = send(&f.app, request("GET", "/openapi.json", None, None)).await;
    assert_eq!(status, StatusCode::OK);
    let (_, keys) = send(&f.app, request("GET", "/v1/admin/keys", Some(ADMIN), None)).await;
    let prefixes: Vec<String> = keys["items"]
        .as_array()
        .or(keys.as_array())
        .unwrap_or_else(|| panic!("{keys}"))
        .iter()
        .filter_map(|k| k["prefix"].as_str().map(String::from))
        .collect();
    assert_eq!(prefixes.len(), 2, "{keys}");

    let before_a = snapshot(&f.app, &a, &a.users).await;
    let before_b = snapshot(&f.app, &b, &b.users).await;

    // Tenant B with every id of tenant A's, and A's user and chat names as its own scope.
    let objects: Vec<String> =
        [&a.memories, &a.memos, &a.documents, &a.turns, &a.candidates].into_iter().flatten().cloned().collect();
    let mut ids = objects.clone();
    ids.extend(a.users.iter().map(|u| u.to_string()));
    ids.extend(a.users.iter().map(|u| chat_of(u)));
    ids.extend(prefixes.iter().cloned());
    ids.extend(junk_ids());
    let mut sent = 0;
    for user in a.users {
        let attack = Attack {
            key: &b.key,
            user,
            other_tenant: true,
            ids: ids.clone(),
            owned: objects.clone(),
            secrets: &a.secrets,
            skip: |_| false,
        };
        sent += fuzz(&f.app, &doc, &attack).await;
    }
    // A third tenant with the same ids in query strings and bodies, on mem0's routes and in the
    // MCP tools' arguments: these passes write (documents shared by a tenant's users, mem0's
    // adds), so the attacker is one whose data the test does not compare.
    let (status, created) =
        send(&f.app, request("POST", "/v1/admin/keys", Some(ADMIN), Some(&json!({"tenant": "initech"})))).await;
    assert!(status.is_success(), "{created}");
    let third = created["key"].as_str().unwrap_or_else(|| panic!("{created}")).to_string();
    let secrets: Vec<String> = a.secrets.iter().chain(&b.secrets).cloned().collect();
    let attack = Attack {
        key: &third,
        user: a.users[0],
        other_tenant: true,
        ids: ids.clone(),
        owned: objects.clone(),
        secrets: &secrets,
        skip: |_| false,
    };
    sent += fuzz_fields(&f.app, &doc, &attack).await;
    sent += fuzz_mem0(&f.app, &attack).await;
    sent += fuzz_tools(&f.app, &doc, &attack).await;
    // Tenant A's data, and B's other users', are byte for byte as they were.
    assert!(snapshot(&f.app, &a, &a.users).await == before_a, "the other tenants' requests changed tenant A's data");
    assert!(snapshot(&f.app, &b, &b.users).await == before_b, "the fuzz changed tenant B's own users' data");

    // Within tenant A, amos's scope with ann's ids. The routes named by a user (`{user_id}`)
    // are the tenant's to manage for any of its users, and a candidate is the tenant's, not a
    // user's: neither is another user's object.
    let before_ann = snapshot(&f.app, &a, &["ann"]).await;
    let ann: Vec<String> =
        [&a.memories, &a.memos, &a.documents, &a.turns].into_iter().flat_map(|v| v.iter().take(1)).cloned().collect();
    let mut ids = ann.clone();
    ids.push(chat_of("ann"));
    ids.extend(junk_ids());
    let attack = Attack {
        key: &a.key,
        user: "amos",
        other_tenant: false,
        ids,
        owned: ann,
        secrets: std::slice::from_ref(&a.secrets[0]),
        skip: |t| t.contains("{user_id}") || t.contains("/admin/"),
    };
    sent += fuzz(&f.app, &doc, &attack).await;
    sent += fuzz_fields(&f.app, &doc, &attack).await;
    sent += fuzz_tools(&f.app, &doc, &attack).await;
    assert!(snapshot(&f.app, &a, &["ann"]).await == before_ann, "amos's requests changed ann's data");
    assert!(sent > 1_000, "the fuzz covered the routes: {sent} requests");
}
