//! The bounds of one read request, checked where recall and context begin, before any work.

use mnemo_core::config::Tuning;
use mnemo_core::limits::{check_count, check_query};

use crate::error::Result;

/// A recall's query and `top_k` within `[limits]`.
pub(crate) fn check_recall(t: &Tuning, query: &str, top_k: Option<usize>) -> Result<()> {
    check_query("query", query, &t.limits)?;
    if let Some(k) = top_k {
        check_count("top_k", k, 1, t.limits.max_top_k, "limits.max_top_k")?;
    }
    Ok(())
}

/// A context call's message and `budget_tokens` within `[limits]`.
pub(crate) fn check_context(t: &Tuning, message: &str, budget: Option<usize>) -> Result<()> {
    check_query("message", message, &t.limits)?;
    if let Some(b) = budget {
        check_count("budget_tokens", b, 1, t.limits.max_budget_tokens, "limits.max_budget_tokens")?;
    }
    Ok(())
}
