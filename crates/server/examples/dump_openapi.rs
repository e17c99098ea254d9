//! Prints the OpenAPI document, for refreshing the committed copy:
//! `cargo run -p mnemo-server --example dump-openapi > crates/server/openapi.json`.

fn main() {
    print!("{}", mnemo_server::openapi::document_json());
}
