//! Wire types of `/v1/documents`: research results, tool outputs and file summaries an agent
//! stores once and reads back at the level it can afford.

use chrono::{DateTime, Utc};
use mnemo::core::detail::Detail;
use mnemo::core::{Document, DocumentKind};
use mnemo::{DocumentHit, DocumentOwner};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// What a document is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DocumentKindName {
    /// Findings of a research step (a web search, reading docs, an investigation).
    Research,
    /// What a tool printed (a test run, a build, a query).
    ToolOutput,
    /// A file's content or summary.
    File,
    /// Anything else the agent wants to keep.
    Note,
}

impl From<DocumentKindName> for DocumentKind {
    fn from(k: DocumentKindName) -> Self {
        match k {
            DocumentKindName::Research => DocumentKind::Research,
            DocumentKindName::ToolOutput => DocumentKind::ToolOutput,
            DocumentKindName::File => DocumentKind::File,
            DocumentKindName::Note => DocumentKind::Note,
        }
    }
}

/// Who a document belongs to: `agent` (every user of the agent, the default) or `user` (only
/// the `user_id` of the request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum DocumentOwnerName {
    /// Every user of the agent (of the tenant without `agent_id`).
    #[default]
    Agent,
    /// Only this user.
    User,
}

impl From<DocumentOwnerName> for DocumentOwner {
    fn from(o: DocumentOwnerName) -> Self {
        match o {
            DocumentOwnerName::Agent => DocumentOwner::Agent,
            DocumentOwnerName::User => DocumentOwner::User,
        }
    }
}

/// `POST /v1/documents`: a result to keep so it is never researched again.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StoreDocumentRequest {
    /// The user the agent works for; needed with `owner: user`.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The agent; the document is shared by its users unless `owner` is `user`.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// What it is.
    pub kind: DocumentKindName,
    /// Where it came from: a URL, a file path, a command. Its extension picks the code outline.
    #[serde(default)]
    pub source: Option<String>,
    /// The full text (L2). PII is redacted before it is stored; at most `documents.max_chars`.
    pub text: String,
    /// Who it belongs to (default `agent`).
    #[serde(default)]
    pub owner: DocumentOwnerName,
}

/// Query of `GET /v1/documents`, `GET /v1/documents/{id}` and `DELETE`: who is asking, the
/// level to read (one document) and the page (a listing).
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DocumentQuery {
    /// The user; without it only agent-wide documents are visible.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// One document: `L0` (a gist line), `L1` (the overview or code outline) or `L2` (the full
    /// text, default). A listing always holds gists.
    #[serde(default)]
    pub level: Option<String>,
    /// A listing's page size, 1..=500 (default 50).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Documents a listing skips.
    #[serde(default)]
    pub offset: Option<usize>,
}

/// `POST /v1/documents/search`: the documents nearest a query, whatever their score.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchDocumentsRequest {
    /// The user; without it only agent-wide documents are searched.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// What to look for.
    pub query: String,
    /// How many documents (the configured default when absent).
    #[serde(default)]
    pub top_k: Option<usize>,
    /// Level of each hit's `text`: `L0`, `L1` (default) or `L2`.
    #[serde(default)]
    pub level: Option<String>,
}

/// `POST /v1/documents/similar`: "has this been researched before?"
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SimilarDocumentsRequest {
    /// The user; without it only agent-wide documents are compared.
    #[serde(default)]
    pub user_id: Option<String>,
    /// The agent.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The question about to be researched, or a result about to be stored.
    pub text: String,
    /// Its source, when it is a result (a URL, a path, a command).
    #[serde(default)]
    pub source: Option<String>,
    /// Least cosine similarity of a prior result (`documents.similar_threshold` when absent).
    #[serde(default)]
    pub threshold: Option<f32>,
    /// Most results (the configured default when absent).
    #[serde(default)]
    pub top_k: Option<usize>,
    /// Level of each hit's `text`: `L0`, `L1` (default) or `L2`.
    #[serde(default)]
    pub level: Option<String>,
}

/// A stored document at one level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DocumentOut {
    /// Its id.
    pub id: String,
    /// What it is.
    pub kind: DocumentKindName,
    /// Where it came from (empty when not given).
    pub source: String,
    /// The agent it belongs to (absent: every agent of the tenant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The user it belongs to (absent: every user of the agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// L0: one line of at most 12 tokens, always present.
    pub gist: String,
    /// The level `text` holds: `l0`, `l1` or `l2`.
    pub level: String,
    /// The document at `level`.
    pub text: String,
    /// Tokens of the full text (L2), so a caller knows what reading it costs.
    pub tokens: usize,
    /// When it was stored.
    pub created_at: DateTime<Utc>,
}

impl DocumentOut {
    /// `d` with `text` at `level`.
    pub fn at(d: &Document, level: Detail) -> Self {
        let kind = match d.kind {
            DocumentKind::Research => DocumentKindName::Research,
            DocumentKind::ToolOutput => DocumentKindName::ToolOutput,
            DocumentKind::File => DocumentKindName::File,
            DocumentKind::Note => DocumentKindName::Note,
        };
        Self {
            id: d.id.to_string(),
            kind,
            source: d.source.clone(),
            agent_id: d.owner.agent.as_ref().map(ToString::to_string),
            user_id: d.owner.user.as_ref().map(ToString::to_string),
            gist: d.gist.clone(),
            level: level.as_str().to_string(),
            text: d.at(level).to_string(),
            tokens: d.tokens,
            created_at: d.created_at,
        }
    }
}

/// What `POST /v1/documents` stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StoredDocumentOut {
    /// The document with its overview (`level` `l1`).
    pub document: DocumentOut,
    /// Set when the embedder failed: the document is kept but not found by similarity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degraded: Option<String>,
}

/// A page of documents, newest first, each as its gist (`level` `l0`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DocumentList {
    /// The documents.
    pub items: Vec<DocumentOut>,
}

/// A document found by similarity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DocumentHitOut {
    /// The document at the requested level.
    pub document: DocumentOut,
    /// Cosine similarity to the query, -1..=1.
    pub score: f32,
}

impl DocumentHitOut {
    /// `h` with its document at `level`.
    pub fn at(h: &DocumentHit, level: Detail) -> Self {
        Self { document: DocumentOut::at(&h.document, level), score: h.score }
    }
}

/// Documents found by similarity, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct DocumentHits {
    /// The hits.
    pub items: Vec<DocumentHitOut>,
    /// The similarity a hit had to reach (`similar` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f32>,
}
