//! The LoCoMo dataset, parsed: conversations of dated sessions of turns, and questions with the
//! dialog ids of their evidence (normalised where the dataset misspells them, counted where not).
//!
//! The file is read at run time from wherever the caller keeps it; nothing of it is copied here.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use mnemo_core::Role;
use serde::Serialize;
use serde_json::Value;

use super::error::LocomoError;

/// What is wrong with one conversation of a LoCoMo-format file, and where: [`Dataset::parse`]
/// reports it under the file's path. Each message names the key and what it must hold.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// A problem inside a part of the file: the conversation's sample id, a session, a question
    /// or a key, outermost first.
    #[error("{at}: {source}")]
    At {
        /// Where: a sample id, `question 3`, `session_2 turn 5`, `"session_2_date_time"`.
        at: String,
        /// What is wrong there.
        #[source]
        source: Box<FormatError>,
    },
    /// A required key is absent.
    #[error("missing {0}")]
    Missing(&'static str),
    /// A key holds the wrong kind of value.
    #[error("{key} {expected}")]
    Shape {
        /// The key (quoted) or the part of a value.
        key: String,
        /// What it must be, e.g. `must be a list of turns`.
        expected: &'static str,
    },
    /// A session has turns but no time, so its messages cannot be dated.
    #[error("\"{session}\" has turns but no \"{key}\"")]
    NoSessionTime {
        /// The session's key, `session_N`.
        session: String,
        /// The key its time belongs in, `session_N_date_time`.
        key: String,
    },
    /// Two turns share a dialog id, so evidence could not tell them apart.
    #[error("dia_id {0:?} appears twice")]
    DuplicateDiaId(String),
    /// No session has a turn: there would be nothing to ingest.
    #[error("no sessions with turns")]
    NoSessions,
    /// A key of an annotation section that is not `{prefix}N{suffix}`.
    #[error("\"{section}\": unexpected key {key:?} (expected {expected})")]
    UnexpectedKey {
        /// `observation` or `event_summary`.
        section: &'static str,
        /// The key found.
        key: String,
        /// The form expected.
        expected: &'static str,
    },
    /// A date that is not in LoCoMo's form.
    #[error("{text:?} is not a date like \"8 May, 2023\" ({source})")]
    Date {
        /// The text, trimmed.
        text: String,
        /// Why chrono refused it.
        #[source]
        source: chrono::ParseError,
    },
    /// A session time that is not in LoCoMo's form.
    #[error("{text:?} is not a date-time like \"1:56 pm on 8 May, 2023\" ({source})")]
    DateTime {
        /// The text, trimmed.
        text: String,
        /// Why chrono refused it.
        #[source]
        source: chrono::ParseError,
    },
}

impl FormatError {
    /// This error located inside `at`.
    fn at(self, at: impl Into<String>) -> Self {
        Self::At { at: at.into(), source: Box::new(self) }
    }

    fn shape(key: impl Into<String>, expected: &'static str) -> Self {
        Self::Shape { key: key.into(), expected }
    }
}

/// A whole LoCoMo-format file.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// Where it was read from (for reports and error messages).
    pub path: PathBuf,
    /// Its conversations, in file order.
    pub conversations: Vec<Conversation>,
}

/// One long conversation between two people, asked about afterwards.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    /// The dataset's id for it ("conv-26"); also the user id it is ingested under.
    pub sample_id: String,
    /// The two speakers, as the file names them: `speaker_a`, then `speaker_b` (either left
    /// out when the file lacks it, so splitting the speakers' roles checks there are two).
    pub speakers: Vec<String>,
    /// Sessions in order of their number.
    pub sessions: Vec<Session>,
    /// The questions about it, in file order.
    pub questions: Vec<Question>,
    /// The dataset's own per-speaker facts, each tied to the turns it was read from (the
    /// `observation` annotation): the reference the extraction benchmark measures against.
    pub observations: Vec<Observation>,
    /// The dataset's own per-speaker dated events (the `event_summary` annotation).
    pub events: Vec<EventNote>,
}

/// A fact the dataset's authors read from one speaker's turns ("Caroline attended an LGBTQ
/// support group recently ...", from D1:3).
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The session it was observed in.
    pub session: u32,
    /// Whose fact it is.
    pub speaker: String,
    /// The fact, in the third person, naming the speaker.
    pub text: String,
    /// The turns it was read from, normalised; entries naming no turn are left out.
    pub dia_ids: Vec<String>,
}

/// Something that happened to a speaker, by the dataset's authors, dated by its session.
#[derive(Debug, Clone, PartialEq)]
pub struct EventNote {
    /// The session it was told in.
    pub session: u32,
    /// To whom it happened.
    pub speaker: String,
    /// What happened, naming the speaker.
    pub text: String,
    /// The date the annotation gives it.
    pub date: NaiveDate,
}

/// One sitting of the conversation, all at one date-time.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// Its number (`session_3` is 3).
    pub number: u32,
    /// When it took place, from `session_N_date_time` (read as UTC).
    pub at: DateTime<Utc>,
    /// Its turns, in order.
    pub turns: Vec<Turn>,
}

/// One turn of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// The dialog id ("D3:12" = session 3, turn 12): what evidence refers to.
    pub dia_id: String,
    /// Who spoke.
    pub speaker: String,
    /// What was said.
    pub text: String,
    /// The caption of a photo shared with the turn, when there is one.
    pub caption: Option<String>,
}

/// How a turn becomes the text of a message: the choices the benchmark measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TurnRendering {
    /// Prefix the speaker's name ("Caroline: ..."): questions name people, and both speakers'
    /// turns are ingested as one user's conversation. Ignored unless `speakers` is
    /// [`Speakers::BothUser`]: a conversation between a user and an assistant names nobody.
    pub speaker_prefix: bool,
    /// Append the shared photo's caption ("[shares a photo: ...]").
    pub captions: bool,
    /// Who the two speakers are to the memory (`--speaker-as`): LoCoMo is a chat between two
    /// people, while mnemo is built for a user talking to an assistant, so the benchmark can
    /// feed it either way.
    pub speakers: Speakers,
}

impl Default for TurnRendering {
    fn default() -> Self {
        Self { speaker_prefix: true, captions: true, speakers: Speakers::BothUser }
    }
}

/// Which role each of a conversation's two speakers is ingested as.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Speakers {
    /// Every turn is the user's message, each named by its speaker (the original rendering).
    #[default]
    BothUser,
    /// Speaker A (the file's `speaker_a`) is the user and speaker B the assistant, unnamed
    /// (`--speaker-as user`).
    AIsUser,
    /// Speaker A is the assistant and speaker B the user, unnamed (`--speaker-as assistant`).
    AIsAssistant,
}

impl TurnRendering {
    /// The role `turn` of `conv` is ingested as: always the user's unless the speakers are split.
    pub fn role(&self, conv: &Conversation, turn: &Turn) -> Role {
        match (self.speakers, conv.is_speaker_a(turn)) {
            (Speakers::BothUser, _) | (Speakers::AIsUser, true) | (Speakers::AIsAssistant, false) => Role::User,
            _ => Role::Assistant,
        }
    }

    /// The name of the speaker ingested as the user, when only one of them is; `None` when both
    /// are (what memories say about "the user" is then about either).
    pub fn user_speaker<'c>(&self, conv: &'c Conversation) -> Option<&'c str> {
        let (a, b) = (conv.speakers.first()?, conv.speakers.get(1)?);
        match self.speakers {
            Speakers::BothUser => None,
            Speakers::AIsUser => Some(a),
            Speakers::AIsAssistant => Some(b),
        }
    }

    fn named(&self) -> bool {
        self.speaker_prefix && self.speakers == Speakers::BothUser
    }
}

impl Turn {
    /// The message text this turn is ingested as; the baselines index the same text, so every
    /// system sees identical words.
    pub fn render(&self, how: TurnRendering) -> String {
        let mut out = String::new();
        if how.named() {
            out.push_str(&self.speaker);
            out.push_str(": ");
        }
        self.push_said(&mut out, how);
        out
    }

    /// The words said in this turn as ingested, without the speaker's name: what the text
    /// metrics look for in a block (a name prefix would credit any block that names the speaker).
    pub fn said(&self, how: TurnRendering) -> String {
        let mut out = String::new();
        self.push_said(&mut out, how);
        out
    }

    fn push_said(&self, out: &mut String, how: TurnRendering) {
        out.push_str(self.text.trim());
        if let Some(c) = self.caption.as_deref().filter(|_| how.captions) {
            if !self.text.trim().is_empty() {
                out.push(' ');
            }
            out.push_str("[shares a photo: ");
            out.push_str(c.trim());
            out.push(']');
        }
    }
}

/// A question about a conversation.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// Its position in the conversation's `qa` list (0-based).
    pub index: usize,
    /// The question text.
    pub text: String,
    /// The gold answer (`adversarial_answer` for category 5), as text.
    pub answer: String,
    /// 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
    pub category: u8,
    /// Evidence dialog ids that name a turn of this conversation, normalised, without repeats.
    pub evidence: Vec<String>,
    /// Evidence entries that could not be matched to a turn, as written in the file.
    pub unresolved: Vec<String>,
    /// Evidence entries that matched only after normalisation, as written in the file.
    pub normalised: Vec<String>,
}

impl Dataset {
    /// Reads and parses a LoCoMo-format JSON file.
    pub fn load(path: &Path) -> Result<Self, LocomoError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| LocomoError::Io { path: path.to_path_buf(), source })?;
        Self::parse(path, &text)
    }

    /// Parses LoCoMo-format JSON text; `path` only names the source in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Self, LocomoError> {
        let bad = |message: String| LocomoError::Format { path: path.to_path_buf(), message };
        let root: Value =
            serde_json::from_str(text).map_err(|e| bad(format!("not valid JSON ({e}); expected a LoCoMo file")))?;
        let Value::Array(items) = root else {
            return Err(bad("expected a JSON array of conversations at the top level".into()));
        };
        if items.is_empty() {
            return Err(bad("the file holds no conversations".into()));
        }
        let mut conversations = Vec::with_capacity(items.len());
        let mut ids = HashSet::new();
        for (i, item) in items.iter().enumerate() {
            let c = parse_conversation(i, item)
                .map_err(|source| LocomoError::Conversation { path: path.to_path_buf(), source })?;
            if !ids.insert(c.sample_id.clone()) {
                return Err(bad(format!("sample_id {:?} appears twice", c.sample_id)));
            }
            conversations.push(c);
        }
        Ok(Self { path: path.to_path_buf(), conversations })
    }
}

impl Conversation {
    /// Every turn in order, with the session it belongs to.
    pub fn turns(&self) -> impl Iterator<Item = (&Session, &Turn)> {
        self.sessions.iter().flat_map(|s| s.turns.iter().map(move |t| (s, t)))
    }

    /// Whether speaker A (the file's `speaker_a`, the first of `speakers`) said `turn`.
    pub fn is_speaker_a(&self, turn: &Turn) -> bool {
        self.speakers.first().is_some_and(|a| *a == turn.speaker)
    }
}

fn parse_conversation(i: usize, item: &Value) -> Result<Conversation, FormatError> {
    let sample_id = match item.get("sample_id") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
        _ => format!("conversation-{}", i + 1),
    };
    let at = |e: FormatError| e.at(sample_id.as_str());
    let conv = item
        .get("conversation")
        .and_then(Value::as_object)
        .ok_or_else(|| at(FormatError::Missing("\"conversation\" object")))?;
    let speakers: Vec<String> = ["speaker_a", "speaker_b"]
        .iter()
        .filter_map(|k| conv.get(*k).and_then(Value::as_str))
        .map(String::from)
        .collect();

    let mut numbers: Vec<u32> =
        conv.keys().filter_map(|k| k.strip_prefix("session_")?.parse::<u32>().ok()).collect::<Vec<_>>();
    numbers.sort_unstable();
    numbers.dedup();
    let mut sessions = Vec::new();
    let mut known = HashSet::new();
    for n in numbers {
        let key = format!("session_{n}");
        let Some(list) = conv.get(&key) else { continue };
        let Value::Array(list) = list else {
            return Err(at(FormatError::shape(format!("\"{key}\""), "must be a list of turns")));
        };
        if list.is_empty() {
            continue;
        }
        let when_key = format!("session_{n}_date_time");
        let when = conv
            .get(&when_key)
            .and_then(Value::as_str)
            .ok_or_else(|| at(FormatError::NoSessionTime { session: key.clone(), key: when_key.clone() }))?;
        let when = parse_date_time(when).map_err(|e| at(e.at(format!("\"{when_key}\""))))?;
        let mut turns = Vec::with_capacity(list.len());
        for (j, t) in list.iter().enumerate() {
            let field = |f: &str| t.get(f).and_then(Value::as_str).map(str::to_string);
            let where_ = || format!("{key} turn {}", j + 1);
            let dia_id = field("dia_id").ok_or_else(|| at(FormatError::Missing("\"dia_id\"").at(where_())))?;
            let dia_id = normalise_dia_id(&dia_id).unwrap_or(dia_id);
            if !known.insert(dia_id.clone()) {
                return Err(at(FormatError::DuplicateDiaId(dia_id).at(where_())));
            }
            let speaker = field("speaker").ok_or_else(|| at(FormatError::Missing("\"speaker\"").at(where_())))?;
            let text = field("text").unwrap_or_default();
            let caption = field("blip_caption").filter(|c| !c.trim().is_empty());
            if text.trim().is_empty() && caption.is_none() {
                continue; // nothing was said: there is no message to ingest
            }
            turns.push(Turn { dia_id, speaker, text, caption });
        }
        sessions.push(Session { number: n, at: when, turns });
    }
    if sessions.is_empty() {
        return Err(at(FormatError::NoSessions));
    }

    let present: HashSet<&str> = sessions.iter().flat_map(|s| &s.turns).map(|t| t.dia_id.as_str()).collect();
    let qa = match item.get("qa") {
        None => &Vec::new(),
        Some(Value::Array(qa)) => qa,
        Some(_) => return Err(at(FormatError::shape("\"qa\"", "must be a list of questions"))),
    };
    let mut questions = Vec::with_capacity(qa.len());
    for (index, q) in qa.iter().enumerate() {
        let where_ = format!("question {}", index + 1);
        let text = q
            .get("question")
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| at(FormatError::Missing("\"question\"").at(where_.as_str())))?
            .to_string();
        let category = q
            .get("category")
            .and_then(Value::as_u64)
            .and_then(|c| u8::try_from(c).ok())
            .ok_or_else(|| at(FormatError::shape("\"category\"", "must be a small integer").at(where_.as_str())))?;
        let answer = match q.get("answer").or_else(|| q.get("adversarial_answer")) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        let raw: Vec<String> = match q.get("evidence") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(xs)) => xs.iter().filter_map(Value::as_str).map(String::from).collect(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(_) => {
                return Err(at(FormatError::shape("\"evidence\"", "must be a list of dialog ids").at(where_)));
            }
        };
        let (mut evidence, mut unresolved, mut normalised) = (Vec::new(), Vec::new(), Vec::new());
        for entry in &raw {
            let parts = split_evidence(entry);
            let mut all_found = !parts.is_empty();
            let mut rewritten = parts.len() != 1;
            for p in parts {
                match normalise_dia_id(p).filter(|id| present.contains(id.as_str())) {
                    Some(id) => {
                        rewritten |= id != p;
                        if !evidence.contains(&id) {
                            evidence.push(id);
                        }
                    }
                    None => all_found = false,
                }
            }
            if !all_found {
                unresolved.push(entry.clone());
            } else if rewritten {
                normalised.push(entry.clone());
            }
        }
        questions.push(Question { index, text, answer, category, evidence, unresolved, normalised });
    }
    let observations = parse_observations(item, &present).map_err(at)?;
    let events = parse_events(item).map_err(at)?;
    Ok(Conversation { sample_id, speakers, sessions, questions, observations, events })
}

/// The number N of a key `{prefix}N{suffix}` ("session_3_observation" → 3).
fn session_of(key: &str, prefix: &str, suffix: &str) -> Option<u32> {
    key.strip_prefix(prefix)?.strip_suffix(suffix)?.parse().ok()
}

/// `observation`: `{"session_N_observation": {speaker: [[text, dia_id | [dia_id, ...]], ...]}}`.
/// Absent is fine (not every LoCoMo-format file is annotated); present and malformed is an error.
fn parse_observations(item: &Value, present: &HashSet<&str>) -> Result<Vec<Observation>, FormatError> {
    let Some(root) = item.get("observation") else { return Ok(Vec::new()) };
    let root =
        root.as_object().ok_or_else(|| FormatError::shape("\"observation\"", "must be an object of sessions"))?;
    let mut out = Vec::new();
    for (key, speakers) in root {
        let session = session_of(key, "session_", "_observation").ok_or_else(|| FormatError::UnexpectedKey {
            section: "observation",
            key: key.clone(),
            expected: "session_N_observation",
        })?;
        let speakers = speakers
            .as_object()
            .ok_or_else(|| FormatError::shape(format!("\"{key}\""), "must map speakers to lists"))?;
        for (speaker, list) in speakers {
            let list =
                list.as_array().ok_or_else(|| FormatError::shape(format!("\"{key}\".{speaker}"), "must be a list"))?;
            for entry in list {
                let (text, ids) = match entry.as_array().map(Vec::as_slice) {
                    Some([Value::String(t), ids]) => (t, ids),
                    _ => {
                        return Err(FormatError::shape("each entry", "must be [text, dia_id(s)]")
                            .at(format!("\"{key}\".{speaker}")));
                    }
                };
                let raw: Vec<&str> = match ids {
                    Value::String(s) => vec![s.as_str()],
                    Value::Array(xs) => xs.iter().filter_map(Value::as_str).collect(),
                    _ => {
                        return Err(FormatError::shape("dialog ids", "must be a string or a list")
                            .at(format!("\"{key}\".{speaker}")));
                    }
                };
                let mut dia_ids: Vec<String> = Vec::new();
                for id in raw.iter().flat_map(|r| split_evidence(r)).filter_map(normalise_dia_id) {
                    if present.contains(id.as_str()) && !dia_ids.contains(&id) {
                        dia_ids.push(id);
                    }
                }
                out.push(Observation { session, speaker: speaker.clone(), text: text.clone(), dia_ids });
            }
        }
    }
    out.sort_by_key(|o| o.session);
    Ok(out)
}

/// `event_summary`: `{"events_session_N": {speaker: [text, ...], "date": "8 May, 2023"}}`.
fn parse_events(item: &Value) -> Result<Vec<EventNote>, FormatError> {
    let Some(root) = item.get("event_summary") else { return Ok(Vec::new()) };
    let root =
        root.as_object().ok_or_else(|| FormatError::shape("\"event_summary\"", "must be an object of sessions"))?;
    let mut out = Vec::new();
    for (key, entry) in root {
        let session = session_of(key, "events_session_", "").ok_or_else(|| FormatError::UnexpectedKey {
            section: "event_summary",
            key: key.clone(),
            expected: "events_session_N",
        })?;
        let entry = entry.as_object().ok_or_else(|| FormatError::shape(format!("\"{key}\""), "must be an object"))?;
        let date = entry
            .get("date")
            .and_then(Value::as_str)
            .ok_or_else(|| FormatError::Missing("\"date\"").at(format!("\"{key}\"")))?;
        let date = parse_date(date).map_err(|e| e.at(format!("\"{key}\".date")))?;
        for (speaker, list) in entry.iter().filter(|(k, _)| k.as_str() != "date") {
            let list =
                list.as_array().ok_or_else(|| FormatError::shape(format!("\"{key}\".{speaker}"), "must be a list"))?;
            for text in list.iter().filter_map(Value::as_str).filter(|t| !t.trim().is_empty()) {
                out.push(EventNote { session, speaker: speaker.clone(), text: text.to_string(), date });
            }
        }
    }
    out.sort_by_key(|e| e.session);
    Ok(out)
}

/// "8 May, 2023" → 2023-05-08.
pub fn parse_date(s: &str) -> Result<NaiveDate, FormatError> {
    let t = s.trim();
    NaiveDate::parse_from_str(t, "%d %B, %Y")
        .or_else(|_| NaiveDate::parse_from_str(t, "%d %b, %Y"))
        .map_err(|source| FormatError::Date { text: t.to_string(), source })
}

/// Splits an evidence entry that packs several ids ("D8:6; D9:17", "D9:1 D4:4").
fn split_evidence(entry: &str) -> Vec<&str> {
    entry.split(|c: char| c == ';' || c == ',' || c.is_whitespace()).filter(|p| !p.is_empty()).collect()
}

/// `D<session>:<turn>` with the misspellings the dataset has: a stray colon ("D:11:26"),
/// leading zeros ("D30:05"), lowercase. `None` when it is not a dialog id at all.
pub fn normalise_dia_id(raw: &str) -> Option<String> {
    let s = raw.trim();
    let rest = s.strip_prefix('D').or_else(|| s.strip_prefix('d'))?;
    let rest = rest.strip_prefix(':').unwrap_or(rest);
    let (a, b) = rest.split_once(':')?;
    let num =
        |x: &str| (!x.is_empty() && x.chars().all(|c| c.is_ascii_digit())).then(|| x.parse::<u32>().ok()).flatten();
    Some(format!("D{}:{}", num(a)?, num(b)?))
}

/// "1:56 pm on 8 May, 2023" → 2023-05-08T13:56:00Z.
pub fn parse_date_time(s: &str) -> Result<DateTime<Utc>, FormatError> {
    let t = s.trim();
    NaiveDateTime::parse_from_str(t, "%I:%M %p on %d %B, %Y")
        .or_else(|_| NaiveDateTime::parse_from_str(t, "%I:%M %p on %d %b, %Y"))
        .map(|n| n.and_utc())
        .map_err(|source| FormatError::DateTime { text: t.to_string(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_date_times_parse() {
        assert_eq!(parse_date_time("1:56 pm on 8 May, 2023").unwrap().to_rfc3339(), "2023-05-08T13:56:00+00:00");
        assert_eq!(parse_date_time("10:04 am on 19 December, 2023").unwrap().to_rfc3339(), "2023-12-19T10:04:00+00:00");
        assert_eq!(parse_date_time("12:09 am on 1 Jan, 2024").unwrap().to_rfc3339(), "2024-01-01T00:09:00+00:00");
        assert!(parse_date_time("yesterday").unwrap_err().to_string().contains("1:56 pm on 8 May, 2023"));
        assert_eq!(parse_date("21 January, 2022").unwrap().to_string(), "2022-01-21");
        assert!(parse_date("soon").is_err());
    }

    #[test]
    fn observations_and_events_are_read_with_their_turns_and_dates() {
        let text = r#"[{"sample_id": "c1",
            "conversation": {"session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I ran a 5k yesterday"},
                              {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice"}]},
            "observation": {"session_1_observation": {"Ann": [["Ann ran a 5k.", "D1:1"],
                                                              ["Ann likes Bo.", ["D1:1", "D1:2", "D9:9"]]]}},
            "event_summary": {"events_session_1": {"Ann": ["Ann runs a 5k."], "Bo": [], "date": "8 May, 2023"}}}]"#;
        let c = &Dataset::parse(Path::new("x.json"), text).unwrap().conversations[0];
        assert_eq!(c.observations.len(), 2);
        assert_eq!((c.observations[0].session, c.observations[0].speaker.as_str()), (1, "Ann"));
        assert_eq!(c.observations[1].dia_ids, vec!["D1:1", "D1:2"], "ids naming no turn are dropped");
        assert_eq!(c.events.len(), 1);
        assert_eq!((c.events[0].text.as_str(), c.events[0].date.to_string()), ("Ann runs a 5k.", "2023-05-08".into()));
        let bad = text.replace(r#""D1:1"],"#, r#"7],"#);
        assert!(Dataset::parse(Path::new("x.json"), &bad).is_err());
    }

    #[test]
    fn dia_ids_normalise_or_refuse() {
        assert_eq!(normalise_dia_id("D1:3").as_deref(), Some("D1:3"));
        assert_eq!(normalise_dia_id("D:11:26").as_deref(), Some("D11:26"));
        assert_eq!(normalise_dia_id("D30:05").as_deref(), Some("D30:5"));
        assert_eq!(normalise_dia_id(" d2:7 ").as_deref(), Some("D2:7"));
        assert_eq!(normalise_dia_id("D"), None);
        assert_eq!(normalise_dia_id("D4"), None);
        assert_eq!(normalise_dia_id("D1:x"), None);
        assert_eq!(split_evidence("D8:6; D9:17"), vec!["D8:6", "D9:17"]);
        assert_eq!(split_evidence("D9:1 D4:4 D4:6"), vec!["D9:1", "D4:4", "D4:6"]);
    }

    #[test]
    fn turns_render_with_speaker_and_caption() {
        let t = Turn {
            dia_id: "D1:1".into(),
            speaker: "Ann".into(),
            text: "Look at this!".into(),
            caption: Some("a photo of a cat".into()),
        };
        assert_eq!(t.render(TurnRendering::default()), "Ann: Look at this! [shares a photo: a photo of a cat]");
        let bare = TurnRendering { speaker_prefix: false, captions: false, ..TurnRendering::default() };
        assert_eq!(t.render(bare), "Look at this!");
        assert_eq!(t.said(TurnRendering::default()), "Look at this! [shares a photo: a photo of a cat]");
        let split = TurnRendering { speakers: Speakers::AIsUser, ..TurnRendering::default() };
        assert_eq!(t.render(split), t.said(split), "a user and an assistant are not named");
    }

    #[test]
    fn split_speakers_take_the_user_and_assistant_roles() {
        let text = r#"[{"sample_id": "c1",
            "conversation": {"speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I ran a 5k"},
                              {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice"}]}}]"#;
        let c = &Dataset::parse(Path::new("x.json"), text).unwrap().conversations[0];
        let (ann, bo) = (&c.sessions[0].turns[0], &c.sessions[0].turns[1]);
        let how = |speakers| TurnRendering { speakers, ..TurnRendering::default() };
        let roles = |r: TurnRendering| (r.role(c, ann), r.role(c, bo), r.user_speaker(c));
        assert_eq!(roles(how(Speakers::BothUser)), (Role::User, Role::User, None));
        assert_eq!(roles(how(Speakers::AIsUser)), (Role::User, Role::Assistant, Some("Ann")));
        assert_eq!(roles(how(Speakers::AIsAssistant)), (Role::Assistant, Role::User, Some("Bo")));
    }

    #[test]
    fn malformed_files_name_what_is_wrong() {
        let err = |text: &str| Dataset::parse(Path::new("x.json"), text).unwrap_err().to_string();
        assert!(err("{").contains("not valid JSON"));
        assert!(err("{}").contains("JSON array"));
        assert!(err("[]").contains("no conversations"));
        assert!(err(r#"[{"sample_id": "c1"}]"#).contains("c1: missing \"conversation\""));
        let no_date = r#"[{"sample_id": "c1", "conversation": {"session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}}]"#;
        assert!(err(no_date).contains("no \"session_1_date_time\""), "{}", err(no_date));
        let bad_date = r#"[{"sample_id": "c1", "conversation": {"session_1_date_time": "soon",
            "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}]}}]"#;
        assert!(err(bad_date).contains("session_1_date_time"));
    }
}
