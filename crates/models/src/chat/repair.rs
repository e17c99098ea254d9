//! Pulling JSON out of what a model actually wrote.
//!
//! Servers that ignore `response_format` (or were asked without it) answer in plain text: the
//! JSON wrapped in a code fence, preceded by "Sure! Here are the operations:", followed by an
//! explanation, with a trailing comma, after a `<think>` block, or cut off when the model ran
//! out of tokens. [`extract_json`] recovers the value in each of those cases and says which
//! repairs it needed. A cut-off reply becomes its *complete prefix*: the elements that were
//! finished are kept, the one being written is dropped, and the open brackets are closed, so a
//! truncated list of ten ops yields the first nine rather than nothing.
//!
//! Only objects and arrays count as JSON here: a reply that is a bare number or string carries
//! no structure worth extracting.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Most candidate start positions tried in one text, bounding the work on adversarial input.
const MAX_STARTS: usize = 64;
/// Most cut points tried when repairing a truncated value.
const MAX_CUTS: usize = 256;

/// One thing [`extract_json`] had to do to get a value; recorded so traces show how clean the
/// model's output was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Repair {
    /// A `<think>...</think>` reasoning block was removed.
    ThinkBlock,
    /// The JSON sat inside a Markdown code fence.
    CodeFence,
    /// Prose before or after the JSON was ignored.
    SurroundingText,
    /// Commas before a closing bracket were removed.
    TrailingCommas,
    /// The text ended inside the value; its complete prefix was kept.
    Truncated,
}

/// A value recovered from text, with the repairs it took (empty when the text was clean JSON).
#[derive(Debug, Clone, PartialEq)]
pub struct Repaired {
    /// The JSON object or array.
    pub value: Value,
    /// What had to be done, in the order it was done.
    pub repairs: Vec<Repair>,
}

/// Finds the JSON object or array in a model's reply, repairing the usual damage; `None` when
/// there is nothing that can be read as one.
///
/// Order of attempts: the whole text; the contents of code fences; every balanced `{...}` /
/// `[...]` span (the longest that parses wins, so a stray `[1]` in prose does not beat the real
/// object); finally the complete prefix of a value the text ends inside. Never panics.
pub fn extract_json(text: &str) -> Option<Repaired> {
    let mut repairs = Vec::new();
    let stripped = strip_think(text);
    let text = match &stripped {
        Some(s) => {
            repairs.push(Repair::ThinkBlock);
            s.as_str()
        }
        None => text,
    };
    if let Some(v) = parse_container(text.trim()) {
        return Some(Repaired { value: v, repairs });
    }
    for block in fenced_blocks(text) {
        if let Some(mut r) = from_text(block) {
            repairs.push(Repair::CodeFence);
            repairs.append(&mut r.repairs);
            return Some(Repaired { value: r.value, repairs });
        }
    }
    let mut r = from_text(text)?;
    repairs.append(&mut r.repairs);
    Some(Repaired { value: r.value, repairs })
}

/// Whole text, then balanced spans, then a truncated prefix; the fence-free core of
/// [`extract_json`].
fn from_text(text: &str) -> Option<Repaired> {
    let trimmed = text.trim();
    if let Some(v) = parse_container(trimmed) {
        return Some(Repaired { value: v, repairs: vec![] });
    }
    if let Some(fixed) = strip_trailing_commas(trimmed) {
        if let Some(v) = parse_container(&fixed) {
            return Some(Repaired { value: v, repairs: vec![Repair::TrailingCommas] });
        }
    }
    let bytes = text.as_bytes();
    let mut best: Option<(usize, Repaired)> = None;
    let mut unclosed: Option<usize> = None;
    let mut pos = 0;
    let mut starts = 0;
    while let Some(off) = bytes.get(pos..).and_then(|rest| rest.iter().position(|b| matches!(b, b'{' | b'['))) {
        let start = pos + off;
        starts += 1;
        if starts > MAX_STARTS {
            break;
        }
        match scan(bytes, start, false) {
            Scan::Closed(end) => {
                let span = &text[start..end];
                let found = parse_container(span).map(|v| (v, vec![])).or_else(|| {
                    strip_trailing_commas(span)
                        .and_then(|f| parse_container(&f))
                        .map(|v| (v, vec![Repair::TrailingCommas]))
                });
                if let Some((value, mut fixes)) = found {
                    let len = end - start;
                    if best.as_ref().is_none_or(|(l, _)| len > *l) {
                        let mut repairs = vec![];
                        if span.len() != trimmed.len() {
                            repairs.push(Repair::SurroundingText);
                        }
                        repairs.append(&mut fixes);
                        best = Some((len, Repaired { value, repairs }));
                    }
                    pos = end;
                    continue;
                }
            }
            Scan::Open(_) => {
                unclosed.get_or_insert(start);
            }
            Scan::Invalid => {}
        }
        pos = start + 1;
    }
    // A value the text ends inside competes with the complete ones by the text it spans, so
    // an object cut short is not beaten by one of its own finished elements.
    let truncated = unclosed.and_then(|start| {
        let Scan::Open(cuts) = scan(bytes, start, true) else { return None };
        let value = complete_prefix(&text[start..], start, &cuts)?;
        let mut repairs = vec![];
        if !text[..start].trim().is_empty() {
            repairs.push(Repair::SurroundingText);
        }
        repairs.push(Repair::Truncated);
        Some((text.len() - start, Repaired { value, repairs }))
    });
    match (best, truncated) {
        (Some((len, r)), Some((tlen, t))) => Some(if tlen > len { t } else { r }),
        (best, truncated) => best.or(truncated).map(|(_, r)| r),
    }
}

/// Parses text as JSON, keeping only objects and arrays.
fn parse_container(text: &str) -> Option<Value> {
    if !(text.starts_with('{') || text.starts_with('[')) {
        return None;
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ (Value::Object(_) | Value::Array(_))) => Some(v),
        _ => None,
    }
}

/// Removes `<think>...</think>` blocks (and an unclosed one running to the end); `None` when
/// there is none.
fn strip_think(text: &str) -> Option<String> {
    const OPEN: &str = "<think>";
    const CLOSE: &str = "</think>";
    if !text.contains(OPEN) && !text.contains(CLOSE) {
        return None;
    }
    let mut rest = text;
    // Some servers drop the opening tag and send only the reasoning and `</think>`.
    if let (Some(close), None) = (rest.find(CLOSE), rest.find(OPEN)) {
        rest = &rest[close + CLOSE.len()..];
    }
    let mut out = String::with_capacity(rest.len());
    while let Some(open) = rest.find(OPEN) {
        out.push_str(&rest[..open]);
        match rest[open..].find(CLOSE) {
            Some(close) => rest = &rest[open + close + CLOSE.len()..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

/// The contents of Markdown code fences, in order; an unclosed last fence runs to the end of
/// the text (the model was cut off inside it).
///
/// As in Markdown, a fence opens only at the start of a line (after at most three spaces), so
/// three backticks inside a JSON string are never read as one. A closing fence is the next one
/// at the start of a line, or else the last backticks in the text (a one-line "```{...}```").
fn fenced_blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = line_fence(rest) {
        let after = &rest[open + 3..];
        // Skip the info string ("json", "JSON5"...) up to the end of the fence line.
        let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
        let info = &after[..body_start];
        let body = if info.trim_start().starts_with(['{', '[']) { after } else { &after[body_start..] };
        match line_fence(body).or_else(|| body.rfind("```")) {
            Some(close) => {
                out.push(&body[..close]);
                rest = &body[close + 3..];
            }
            None => {
                out.push(body);
                break;
            }
        }
    }
    out
}

/// Offset of the first "```" that starts a line (after at most three spaces).
fn line_fence(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find("```").map(|i| from + i) {
        let line = text[..i].rfind('\n').map_or(0, |n| n + 1);
        let indent = &text[line..i];
        if indent.len() <= 3 && indent.bytes().all(|b| b == b' ') {
            return Some(i);
        }
        from = i + 3;
    }
    None
}

/// Drops every comma whose next non-blank character closes an object or array (outside
/// strings); `None` when there was none.
fn strip_trailing_commas(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escape, mut changed) = (false, false, false);
    let mut last = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match (escape, b) {
                (true, _) => escape = false,
                (false, b'\\') => escape = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b',' => {
                let next = bytes[i + 1..].iter().find(|c| !c.is_ascii_whitespace());
                if matches!(next, Some(b'}' | b']')) {
                    out.push_str(&text[last..i]);
                    last = i + 1;
                    changed = true;
                }
            }
            _ => {}
        }
    }
    out.push_str(&text[last..]);
    changed.then_some(out)
}

/// A place where a truncated value can be cut and closed: everything before `pos` (an absolute
/// byte offset) is complete, and `open` are the brackets still open there, outermost first.
#[derive(Debug)]
struct Cut {
    pos: usize,
    open: Vec<u8>,
}

/// How scanning a bracketed value from its first bracket ended.
enum Scan {
    /// The outermost bracket closed at this offset (exclusive).
    Closed(usize),
    /// The text ended inside the value; cut points recorded when asked for.
    Open(Vec<Cut>),
    /// A closing bracket did not match its opener.
    Invalid,
}

/// Walks a bracketed value from `start`, string-aware, to where its outermost bracket closes.
///
/// With `record`, notes cut points: after a completed element (before its comma or after its
/// closing bracket) and after an opening bracket, but never inside an element of an array: a
/// half-written element is dropped whole rather than kept with fields missing.
fn scan(bytes: &[u8], start: usize, record: bool) -> Scan {
    // Each open bracket, with whether it lies inside an array element (itself or an ancestor).
    let mut stack: Vec<(u8, bool)> = Vec::new();
    let mut cuts = Vec::new();
    let (mut in_string, mut escape) = (false, false);
    let cut = |stack: &[(u8, bool)], pos: usize, cuts: &mut Vec<Cut>| {
        if record && stack.last().is_some_and(|&(_, in_element)| !in_element) {
            cuts.push(Cut { pos, open: stack.iter().map(|&(b, _)| b).collect() });
        }
    };
    for (i, &b) in bytes.iter().enumerate().skip(start) {
        if in_string {
            match (escape, b) {
                (true, _) => escape = false,
                (false, b'\\') => escape = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                let in_element = stack.last().is_some_and(|&(p, inside)| p == b'[' || inside);
                stack.push((b, in_element));
                cut(&stack, i + 1, &mut cuts);
            }
            b'}' | b']' => {
                let opener = if b == b'}' { b'{' } else { b'[' };
                if stack.pop().map(|(o, _)| o) != Some(opener) {
                    return Scan::Invalid;
                }
                if stack.is_empty() {
                    return Scan::Closed(i + 1);
                }
                cut(&stack, i + 1, &mut cuts);
            }
            b',' => cut(&stack, i, &mut cuts),
            _ => {}
        }
    }
    Scan::Open(cuts)
}

/// Closes a truncated value at the latest cut point that yields valid JSON. `text` starts at
/// absolute offset `base`.
fn complete_prefix(text: &str, base: usize, cuts: &[Cut]) -> Option<Value> {
    // Cutting right after the outermost bracket would turn "[sorry, nothing" into `[]`.
    for cut in cuts.iter().rev().take(MAX_CUTS).filter(|c| c.pos > base + 1) {
        let mut candidate = text[..cut.pos - base].trim_end().trim_end_matches(',').to_owned();
        candidate.extend(cut.open.iter().rev().map(|&b| if b == b'{' { '}' } else { ']' }));
        let fixed = strip_trailing_commas(&candidate).unwrap_or(candidate);
        if let Some(v) = parse_container(&fixed) {
            return Some(v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn get(text: &str) -> (Value, Vec<Repair>) {
        let r = extract_json(text).unwrap_or_else(|| panic!("no JSON in {text:?}"));
        (r.value, r.repairs)
    }

    #[test]
    fn clean_json_needs_no_repair() {
        assert_eq!(get(r#" {"ops": []} "#), (json!({"ops": []}), vec![]));
        assert_eq!(get("[1, 2]"), (json!([1, 2]), vec![]));
    }

    #[test]
    fn scalars_and_prose_are_not_json() {
        for t in ["", "42", "\"ops\"", "true", "no memories", "{ not json }", "[", "{", "}{", "]]]", "sorry [none"] {
            assert_eq!(extract_json(t), None, "{t:?}");
        }
    }

    #[test]
    fn code_fences_with_or_without_language() {
        assert_eq!(get("```json\n{\"a\": 1}\n```"), (json!({"a": 1}), vec![Repair::CodeFence]));
        assert_eq!(get("Here:\n```\n[\"x\"]\n```\nDone."), (json!(["x"]), vec![Repair::CodeFence]));
        assert_eq!(get("```{\"a\": 1}```"), (json!({"a": 1}), vec![Repair::CodeFence]));
        // Backticks inside a string are not a fence, fenced or not.
        let v = json!({"ops": [{"s": "```"}, {"s": ""}]});
        let pretty = serde_json::to_string_pretty(&v).unwrap();
        assert_eq!(get(&format!("{pretty} A")).0, v);
        assert_eq!(get(&format!("Ok:\n```json\n{pretty}\n```\nA")).0, v);
        assert_eq!(get(&format!("{} A", serde_json::to_string(&v).unwrap())).0, v);
        // A fence around the wrong thing first, then the real one.
        assert_eq!(get("```text\nnothing\n```\n```json\n{\"b\": 2}\n```").0, json!({"b": 2}));
    }

    #[test]
    fn prose_around_the_value_is_ignored_and_the_longest_value_wins() {
        let (v, r) = get("Sure! I found [2] things: {\"ops\": [{\"op\": \"add\"}]} Hope this helps [ok].");
        assert_eq!(v, json!({"ops": [{"op": "add"}]}));
        assert_eq!(r, vec![Repair::SurroundingText]);
        // Braces in prose before the JSON do not derail it.
        assert_eq!(get("Use {name} like so: {\"name\": \"x\"}").0, json!({"name": "x"}));
        assert_eq!(get("a { b. {\"x\": 1}").0, json!({"x": 1}));
        // Brackets inside strings are not structure.
        assert_eq!(get(r#"note: {"s": "a } ] { [ \" quote"}"#).0, json!({"s": "a } ] { [ \" quote"}));
    }

    #[test]
    fn trailing_commas_are_removed() {
        assert_eq!(get("{\"a\": [1, 2,], }"), (json!({"a": [1, 2]}), vec![Repair::TrailingCommas]));
        assert_eq!(get("{\"s\": \"a,}\",}").0, json!({"s": "a,}"}), "commas inside strings stay");
        assert_eq!(
            get("text {\"a\": [1,\n ]} end"),
            (json!({"a": [1]}), vec![Repair::SurroundingText, Repair::TrailingCommas])
        );
    }

    #[test]
    fn think_blocks_are_dropped() {
        assert_eq!(
            get("<think>maybe {\"wrong\": 1}</think>\n{\"right\": 2}"),
            (json!({"right": 2}), vec![Repair::ThinkBlock])
        );
        assert_eq!(get("reasoning only {\"wrong\": 1}</think>{\"right\": 2}").0, json!({"right": 2}));
        assert_eq!(extract_json("<think>{\"never\": \"finished\"}"), None);
    }

    #[test]
    fn truncated_values_keep_their_complete_prefix() {
        let (v, r) = get(r#"{"ops": [{"op": "add", "content": "a"}, {"op": "forget", "cont"#);
        assert_eq!(v, json!({"ops": [{"op": "add", "content": "a"}]}));
        assert_eq!(r, vec![Repair::Truncated]);
        assert_eq!(get(r#"{"ops": [{"op": "add", "con"#).0, json!({"ops": []}));
        assert_eq!(get(r#"{"ops": ["#).0, json!({"ops": []}));
        assert_eq!(get(r#"{"a": 1, "b": {"c": 2, "d": "unfinished"#).0, json!({"a": 1, "b": {"c": 2}}));
        assert_eq!(get(r#"[1, 2, 3"#).0, json!([1, 2]), "an unfinished number may be cut short: dropped");
        assert_eq!(get(r#"[[1, 2], [3"#).0, json!([[1, 2]]));
        // Truncated inside a fence, after prose.
        let (v, r) = get("Here you go:\n```json\n{\"ops\": [{\"op\": \"add\"}, {\"op\"");
        assert_eq!(v, json!({"ops": [{"op": "add"}]}));
        assert_eq!(r, vec![Repair::CodeFence, Repair::Truncated]);
        let (_, r) = get("Here you go: {\"ops\": [{\"op\": \"add\"}, {\"op\"");
        assert_eq!(r, vec![Repair::SurroundingText, Repair::Truncated]);
    }

    #[test]
    fn complete_value_beats_a_truncated_one() {
        assert_eq!(get("{\"a\": 1, \"c\": 3} and then {\"b\": [2, ").0, json!({"a": 1, "c": 3}));
        // ... measured by the text it spans, so a finished element does not beat its list.
        assert_eq!(get("{\"a\": 1} and then {\"b\": [2, 3, ").0, json!({"b": [2, 3]}));
    }

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_text(s in "\\PC{0,200}") {
            let _ = extract_json(&s);
        }

        #[test]
        fn never_panics_on_json_like_noise(s in "[\\[\\]{}\",:a1 \\\\]{0,80}") {
            let _ = extract_json(&s);
        }

        #[test]
        fn any_object_survives_prose_and_fences(
            items in proptest::collection::vec(("[a-z]{1,8}", any::<i32>(), "\\PC{0,12}"), 0..6),
            before in "[A-Za-z .!]{0,30}",
            after in "[A-Za-z .!]{0,30}",
            fence in any::<bool>(),
        ) {
            let v = json!({"ops": items.iter().map(|(k, n, s)| json!({"op": k, "n": n, "s": s})).collect::<Vec<_>>()});
            let body = serde_json::to_string_pretty(&v).unwrap();
            let text = if fence { format!("{before}\n```json\n{body}\n```\n{after}") } else { format!("{before} {body} {after}") };
            prop_assert_eq!(extract_json(&text).map(|r| r.value), Some(v));
        }

        #[test]
        fn a_truncated_list_yields_a_prefix_of_its_items(
            items in proptest::collection::vec(("[a-z]{1,8}", "\\PC{0,12}"), 1..8),
            cut in 0.0f64..1.0,
        ) {
            let all: Vec<Value> = items.iter().map(|(k, s)| json!({"op": k, "s": s})).collect();
            let text = serde_json::to_string(&json!({"ops": all})).unwrap();
            let mut at = ((text.len() as f64) * cut) as usize;
            while !text.is_char_boundary(at) { at -= 1; }
            if let Some(r) = extract_json(&text[..at]) {
                let got = r.value.get("ops").and_then(Value::as_array).cloned().unwrap_or_default();
                prop_assert!(got.len() <= all.len());
                prop_assert_eq!(&got[..], &all[..got.len()]);
            }
        }
    }
}
