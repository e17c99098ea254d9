//! Documents: research results, tool outputs and file summaries an agent keeps so that work
//! done once is never redone, each at three levels (L0 a gist line, L1 an overview, L2 the text).
//!
//! The levels are computed here, without a model, when a document is stored: an agent that
//! asks "has this been researched before?" reads L0 lines, opens the L1 overview of a hit, and
//! pulls the L2 text only when it needs it, so a prior result costs a few tokens until it is used.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::detail::{self, Detail};
use crate::error::{CoreError, Result};
use crate::id::DocumentId;
use crate::kind::text_enum;
use crate::outline::{self, Language};
use crate::scope::Scope;
use crate::tokens;

text_enum!(
    /// What a document is; it says how it was produced, which a reader weighs (a tool's output
    /// is what the tool printed, a note is the agent's own words).
    DocumentKind, "document kind" {
        /// Findings of a research step (a web search, reading docs, an investigation).
        Research => "research",
        /// What a tool printed (a test run, a build, a query).
        ToolOutput => "tool_output",
        /// A file's content or summary.
        File => "file",
        /// Anything else the agent wants to keep.
        Note => "note",
    }
);

/// Limits and thresholds of documents (`[documents]` in `mnemo.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DocumentsTuning {
    /// Longest document text, in characters: a bigger one is refused (nothing is written), so
    /// one call cannot fill the store or keep the embedder busy for minutes.
    pub max_chars: usize,
    /// Longest `source` (a URL, a path, a command), in characters.
    pub max_source_chars: usize,
    /// Token budget of the L1 overview.
    pub overview_tokens: usize,
    /// Cosine at or above which a stored document counts as the same research ("has this been
    /// researched before?"). Measured with all-MiniLM-L6-v2 on nine stored results (docs, tool
    /// output, code) and a question about each written without its key words: a question scores
    /// 0.40 to 0.80 against its own result and at most 0.36 against the eight others
    /// (`crates/engine/tests/documents.rs`). Raise it for fewer false matches, lower it to catch
    /// looser paraphrases.
    pub similar_threshold: f32,
}

impl Default for DocumentsTuning {
    fn default() -> Self {
        Self { max_chars: 200_000, max_source_chars: 2_000, overview_tokens: 400, similar_threshold: 0.38 }
    }
}

/// One stored document with its three levels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// Its id, generated when stored.
    pub id: DocumentId,
    /// Who owns it: the tenant, the agent (agent-wide by default), the user when it is one
    /// user's. Never a chat: research outlives the conversation it was done in.
    pub owner: Scope,
    /// What it is.
    pub kind: DocumentKind,
    /// Where it came from: a URL, a path, a command (may be empty).
    pub source: String,
    /// L0: one line of at most [`detail::GIST_TOKENS`] tokens.
    pub gist: String,
    /// L1: the overview (a code outline, or the headings and leading sentences).
    pub overview: String,
    /// L2: the whole text.
    pub text: String,
    /// Tokens of the whole text (cl100k), so a caller knows what pulling L2 costs.
    pub tokens: usize,
    /// When it was stored.
    pub created_at: DateTime<Utc>,
}

impl Document {
    /// Builds a document from what a caller sends: checks the text and source against the
    /// limits and computes the levels. The text is taken as given; redaction is the caller's
    /// door to storage (the engine redacts before calling this).
    pub fn new(
        owner: Scope,
        kind: DocumentKind,
        source: &str,
        text: &str,
        at: DateTime<Utc>,
        t: &DocumentsTuning,
    ) -> Result<Self> {
        check(source, text, t)?;
        let owner = Scope { chat: None, ..owner };
        let (gist, overview) = levels(source, text, t.overview_tokens);
        Ok(Self {
            id: DocumentId::new(),
            owner,
            kind,
            source: source.trim().to_string(),
            gist,
            overview,
            text: text.to_string(),
            tokens: tokens::count(text),
            created_at: at,
        })
    }

    /// The text at one level.
    pub fn at(&self, level: Detail) -> &str {
        match level {
            Detail::Gist => &self.gist,
            Detail::Focus => &self.overview,
            Detail::Full => &self.text,
        }
    }

    /// What its vector is computed from: the source and the overview, which name the topic
    /// without the long tail of a full text (a small embedding model reads 256 tokens at most).
    pub fn embedding_text(&self) -> String {
        match self.source.is_empty() {
            true => self.overview.clone(),
            false => format!("{}\n{}", self.source, self.overview),
        }
    }
}

/// Refuses an empty or oversized text, or an oversized source, naming the setting to change.
pub fn check(source: &str, text: &str, t: &DocumentsTuning) -> Result<()> {
    if text.trim().is_empty() {
        return Err(CoreError::OutOfRange { field: "text", reason: "must not be empty".into() });
    }
    let chars = text.chars().count();
    if chars > t.max_chars {
        return Err(CoreError::OutOfRange {
            field: "text",
            reason: format!("{chars} characters; the limit is {} (documents.max_chars)", t.max_chars),
        });
    }
    let chars = source.chars().count();
    if chars > t.max_source_chars || source.chars().any(char::is_control) {
        return Err(CoreError::OutOfRange {
            field: "source",
            reason: format!(
                "{chars} characters or a control character; the limit is {} (documents.max_source_chars)",
                t.max_source_chars
            ),
        });
    }
    Ok(())
}

/// The L0 gist and L1 overview of a text: a code outline when the source or the text is code,
/// else the headings and the leading sentence of each paragraph, within `budget` tokens.
pub fn levels(source: &str, text: &str, budget: usize) -> (String, String) {
    match Language::detect(source, text) {
        Some(lang) => {
            let outline = outline::outline(lang, text);
            let overview = outline::within(&outline, budget);
            let names = outline::names(&outline);
            let what = if source.trim().is_empty() { lang.name().to_string() } else { source.trim().to_string() };
            let gist = detail::gist(&format!("{what}: {}", names.join(", ")));
            (gist, if overview.is_empty() { outline::within(&lines(text), budget) } else { overview })
        }
        None => {
            let overview = extractive(text, budget);
            let first = overview.lines().find(|l| !l.trim().is_empty()).unwrap_or_default();
            (detail::gist(first.trim_start_matches('#').trim()), overview)
        }
    }
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(str::to_string).collect()
}

/// Headings, then the leading sentence of each paragraph, in order, until `budget` tokens are
/// used; the whole text when it fits.
pub fn extractive(text: &str, budget: usize) -> String {
    if tokens::count_at_most(text, budget).is_some() {
        return text.trim().to_string();
    }
    let mut out = Vec::new();
    for block in text.split("\n\n").map(str::trim).filter(|b| !b.is_empty()) {
        let mut block_lines = block.lines();
        let first = block_lines.next().unwrap_or_default().trim();
        if first.starts_with('#') {
            out.push(first.to_string());
            let rest: Vec<&str> = block_lines.collect();
            if let Some(lead) = lead(&rest.join(" ")) {
                out.push(lead);
            }
        } else if let Some(lead) = lead(&block.lines().map(str::trim).collect::<Vec<_>>().join(" ")) {
            out.push(lead);
        }
    }
    outline::within(&out, budget)
}

/// The first sentence of a paragraph (a list item keeps its marker).
fn lead(paragraph: &str) -> Option<String> {
    crate::extract::sentences(paragraph).first().map(|s| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner() -> Scope {
        Scope::parse("acme", Some("coder"), None, None).unwrap()
    }

    #[test]
    fn prose_gets_a_gist_line_and_an_extractive_overview() {
        let body = "SQLite WAL mode lets readers run while one writer commits. ".repeat(40);
        let text =
            format!("# Choosing a journal mode\n\n{body}\n\n## Durability\n\nFULL sync survives power loss. {body}");
        let d =
            Document::new(owner(), DocumentKind::Research, "notes.md", &text, Utc::now(), &Default::default()).unwrap();
        assert_eq!(d.gist, "Choosing a journal mode");
        assert!(d.overview.contains("## Durability") && d.overview.contains("FULL sync survives power loss."));
        assert!(tokens::count(&d.overview) <= 400 && d.tokens > 800, "{}", d.overview);
        assert_eq!(d.at(Detail::Full), text);
    }

    #[test]
    fn code_gets_an_outline_and_a_gist_naming_its_items() {
        let text = "use std::fmt;\n\npub struct Point { x: i32 }\n\npub fn distance(a: &Point, b: &Point) -> f64 {\n    0.0\n}\n";
        let d =
            Document::new(owner(), DocumentKind::File, "src/geo.rs", text, Utc::now(), &Default::default()).unwrap();
        assert!(d.overview.contains("pub fn distance(a: &Point, b: &Point) -> f64"), "{}", d.overview);
        assert!(!d.overview.contains("0.0"));
        assert!(d.gist.starts_with("src/geo.rs: ") && d.gist.contains("Point"), "{}", d.gist);
        assert!(tokens::count(&d.gist) <= detail::GIST_TOKENS + 1, "{}", d.gist);
    }

    #[test]
    fn empty_and_oversized_texts_are_refused() {
        let t = DocumentsTuning { max_chars: 10, ..Default::default() };
        assert!(check("", "  ", &t).is_err());
        let e = check("", &"a".repeat(11), &t).unwrap_err().to_string();
        assert!(e.contains("documents.max_chars"), "{e}");
        assert!(check(&"s".repeat(3000), "ok", &Default::default()).is_err());
        assert!(check("https://example.com", "ok", &t).is_ok());
    }

    /// Pathological texts (one huge line of punctuation, deep nesting, a run with no break) are
    /// leveled within the budget in work linear in their length: the overview counts each line
    /// only up to the room left. `.config/nextest.toml` gives this test a time limit, since the
    /// quadratic cost it guards against took half a minute per text.
    #[test]
    fn pathological_texts_are_leveled_within_budget() {
        let n = 200_000;
        let texts = [
            "{".repeat(n),
            "#".repeat(n),
            "(".repeat(n),
            format!("fn f() {}{}", "{".repeat(n / 2), "}".repeat(n / 2)),
            "ab".repeat(n / 2),
            "- [ ] ".repeat(n / 6),
        ];
        for text in &texts {
            let (gist, overview) = levels("", text, 1000);
            assert!(crate::tokens::count(&overview) <= 1000, "{} bytes: overview over budget", text.len());
            assert!(gist.len() <= text.len());
        }
    }
}
