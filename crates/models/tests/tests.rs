//! Integration tests for mnemo-models, gathered into one binary so it links once.

mod chat;
mod fetch;
mod hash;
#[cfg(feature = "local")]
mod local;
mod openai;
mod settings;
