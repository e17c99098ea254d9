//! A recorded turn as rows: its envelope, and the memories whose access statistics it moves.

use mnemo_core::MemoryId;
use mnemo_core::trace::{TraceEnvelope, TraceOp};

use crate::error::{Result, StoreError};
use crate::rows::encode::{self, Insert};
use crate::transfer::TraceRow;

/// What recording one turn writes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Turn {
    /// The envelope's row.
    pub(crate) envelope: Insert,
    /// Each memory the turn returned or placed in a block, once, in that order, and whether it
    /// was placed (its last-surfaced time moves too).
    pub(crate) touched: Vec<(MemoryId, bool)>,
    /// How far its commit goes before it returns.
    pub(crate) durability: Durability,
}

/// How far a commit goes before the write returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Durability {
    /// On the disk: it survives a power cut. Every write of what a user said or asked for.
    Flushed,
    /// In the database's log, on the disk with the next flushed commit or checkpoint: it
    /// survives the process dying, not the machine losing power (which can only lose the last
    /// such commits, never reorder or corrupt anything). For a read's own bookkeeping, its
    /// trace envelope and the access statistics of what it returned: the wait on the disk was
    /// a tenth of a million-row recall, and in its slowest calls much more.
    Logged,
}

/// Plans recording `env`, which returned `accessed` (and placed `env.surfaced` in a block).
pub(crate) fn plan(env: &TraceEnvelope, accessed: &[MemoryId]) -> Turn {
    let row = TraceRow {
        turn_id: env.turn_id.clone(),
        scope: env.scope.clone(),
        op: env.op.as_str().to_string(),
        at: env.at,
        surfaced: env.surfaced.clone(),
        body: serde_json::to_string(env).expect("trace serialises"),
    };
    let mut ids: Vec<MemoryId> = accessed.to_vec();
    ids.extend(env.surfaced.iter().filter(|id| !accessed.contains(id)));
    let touched = ids.into_iter().map(|id| (id, env.surfaced.contains(&id))).collect();
    // A recall or a context call is a read: what it records is its own bookkeeping.
    let durability = match env.op {
        TraceOp::Recall | TraceOp::Context => Durability::Logged,
        TraceOp::Ingest | TraceOp::Extract | TraceOp::Job | TraceOp::Rotate => Durability::Flushed,
    };
    Turn { envelope: encode::trace(&row), touched, durability }
}

/// An envelope as stored.
pub(crate) fn envelope(body: &str) -> Result<TraceEnvelope> {
    serde_json::from_str(body).map_err(|e| StoreError::Corrupt { what: "trace", detail: e.to_string() })
}

/// The surfaced ids of several envelopes, in order.
pub(crate) fn surfaced(lists: &[String]) -> Result<Vec<MemoryId>> {
    let mut out = Vec::new();
    for l in lists {
        let ids: Vec<MemoryId> = serde_json::from_str(l)
            .map_err(|e| StoreError::Corrupt { what: "trace surfaced ids", detail: e.to_string() })?;
        out.extend(ids);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use mnemo_core::MemoryId;
    use mnemo_core::trace::{TraceEnvelope, TraceOp};

    #[test]
    fn each_memory_is_touched_once_returned_first_and_marked_when_placed() {
        let (a, b, c) = (MemoryId::new(), MemoryId::new(), MemoryId::new());
        let env: TraceEnvelope = serde_json::from_value(serde_json::json!({
            "turn_id": "t1", "scope": {"tenant": "acme"}, "op": TraceOp::Context.as_str(),
            "at": "2026-03-02T09:00:00Z", "query": "q", "surfaced": [b, c], "micros": 1, "retrieved": [],
            "below_floor": [], "held_back": [], "shed": [], "verdicts": [], "llm": [], "embed_micros": 0,
        }))
        .unwrap();
        let turn = super::plan(&env, &[a, b]);
        assert_eq!(turn.touched, vec![(a, false), (b, true), (c, true)]);
        assert_eq!(super::surfaced(&[serde_json::to_string(&[a]).unwrap()]).unwrap(), vec![a]);
        let crate::rows::Value::Text(Some(body)) = &turn.envelope.values[8] else { panic!("the body column") };
        assert_eq!(super::envelope(body).unwrap().turn_id, "t1");
    }

    /// Only a read's bookkeeping may skip the wait on the disk; every other traced operation
    /// records what was written on a user's behalf.
    #[test]
    fn only_reads_record_their_turns_without_a_flush() {
        for op in TraceOp::ALL {
            let env: TraceEnvelope = serde_json::from_value(serde_json::json!({
                "turn_id": "t1", "scope": {"tenant": "acme"}, "op": op.as_str(),
                "at": "2026-03-02T09:00:00Z", "query": "q", "surfaced": [], "micros": 1, "retrieved": [],
                "below_floor": [], "held_back": [], "shed": [], "verdicts": [], "llm": [], "embed_micros": 0,
            }))
            .unwrap();
            let read = matches!(op, TraceOp::Recall | TraceOp::Context);
            let expected = if read { super::Durability::Logged } else { super::Durability::Flushed };
            assert_eq!(super::plan(&env, &[]).durability, expected, "{op}");
        }
    }
}
