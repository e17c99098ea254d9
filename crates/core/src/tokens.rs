//! Token counting with the cl100k_base encoding, so budgets mean what providers bill.

use std::sync::OnceLock;

use tiktoken_rs::CoreBPE;

fn bpe() -> &'static CoreBPE {
    static BPE: OnceLock<CoreBPE> = OnceLock::new();
    BPE.get_or_init(|| tiktoken_rs::cl100k_base().expect("cl100k_base ships inside tiktoken-rs"))
}

/// Tokens in `text` under cl100k_base.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        return 0;
    }
    bpe().encode_ordinary(text).len()
}

/// Tokens of one rendered line plus its newline; summing lines bounds the tokens of the block.
pub fn line_cost(line: &str) -> usize {
    count(line) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_like_cl100k() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello world"), 2);
        let lines = ["=== USER MEMORY ===", "- User's name is Dana.", "- User prefers short answers."];
        let joined = lines.join("\n") + "\n";
        assert!(count(&joined) <= lines.iter().map(|l| line_cost(l)).sum::<usize>());
    }
}
