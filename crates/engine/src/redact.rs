//! The engine's doors to storage for text: every change set, trace envelope, policy and copied
//! record leaves through here, and what leaves holds no PII (see `mnemo_core::pii`).
//!
//! Messages are redacted earlier, when a batch is validated (`mnemo_core::message`), so their
//! ids, vectors and FTS rows are made from the redacted text. The gate rejects memories whose
//! content, key or value holds PII; these doors are what keeps the promise for every other
//! text (reasons, queries, model errors) and for any future path that forgets the gate.

use mnemo_core::pii::redact as text;
use mnemo_core::text::content_hash;
use mnemo_core::trace::TraceEnvelope;
use mnemo_core::{Document, HistoryEntry, Memory as Row, MemoryId, Message, Policy};
use mnemo_store::{Change, ChangeSet, Record};

use crate::Memory;
use crate::error::Result;

/// Keys of a stored envelope's JSON whose strings are free text (the rest are ids and enums).
const ENVELOPE_TEXT: &[&str] = &["query", "content", "degraded", "error", "item_errors"];

impl Memory {
    /// Applies a change set, its texts redacted: the one way the engine writes memories.
    pub(crate) fn apply_changes(&self, changes: ChangeSet) -> Result<()> {
        Ok(self.store.apply(&change_set(changes))?)
    }

    /// Records a trace envelope, its texts redacted: a trace explains a call, it does not quote
    /// a card number someone searched for.
    pub(crate) fn record_turn(&self, env: &TraceEnvelope, accessed: &[MemoryId]) -> Result<()> {
        Ok(self.store.record_turn(&envelope(env.clone()), accessed)?)
    }
}

fn opt(t: Option<String>) -> Option<String> {
    t.map(|t| text(&t))
}

/// Redacts a memory row's content, key and value (its hash follows its content).
fn row(m: &mut Row) {
    let content = text(&m.content);
    if content != m.content {
        m.content_hash = content_hash(&content);
        m.content = content;
    }
    m.key = opt(m.key.take());
    m.value = opt(m.value.take());
    if let Some(data) = m.metadata.as_mut() {
        metadata(data);
    }
}

/// A client's key-value data with every string in it, keys included, redacted, however deeply
/// nested.
fn metadata(data: &mut mnemo_core::Metadata) {
    object(data, true);
}

/// A change set with every text redacted.
pub(crate) fn change_set(mut cs: ChangeSet) -> ChangeSet {
    for c in &mut cs.changes {
        match c {
            Change::Insert { memory, reason, .. } => {
                row(memory);
                *reason = text(reason);
            }
            Change::SetStatus { reason, .. } | Change::Reinforce { reason, .. } => *reason = text(reason),
            Change::SetMetadata { metadata: Some(data), .. } => metadata(data),
            Change::SetEmbedding { .. }
            | Change::SetPinned { .. }
            | Change::SetMetadata { metadata: None, .. }
            | Change::Link(_)
            | Change::Withhold { .. } => {}
        }
    }
    cs
}

/// A trace envelope with the query, verdict contents, degradations and model errors redacted.
pub(crate) fn envelope(mut env: TraceEnvelope) -> TraceEnvelope {
    env.query = text(&env.query);
    env.degraded = opt(env.degraded);
    for v in &mut env.verdicts {
        v.content = text(&v.content);
    }
    for call in &mut env.llm {
        call.error = opt(call.error.take());
        for e in &mut call.item_errors {
            *e = text(e);
        }
    }
    env
}

/// A document with its source and every level redacted. The engine redacts the text before
/// computing levels and the vector; this door keeps the promise for any other path.
pub(crate) fn document(mut d: Document) -> Document {
    d.source = text(&d.source);
    d.gist = text(&d.gist);
    d.overview = text(&d.overview);
    d.text = text(&d.text);
    d
}

/// A policy with its text and the strings of its value redacted.
pub(crate) fn policy(mut p: Policy) -> Policy {
    p.text = text(&p.text);
    json(&mut p.value, true);
    p
}

fn message(mut m: Message) -> Message {
    m.content = text(&m.content);
    m
}

fn history(mut h: HistoryEntry) -> HistoryEntry {
    h.reason = text(&h.reason);
    h
}

/// Redacts strings of a JSON value: every one (`all`), or those under [`ENVELOPE_TEXT`] keys.
fn json(v: &mut serde_json::Value, all: bool) {
    use serde_json::Value;
    match v {
        Value::String(s) if all => *s = text(s),
        Value::Array(items) => items.iter_mut().for_each(|i| json(i, all)),
        Value::Object(map) => object(map, all),
        _ => {}
    }
}

/// Redacts an object's values as [`json`] does and, where every string is text (`all`: a
/// client's metadata, a policy's value), its keys too: a client may key its data by what it
/// would otherwise have put in a value (`{"card 4111 ...": true}`). Two keys that redact alike
/// become one, the later value kept.
fn object(map: &mut serde_json::Map<String, serde_json::Value>, all: bool) {
    for (k, mut v) in std::mem::take(map) {
        json(&mut v, all || ENVELOPE_TEXT.contains(&k.as_str()));
        map.insert(if all { text(&k) } else { k }, v);
    }
}

/// One record of a store copy (`mnemo copy`) with its texts redacted: a store written before
/// redaction caught a format, or by another tool, is cleaned on its way into the new one.
/// Ids, timestamps and counters are copied as they are.
pub fn redact_record(r: Record) -> Record {
    match r {
        Record::Message { message: m, withheld } => Record::Message { message: message(m), withheld },
        Record::Memory { mut memory, embedding } => {
            row(&mut memory);
            Record::Memory { memory, embedding }
        }
        Record::History { tenant, entry } => Record::History { tenant, entry: history(entry) },
        Record::Policy(p) => Record::Policy(policy(p)),
        Record::Trace(mut t) => {
            if let Ok(body) = serde_json::from_str::<serde_json::Value>(&t.body) {
                // Rewritten only when something was redacted: the envelope is otherwise copied
                // as the row holds it.
                let mut clean = body.clone();
                json(&mut clean, false);
                if clean != body {
                    t.body = clean.to_string();
                }
            } else {
                t.body = text(&t.body);
            }
            Record::Trace(t)
        }
        Record::ChatProgress { mut progress, claimed_until } => {
            progress.last_error = opt(progress.last_error);
            Record::ChatProgress { progress, claimed_until }
        }
        Record::Document { document: d, embedding } => Record::Document { document: document(d), embedding },
        Record::Observation { observation: mut o, embedding } => {
            o.tool = text(&o.tool);
            o.args_summary = text(&o.args_summary);
            o.text = opt(o.text);
            Record::Observation { observation: o, embedding }
        }
        other @ (Record::MessageEmbedding { .. }
        | Record::Link { .. }
        | Record::Session { .. }
        | Record::Deletion { .. }
        | Record::Queued(_)
        | Record::UserState { .. }) => other,
    }
}

/// A memory's history as a copy writes it (see [`redact_record`]), for comparing a source with
/// its copy.
pub fn redact_history(entries: Vec<HistoryEntry>) -> Vec<HistoryEntry> {
    entries.into_iter().map(history).collect()
}
