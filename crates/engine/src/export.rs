//! Exports of one scope's memory: MEMORY.md, CONVENTIONS.md, the agent's skills, or everything
//! as JSON.

use chrono::{DateTime, Utc};
use mnemo_core::export::{ExportFormat, conventions, memory_md};
use mnemo_core::{CoreError, HistoryEntry, Link, Memory as Row, Policy, Scope};
use mnemo_store::ListFilter;
use serde::{Deserialize, Serialize};

use crate::Memory;
use crate::error::Result;

/// One memory with its whole story, as the JSON export carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportedMemory {
    /// The row, any status.
    pub memory: Row,
    /// Its append-only history, oldest first.
    pub history: Vec<HistoryEntry>,
    /// Links from and to it.
    pub links: Vec<Link>,
}

/// The JSON export: every memory the scope owns, any status, with history and links, and the
/// policies binding it. Versioned so later readers know what they hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportDocument {
    /// Format version of this document.
    pub version: u32,
    /// What was exported.
    pub scope: Scope,
    /// When.
    pub exported_at: DateTime<Utc>,
    /// The memories, oldest first.
    pub memories: Vec<ExportedMemory>,
    /// Policy versions binding the scope.
    pub policies: Vec<Policy>,
}

impl Memory {
    /// Renders what the scope's memory holds. `memory-md` and `json` cover the memories the
    /// scope's user owns (across that user's layers; tenant-wide rows are not the user's);
    /// `conventions` covers what the scope's agent owns and needs an agent; `skills` is the
    /// agent's approved skills, each file after a `<!-- NAME.md -->` line (see
    /// [`Memory::export_skills`] for the files themselves).
    pub fn export(&self, scope: &Scope, format: ExportFormat) -> Result<String> {
        let now = self.clock.now();
        self.turns.settle_user(scope);
        let mut all = self.store.list(scope, &ListFilter::default())?;
        all.reverse(); // oldest first
        match format {
            ExportFormat::Skills => {
                let files = self.export_skills(scope)?;
                Ok(files.iter().map(|f| format!("<!-- {} -->\n{}", f.name, f.text)).collect::<Vec<_>>().join("\n"))
            }
            ExportFormat::Conventions => {
                let agent = scope.agent.as_ref().ok_or(CoreError::MissingScope("agent_id"))?;
                Ok(conventions(agent.as_str(), &all, now))
            }
            ExportFormat::MemoryMd => {
                let user = scope.require_user()?;
                let own: Vec<Row> = all.into_iter().filter(|m| m.owner.user.as_ref() == Some(user)).collect();
                Ok(memory_md(&format!("user {user}"), &own, now))
            }
            ExportFormat::Json => {
                let user = scope.require_user()?;
                let memories = all
                    .into_iter()
                    .filter(|m| m.owner.user.as_ref() == Some(user))
                    .map(|memory| {
                        Ok(ExportedMemory {
                            history: self.store.history(&scope.tenant, memory.id)?,
                            links: self.store.links(&scope.tenant, memory.id)?,
                            memory,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                let doc = ExportDocument {
                    version: 1,
                    scope: scope.clone(),
                    exported_at: now,
                    memories,
                    policies: self.store.policies(scope)?,
                };
                Ok(serde_json::to_string_pretty(&doc).expect("export serialises"))
            }
        }
    }
}
