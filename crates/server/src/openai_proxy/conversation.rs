//! What the proxy reads from and writes into an OpenAI chat request, without I/O: whose
//! conversation it is, the message memory answers, where the memory block goes, and the
//! assistant's reply in the upstream's answer (JSON or a server-sent event stream).

use axum::http::HeaderMap;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Header naming the end user when the request's `user` field does not.
pub(crate) const USER_HEADER: &str = "x-mnemo-user";
/// Header naming the conversation.
pub(crate) const CHAT_HEADER: &str = "x-mnemo-chat";
/// Header naming the agent, for memories kept per agent.
pub(crate) const AGENT_HEADER: &str = "x-mnemo-agent";

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty())
}

/// The end user: the request's `user` field (OpenAI's own end-user id), else `X-Mnemo-User`.
pub(crate) fn user(body: &Value, headers: &HeaderMap) -> Option<String> {
    body.get("user")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|u| !u.is_empty())
        .or_else(|| header(headers, USER_HEADER))
        .map(str::to_string)
}

/// The agent from `X-Mnemo-Agent`, if any.
pub(crate) fn agent(headers: &HeaderMap) -> Option<String> {
    header(headers, AGENT_HEADER).map(str::to_string)
}

/// The conversation: `X-Mnemo-Chat`, else an id derived from the conversation's first message,
/// which every later request of the same conversation repeats (the app resends its history).
pub(crate) fn chat(body: &Value, headers: &HeaderMap) -> Option<String> {
    if let Some(c) = header(headers, CHAT_HEADER) {
        return Some(c.to_string());
    }
    let first =
        body.get("messages")?.as_array()?.iter().find(|m| m.get("role").and_then(Value::as_str) != Some("system"))?;
    let digest = Sha256::digest(first.to_string().as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Some(format!("chat-{hex}"))
}

/// The text of a message's `content`: a string, or the text parts of a list of parts.
fn text_of(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
    .filter(|t| !t.trim().is_empty())
}

/// The last user message's text: what the memory block is built for and what is remembered.
pub(crate) fn last_user_text(body: &Value) -> Option<String> {
    let messages = body.get("messages")?.as_array()?;
    let last = messages.iter().rev().find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
    text_of(last.get("content")?)
}

/// Inserts the block as a system message after the app's own leading system (or developer)
/// messages, so the app's instructions stay first and the memory sits right after them.
pub(crate) fn insert_block(body: &mut Value, block: &str) -> bool {
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else { return false };
    let at = messages
        .iter()
        .take_while(|m| matches!(m.get("role").and_then(Value::as_str), Some("system" | "developer")))
        .count();
    messages.insert(at, json!({"role": "system", "content": block}));
    true
}

/// The assistant's reply in an upstream answer: `choices[0].message.content` of a JSON body, or
/// the `choices[0].delta.content` pieces of a server-sent event stream, joined.
pub(crate) fn reply_text(body: &[u8]) -> Option<String> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return v.pointer("/choices/0/message/content").and_then(Value::as_str).map(str::to_string);
    }
    let text = std::str::from_utf8(body).ok()?;
    let mut reply = String::new();
    for data in text.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim) {
        if data == "[DONE]" {
            break;
        }
        let Ok(chunk) = serde_json::from_str::<Value>(data) else { continue };
        let first = chunk.get("choices").and_then(Value::as_array).and_then(|c| c.first());
        if let Some(piece) = first.and_then(|c| c.pointer("/delta/content")).and_then(Value::as_str) {
            reply.push_str(piece);
        }
    }
    (!reply.is_empty()).then_some(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn the_user_and_the_chat_come_from_the_request_or_its_headers() {
        let body = json!({"user": "dana", "messages": [{"role": "system", "content": "Be brief."},
                                                        {"role": "user", "content": "Hi"}]});
        assert_eq!(user(&body, &headers(&[(USER_HEADER, "erin")])).as_deref(), Some("dana"));
        assert_eq!(user(&json!({}), &headers(&[(USER_HEADER, "erin")])).as_deref(), Some("erin"));
        assert_eq!(user(&json!({"user": " "}), &HeaderMap::new()), None);
        assert_eq!(chat(&body, &headers(&[(CHAT_HEADER, "c9")])).as_deref(), Some("c9"));
        let derived = chat(&body, &HeaderMap::new()).unwrap();
        let later = json!({"messages": [{"role": "system", "content": "Other system."}, {"role": "user", "content": "Hi"},
                                        {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "More"}]});
        assert_eq!(chat(&later, &HeaderMap::new()).unwrap(), derived, "stable across the conversation's turns");
        let other = json!({"messages": [{"role": "user", "content": "Hello there"}]});
        assert_ne!(chat(&other, &HeaderMap::new()).unwrap(), derived);
    }

    #[test]
    fn the_block_goes_after_the_apps_system_messages() {
        let mut body = json!({"messages": [{"role": "system", "content": "A"}, {"role": "developer", "content": "B"},
                                           {"role": "user", "content": "Q"}]});
        assert!(insert_block(&mut body, "MEM"));
        let roles: Vec<&str> =
            body["messages"].as_array().unwrap().iter().map(|m| m["content"].as_str().unwrap()).collect();
        assert_eq!(roles, ["A", "B", "MEM", "Q"]);
        let mut bare = json!({"messages": [{"role": "user", "content": "Q"}]});
        insert_block(&mut bare, "MEM");
        assert_eq!(bare["messages"][0], json!({"role": "system", "content": "MEM"}));
    }

    #[test]
    fn the_last_user_text_reads_strings_and_text_parts() {
        let body = json!({"messages": [{"role": "user", "content": "first"}, {"role": "assistant", "content": "x"},
            {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "u"}}]}]});
        assert_eq!(last_user_text(&body).as_deref(), Some("look"));
        assert_eq!(last_user_text(&json!({"messages": [{"role": "assistant", "content": "x"}]})), None);
    }

    #[test]
    fn the_reply_is_read_from_json_or_from_an_event_stream() {
        let json_body = br#"{"choices":[{"message":{"role":"assistant","content":"Hello!"}}]}"#;
        assert_eq!(reply_text(json_body).as_deref(), Some("Hello!"));
        let sse = b"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n\
                    data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n\
                    data: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\n\
                    data: {\"choices\":[],\"usage\":{\"total_tokens\":3}}\n\n\
                    data: [DONE]\n\n";
        assert_eq!(reply_text(sse).as_deref(), Some("Hello"));
        assert_eq!(reply_text(b"data: [DONE]\n\n"), None);
    }
}
