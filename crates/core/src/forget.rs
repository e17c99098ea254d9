//! What a forget request leaves of a memory that says more than the thing forgotten.
//!
//! One message's statements are kept as one memory ("Cian is getting married on 8 August in
//! Knock. User will have to get a hat"), so "never mind about the hat" targets a memory that
//! also holds a wedding. Archiving it whole would forget the wedding with the hat: the
//! sentences that do not name what was forgotten are kept as a memory of their own.

/// The sentences of a memory's text: split after a full stop, question or exclamation mark
/// followed by a space, never inside a quote ('On 2026-05-01 User said: "A. B."' is one).
pub fn sentences(content: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    let chars: Vec<(usize, char)> = content.char_indices().collect();
    for (i, &(at, c)) in chars.iter().enumerate() {
        if c == '"' {
            quoted = !quoted;
        }
        let next_is_space = chars.get(i + 1).is_some_and(|&(_, n)| n == ' ');
        let ends = !quoted && next_is_space && (matches!(c, '.' | '!' | '?') || c == '"');
        if ends {
            let end = at + c.len_utf8();
            let piece = content[start..end].trim();
            if !piece.is_empty() {
                out.push(piece);
            }
            start = end;
        }
    }
    let last = content[start..].trim();
    if !last.is_empty() {
        out.push(last);
    }
    out
}

/// The memory's text without the sentences `names` says name the forgotten thing; `None` when
/// none of them does (the whole memory is what was meant) or all of them do (nothing is left).
pub fn remainder(content: &str, names: impl Fn(&str) -> bool) -> Option<String> {
    let all = sentences(content);
    let kept: Vec<&str> = all.iter().copied().filter(|s| !names(s)).collect();
    if kept.is_empty() || kept.len() == all.len() {
        return None;
    }
    let text = kept.join(" ");
    // A memory's last sentence carries no full stop; a quote keeps its closing mark.
    Some(text.strip_suffix('.').unwrap_or(&text).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hat(s: &str) -> bool {
        s.to_lowercase().contains("hat")
    }

    #[test]
    fn the_sentences_that_do_not_name_it_are_what_is_left() {
        let memory =
            "User's grandson Cian is getting married on the 8th of August in Knock. User will have to get a Hat";
        assert_eq!(
            remainder(memory, hat).as_deref(),
            Some("User's grandson Cian is getting married on the 8th of August in Knock")
        );
        assert_eq!(remainder("User will have to get a Hat", hat), None, "all of it is what was meant");
        assert_eq!(remainder("User lives in Leeds. User has a dog", hat), None, "none of it names it");
    }

    #[test]
    fn a_quote_is_one_sentence_however_many_it_holds() {
        let memory = r#"On 2026-05-01 User said: "I got a hat. It was cheap." User is going to Knock"#;
        assert_eq!(
            sentences(memory),
            vec![r#"On 2026-05-01 User said: "I got a hat. It was cheap.""#, "User is going to Knock"]
        );
        assert_eq!(remainder(memory, hat).as_deref(), Some("User is going to Knock"));
    }

    proptest! {
        #[test]
        fn what_is_left_is_made_of_the_memorys_own_sentences(
            parts in proptest::collection::vec("[A-Z][a-z]{1,8}( [a-z]{1,8}){0,4}", 1..5),
            forgotten in 0usize..5,
        ) {
            let content = parts.join(". ");
            let target = parts.get(forgotten).cloned().unwrap_or_default();
            let names = |s: &str| !target.is_empty() && s.trim_end_matches('.') == target;
            if let Some(left) = remainder(&content, names) {
                prop_assert!(!left.is_empty());
                for s in sentences(&left) {
                    prop_assert!(parts.iter().any(|p| p == s.trim_end_matches('.')), "{s:?} is no sentence of {content:?}");
                }
                prop_assert!(sentences(&left).len() < sentences(&content).len());
            }
        }
    }
}
