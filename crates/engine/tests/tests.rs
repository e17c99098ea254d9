//! Engine integration tests: one binary, real SQLite store, hashing and real local embedders.

mod archive;
mod common;
mod documents;
mod erase;
mod generalize;
mod llm;
mod local_model;
mod memory_loop;
mod message_ids;
mod pii;
mod privacy_switches;
mod reconsolidate;
mod sessions;
mod skills;
mod snapshots;
