//! mnemo-core: the domain of durable LLM memory and its pure rules.
//!
//! Read it in the order data flows: [`message`] (the trace's unit) → [`extract`] (proposed
//! [`op`]s) → [`gate`] (a [`verdict`] per op) → [`memory`] rows → [`recall`] (path A exact, path B
//! ranked by [`score`] and [`decay`]) → [`assemble`] (the token-budgeted block) → [`trace`].
//! Nothing here performs I/O or blocks; every rule is unit- and property-tested.
#![deny(missing_docs)]
// Libraries log through `tracing`; only the binary writes to stdout and stderr.
#![cfg_attr(not(test), deny(clippy::print_stderr, clippy::print_stdout))]

pub mod archive;
pub mod assemble;
pub mod common;
pub mod config;
pub mod consolidate;
pub mod decay;
pub mod detail;
pub mod document;
pub mod error;
pub mod export;
pub mod extract;
pub mod forget;
pub mod gate;
pub mod id;
pub mod kind;
pub mod language;
pub mod lifecycle;
pub mod limits;
pub mod memory;
pub mod message;
pub mod observation;
pub mod op;
pub mod outline;
pub mod passage;
pub mod period;
pub mod pii;
pub mod policy;
pub mod recall;
pub mod reconsolidate;
pub mod restate;
pub mod safety;
pub mod scope;
pub mod score;
pub mod shape;
pub mod skill;
pub mod text;
pub mod tokens;
pub mod trace;
pub mod user;
pub mod verdict;
pub mod vocative;
pub mod window;
pub mod workplace;

pub use assemble::{ContextBlock, Section, SectionName};
pub use config::Tuning;
pub use document::{Document, DocumentKind};
pub use error::{CoreError, Result};
pub use id::{AgentId, ChatId, DocumentId, MemoryId, MessageId, ObservationId, TenantId, UserId};
pub use kind::{Kind, Status, StatusKind, Surface};
pub use memory::{HistoryEntry, HistoryEvent, Link, LinkKind, Memory, Metadata, Provenance, Sensitivity};
pub use message::{Message, NewMessage, Role};
pub use observation::{Observation, Outcome};
pub use op::{Action, Draft, ProposedOp, Target};
pub use policy::Policy;
pub use recall::{RecallItem, RecallMode};
pub use scope::{Layer, Scope};
pub use user::UserState;
pub use verdict::{RejectReason, Verdict};
