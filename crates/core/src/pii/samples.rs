//! Generated sensitive values in every format [`detect`](super::detect) knows, each inside a
//! sentence: what the tests plant to prove that none of it reaches storage. Deterministic from a
//! seed, so a failure names a value that can be generated again.

use super::PiiKind;

/// One planted value: its kind, the format it was written in, the value as written, and the
/// sentence carrying it.
#[derive(Debug, Clone, PartialEq)]
pub struct Planted {
    /// What the value is.
    pub kind: PiiKind,
    /// How it is written ("card_dots", "iban_compact", "password_de" …).
    pub format: &'static str,
    /// The value exactly as it appears in the sentence.
    pub value: String,
    /// A sentence a person might write, holding the value.
    pub sentence: String,
}

impl Planted {
    /// The value alone when the detector knows it without the words around it (a card, an
    /// IBAN, a key); else the sentence, since a bare 10-digit number or a made-up word is
    /// nobody's phone number or password until a sentence says so.
    pub fn recognisable(&self) -> &str {
        if super::detect(&self.value).is_empty() { &self.sentence } else { &self.value }
    }
}

impl Planted {
    /// The forms a leak could take: the value lower-cased, as NFKC, its letters and digits
    /// alone, and (when they are most of it, and at least six) its digits alone.
    pub fn needles(&self) -> Vec<String> {
        use unicode_normalization::UnicodeNormalization;
        let norm: String = self.value.nfkc().collect::<String>().to_lowercase();
        let mut out = vec![self.value.to_lowercase(), norm.clone()];
        let compact: String = norm.chars().filter(char::is_ascii_alphanumeric).collect();
        if compact.len() >= 6 {
            out.push(compact);
        }
        let digits: String = norm.chars().filter(char::is_ascii_digit).collect();
        if digits.len() >= 6 && digits.len() * 2 >= norm.chars().filter(char::is_ascii_alphanumeric).count() {
            out.push(digits);
        }
        out.sort();
        out.dedup();
        out
    }
}

/// What a test that no PII reaches storage plants: `n` values of [`generate`], checked to be
/// at least 200 in at least 20 formats, so the proof covers enough of each.
///
/// # Panics
/// When `n` is too small for that.
pub fn planted(n: usize, seed: u64) -> Vec<Planted> {
    let p = generate(n, seed);
    let formats: std::collections::BTreeSet<&str> = p.iter().map(|p| p.format).collect();
    assert!(p.len() >= 200 && formats.len() >= 20, "{} values in {} formats", p.len(), formats.len());
    p
}

/// A word a test plants beside the `i`-th value: storage must hold it (the sentence was
/// stored), and must not hold the value.
pub fn mark(i: usize) -> String {
    format!("plantmark{i:04}x")
}

/// Asserts what a PII test expects of storage read as text (files, or rows): the marks of the
/// planted sentences are there (the sentences were stored, see [`mark`]), with at least one
/// placeholder per value, and no value is in any form. `through` names the paths planted
/// through, for the failure.
///
/// # Panics
/// When a mark or the placeholders are missing, or a value is found.
#[track_caller]
pub fn assert_stored_redacted(stored: &[(String, String)], planted: &[Planted], through: &dyn std::fmt::Debug) {
    let all: String = stored.iter().map(|(_, t)| t.as_str()).collect();
    for i in [0, planted.len() / 2, planted.len() - 1] {
        assert!(all.contains(&mark(i)), "the test must see what was stored: {} missing", mark(i));
    }
    assert!(all.matches("[redacted ").count() >= planted.len(), "placeholders are stored where values were");
    let leaks = leaks(stored, planted);
    assert!(
        leaks.is_empty(),
        "{} of {} planted values reached storage through {through:?}:\n{}",
        leaks.len(),
        planted.len(),
        leaks.join("\n")
    );
}

/// Every file under `dir`, however deep, as lower-cased (lossy) text with its path: what the
/// tests read to prove that no planted value reached storage (database, WAL, anything beside).
pub fn file_texts(dir: &std::path::Path) -> std::io::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            out.extend(file_texts(&path)?);
        } else {
            let bytes = std::fs::read(&path)?.to_ascii_lowercase();
            out.push((path.display().to_string(), String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    Ok(out)
}

/// The planted values that any of `haystacks` (name, lower-cased text: files, or rows read as
/// text) still holds in any of their [`needles`](Planted::needles), each named with its
/// format, the form found, where, and the text around it, so a failure says what leaked.
pub fn leaks(haystacks: &[(String, String)], planted: &[Planted]) -> Vec<String> {
    let mut out = Vec::new();
    for p in planted {
        for needle in p.needles() {
            let digits_only = needle.bytes().all(|b| b.is_ascii_digit());
            for (name, hay) in haystacks {
                let found = hay.match_indices(&needle).map(|(at, _)| at).find(|&at| {
                    // A number inside a longer number (a timestamp's "…03.777972355z" holds
                    // "779723") or inside a long run of letters and digits (the random id
                    // "m-419f9f2ad219267c9976" holds "219267") is not the planted value.
                    let bytes = hay.as_bytes();
                    !(digits_only
                        && (within_number(bytes, at, needle.len()) || within_identifier(bytes, at, needle.len())))
                });
                if let Some(at) = found {
                    let from = (0..=at.saturating_sub(80)).rev().find(|&i| hay.is_char_boundary(i)).unwrap_or(0);
                    let around: String = hay[from..].chars().take(160 + needle.len()).collect();
                    out.push(format!("{} {:?} (as {needle:?}) in {name}: …{around:?}…", p.format, p.value));
                }
            }
        }
    }
    out
}

/// Whether `hay[at..at + len]` has a digit right before or after it: part of a longer number.
fn within_number(hay: &[u8], at: usize, len: usize) -> bool {
    (at > 0 && hay[at - 1].is_ascii_digit()) || hay.get(at + len).is_some_and(u8::is_ascii_digit)
}

/// Whether `hay[at..at + len]` lies in a run of ASCII letters and digits at least 16 long and
/// at least 8 longer than itself: an identifier, such as a memory's random id.
fn within_identifier(hay: &[u8], at: usize, len: usize) -> bool {
    let start = hay[..at].iter().rev().take_while(|b| b.is_ascii_alphanumeric()).count();
    let end = hay[at + len..].iter().take_while(|b| b.is_ascii_alphanumeric()).count();
    let run = start + len + end;
    run >= 16 && run >= len + 8
}

/// A small deterministic generator (splitmix64): no dependency, same values on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn digits(&mut self, n: usize) -> String {
        (0..n).map(|_| char::from(b'0' + self.below(10) as u8)).collect()
    }

    fn from(&mut self, alphabet: &[u8], n: usize) -> String {
        (0..n).map(|_| char::from(alphabet[self.below(alphabet.len())])).collect()
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const WORDS: &[&str] = &[
    "quorvex",
    "blimtrand",
    "zephyrnook",
    "vantaglio",
    "crumblewick",
    "ostravine",
    "plinkerdorf",
    "moxifrell",
    "tranquelo",
    "gristlebay",
    "wumbrecht",
    "fennoraxe",
];

/// Frames a value the way people write around it.
const FRAMES: &[&str] = &[
    "Here it is: {}.",
    "{} — keep that somewhere safe",
    "ok so it's {}, thanks!",
    "Can you remember ({}) for me?",
    "Note for later:\n{}\nbye",
    "\"{}\" is what the form wanted",
    "Meine Angabe: {} (bitte merken)",
    "C'est {} voilà",
    "mi dato es {}; gracias",
    "the one ending differently is {}!",
];

fn luhn_complete(prefix: &str) -> String {
    (0..10).map(|d| format!("{prefix}{d}")).find(|c| super::luhn_valid(c)).expect("one check digit fits")
}

fn group(s: &str, sizes: &[usize], sep: &str) -> String {
    let mut out = Vec::new();
    let mut at = 0;
    for &n in sizes {
        if at < s.len() {
            out.push(&s[at..(at + n).min(s.len())]);
        }
        at += n;
    }
    out.join(sep)
}

fn full_width(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_digit() { char::from_u32(c as u32 - '0' as u32 + 0xff10).unwrap_or(c) } else { c })
        .collect()
}

fn iban(r: &mut Rng) -> String {
    let (cc, bban) = match r.below(5) {
        0 => ("DE", r.digits(18)),
        1 => ("GB", format!("{}{}", r.from(UPPER, 4), r.digits(14))),
        2 => ("FR", r.digits(23)),
        3 => ("NL", format!("{}{}", r.from(UPPER, 4), r.digits(10))),
        _ => ("ES", r.digits(20)),
    };
    let numeric: String = format!("{bban}{cc}00")
        .chars()
        .map(|c| if c.is_ascii_digit() { c.to_string() } else { (c as u32 - 'A' as u32 + 10).to_string() })
        .collect();
    let rem = numeric.bytes().fold(0u32, |r, b| (r * 10 + u32::from(b - b'0')) % 97);
    format!("{cc}{:02}{bban}", 98 - rem)
}

fn ssn(r: &mut Rng) -> String {
    let area = 1 + r.below(664);
    format!("{area:03}-{:02}-{:04}", 1 + r.below(98), 1 + r.below(9998))
}

fn dni(r: &mut Rng) -> String {
    let n = 10_000_000 + r.below(89_999_999);
    let letter = b"TRWAGMYFPDXBNJZSQVHLCKE"[n % 23] as char;
    format!("{n}{letter}")
}

fn nir(r: &mut Rng) -> String {
    let body = format!(
        "{}{:02}{:02}{:02}{:03}{:03}",
        1 + r.below(2),
        r.below(100),
        1 + r.below(12),
        1 + r.below(95),
        1 + r.below(998),
        1 + r.below(998)
    );
    let n: u64 = body.parse().expect("digits");
    format!(
        "{} {} {} {} {} {} {:02}",
        &body[..1],
        &body[1..3],
        &body[3..5],
        &body[5..7],
        &body[7..10],
        &body[10..13],
        97 - n % 97
    )
}

fn codice_fiscale(r: &mut Rng) -> String {
    let months = b"ABCDEHLMPRST";
    let body = format!(
        "{}{}{}{:02}{}{}",
        r.from(UPPER, 6),
        r.digits(2),
        months[r.below(12)] as char,
        1 + r.below(70),
        r.from(UPPER, 1),
        r.digits(3)
    );
    let check = super::checks::codice_fiscale_letter(body.as_bytes());
    format!("{body}{}", char::from(check))
}

fn bsn(r: &mut Rng) -> String {
    loop {
        let d = format!("{}{}", 1 + r.below(9), r.digits(8));
        if super::checks::bsn_valid(&d) {
            return d;
        }
    }
}

fn nino(r: &mut Rng) -> String {
    let first = r.pick(&["A", "B", "C", "E", "H", "J", "K", "L", "M", "P", "R", "S", "W", "Y"]);
    let second = r.pick(&["A", "B", "C", "E", "H", "J", "K", "L", "M", "P", "R", "S", "W"]);
    format!("{first}{second} {} {} {} {}", r.digits(2), r.digits(2), r.digits(2), r.pick(&["A", "B", "C", "D"]))
}

fn password(r: &mut Rng) -> String {
    format!("{}{}{}", r.from(ALNUM, 6), r.digits(2), r.pick(&["!", "#", "%", "&", ""]))
}

/// How many formats [`generate`] cycles through.
pub const FORMATS: usize = 46;

/// `n` planted values, cycling through every format, each in a sentence.
pub fn generate(n: usize, seed: u64) -> Vec<Planted> {
    let mut r = Rng(seed);
    (0..n).map(|i| one(i % FORMATS, &mut r)).collect()
}

fn one(format: usize, r: &mut Rng) -> Planted {
    let card16 = |r: &mut Rng| luhn_complete(&format!("4{}", r.digits(14)));
    let (kind, name, value, own_sentence): (PiiKind, &'static str, String, Option<String>) = match format {
        0 => (PiiKind::CardNumber, "card_spaces", group(&card16(r), &[4, 4, 4, 4], " "), None),
        1 => (PiiKind::CardNumber, "card_dots", group(&card16(r), &[4, 4, 4, 4], "."), None),
        2 => (PiiKind::CardNumber, "card_nbsp", group(&card16(r), &[4, 4, 4, 4], "\u{a0}"), None),
        3 => (PiiKind::CardNumber, "card_full_width", full_width(&group(&card16(r), &[4, 4, 4, 4], " ")), None),
        4 => (PiiKind::CardNumber, "card_plain", luhn_complete(&format!("5{}{}", 1 + r.below(5), r.digits(13))), None),
        5 => {
            let amex = luhn_complete(&format!("37{}", r.digits(12)));
            (PiiKind::CardNumber, "card_amex_dashes", group(&amex, &[4, 6, 5], "-"), None)
        }
        6 => {
            (PiiKind::Iban, "iban_grouped", group(&iban(r), &[4, 4, 4, 4, 4, 4, 4, 4, 4], " ").trim().to_string(), None)
        }
        7 => (PiiKind::Iban, "iban_compact", iban(r), None),
        8 => {
            let e = format!("{}.{}@{}.example.org", r.pick(WORDS), r.digits(3), r.pick(WORDS));
            (PiiKind::Email, "email", e, None)
        }
        9 => {
            let e = format!("{}{} (at) {} (dot) com", r.pick(WORDS), r.digits(2), r.pick(WORDS));
            (PiiKind::Email, "email_spelled", e, None)
        }
        10 => {
            let p = format!("+44 20 {} {}", r.digits(4), r.digits(4));
            (PiiKind::Phone, "phone_international", p, None)
        }
        11 => (
            PiiKind::Phone,
            "phone_parentheses",
            format!("({}) {}-{}", 200 + r.below(799), 200 + r.below(799), r.digits(4)),
            None,
        ),
        12 => (
            PiiKind::Phone,
            "phone_dashes",
            format!("{}-{}-{}", 200 + r.below(799), 200 + r.below(799), r.digits(4)),
            None,
        ),
        13 => (
            PiiKind::Phone,
            "phone_fr",
            format!("06 {} {} {} {}", r.digits(2), r.digits(2), r.digits(2), r.digits(2)),
            None,
        ),
        14 => (PiiKind::Phone, "phone_00_de", format!("0049 30 {}", r.digits(8)), None),
        15 => {
            let p = format!("{}{}", 200 + r.below(799), r.digits(7));
            (PiiKind::Phone, "phone_named", p.clone(), Some(format!("my cell is {p}, call after six")))
        }
        16 => (PiiKind::Ssn, "ssn", ssn(r), None),
        17 => {
            let s: String = ssn(r).chars().filter(char::is_ascii_digit).collect();
            (PiiKind::Ssn, "ssn_named", s.clone(), Some(format!("SSN: {s} (for the tax form)")))
        }
        18 => (PiiKind::Secret, "openai_key", format!("sk-proj-{}", r.from(ALNUM, 40)), None),
        19 => (PiiKind::Secret, "aws_key", format!("AKIA{}", r.from(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16)), None),
        20 => (PiiKind::Secret, "github_token", format!("ghp_{}", r.from(ALNUM, 36)), None),
        21 => (PiiKind::Secret, "github_pat", format!("github_pat_{}", r.from(ALNUM, 40)), None),
        22 => (
            PiiKind::Secret,
            "slack_token",
            format!("xoxb-{}-{}-{}", r.digits(11), r.digits(12), r.from(ALNUM, 24)),
            None,
        ),
        23 => {
            let jwt = format!("eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}", r.from(ALNUM, 30), r.from(ALNUM, 43));
            (PiiKind::Secret, "jwt", jwt, None)
        }
        24 => {
            let body = r.from(ALNUM, 64);
            let pem = format!("-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----");
            (PiiKind::Secret, "pem_private_key", body, Some(format!("server key below\n{pem}\nthat's all")))
        }
        25 => (PiiKind::Secret, "stripe_key", format!("sk_live_{}", r.from(ALNUM, 32)), None),
        26 => {
            let v = format!("{}{}", r.from(ALNUM, 24), r.digits(4));
            (PiiKind::Secret, "api_key_named", v.clone(), Some(format!("the api_key = {v} for staging")))
        }
        27..=33 => {
            let v = password(r);
            let (name, sentence) = match format {
                27 => ("password_en", format!("btw my password for the bank is {v} don't tell")),
                28 => ("password_de", format!("Mein Passwort lautet {v}, nicht weitersagen")),
                29 => ("password_fr", format!("Mon mot de passe est {v} pour le wifi")),
                30 => ("password_es", format!("Mi contraseña es {v} y la cambio mañana")),
                31 => ("password_it", format!("La mia password è {v}.")),
                32 => ("password_pt", format!("A minha senha é {v} no portal")),
                _ => ("password_nl", format!("Mijn wachtwoord is {v} onthoud het")),
            };
            (PiiKind::Password, name, v, Some(sentence))
        }
        34 => {
            let v = format!("{}{}", r.digits(1).replace('0', "7"), r.digits(5));
            (PiiKind::Password, "pin", v.clone(), Some(format!("new PIN: {v}")))
        }
        35 => {
            let v = (0..4).map(|_| r.pick(WORDS)).collect::<Vec<_>>().join(" ");
            (PiiKind::Password, "passphrase", v.clone(), Some(format!("the passphrase is {v}. Got it?")))
        }
        36 => (PiiKind::NationalId, "uk_ni_number", nino(r), None),
        37 => {
            let v = if r.below(2) == 0 { dni(r) } else { nir(r) };
            (PiiKind::NationalId, "es_dni_or_fr_nir", v, None)
        }
        38 => (PiiKind::NationalId, "it_codice_fiscale", codice_fiscale(r), None),
        39 => {
            let v = bsn(r);
            (PiiKind::NationalId, "nl_bsn", v.clone(), Some(format!("mijn BSN is {v}")))
        }
        40 => (PiiKind::CardNumber, "card_slashes", group(&card16(r), &[4, 4, 4, 4], "/"), None),
        41 => (PiiKind::CardNumber, "card_underscores", group(&card16(r), &[4, 4, 4, 4], "_"), None),
        42 => {
            let v = password(r);
            let keyword = r.pick(&["pw", "PW", "pwd", "passwd", "passcode", "Pin"]);
            let sep = r.pick(&[": ", ":", "=", " = ", " is ", " is: ", " - "]);
            (
                PiiKind::Password,
                "password_short_keyword",
                v.clone(),
                Some(format!("my {keyword}{sep}{v} for the laptop")),
            )
        }
        43 => {
            let v = format!("{}{}", 1 + r.below(9), r.digits(5));
            let keyword = r.pick(&["passcode", "pw", "pwd", "passwd"]);
            (PiiKind::Password, "password_plain_space", v.clone(), Some(format!("{keyword} {v} opens the door")))
        }
        44 => {
            let v = format!("{}{}", r.from(LOWER, 6), r.from(UPPER, 8));
            (PiiKind::Password, "password_letters_before", v.clone(), Some(format!("{v} is my password")))
        }
        _ => {
            let v = r.from(LOWER, 10);
            let keyword = r.pick(&["pw", "password", "pwd"]);
            (PiiKind::Password, "password_letters", v.clone(), Some(format!("the {keyword}: {v} works")))
        }
    };
    let sentence = own_sentence.unwrap_or_else(|| FRAMES[r.below(FRAMES.len())].replace("{}", &value));
    Planted { kind, format: name, value, sentence }
}
