//! What the heuristic extractor keeps from each line of stdin, one user message a line
//! ("Name: text" is read as the user speaking, as in LoCoMo). A developer's lens for trying
//! phrasings: `cargo run --release -p mnemo-core --example extract < lines.txt`.

use std::io::BufRead;

use chrono::{TimeZone, Utc};
use mnemo_core::extract::{Extractor, HeuristicExtractor};
use mnemo_core::{Message, MessageId, Role, Scope};

fn main() {
    let scope = Scope::parse("dev", None, Some("u"), Some("c")).expect("a valid scope");
    // A fixed clock (Monday 2 March 2026, noon) so dates in the output are comparable.
    let at = Utc.with_ymd_and_hms(2026, 3, 2, 12, 0, 0).single().expect("a valid time");
    for (i, line) in std::io::stdin().lock().lines().map_while(Result::ok).enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let message = Message {
            id: MessageId::new(format!("m{i}")).expect("a valid id"),
            scope: scope.clone(),
            role: Role::User,
            content: line.clone(),
            at,
        };
        println!("> {line}");
        for op in HeuristicExtractor.extract(&[message]) {
            let when = op.draft.valid_from.map(|d| d.date_naive().to_string()).unwrap_or_default();
            println!("    {:?} {} [{when}] {}", op.action, op.draft.kind.as_str(), op.draft.content);
        }
    }
}
