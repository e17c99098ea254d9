//! One integration-test binary for mnemo-store (one link step on a 2-core machine).

mod conformance;
mod erasure;
mod postgres;
mod sqlite;
