//! PII and secret detection and redaction, pure and without I/O.
//!
//! Text is read normalised (NFKC, full-width digits as ASCII, every space and dash alike,
//! invisible characters dropped) and findings map back to the text as written. Detected: payment
//! cards (Luhn), IBANs (mod 97), e-mail addresses, phone numbers, US SSNs, national ids (UK NI,
//! ES DNI/NIE, FR NIR, IT codice fiscale, NL BSN, and any id a keyword names), API keys, tokens
//! and private keys, and passwords, passphrases and PINs stated in English, German, French,
//! Spanish, Italian, Portuguese or Dutch. The gate rejects memories containing any of it; the
//! engine redacts it from everything else it stores (messages, trace envelopes, reasons).

mod checks;
mod normal;
pub mod samples;

use std::sync::OnceLock;

use regex::{Captures, Regex};
use serde::{Deserialize, Serialize};

use crate::kind::text_enum;
pub use checks::luhn_valid;
use normal::Normalized;

text_enum!(
    /// The kind of sensitive data found; named in the placeholder that replaces it.
    PiiKind, "pii kind" {
        /// A payment card number that passes the Luhn check.
        CardNumber => "card_number",
        /// A US social security number.
        Ssn => "ssn",
        /// An API key, token or private key.
        Secret => "secret",
        /// A password, passphrase or PIN stated in text.
        Password => "password",
        /// An IBAN that passes the mod-97 check.
        Iban => "iban",
        /// An e-mail address.
        Email => "email",
        /// A phone number.
        Phone => "phone",
        /// A national identity or tax number other than an SSN.
        NationalId => "national_id",
    }
);

/// One finding: what and where (byte range in the original text), so it can be redacted
/// precisely.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PiiFinding {
    /// What was found.
    pub kind: PiiKind,
    /// Byte offset of the start.
    pub start: usize,
    /// Byte offset one past the end.
    pub end: usize,
}

/// Words that name a password or PIN, in the languages detected (regex alternation).
const PASSWORD_WORDS: &str = r"password|passwort|passwd|pwd|pw|pass\s?code|pin(?:[\s-]?code|\s+number)?|pincode|kennwort|geheimzahl|zugangscode|mot\s+de\s+passe|mdp|code\s+pin|code\s+secret|code\s+d'accès|contraseña|contrasena|clave(?:\s+de\s+acceso)?|c[oó]digo\s+pin|parola\s+d'ordine|codice\s+pin|codice\s+segreto|senha|palavra[\s-]passe|wachtwoord|toegangscode|wi-?fi\s+key";
/// Words that name a passphrase: its value runs to the end of the clause.
const PHRASE_WORDS: &str = r"pass\s?phrase|seed\s+phrase|recovery\s+phrase|mnemonic|phrase\s+secr[eè]te|phrase\s+de\s+passe|frase\s+de\s+(?:contraseña|paso)|frase\s+segreta|frase[\s-]senha|wachtzin";
/// What joins a password word to its owner ("for the wifi", "für das WLAN", "du compte").
const OWNER: &str = r"(?:\s+(?:for|to|of|on|für|zum|zur|vom|von|de|du|des|pour|para|per|del|della|do|da|van|voor|bij)\s+[\w .'-]{1,30}?)?";
/// Copulas: "is", "ist", "lautet", "est", "es", "è", "é", ":" … (a word copula may carry a
/// colon: "is: hunter2").
const COPULA: &str = r"(?:(?:is(?:\s+now)?|was|will\s+be|ist|lautet|war|est|était|c'est|es|era|será|è|é|is\s+nu|luidt)\b(?:\s*:)?|:|=|->|→)";
/// Words that name a national id; the value after one is redacted whatever its format.
const ID_WORDS: &str = r"passport(?:\s+(?:number|no\.?))?|reisepass(?:nummer)?|passeport|pasaporte|passaporto|paspoort|personalausweis(?:nummer)?|id\s+card\s+number|tax\s+id|steuer-?id|steuernummer|steuer-identifikationsnummer|national\s+id(?:\s+number)?|dni|nir|num[ée]ro\s+de\s+s[ée]curit[ée]\s+sociale|codice\s+fiscale|bsn|burgerservicenummer|sofinummer|ni\s+number|national\s+insurance(?:\s+number)?|nif|cpf|pesel|personnummer";
/// Words that say a phone number follows.
const PHONE_WORDS: &str = r"phone|telephone|tel\.?|mobile|cell|call\s+me\s+(?:at|on)|text\s+me\s+(?:at|on)|whats\s?app|fax|handy|telefon|handynummer|rufnummer|t[ée]l[ée]phone|portable|tel[ée]fono|m[óo]vil|celular|cellulare|telem[óo]vel|telefoon|mobiel";

struct Patterns {
    digit_run: Regex,
    iban: Regex,
    email: Regex,
    email_spelled: Regex,
    phone_run: Regex,
    phone_context: Regex,
    ssn: Regex,
    ssn_context: Regex,
    nino: Regex,
    dni: Regex,
    nir: Regex,
    codice_fiscale: Regex,
    bsn: Regex,
    id_context: Regex,
    secrets: Vec<Regex>,
    secret_context: Regex,
    password: Vec<Regex>,
    password_plain: Regex,
    password_before: Regex,
    passphrase: Regex,
    pin: Regex,
    placeholder: Regex,
}

fn re(p: &str) -> Regex {
    Regex::new(p).unwrap_or_else(|e| panic!("pii pattern {p:?}: {e}"))
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        // What joins a password or passphrase word to the value it states: a copula with any
        // spaces around it, or a dash between spaces ("pwd - hunter2"; "password-protected"
        // states nothing).
        let stated = format!(r"(?:\s*{COPULA}\s*|\s+-\s+)");
        Patterns {
        // Groups joined by a space, '.', '-', '/' or '_' (a card is written with any of them).
        digit_run: re(r"[0-9]+(?:(?: ?[.\-/_] ?| )[0-9]+)*"),
        iban: re(r"\b[A-Za-z]{2}[0-9]{2}(?:[ \-]?[A-Za-z0-9]){11,32}"),
        email: re(r"[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)*\.\p{L}{2,}"),
        email_spelled: re(
            r"(?i)[\p{L}\p{N}._%+\-]+ ?[\[(<{] ?at ?[\])>}] ?[\p{L}\p{N}\-]+(?: ?(?:[\[(<{] ?dot ?[\])>}]|\.) ?[\p{L}\p{N}\-]+)+",
        ),
        phone_run: re(r"(?:\+ ?)?\(?[0-9][0-9 ()./\-]{5,32}[0-9]"),
        phone_context: re(&format!(
            r"(?i)\b(?:{PHONE_WORDS})\b[^0-9+\n]{{0,24}}((?:\+ ?)?\(?[0-9][0-9 ()./\-]{{5,24}}[0-9])"
        )),
        ssn: re(r"[0-9]{3}[ .\-][0-9]{2}[ .\-][0-9]{4}"),
        ssn_context: re(r"(?i)\b(?:ssn|social\s+security(?:\s+(?:number|no\.?))?)\b[^0-9\n]{0,20}([0-9]{9})\b"),
        nino: re(r"\b[A-Z]{2} ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D]\b"),
        dni: re(r"(?i)\b(?:[0-9]{8}|[XYZ]-?[0-9]{7})-?[A-Z]\b"),
        nir: re(r"(?i)\b[12] ?[0-9]{2} ?[0-9]{2} ?(?:[0-9]{2}|2[AB]) ?[0-9]{3} ?[0-9]{3} ?[0-9]{2}\b"),
        codice_fiscale: re(
            r"(?i)\b[A-Z]{6}[0-9LMNPQRSTUV]{2}[ABCDEHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]\b",
        ),
        bsn: re(
            r"(?i)(?:\b(?:bsn|burgerservicenummer|sofi-?nummer|citizen\s+service\s+number)\b[^0-9\n]{0,20}([0-9]{9}|[0-9]{4}[ .][0-9]{2}[ .][0-9]{3}|[0-9]{3}[ .][0-9]{3}[ .][0-9]{3})|\b([0-9]{4}\.[0-9]{2}\.[0-9]{3}))\b",
        ),
        id_context: re(&format!(
            r"(?i:\b(?:{ID_WORDS})\b(?:\s*(?:number|no\.?|nummer|num[ée]ro|n[úu]mero|#))?\s*{COPULA}?\s*)([A-Za-z0-9](?:[A-Za-z0-9]|[ .\-/][0-9]){{4,20}})"
        )),
        secrets: [
            r"\bsk-(?:proj-|live-|test-|ant-)?[A-Za-z0-9_\-]{16,}",
            r"\b[spr]k_(?:live|test)_[A-Za-z0-9]{16,}",
            r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b",
            r"\bgh[pousr]_[A-Za-z0-9]{30,}",
            r"\bgithub_pat_[A-Za-z0-9_]{22,}",
            r"\bxox[abposre]-[A-Za-z0-9\-]{10,}",
            r"\bxapp-[A-Za-z0-9\-]{10,}",
            r"\bAIza[0-9A-Za-z_\-]{30,}",
            r"\bglpat-[A-Za-z0-9_\-]{20,}",
            r"\bhf_[A-Za-z0-9]{30,}",
            r"\bnpm_[A-Za-z0-9]{30,}",
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}",
        ]
        .iter()
        .map(|p| re(p))
        .collect(),
        secret_context: re(
            r#"(?i)\b(?:api[_ \-]?key|secret[_ \-]?key|client[_ \-]?secret|secret|access[_ \-]?key|access[_ \-]?token|auth[_ \-]?token|refresh[_ \-]?token|bearer|token|aws_secret_access_key|private[_ \-]?key)\b["']?\s*(?:is|:|=)?\s*["']?([A-Za-z0-9_\-./+=]{16,})"#,
        ),
        password: vec![
            // "password: x", "pw = x", "PIN is x", "passcode is: x", "pwd - x".
            re(&format!(
                r#"(?i)\b(?:{PASSWORD_WORDS})\b{OWNER}{stated}["'«“]?([^\s"'»”]+)"#
            )),
            re(&format!(
                r#"(?i)\b(?:set|changed?|reset|updated?|switched)\s+(?:my|the|our|his|her|their)?\s*(?:new\s+)?(?:{PASSWORD_WORDS})\s+(?:to|as|into)\s+["'«“]?([^\s"'»”]+)"#
            )),
            re(&format!(
                r#"(?i)\b(?:use|using|with|type|enter)\s+["'«“]?([^\s"'»”]{{4,}})["'»”]?\s+as\s+(?:my|the|our|a)?\s*(?:new\s+)?(?:{PASSWORD_WORDS})\b"#
            )),
        ],
        password_plain: re(&format!(
            r#"(?i)\b(?:{PASSWORD_WORDS}|{PHRASE_WORDS})\b\s+["'«“]?([^\s"'»”]+)"#
        )),
        password_before: re(&format!(
            r#"(?i)(?:^|\s)["'«“]?([^\s"'»”]{{4,}})["'»”]?\s+(?:is|was)\s+(?:my|the|our)\s+(?:new\s+)?(?:{PASSWORD_WORDS}|{PHRASE_WORDS})\b"#
        )),
        passphrase: re(&format!(r"(?i)\b(?:{PHRASE_WORDS})\b{OWNER}{stated}([^.;!?\n]{{1,120}})")),
        pin: re(
            r"(?i)\b(?:pin|pincode|pin[\s-]code|pin\s+number|code\s+pin|codice\s+pin|c[oó]digo\s+pin|geheimzahl)\s*(?:number|no\.?|nr\.?|#)?\s*[:=#]?\s*([0-9]{4,8})\b",
        ),
        placeholder: re(r"\[redacted [a-z_]+\]"),
        }
    })
}

/// Words that follow "password is" without being one ("my password is not …"), or come before
/// "is my password" ("this is my password", "what was the PIN").
const NOT_A_PASSWORD: &[&str] = &[
    "this",
    "it",
    "who",
    "where",
    "why",
    "how",
    "when",
    "these",
    "those",
    "mine",
    "yours",
    "ours",
    "theirs",
    "his",
    "hers",
    "one",
    "something",
    "nothing",
    "anything",
    "everything",
    "below",
    "above",
    "following",
    "not",
    "too",
    "very",
    "the",
    "a",
    "an",
    "still",
    "being",
    "changed",
    "reset",
    "wrong",
    "incorrect",
    "correct",
    "expired",
    "weak",
    "strong",
    "secure",
    "same",
    "different",
    "required",
    "empty",
    "missing",
    "in",
    "on",
    "at",
    "my",
    "your",
    "also",
    "easy",
    "hard",
    "long",
    "short",
    "saved",
    "stored",
    "written",
    "set",
    "and",
    "or",
    "nicht",
    "pas",
    "no",
    "non",
    "niet",
    "so",
    "that",
    "what",
    "which",
    "here",
    "there",
    "somewhere",
    "unknown",
];

/// Appends findings by normalised byte range.
struct Found<'a> {
    norm: &'a str,
    out: Vec<(PiiKind, usize, usize)>,
}

impl Found<'_> {
    fn add(&mut self, kind: PiiKind, start: usize, end: usize) {
        if start < end {
            self.out.push((kind, start, end));
        }
    }

    fn group(&mut self, kind: PiiKind, c: &Captures<'_>, i: usize) {
        if let Some(m) = c.get(i) {
            self.add(kind, m.start(), m.end());
        }
    }

    /// True when no letter or digit comes right before `start`.
    fn free_before(&self, start: usize) -> bool {
        !self.norm[..start].chars().next_back().is_some_and(char::is_alphanumeric)
    }

    /// True when no letter or digit comes right after `end`.
    fn free_after(&self, end: usize) -> bool {
        !self.norm[end..].chars().next().is_some_and(char::is_alphanumeric)
    }

    /// True when `start..end` is a whole token, not the middle of an id or a word.
    fn standalone(&self, start: usize, end: usize) -> bool {
        self.free_before(start) && self.free_after(end)
    }
}

/// Every sensitive span in a text, in order of position (byte ranges of `text` as given).
pub fn detect(text: &str) -> Vec<PiiFinding> {
    let norm = Normalized::new(text);
    let p = patterns();
    // Placeholders are masked: "[redacted phone] 8045" is no phone number's context, and a
    // placeholder is never a value to redact again.
    let placeholders: Vec<(usize, usize)> = p.placeholder.find_iter(&norm.text).map(|m| (m.start(), m.end())).collect();
    let mut masked = norm.text.clone();
    for &(s, e) in &placeholders {
        masked.replace_range(s..e, &"#".repeat(e - s));
    }
    let mut f = Found { norm: &masked, out: Vec::new() };
    cards(p, &mut f);
    ibans(p, &mut f);
    for m in p.email.find_iter(f.norm).chain(p.email_spelled.find_iter(f.norm)) {
        f.add(PiiKind::Email, m.start(), m.end());
    }
    phones(p, &mut f);
    national_ids(p, &mut f);
    secrets(p, &mut f);
    passwords(p, &mut f);
    // A value running into a placeholder is dropped: "password is [redacted password]" stays.
    let mut out: Vec<PiiFinding> = f
        .out
        .into_iter()
        .filter(|&(_, s, e)| !placeholders.iter().any(|&(ps, pe)| s < pe && ps < e))
        .map(|(kind, s, e)| {
            let (start, end) = norm.original(s, e);
            PiiFinding { kind, start, end }
        })
        .collect();
    out.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
    out
}

/// Runs of digit groups; any run of whole groups holding 13 to 19 digits that passes Luhn is a
/// card. Groups are a card's (three or more digits each) or single digits, or one block.
fn cards(p: &Patterns, f: &mut Found<'_>) {
    let runs: Vec<(usize, usize)> = p.digit_run.find_iter(f.norm).map(|m| (m.start(), m.end())).collect();
    for (rs, re_) in runs {
        let run = &f.norm[rs..re_];
        let groups: Vec<(usize, usize)> = run.char_indices().filter(|(_, c)| c.is_ascii_digit()).fold(
            Vec::<(usize, usize)>::new(),
            |mut g, (i, _)| {
                match g.last_mut() {
                    Some(last) if last.1 == i => last.1 = i + 1,
                    _ => g.push((i, i + 1)),
                }
                g
            },
        );
        let mut i = 0;
        while i < groups.len() {
            let mut taken = None;
            let mut count = 0;
            for j in i..groups.len() {
                count += groups[j].1 - groups[j].0;
                if count > 19 {
                    break;
                }
                let window = &groups[i..=j];
                let shaped =
                    window.len() == 1 || window.iter().all(|g| g.1 - g.0 >= 3) || window.iter().all(|g| g.1 - g.0 == 1);
                let (s, e) = (rs + groups[i].0, rs + groups[j].1);
                if count >= 13 && shaped && f.standalone(s, e) && luhn_valid(&f.norm[s..e]) {
                    taken = Some((j, s, e));
                }
            }
            match taken {
                Some((j, s, e)) => {
                    f.add(PiiKind::CardNumber, s, e);
                    i = j + 1;
                }
                None => i += 1,
            }
        }
    }
}

/// IBAN-shaped text, shortened group by group until mod 97 holds (the words after an IBAN
/// can look like more of it). A candidate that fails is retried one character on, so a false
/// start ("AB12 …") never hides the IBAN it ran into.
fn ibans(p: &Patterns, f: &mut Found<'_>) {
    let mut pos = 0;
    while let Some(m) = p.iban.find_at(f.norm, pos) {
        let (s, e) = (m.start(), m.end());
        let text = &f.norm[s..e];
        let mut ends: Vec<usize> = text.match_indices([' ', '-']).map(|(i, _)| i).collect();
        ends.push(text.len());
        let valid = ends.iter().rev().copied().find(|&end| {
            let compact: String = text[..end].chars().filter(char::is_ascii_alphanumeric).collect();
            checks::iban_valid(&compact) && f.free_after(s + end)
        });
        match valid {
            Some(end) => {
                f.add(PiiKind::Iban, s, s + end);
                pos = s + end;
            }
            None => pos = s + text.chars().next().map_or(1, char::len_utf8),
        }
    }
}

/// Phone numbers: an international prefix (+ or 00), an area code in parentheses, the North
/// American 3-3-4 shape, a national trunk prefix (0…) with 9 to 12 digits, or any 7 to 15
/// digits after a word like "phone", "Handy", "téléphone". Dates, times, years, prices,
/// versions and plain numbers have none of these.
fn phones(p: &Patterns, f: &mut Found<'_>) {
    static NANP: OnceLock<Regex> = OnceLock::new();
    static TRUNK: OnceLock<Regex> = OnceLock::new();
    static DATE: OnceLock<Regex> = OnceLock::new();
    let nanp = NANP.get_or_init(|| re(r"^\(?[2-9][0-9]{2}\)?[ .\-]?[0-9]{3}[ .\-][0-9]{4}$"));
    let trunk = TRUNK.get_or_init(|| re(r"^0[1-9][0-9]{0,4}(?:[ .\-/][0-9]{2,8}){1,5}$"));
    let date = DATE.get_or_init(|| re(r"^[0-9]{1,4}[./\-][0-9]{1,2}[./\-][0-9]{1,4}(?:$|[^0-9])"));
    let runs: Vec<(usize, usize)> = p.phone_run.find_iter(f.norm).map(|m| (m.start(), m.end())).collect();
    for (s, e) in runs {
        let run = f.norm[s..e].trim_end_matches([' ', '(', '.', '-', '/']);
        let e = s + run.len();
        let is_phone = |run: &str| {
            let digits = run.chars().filter(char::is_ascii_digit).count();
            let international = run.starts_with('+') && (8..=15).contains(&digits);
            let dialled = run.starts_with("00") && !run[2..].starts_with('0') && (10..=15).contains(&digits);
            let area = run.starts_with('(')
                && run.find(')').is_some_and(|i| (3..=6).contains(&i) && run[1..i].chars().all(|c| c.is_ascii_digit()))
                && (7..=15).contains(&digits);
            let national = nanp.is_match(run) || (trunk.is_match(run) && (9..=12).contains(&digits));
            !date.is_match(run) && (international || dialled || area || national)
        };
        if is_phone(run) && f.standalone(s, e) {
            f.add(PiiKind::Phone, s, e);
            continue;
        }
        // A number before or after a phone joins its run ("item 3 06 12 34 56 78"): the run
        // from each later group on, then up to each earlier group's end, or "(0049 30 …)"
        // whose parenthesis is the sentence's.
        let b = run.as_bytes();
        let starts = (1..b.len()).filter(|&i| matches!(b[i], b'0'..=b'9' | b'(') && !b[i - 1].is_ascii_digit());
        let ends = (1..b.len()).rev().filter(|&i| !b[i].is_ascii_digit() && b[i - 1].is_ascii_digit());
        let part = starts
            .map(|i| (i, b.len()))
            .chain(ends.map(|i| (0, i)))
            .map(|(i, j)| (i, i + run[i..j].trim_end_matches([' ', '(', '.', '-', '/']).len()))
            .find(|&(i, j)| is_phone(&run[i..j]) && f.standalone(s + i, s + j));
        if let Some((i, j)) = part {
            f.add(PiiKind::Phone, s + i, s + j);
        }
    }
    let named: Vec<(usize, usize)> =
        p.phone_context.captures_iter(f.norm).filter_map(|c| c.get(1)).map(|m| (m.start(), m.end())).collect();
    for (s, e) in named {
        let digits = f.norm[s..e].chars().filter(char::is_ascii_digit).count();
        if (7..=15).contains(&digits) && !date.is_match(&f.norm[s..e]) {
            f.add(PiiKind::Phone, s, e);
        }
    }
}

/// SSNs and the European ids whose format carries a check (UK NI by its prefix rules), and any
/// value a word like "passport number" or "DNI" introduces.
fn national_ids(p: &Patterns, f: &mut Found<'_>) {
    let spans = |r: &Regex, f: &Found<'_>| -> Vec<(usize, usize)> {
        r.find_iter(f.norm).map(|m| (m.start(), m.end())).collect()
    };
    for (s, e) in spans(&p.ssn, f) {
        if f.standalone(s, e) && checks::ssn_valid(&f.norm[s..e]) {
            f.add(PiiKind::Ssn, s, e);
        }
    }
    for c in p.ssn_context.captures_iter(f.norm).collect::<Vec<_>>() {
        if c.get(1).is_some_and(|m| checks::ssn_valid(m.as_str())) {
            f.group(PiiKind::Ssn, &c, 1);
        }
    }
    type Check = fn(&str) -> bool;
    let checked: [(&Regex, Check); 4] = [
        (&p.nino, checks::nino_prefix_valid),
        (&p.dni, checks::dni_valid),
        (&p.nir, checks::nir_valid),
        (&p.codice_fiscale, checks::codice_fiscale_valid),
    ];
    for (r, valid) in checked {
        for (s, e) in spans(r, f) {
            if valid(&f.norm[s..e]) {
                f.add(PiiKind::NationalId, s, e);
            }
        }
    }
    for c in p.bsn.captures_iter(f.norm).collect::<Vec<_>>() {
        if let Some(m) = c.get(1).or(c.get(2)).filter(|m| checks::bsn_valid(m.as_str())) {
            f.add(PiiKind::NationalId, m.start(), m.end());
        }
    }
    for c in p.id_context.captures_iter(f.norm).collect::<Vec<_>>() {
        if let Some(m) = c.get(1).filter(|m| m.as_str().chars().filter(char::is_ascii_digit).count() >= 3) {
            f.add(PiiKind::NationalId, m.start(), m.end());
        }
    }
}

/// Well-known key and token formats, and a long value after "api key", "token", "secret" …
/// that mixes letters and digits.
fn secrets(p: &Patterns, f: &mut Found<'_>) {
    for r in &p.secrets {
        for (s, e) in r.find_iter(f.norm).map(|m| (m.start(), m.end())).collect::<Vec<_>>() {
            f.add(PiiKind::Secret, s, e);
        }
    }
    for c in p.secret_context.captures_iter(f.norm).collect::<Vec<_>>() {
        let v = c.get(1).map_or("", |m| m.as_str());
        if v.chars().any(|c| c.is_ascii_digit()) && v.chars().any(|c| c.is_ascii_alphabetic()) {
            f.group(PiiKind::Secret, &c, 1);
        }
    }
}

/// The value of a stated password, PIN or passphrase; the words around it stay.
///
/// After a keyword and a separator (":", "=", "is", "is:", " - "), any value but a word that
/// says something about the password ("not", "too", "this", see [`NOT_A_PASSWORD`]). After a
/// keyword and a plain space, only a value that looks made up ([`made_up`]): "pw hunter2" and
/// "passcode 998877" are secrets, "password manager" and "pin the tail" are not. Before "is my
/// password", a made-up value, or a plain word that the clause ends on ("Fluffy is my
/// password.", not "Dana is my password manager").
fn passwords(p: &Patterns, f: &mut Found<'_>) {
    let trim = |f: &Found<'_>, s: usize, e: usize| -> (usize, usize) {
        let v = &f.norm[s..e];
        let t = v.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', '"', '\'', '»', '”']);
        (s, s + if t.is_empty() { v.len() } else { t.len() })
    };
    let not_a_password = |v: &str| NOT_A_PASSWORD.contains(&v.to_lowercase().as_str());
    for r in &p.password {
        for c in r.captures_iter(f.norm).collect::<Vec<_>>() {
            let Some(m) = c.get(1) else { continue };
            let (s, e) = trim(f, m.start(), m.end());
            if !not_a_password(&f.norm[s..e]) {
                f.add(PiiKind::Password, s, e);
            }
        }
    }
    for c in p.password_plain.captures_iter(f.norm).collect::<Vec<_>>() {
        let Some(m) = c.get(1) else { continue };
        let (s, e) = trim(f, m.start(), m.end());
        if made_up(&f.norm[s..e]) {
            f.add(PiiKind::Password, s, e);
        }
    }
    for c in p.password_before.captures_iter(f.norm).collect::<Vec<_>>() {
        let (Some(m), Some(all)) = (c.get(1), c.get(0)) else { continue };
        let (s, e) = trim(f, m.start(), m.end());
        let v = &f.norm[s..e];
        let plain_word = v.chars().all(char::is_alphabetic) && !not_a_password(v);
        if v.chars().any(|c| !c.is_alphabetic()) || made_up(v) || (plain_word && ends_clause(&f.norm[all.end()..])) {
            f.add(PiiKind::Password, s, e);
        }
    }
    for r in [&p.passphrase, &p.pin] {
        for c in r.captures_iter(f.norm).collect::<Vec<_>>() {
            if let Some(m) = c.get(1) {
                let (s, e) = trim(f, m.start(), m.end());
                let first = f.norm[s..e].split([' ', ',']).next().unwrap_or("").to_lowercase();
                if !NOT_A_PHRASE.contains(&first.as_str()) {
                    f.add(PiiKind::Password, s, e);
                }
            }
        }
    }
}

/// First words after "passphrase is" that say it states none ("my passphrase is not working");
/// any other word may begin one ("correct horse battery staple").
const NOT_A_PHRASE: &[&str] = &["not", "too", "very", "no", "still", "being", "nicht", "pas", "non", "niet"];

/// Whether a token after a password keyword and a plain space looks like a secret rather than
/// a word of the sentence: at least four characters, and a digit, a lower-case letter followed
/// later by a capital ("hunterABC", "xKcd"), or a symbol between letters or digits ("p@ss").
fn made_up(v: &str) -> bool {
    let chars: Vec<char> = v.chars().collect();
    let mixed_case =
        chars.iter().position(|c| c.is_lowercase()).is_some_and(|i| chars[i..].iter().any(|c| c.is_uppercase()));
    let inner_symbol = chars.len() > 2 && chars[1..chars.len() - 1].iter().any(|c| !c.is_alphanumeric());
    chars.len() >= 4 && (chars.iter().any(char::is_ascii_digit) || mixed_case || inner_symbol)
}

/// Words after "… is my password" that go on with the sentence rather than name something else
/// ("… is my password for the bank", "… is my password now"; not "… is my password manager").
const CLAUSE_GOES_ON: &[&str] = &[
    "for", "and", "but", "so", "now", "too", "again", "though", "on", "at", "in", "of", "to", "from", "since", "until",
    "then", "ok", "okay", "please", "btw", "don't", "dont", "do", "remember", "thanks", "lol",
];

/// Whether `rest`, the text after a password keyword, ends the clause or goes on with it (see
/// [`CLAUSE_GOES_ON`]), so the keyword names the value before it.
fn ends_clause(rest: &str) -> bool {
    let rest = rest.trim_start_matches(' ');
    match rest.chars().next() {
        None => true,
        // "password's …" goes on to something of the password's.
        Some(c @ ('\'' | '’')) => !rest[c.len_utf8()..].starts_with(['s', 'S']),
        Some(c) if !c.is_alphanumeric() => true,
        Some(_) => {
            let word: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '\'').collect();
            CLAUSE_GOES_ON.contains(&word.to_lowercase().as_str())
        }
    }
}

/// The text with every finding replaced by `[redacted <kind>]`; overlapping findings merge.
/// Idempotent: a placeholder is never redacted again.
pub fn redact(text: &str) -> String {
    let findings = detect(text);
    if findings.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut pos = 0;
    for f in findings {
        if f.start < pos {
            pos = pos.max(f.end);
            continue;
        }
        out.push_str(&text[pos..f.start]);
        out.push_str("[redacted ");
        out.push_str(f.kind.as_str());
        out.push(']');
        pos = f.end;
    }
    out.push_str(&text[pos..]);
    out
}

/// [`redact`] for an optional text.
pub fn redact_opt(text: Option<&str>) -> Option<String> {
    text.map(redact)
}

/// Whether nothing but placeholders and punctuation is left of a redacted text
/// ("[redacted email] … [redacted phone]"): such a line only says that something was withheld,
/// so a prompt block has no use for it.
pub fn only_placeholders(text: &str) -> bool {
    let p = &patterns().placeholder;
    p.is_match(text) && !p.replace_all(text, " ").chars().any(char::is_alphanumeric)
}

#[cfg(test)]
mod tests;
