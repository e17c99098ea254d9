//! Managing memories as a person would: list, show (history, provenance, score parts), pin,
//! forget, add and edit through the gate, clear a user's memory, author policies.

use mnemo_core::score::{ScoreParts, composite};
use mnemo_core::trace::LlmCall;
use mnemo_core::{
    Action, Draft, HistoryEntry, HistoryEvent, Kind, Link, Memory as Row, MemoryId, Message, Policy, ProposedOp, Scope,
    Status, StatusKind, Target, TenantId, Verdict,
};
use mnemo_store::{Change, ChangeSet, ListFilter};
use serde::{Deserialize, Serialize};

use crate::Memory;
use crate::error::{Error, Result};
use crate::write::carried_over;

/// Everything known about one memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryDetail {
    /// The row.
    pub memory: Row,
    /// Its append-only history, oldest first.
    pub history: Vec<HistoryEntry>,
    /// Links from and to it.
    pub links: Vec<Link>,
    /// The messages it came from.
    pub sources: Vec<Message>,
    /// Its query-independent score parts right now (relevance 0).
    pub score: ScoreParts,
    /// What the background batch that wrote it cost with the chat model, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extraction: Option<LlmCall>,
}

impl Memory {
    /// Memories visible to the scope, newest first.
    pub fn list(&self, scope: &Scope, filter: &ListFilter) -> Result<Vec<Row>> {
        self.turns.settle_user(scope);
        Ok(self.store.list(scope, filter)?)
    }

    /// One memory with its history, links, source messages and score parts.
    pub fn show(&self, scope: &Scope, id: MemoryId) -> Result<MemoryDetail> {
        self.turns.settle_user(scope);
        let memory = self.visible(scope, id)?;
        let history = self.store.history(&scope.tenant, id)?;
        let links = self.store.links(&scope.tenant, id)?;
        let sources = self.store.messages(&memory.owner.without_chat(), &memory.provenance.sources)?;
        let score = composite(&memory, None, None, self.clock.now(), &self.tuning);
        // The creating batch names its turn in the history; its envelope holds the cost.
        let turn = history.first().and_then(|h| h.reason.split("(batch ").nth(1)).and_then(|t| t.strip_suffix(')'));
        let extraction = match turn {
            Some(t) => self.store.trace(&scope.tenant, t)?.and_then(|env| env.llm.into_iter().next()),
            None => None,
        };
        Ok(MemoryDetail { memory, history, links, sources, score, extraction })
    }

    /// A memory anywhere in the tenant, by id: for surfaces whose routes name a memory without
    /// saying whose it is (mem0's `/v1/memories/{id}/`). The tenant still comes from the caller's
    /// key, and the row's owner is the scope the caller then acts in, so every rule of that
    /// scope (privacy switches included) applies as if the caller had named it.
    pub fn find(&self, tenant: &TenantId, id: MemoryId) -> Result<Row> {
        self.turns.settle_tenant(tenant);
        self.store.get(tenant, id)?.ok_or_else(|| Error::NotFound { tenant: tenant.to_string(), id: id.to_string() })
    }

    /// The distinct owners (agent, user and chat) of the tenant's memories still in use:
    /// whom the tenant remembers things for.
    pub fn owners(&self, tenant: &TenantId) -> Result<Vec<Scope>> {
        Ok(self.store.owners(tenant)?)
    }

    fn visible(&self, scope: &Scope, id: MemoryId) -> Result<Row> {
        self.store
            .get_many(scope, &[id])?
            .into_iter()
            .next()
            .ok_or_else(|| Error::NotFound { tenant: scope.tenant.to_string(), id: id.to_string() })
    }

    /// Adds a memory a person wrote, through the same gate as extraction.
    /// Refused for a disabled user (nothing of theirs is stored). A scope without a user writes
    /// tenant- or agent-wide knowledge, which the gate makes provisional until a person
    /// approves it (`/v1/candidates`): what every user of the tenant or agent will be told.
    pub fn add(&self, scope: &Scope, draft: Draft) -> Result<Verdict> {
        if scope.user.is_some() || scope.chat.is_some() {
            // A chat is one user's conversation: a chat-private memory needs its user.
            self.refuse_if_disabled(scope, "memory")?;
        }
        // A person's words are no rule's: provenance never claims a rule read them.
        let draft = Draft { rule: None, ..draft };
        let op = ProposedOp { action: Action::Add, draft, sources: Vec::new() };
        let (mut records, _) = self.apply_ops(scope, vec![op], "api", "1")?;
        Ok(records.remove(0).verdict)
    }

    /// Pins or unpins: pinned memories are always in the block and exempt from lifecycle.
    pub fn pin(&self, scope: &Scope, id: MemoryId, pinned: bool) -> Result<()> {
        self.visible(scope, id)?;
        let cs = ChangeSet {
            tenant: scope.tenant.clone(),
            at: self.clock.now(),
            changes: vec![Change::SetPinned { id, pinned }],
        };
        self.apply_changes(cs)
    }

    /// Replaces a memory's content at the user's request, through the same gate as extraction:
    /// the edited version supersedes the old one, whose text history and a link keep. Kind, key,
    /// surface and dates carry over; a memo is edited with [`Memory::edit_memo`].
    /// Refused for a disabled user.
    pub fn edit(&self, scope: &Scope, id: MemoryId, content: &str) -> Result<Verdict> {
        self.refuse_if_disabled(scope, "edit")?;
        let old = self.visible(scope, id)?;
        if old.status != Status::Active || old.kind == Kind::Memo {
            return Err(Error::Rejected {
                what: "edit",
                reason: format!(
                    "memory {id} is a {} in status {}; only active memories other than memos are edited here",
                    old.kind,
                    old.status.kind()
                ),
            });
        }
        let draft = carried_over(&old, content, 1.0);
        let op = ProposedOp { action: Action::Update(Target::Id(id)), draft, sources: Vec::new() };
        let (mut records, _) = self.apply_ops(scope, vec![op], "user", "1")?;
        Ok(records.remove(0).verdict)
    }

    /// Refuses key-value data past `limits.max_metadata_bytes`: callers that write memories
    /// and then attach data check it first, so a refusal changes nothing.
    pub fn check_metadata(&self, metadata: &mnemo_core::Metadata) -> Result<()> {
        Ok(mnemo_core::limits::check_metadata(metadata, &self.tuning.limits)?)
    }

    /// Replaces a client's key-value data on a memory (mem0's `metadata`); `None` removes it.
    /// What the memory says is unchanged, so nothing is judged by the gate. Refused for a
    /// disabled user; strings in the data are redacted like every other text that is stored.
    pub fn set_metadata(&self, scope: &Scope, id: MemoryId, metadata: Option<mnemo_core::Metadata>) -> Result<()> {
        if let Some(m) = &metadata {
            self.check_metadata(m)?;
        }
        self.refuse_if_disabled(scope, "metadata")?;
        self.visible(scope, id)?;
        let cs = ChangeSet {
            tenant: scope.tenant.clone(),
            at: self.clock.now(),
            changes: vec![Change::SetMetadata { id, metadata }],
        };
        self.apply_changes(cs)
    }

    /// Clears what memory holds about the scope's user: every active, stale or provisional
    /// memory the user owns (all layers of that user) is archived with a history row, and the
    /// user's messages leave archival recall. History stays for audit; [`Memory::erase_user`] is
    /// what deletes. Returns how many memories were archived.
    pub fn clear_user(&self, scope: &Scope) -> Result<usize> {
        let user = scope.require_user()?.clone();
        self.turns.settle_user(scope);
        let filter = ListFilter {
            statuses: vec![StatusKind::Active, StatusKind::Stale, StatusKind::Provisional],
            ..ListFilter::default()
        };
        let own: Vec<Row> =
            self.store.list(scope, &filter)?.into_iter().filter(|m| m.owner.user.as_ref() == Some(&user)).collect();
        let mut changes: Vec<Change> = own
            .iter()
            .map(|m| Change::SetStatus {
                id: m.id,
                status: Status::Archived,
                event: HistoryEvent::Forgotten,
                reason: "cleared by the user".into(),
                sources: Vec::new(),
            })
            .collect();
        let everything = scope.without_chat();
        let said = self.store.user_messages(
            &everything,
            chrono::DateTime::<chrono::Utc>::MIN_UTC,
            chrono::DateTime::<chrono::Utc>::MAX_UTC,
            i64::MAX as usize,
        )?;
        changes.push(Change::Withhold { owner: everything, messages: said.into_iter().map(|m| m.id).collect() });
        self.apply_changes(ChangeSet { tenant: scope.tenant.clone(), at: self.clock.now(), changes })?;
        Ok(own.len())
    }

    /// Archives a memory at the user's request (nothing is deleted; erasure is separate).
    pub fn forget(&self, scope: &Scope, id: MemoryId) -> Result<()> {
        let m = self.visible(scope, id)?;
        if m.status == Status::Archived {
            return Ok(());
        }
        let change = Change::SetStatus {
            id,
            status: Status::Archived,
            event: HistoryEvent::Forgotten,
            reason: "deleted by the user".into(),
            sources: Vec::new(),
        };
        // What the user deleted is not quoted back from the conversation either.
        let quiet = crate::write::withhold_sources(&m);
        self.apply_changes(ChangeSet {
            tenant: scope.tenant.clone(),
            at: self.clock.now(),
            changes: vec![change, quiet],
        })
    }

    /// Authors a tenant policy (a new version if the key exists), in force from now.
    pub fn put_policy(&self, scope: &Scope, key: &str, text: &str, value: serde_json::Value) -> Result<Policy> {
        let p = Policy {
            tenant: scope.tenant.clone(),
            agent: scope.agent.clone(),
            key: key.to_string(),
            text: text.to_string(),
            value,
            version: 0,
            effective_from: self.clock.now(),
            effective_until: None,
        };
        Ok(self.store.put_policy(&crate::redact::policy(p))?)
    }

    /// Every version of every policy binding the scope.
    pub fn policies(&self, scope: &Scope) -> Result<Vec<Policy>> {
        Ok(self.store.policies(scope)?)
    }
}
