//! The server's integration tests: one binary (one link step), router tests driven with
//! `oneshot` and no sockets, plus tests over real TCP sockets (`socket`, `fairness`).

mod admin;
mod api;
mod common;
mod console;
mod documents;
mod errors;
mod fairness;
mod isolation;
mod limits;
mod logging;
mod mcp;
mod mem0;
mod observations;
mod openai_proxy;
mod openapi;
mod pii;
mod privacy;
mod sessions;
mod socket;
