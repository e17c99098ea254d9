//! Integration tests for mnemo-models, gathered into one binary so it links once.

mod fetch;
mod hash;
#[cfg(feature = "local")]
mod local;
mod openai;
mod settings;
