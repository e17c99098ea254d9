//! `mnemo candidates`: list the crystallization candidates (and other provisional memories) a
//! scope sees, and approve or reject one.

use anyhow::Result;
use clap::Subcommand;
use mnemo::core::MemoryId;
use mnemo::{Memory, Scope};

#[derive(Subcommand, Debug)]
pub(crate) enum CandidatesCommand {
    /// Provisional memories waiting for a decision, oldest first.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Make a candidate active (agent-layer knowledge then reaches every user of the agent).
    Approve {
        /// The memory id.
        id: MemoryId,
    },
    /// Archive a candidate; consolidation will not propose the same wording again.
    Reject {
        /// The memory id.
        id: MemoryId,
    },
}

pub(crate) fn run(which: &CandidatesCommand, memory: &Memory, scope: &Scope) -> Result<()> {
    match which {
        CandidatesCommand::List { json } => {
            let rows = memory.list_candidates(scope)?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&rows)?);
            } else if rows.is_empty() {
                println!("no candidates");
            } else {
                for m in &rows {
                    let layer = match (&m.owner.agent, &m.owner.user) {
                        (Some(a), None) => format!("agent {a}"),
                        (None, None) => "tenant".to_string(),
                        (_, Some(u)) => format!("user {u}"),
                    };
                    println!("{} {} ({layer}): {}", m.id, m.kind, m.content);
                }
            }
        }
        CandidatesCommand::Approve { id } => {
            let m = memory.approve(scope, *id)?;
            println!("{} approved: now {}", m.id, m.status.kind());
        }
        CandidatesCommand::Reject { id } => {
            let m = memory.reject(scope, *id)?;
            println!("{} rejected: now {}", m.id, m.status.kind());
        }
    }
    Ok(())
}
