//! The text detection reads: NFKC, every dash one '-', every space one ' ', invisible characters
//! gone; with a map from each byte back to the original, so findings redact the text as written.

use unicode_normalization::UnicodeNormalization;

/// Normalised text and, for each of its bytes, the byte range of the original character it
/// came from.
pub(crate) struct Normalized {
    pub(crate) text: String,
    origin: Vec<(usize, usize)>,
}

impl Normalized {
    pub(crate) fn new(original: &str) -> Self {
        let mut text = String::with_capacity(original.len());
        let mut origin = Vec::with_capacity(original.len());
        let mut push = |text: &mut String, c: char, from: (usize, usize)| {
            text.push(c);
            origin.extend(std::iter::repeat_n(from, c.len_utf8()));
        };
        for (i, c) in original.char_indices() {
            let from = (i, i + c.len_utf8());
            match c {
                // Soft hyphen, zero-width spaces and joiners, word joiner, BOM: read as nothing,
                // so "4111\u{200b}1111…" is still one number.
                '\u{ad}' | '\u{180e}' | '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' => {}
                '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{fe58}' | '\u{fe63}' | '\u{ff0d}' => {
                    push(&mut text, '-', from)
                }
                '\n' => push(&mut text, '\n', from),
                c if c.is_whitespace() => push(&mut text, ' ', from),
                c if c.is_ascii() => push(&mut text, c, from),
                c => {
                    for n in std::iter::once(c).nfkc() {
                        let n = if n.is_whitespace() && n != '\n' { ' ' } else { n };
                        push(&mut text, n, from);
                    }
                }
            }
        }
        Self { text, origin }
    }

    /// The original byte range of the normalised range `start..end` (non-empty).
    pub(crate) fn original(&self, start: usize, end: usize) -> (usize, usize) {
        (self.origin[start].0, self.origin[end - 1].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_width_digits_odd_spaces_and_dashes_read_as_ascii() {
        let s = "card ４１１１\u{a0}1111\u{202f}1111\u{2013}1111\u{200b}!";
        let n = Normalized::new(s);
        assert_eq!(n.text, "card 4111 1111 1111-1111!");
        let start = n.text.find('4').unwrap();
        let end = n.text.rfind('1').unwrap() + 1;
        let (a, b) = n.original(start, end);
        assert_eq!(&s[a..b], "４１１１\u{a0}1111\u{202f}1111\u{2013}1111");
    }
}
