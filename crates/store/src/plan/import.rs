//! A batch of exported records as rows: which go verbatim through their shared column list,
//! which a backend stores in its own layout (messages with their lexical entries, vectors,
//! sessions), what must already exist for a row to be accepted, and the partitions whose version
//! moves. No history rows, version bumps or status logic: a copy keeps rows exactly as they were.

use std::collections::BTreeSet;

use mnemo_core::{Memory, MemoryId, Message, MessageId, Scope, TenantId};

use super::apply::PartKey;
use crate::error::{Result, StoreError};
use crate::memories::Embedding;
use crate::messages::MessageVectors;
use crate::rows::Value;
use crate::rows::encode::{self, Insert};
use crate::sql::transfer::QUEUED_MESSAGE_EXISTS;
use crate::transfer::{Record, out_of_order};

/// A row an import writes only if a query finds the row it refers to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Requires {
    /// The query (shared SQL, `$N` placeholders): a row back means the referent exists.
    pub(crate) sql: &'static str,
    /// Its parameters.
    pub(crate) params: Vec<Value>,
    /// What the row is, for the refusal when the query finds nothing.
    pub(crate) what: &'static str,
    /// What it names.
    pub(crate) names: String,
}

impl Requires {
    /// The refusal of a row whose referent is missing.
    pub(crate) fn refusal(&self) -> StoreError {
        out_of_order(self.what, &self.names)
    }
}

/// One record's write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step<'a> {
    /// A row written verbatim through its shared column list, once `requires` finds its referent.
    Row {
        /// The row.
        insert: Insert,
        /// What must exist first.
        requires: Option<Requires>,
    },
    /// A message of the trace: the shared row, plus whatever the backend derives from it.
    Message {
        /// The message row.
        insert: Insert,
        /// The message.
        message: &'a Message,
        /// Taken out of archival recall.
        withheld: bool,
    },
    /// A message's vector, stored where the backend keeps them; refused if the message is not
    /// written yet.
    MessageEmbedding {
        /// The message's tenant, agent, user and chat.
        scope: &'a Scope,
        /// The message.
        message: &'a MessageId,
        /// Its vectors.
        vectors: &'a MessageVectors,
    },
    /// A memory row with its vector.
    Memory {
        /// The row.
        memory: &'a Memory,
        /// Its vector.
        embedding: Option<&'a Embedding>,
    },
    /// A document row with its vector.
    Document {
        /// The row.
        document: &'a mnemo_core::Document,
        /// Its vector.
        embedding: Option<&'a Embedding>,
    },
    /// An observation row with its vector.
    Observation {
        /// The row.
        observation: &'a mnemo_core::Observation,
        /// Its vector.
        embedding: Option<&'a Embedding>,
    },
    /// A session counted for a memory; refused if the memory is not written yet.
    Session {
        /// The memory's tenant.
        tenant: &'a TenantId,
        /// The memory.
        memory: MemoryId,
        /// The session.
        session: &'a str,
    },
}

/// A batch's writes, then the partitions whose version moves (sorted, so concurrent writers
/// lock them in one order).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan<'a> {
    /// One step per record, in batch order.
    pub(crate) steps: Vec<Step<'a>>,
    /// Partitions that gained rows: caches of other processes must reload them.
    pub(crate) partitions: BTreeSet<PartKey>,
}

/// Plans a batch; fails, before anything is written, on a row no backend can hold.
pub(crate) fn plan(batch: &[Record]) -> Result<Plan<'_>> {
    let mut partitions = BTreeSet::new();
    let steps = batch
        .iter()
        .map(|record| {
            Ok(match record {
                Record::Message { message, withheld } => Step::Message {
                    insert: Insert {
                        table: "messages",
                        columns: encode::MESSAGE,
                        values: encode::message(message, *withheld),
                    },
                    message,
                    withheld: *withheld,
                },
                Record::MessageEmbedding { scope, message, vectors } => {
                    Step::MessageEmbedding { scope, message, vectors }
                }
                Record::Memory { memory, embedding } => {
                    partitions.insert(memory.owner.key_parts().map(str::to_string));
                    Step::Memory { memory, embedding: embedding.as_ref() }
                }
                Record::Session { tenant, memory, session } => Step::Session { tenant, memory: *memory, session },
                Record::Document { document, embedding } => Step::Document { document, embedding: embedding.as_ref() },
                Record::Observation { observation, embedding } => {
                    Step::Observation { observation, embedding: embedding.as_ref() }
                }
                Record::History { tenant, entry } => {
                    Step::Row { insert: encode::history(tenant, entry), requires: None }
                }
                Record::Link { tenant, link } => Step::Row { insert: encode::link(tenant, link), requires: None },
                Record::Policy(p) => Step::Row { insert: encode::policy(p), requires: None },
                Record::Trace(t) => Step::Row { insert: encode::trace(t), requires: None },
                Record::Deletion { tenant, event, counts } => {
                    Step::Row { insert: encode::deletion(tenant, event, counts), requires: None }
                }
                Record::Queued(q) => {
                    let attempts = i32::try_from(q.attempts).map_err(|_| StoreError::Transfer {
                        op: "import",
                        reason: format!(
                            "the queue row of message {} counts {} attempts, more than the stores' integer column \
                             holds; fix the source row's attempts before copying",
                            q.message, q.attempts
                        ),
                    })?;
                    let [t, a, u, c] = q.scope.key_parts();
                    let params = vec![t.into(), a.into(), u.into(), c.into(), q.message.as_str().into()];
                    let names = format!("message {} of {}", q.message, q.scope);
                    Step::Row {
                        insert: encode::queued(q, attempts),
                        requires: Some(Requires { sql: QUEUED_MESSAGE_EXISTS, params, what: "a queue row", names }),
                    }
                }
                Record::ChatProgress { progress, claimed_until } => {
                    Step::Row { insert: encode::progress(progress, *claimed_until), requires: None }
                }
                Record::UserState { tenant, user, state, updated_at } => {
                    Step::Row { insert: encode::user_state(tenant, user, *state, *updated_at), requires: None }
                }
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Plan { steps, partitions })
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use mnemo_core::{Kind, Memory, MessageId, Scope};

    use super::{Step, plan};
    use crate::error::StoreError;
    use crate::queue::QueueState;
    use crate::transfer::{QueueRow, Record};

    fn t0() -> DateTime<Utc> {
        "2026-03-02T09:00:00Z".parse().unwrap()
    }

    fn queued(attempts: u32) -> Record {
        Record::Queued(QueueRow {
            scope: Scope::parse("acme", None, Some("dana"), Some("c1")).unwrap(),
            message: MessageId::new("m1").unwrap(),
            state: QueueState::Fallback,
            attempts,
            retry_at: None,
            last_error: None,
            fallback: vec![],
            queued_at: t0(),
        })
    }

    #[test]
    fn a_queue_row_needs_its_message_and_an_attempt_count_every_backend_holds() {
        let batch = [queued(2)];
        let p = plan(&batch).unwrap();
        let Step::Row { requires: Some(r), .. } = &p.steps[0] else { panic!("a checked row") };
        assert_eq!(r.params.len(), 5);
        assert!(matches!(r.refusal(), StoreError::Transfer { op: "import", .. }));
        assert!(matches!(plan(&[queued(u32::MAX)]).unwrap_err(), StoreError::Transfer { op: "import", .. }));
    }

    #[test]
    fn memories_bump_their_partitions_once_each() {
        let owner = Scope::parse("acme", None, Some("dana"), None).unwrap();
        let m =
            |c: &str| Record::Memory { memory: Memory::new(owner.clone(), Kind::Profile, c, t0()), embedding: None };
        let batch = [m("a"), m("b")];
        let p = plan(&batch).unwrap();
        assert_eq!(p.partitions.len(), 1);
        assert!(p.steps.iter().all(|s| matches!(s, Step::Memory { .. })));
    }
}
