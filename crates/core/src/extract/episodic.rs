//! Episodic capture: a first-person statement that no rule family claimed, kept as it was said
//! when it tells what happened to the user, what they did, have or are doing.
//!
//! The rule families read the phrasings they know (a name, a pet, a plan, a boundary); people
//! say far more than that ("Lost my job as a banker yesterday", "We took the kids to the museum
//! last weekend"). Rather than a rule per phrasing, this reads the shape of the clause — who is
//! the subject, the verb's tense, what it is about — and keeps the statement in the third person,
//! dated when it happened in the past. Decay and consolidation select among what is kept later;
//! here the only filter is that the statement is about the user and says something: reactions
//! to the other speaker ("I'm so happy for you"), opinions of their words ("I think so too") and
//! contentless chat are left out.

use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use regex::Regex;

use super::correction::is_retraction;
use super::heuristic::doubted;
use super::lex::{bare, capitalised, is_past, same_after_any_subject, third_person, third_singular};
use super::readable;
use super::rule::Sentence;
use super::when;
use crate::kind::{Kind, Surface};
use crate::op::Draft;
use crate::text::is_stopword;

/// What capture found in one sentence.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Episode {
    /// The statement in the third person ("User lost their job as a banker yesterday").
    pub(super) content: String,
    /// Event for what already happened, fact for what holds now.
    pub(super) kind: Kind,
    /// When it happened (events) or was said to hold (facts): the day a time phrase names, else
    /// the message's time (also for a period such as "last week", which the content keeps).
    pub(super) when: DateTime<Utc>,
    /// How much it says: specific words, names and numbers, a date.
    pub(super) salience: f32,
    /// A dated quote whose subject stands for something said before ("It helps me relax"):
    /// the words it quotes, so the sentence before can be quoted with it.
    pub(super) leaning: Option<String>,
    /// The sentence as the user said it: what a quote of the message's statements joins.
    pub(super) said: String,
    /// Whether `content` quotes `said` rather than rewriting it: quotes said one after the
    /// other in a message are merged into one.
    pub(super) quoted: bool,
    /// When the message was sent: the date a quote carries.
    pub(super) at: DateTime<Utc>,
    /// The other speaker's question a quote answers, when the quote leans on it: written before
    /// the user's words.
    pub(super) asked: Option<String>,
}

impl Episode {
    /// A quote leaning on the sentence before, when that sentence left no episode of its own:
    /// both sentences quoted ("I started pottery. It helps me relax."), so the memory carries
    /// what "it" is. Opening the message, it leans on the other speaker's turn: when that turn
    /// ended on a question that names what it asks about ("What classes does the studio
    /// offer?"), the question is kept with the answer, so "they" has its antecedent; otherwise
    /// (a question before it in the message, a reaction) the quote names nothing and is dropped.
    pub(super) fn with_antecedent(self, before: Option<&str>, asked: Option<&str>, at: DateTime<Utc>) -> Option<Self> {
        let Some(said) = self.leaning.as_deref() else {
            // "How long have you been playing the violin?" … "I've been playing for about four
            // months now": the reply opening the message left out what the question named.
            if let Some(filled) =
                asked.filter(|_| before.is_none() && !self.quoted).and_then(|q| with_object_from(&self.content, q))
            {
                return Some(Self { content: filled, ..self });
            }
            return Some(self);
        };
        if before.is_none() {
            let question = asked.and_then(naming_question)?;
            let said = said.to_string();
            return Some(Self {
                content: readable::answer(question, &said, at),
                leaning: None,
                said,
                asked: Some(question.to_string()),
                ..self
            });
        }
        let before = before.map(str::trim).filter(|b| {
            // Said to the other speaker ("You're super helpful."), it names nothing of the user's.
            !b.ends_with('?')
                && !b.split_whitespace().any(|w| second_person(&bare(w)))
                && b.split_whitespace().count() + said.split_whitespace().count() <= MAX_WORDS + 8
                && !b.split_whitespace().next().is_some_and(|w| readable::leans_back(&bare(w)))
                // Nor does a reaction to what the other speaker said ("Wow, that sounds
                // amazing!"): "it" stood in their turn.
                && !readable::only_greets(b)
        })?;
        let said = format!("{before} {said}");
        Some(Self { content: readable::quote(&said, at), leaning: None, said, quoted: true, ..self })
    }
}

/// `content` with the object its gerund left out put back from the question it answers: the
/// question's "playing the violin" in "User has been playing for about four months now".
/// Only a gerund the question names with its object (an article or "your" and a noun), and
/// that the reply leaves bare, before a time or a preposition or at its end.
fn with_object_from(content: &str, asked: &str) -> Option<String> {
    let said: Vec<&str> = asked.split_whitespace().collect();
    let q: Vec<String> = said.iter().map(|w| bare(w)).collect();
    let words: Vec<&str> = content.split_whitespace().collect();
    const BARE_AFTER: &[&str] =
        &["for", "since", "about", "a", "every", "lately", "recently", "again", "now", "more", "all", "most", "nearly"];
    const ENDS: &[&str] = &[
        "again", "already", "anymore", "at", "for", "in", "lately", "now", "on", "recently", "since", "so", "still",
        "then", "these", "this", "today", "too", "with", "yet",
    ];
    for (i, w) in q.iter().enumerate() {
        if !(w.ends_with("ing") && w.len() > 5) {
            continue;
        }
        let Some(det) = q.get(i + 1).filter(|d| matches!(d.as_str(), "the" | "a" | "an" | "your")) else { continue };
        let object: Vec<&str> = (i + 2..q.len())
            .take_while(|&j| !ENDS.contains(&q[j].as_str()))
            .take(3)
            .map(|j| said[j].trim_end_matches(['?', '.', ',', '!']))
            .collect();
        if object.is_empty() || object.iter().any(|n| n.is_empty() || is_stopword(&bare(n))) {
            continue;
        }
        let Some(k) = words.iter().position(|c| bare(c) == *w) else { continue };
        let next = words.get(k + 1).map(|n| bare(n));
        let left_out = words[k].ends_with([',', '.', '!']) || next.as_deref().is_none_or(|n| BARE_AFTER.contains(&n));
        if !left_out {
            return None;
        }
        let det = if det == "your" { "their" } else { det.as_str() };
        let verb = words[k].trim_end_matches([',', '.', '!']);
        let punct = &words[k][verb.len()..];
        let mut out: Vec<String> = words[..k].iter().map(|w| w.to_string()).collect();
        out.push(format!("{verb} {det} {}{punct}", object.join(" ")));
        out.extend(words[k + 1..].iter().map(|w| w.to_string()));
        return Some(out.join(" "));
    }
    None
}

/// The question the other speaker's turn ended on, when it names what it asks about: two
/// words that tell ("What classes does your yoga studio offer?"), none of them standing for
/// something said before it ("Where was it taken?" leans on a photo the memory cannot show).
fn naming_question(turn: &str) -> Option<&str> {
    let turn = turn.trim();
    if !turn.ends_with('?') {
        return None;
    }
    let start = turn[..turn.len() - 1].rfind(['.', '!', '?']).map_or(0, |i| i + 1);
    let question = turn[start..].trim();
    let words: Vec<String> = question.split_whitespace().map(bare).collect();
    let told = words.iter().filter(|w| w.len() > 2 && !is_stopword(w) && !is_filler(w)).count();
    // "this" and "that" lean back unless a noun follows ("this game" names it, "where this is"
    // and "get that?" do not).
    let leans = words.iter().enumerate().any(|(i, w)| {
        matches!(w.as_str(), "it" | "it's" | "its" | "them" | "these" | "those" | "that's" | "this's")
            || (matches!(w.as_str(), "this" | "that") && words.get(i + 1).is_none_or(|n| is_stopword(n)))
    });
    (told >= 2 && !leans && words.len() <= MAX_WORDS).then_some(question)
}

/// Words after which an opening "no" answers rather than says there is none ("no wait", "no I
/// haven't", "no thanks"): before any other word ("no tattoo") it is what the sentence says.
const REPLY_AFTER_NO: &[&str] = &[
    "actually", "and", "but", "chance", "clue", "don't", "dont", "he", "honestly", "i", "i'd", "i'll", "i'm", "i've",
    "idea", "it", "it's", "its", "just", "me", "my", "nah", "never", "no", "nope", "not", "now", "ok", "okay", "one",
    "problem", "she", "so", "sorry", "thank", "thanks", "that", "that's", "thats", "the", "then", "they", "this", "u",
    "wait", "way", "we", "worries", "worry", "yeah", "yes", "you",
];

/// Words that open a sentence without being its subject ("oh", "yeah", "btw", "honestly").
pub(super) const LEADS: &[&str] = &[
    "abeg",
    "ach",
    "actually",
    "ah",
    "also",
    "and",
    "anyway",
    "anyways",
    "aw",
    "aww",
    "awww",
    "aye",
    "bro",
    "btw",
    "but",
    "chai",
    "damn",
    "dang",
    "dude",
    "ei",
    "eish",
    "finally",
    "fortunately",
    "funny",
    "fyi",
    "gosh",
    "guess",
    "haba",
    "haha",
    "hahaha",
    "hello",
    "herh",
    "hey",
    "hi",
    "hiya",
    "hmm",
    "honestly",
    "lately",
    "lol",
    "luckily",
    "ma'am",
    "maam",
    "man",
    "meanwhile",
    // texting's "and" ("n i need a suit")
    "n",
    "nah",
    "no",
    "nope",
    "now",
    "och",
    "oh",
    "ok",
    "okay",
    "omg",
    "omo",
    "ooh",
    "oops",
    "ope",
    "please",
    "pls",
    "plus",
    "plz",
    "psa",
    "question",
    "recently",
    "reminder",
    "sadly",
    "sir",
    "so",
    "sorry",
    "sure",
    "then",
    "totally",
    "ugh",
    "um",
    "unfortunately",
    "wait",
    "well",
    "what",
    "whoa",
    "wow",
    "ya",
    "yay",
    "yeah",
    "yep",
    "yes",
    "yo",
    "yup",
];

/// Lead-ins of several words ("by the way, I ...", "just wanted to let you know that I ...");
/// the longest that opens a sentence is taken, with a "that" right after it.
pub(super) const MULTI_LEADS: &[&str] = &[
    "also question",
    "another thing",
    "bad news",
    "believe it or not",
    "big news",
    "by the way",
    "exciting news",
    "funny enough",
    "good news",
    "great news",
    "guess what",
    "heads up",
    "i have to tell you",
    "i wanted to let you know",
    "i wanted to tell you",
    "in other news",
    "just wanted to let you know",
    "just wanted to tell you",
    "on another note",
    "on that note",
    "one more thing",
    "one other thing",
    "other thing",
    "plot twist",
    "quick question",
    "quick update",
    "real talk",
    "sad news",
    "some news",
    "speaking of that",
    "speaking of which",
    "to be honest",
    "wanted to let you know",
    "wanted to tell you",
    "you know what",
    "you will not believe it",
    "you won't believe it",
    "you won't believe this",
];

/// What people call the one they talk to, after "my" ("alright my lover", "thanks my dear"):
/// said to the listener, never of the user's own. Not a word that also names someone of the
/// user's ("my brother, Tom, is visiting", "my mate, Dave, …").
pub(super) const ENDEARMENTS: &[&str] =
    &["babe", "chuck", "darling", "dear", "duck", "g", "love", "lovely", "lover", "luv", "man", "pet"];

/// Words in the longest of [`MULTI_LEADS`]: how many of a sentence's first words are compared.
const MULTI_LEAD_WORDS: usize = 6;

/// Adverbs that may stand between the subject and its verb ("I really love", "I just got").
pub(super) const ADVERBS: &[&str] = &[
    "actually",
    "again",
    "all",
    "almost",
    "already",
    "also",
    "always",
    "definitely",
    "even",
    "ever",
    "finally",
    "first",
    "just",
    "kinda",
    "never",
    "now",
    "often",
    "once",
    "only",
    "originally",
    "really",
    "recently",
    "sometimes",
    "still",
    "totally",
    "truly",
    "usually",
];

/// Verbs whose clause is an opinion or a reaction, kept only when what follows says something
/// ("I feel it's important to help others"); the always-dropped ones are [`HARD_REACTIONS`].
pub(super) const REACTIONS: &[&str] = &[
    "admire",
    "appreciate",
    "believe",
    "can't",
    "couldn't",
    "feel",
    "felt",
    "figured",
    "gotta",
    "hope",
    "knew",
    "know",
    "miss",
    "remember",
    "see",
    "think",
    "thought",
    "totally",
    "understand",
    "wish",
];

/// Verbs that show a sentence-initial gerund is the subject ("Seeing them happy makes my day").
/// A modal counts too ("Trying new things can be scary"): a gerund the user does is not followed
/// by one.
pub(super) const GERUND_SUBJECT_VERBS: &[&str] = &[
    "allows",
    "are",
    "beats",
    "became",
    "becomes",
    "boosts",
    "brightens",
    "brings",
    "brought",
    "calmed",
    "calms",
    "can",
    "cheered",
    "cheers",
    "cleared",
    "clears",
    "costs",
    "could",
    "does",
    "drives",
    "excites",
    "feels",
    "fills",
    "gave",
    "gets",
    "gives",
    "has",
    "helped",
    "helps",
    "hurts",
    "inspired",
    "inspires",
    "is",
    "isn't",
    "it's",
    "keeps",
    "kept",
    "lets",
    "lifted",
    "lifts",
    "made",
    "makes",
    "matters",
    "means",
    "melts",
    "might",
    "motivated",
    "motivates",
    "must",
    "needs",
    "opened",
    "opens",
    "paid",
    "pays",
    "puts",
    "relaxes",
    "reminded",
    "reminds",
    "requires",
    "rocks",
    "saved",
    "saves",
    "scares",
    "seems",
    "should",
    "shows",
    "soothes",
    "sounds",
    "sparked",
    "sparks",
    "stresses",
    "sucks",
    "takes",
    "taught",
    "teaches",
    "that's",
    "took",
    "warms",
    "was",
    "were",
    "will",
    "would",
];

/// Words in "-ing" that are no gerund ("nothing", "morning"); with the weather ("Still raining
/// here") no one is the subject.
const NOT_GERUNDS: &[&str] = &[
    "nothing",
    "something",
    "anything",
    "everything",
    "being",
    "morning",
    "evening",
    "thing",
    "during",
    "according",
    "raining",
    "snowing",
    "pouring",
    "drizzling",
    "hailing",
    "freezing",
];

/// Nouns in "-ing" that open a sentence as its subject: "wedding prob next summer" is the
/// wedding's news.
const ING_NOUNS: &[&str] = &[
    "bedding",
    "building",
    "ceiling",
    "clothing",
    "darling",
    "dumpling",
    "earring",
    "funding",
    "housing",
    "icing",
    "offspring",
    "pudding",
    "sibling",
    "spring",
    "string",
    "wedding",
];

/// Verbs that two gerunds joined by "and" take together ("Cooking and baking take up my
/// weekends").
const GERUND_PAIR_VERBS: &[&str] =
    &["bring", "give", "go", "help", "keep", "make", "mean", "need", "require", "take", "teach"];

/// Adverbs that stand between a subject and its verb ("always fuels", "really helps").
const ADVERBS_BEFORE_VERB: &[&str] =
    &["always", "really", "truly", "just", "also", "never", "still", "often", "usually", "sometimes", "definitely"];

/// Words that negate the statement right after its subject.
pub(super) const NEGATIONS: &[&str] = &[
    "ain't", "aren't", "can't", "cannot", "couldn't", "didn't", "doesn't", "don't", "hadn't", "hasn't", "haven't",
    "isn't", "never", "not", "wasn't", "won't", "wouldn't",
];

/// Verbs that, before "me", ask something of the other person ("let me know", "call me back").
pub(super) const REQUESTS: &[&str] =
    &["ask", "call", "email", "give", "help", "let", "message", "ping", "remind", "send", "show", "tell", "text"];

/// Verbs whose clause is a guess or a reply, whatever follows ("I bet they loved it", "I meant
/// Cambridge", "I agree").
pub(super) const HARD_REACTIONS: &[&str] =
    &["agree", "bet", "guess", "imagine", "mean", "meant", "reckon", "suppose", "wonder", "wondered"];

/// Verbs of liking, which point back at the conversation when their object is "that"/"it".
pub(super) const LIKINGS: &[&str] =
    &["adore", "appreciate", "enjoy", "enjoyed", "like", "liked", "love", "loved", "prefer"];

/// Adjectives that, after "I'm", describe the speaker's reaction to the conversation.
pub(super) const FEELINGS: &[&str] = &[
    "amazed",
    "blessed",
    "certain",
    "curious",
    "excited",
    "flattered",
    "glad",
    "grateful",
    "happy",
    "honored",
    "impressed",
    "inspired",
    "jealous",
    "lucky",
    "moved",
    "proud",
    "sorry",
    "stoked",
    "sure",
    "thankful",
    "thrilled",
    "touched",
];

/// Past forms that open reactions when the subject is left out ("Loved it!", "Sounds great").
pub(super) const NOT_ELIDED: &[&str] =
    &["agreed", "enjoyed", "glad", "guessed", "liked", "loved", "missed", "thanked", "wished"];

/// The most words a captured statement keeps (a long turn is cut at a clause break before).
const MAX_WORDS: usize = 32;

/// A dated quote kept instead of a rewrite that read wrong counts for this share of the
/// salience a rewrite would have had: its words lean on a conversation the memory lacks.
const QUOTED_SALIENCE: f32 = 0.7;

/// Reads one sentence; `None` when it is not a statement about the user worth keeping.
///
/// Chat joins clauses with commas ("I'm not at support anymore, I moved to the QA team", "It
/// reminds me of my old camera, I took loads of beach pics"): when the whole sentence says
/// nothing worth keeping, a later clause opened by the user as its subject is read alone.
///
/// When the whole is kept only as a quote because it opens on a word standing for what was said
/// before ("They've been there through everything, I've known these friends for 4 years"), a
/// later clause that reads well on its own is rewritten, and only the leaning clause before it
/// stays in the user's words (or goes, when it says nothing: "That's amazing, I …").
pub(super) fn capture(s: &Sentence<'_>) -> Option<Episode> {
    let whole = capture_whole(s);
    let leans =
        |e: &Episode| e.quoted && e.said.split_whitespace().next().is_some_and(|w| readable::leans_back(&bare(w)));
    if let Some(e) = whole.as_ref().filter(|e| leans(e)) {
        let later = spliced(s.text, s.statement_end, false).into_iter().find_map(|at| {
            let told = capture_whole(&part(s, &s.text[at..], s.statement_end - at))?;
            (!told.quoted).then_some((at, told))
        });
        if let Some((at, told)) = later {
            let head = s.text[..at].trim_end().trim_end_matches([',', ';']).trim_end();
            let content = if says_nothing(head) || head.split_whitespace().count() < 3 {
                told.content
            } else {
                format!("{} {}", readable::quote(&format!("{head}."), s.at), told.content)
            };
            return Some(Episode { content, said: e.said.clone(), leaning: None, quoted: false, ..told });
        }
    }
    // "my mother just called me": a moment of the chat; what the call said comes after.
    whole.or_else(|| later_clause(s)).filter(|e| !readable::only_a_call(&e.content))
}

/// The first clause after a comma, opened by the user as its subject, that is worth keeping
/// ("I'm not at reception anymore, I moved to billing" → "User moved to billing").
pub(super) fn later_clause(s: &Sentence<'_>) -> Option<Episode> {
    spliced(s.text, s.statement_end, true).into_iter().find_map(|at| {
        let text = &s.text[at..];
        capture_whole(&part(s, text, s.statement_end - at))
    })
}

/// `text`, a part of sentence `s`, read as a sentence of its own said the same way, its
/// statement ending at `statement_end`.
fn part<'a>(s: &Sentence<'a>, text: &'a str, statement_end: usize) -> Sentence<'a> {
    Sentence {
        text,
        lower: text.to_lowercase(),
        prev: s.prev,
        at: s.at,
        statement_end,
        blocked: s.blocked,
        hedged: s.hedged,
        correction: s.correction,
        lowercase: s.lowercase,
    }
}

/// The clause after byte `end` of the sentence, past the next comma, semicolon, dash or "and",
/// captured as an episode when it tells something of its own about the user.
pub(super) fn clause_after(s: &Sentence<'_>, end: usize) -> Option<Episode> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"(?i)[,;]\s+|\s+[-\u{2013}\u{2014}]\s+|\s+(?:and|but|plus)\s+").expect("clause break regex")
    });
    let end = (end..=s.text.len()).find(|&i| s.text.is_char_boundary(i))?;
    // The first break after which a clause opens with its own subject, a time phrase or a lead
    // word allowed before it ("and last week I passed …"); "near my sister" after "I live in
    // Leeds" says where, and "47 years, I have a barber shop" opens its clause at "I".
    let at = re.find_iter(&s.text[end..]).map(|m| end + m.end()).find(|&at| {
        let words = s.text[at..].split_whitespace().take(4);
        let mut subject = false;
        for w in words {
            if matches!(
                bare(w).as_str(),
                "i" | "i'm" | "i've" | "i'd" | "i'll" | "we" | "we're" | "we've" | "we'd" | "we'll"
            ) {
                subject = true;
                break;
            }
            if w.ends_with(',') {
                break;
            }
        }
        subject
    })?;
    if at >= s.statement_end {
        return None;
    }
    let text = &s.text[at..];
    // "…, because I had 2 attacks": a reason or condition hangs on what was typed, and alone
    // it is no sentence ("Because User had 2 attacks").
    let first = text.split_whitespace().next().map(bare).unwrap_or_default();
    if matches!(
        first.as_str(),
        "because"
            | "cos"
            | "cuz"
            | "coz"
            | "since"
            | "although"
            | "though"
            | "if"
            | "unless"
            | "until"
            | "when"
            | "while"
    ) {
        return None;
    }
    capture_whole(&part(s, text, s.statement_end - at))
}

/// The clause before byte `start` of the sentence, up to the comma, semicolon or dash that
/// ends it, captured as an episode when it has a subject of its own and tells something.
pub(super) fn clause_before(s: &Sentence<'_>, start: usize) -> Option<Episode> {
    let before = s.text.get(..start)?.trim_end();
    // Only a clause ended by a break: "I take" cut from "I take omeprazole" is no clause.
    let before = before.strip_suffix(" so").or_else(|| before.strip_suffix(" and")).unwrap_or(before).trim_end();
    let text = before.strip_suffix([',', ';', '-', '\u{2013}', '\u{2014}'])?.trim_end();
    let subject =
        text.split_whitespace().any(|w| matches!(bare(w).as_str(), "i" | "i'm" | "i've" | "we" | "we're" | "we've"));
    if !subject || text.split_whitespace().count() < 3 {
        return None;
    }
    capture_whole(&part(s, text, text.len()))
}

/// Where clauses after a comma open with the user as their subject ("…, I moved", "…, we
/// went"), within the statement; with `joined`, also after "so" or "then" ("…, so I just
/// started another one"), where a statement that said nothing keeps what followed from it
/// ("but" and "and" are left: "…, but I hope to work in the future" leans on what it negates).
fn spliced(text: &str, statement_end: usize, joined: bool) -> Vec<usize> {
    static RE: OnceLock<Regex> = OnceLock::new();
    static JOINED: OnceLock<Regex> = OnceLock::new();
    let subject = "((?:i|i'm|i've|i'd|we|we're|we've)\\s)";
    let re = if joined {
        JOINED.get_or_init(|| {
            Regex::new(&format!(r"(?i)[,;]\s+(?:(?:so|then)\s+)?{subject}")).expect("comma splice regex")
        })
    } else {
        RE.get_or_init(|| Regex::new(&format!(r"(?i)[,;]\s+{subject}")).expect("comma splice regex"))
    };
    re.captures_iter(text)
        .filter_map(|c| c.get(1))
        .map(|m| m.start())
        .filter(|&at| at < statement_end && text[..at].split_whitespace().count() >= 2)
        .collect()
}

fn capture_whole(s: &Sentence<'_>) -> Option<Episode> {
    // Hypotheticals, questions and doubted statements ("I think I might ...") assert nothing;
    // retractions ("I meant Cambridge, not Boston") are read by the correction family. A weighed
    // intention ("I'm considering a move") and a switch ("now I have ...") are news.
    if s.blocked || is_retraction(&s.lower) || s.statement_end == 0 {
        return None;
    }
    // A greeting of another language that opens like an English verb ("Sat Sri Akal ji") is
    // no "User sat …".
    if GREETING_PHRASES.iter().any(|g| s.lower.trim_start().starts_with(g)) {
        return None;
    }
    let text = s.text[..s.statement_end.min(s.text.len())].trim();
    let mut words: Vec<String> = text.split_whitespace().map(str::to_string).collect();
    // A name said to the other speaker at the end ("Count me in, John!") is no content. After
    // a place or a person it names them ("in my home town, Leeds", "with my cousin, Aoife").
    if words.len() > 2
        && words[words.len() - 2].ends_with(',')
        && !readable::named_after_comma(&bare(&words[words.len() - 2]))
        && words.last().is_some_and(|w| w.starts_with(char::is_uppercase) && bare(w).chars().all(char::is_alphabetic))
    {
        words.pop();
        if let Some(w) = words.last_mut() {
            *w = w.trim_end_matches(',').to_string();
        }
    }
    // Nor is the topic handed back ("I just reorganized my shelf, speaking of.").
    let tail: Vec<String> = words.iter().rev().take(3).map(|w| bare(w)).collect();
    let handed_back = match tail.as_slice() {
        [of, speaking, ..] if of == "of" && speaking == "speaking" => 2,
        [which, of, speaking] if which == "which" && of == "of" && speaking == "speaking" => 3,
        _ => 0,
    };
    if handed_back > 0 && words.len() > handed_back + 2 && words[words.len() - handed_back - 1].ends_with(',') {
        words.truncate(words.len() - handed_back);
        if let Some(w) = words.last_mut() {
            *w = w.trim_end_matches(',').to_string();
        }
    }
    // Nor is a texting particle at the end ("I've been vegan since 2019 btw", "… lol", "… x",
    // "… :)"): it says how, not what. "jk" stays: it takes the sentence back.
    while words.len() > 3
        && words.last().is_some_and(|w| {
            let b = bare(w);
            b.is_empty() || super::lex::TRAILING_PARTICLES.contains(&b.as_str()) || readable::laughter(&b)
        })
    {
        words.pop();
        if let Some(w) = words.last_mut() {
            *w = w.trim_end_matches([',', '-']).to_string();
        }
    }
    // Nor are thanks tacked on at the end ("I'll wait for the link then, thanks!").
    let thanks = match words.iter().rev().take(2).map(|w| bare(w)).collect::<Vec<_>>()[..] {
        [ref last, ..] if matches!(last.as_str(), "thanks" | "thx" | "ty" | "cheers") => 1,
        [ref last, ref before] if last == "you" && before == "thank" => 2,
        _ => 0,
    };
    if thanks > 0 && words.len() > thanks + 1 && words[words.len() - thanks - 1].ends_with(',') {
        words.truncate(words.len() - thanks);
        if let Some(w) = words.last_mut() {
            *w = w.trim_end_matches(',').to_string();
        }
    }

    // Lead-ins: interjections, a name said to the other person ("Caroline, I ..."), and a past
    // time phrase the statement starts with ("Last Saturday I ran ...").
    let mut when: Option<DateTime<Utc>> = None;
    // A period the statement opened with ("Last month we ..."), said again at its end.
    let mut period: Option<String> = None;
    loop {
        let lower = words.iter().take(MULTI_LEAD_WORDS).map(|w| bare(w)).collect::<Vec<_>>().join(" ");
        if let Some(lead) =
            MULTI_LEADS.iter().filter(|l| lower == **l || lower.starts_with(&format!("{l} "))).max_by_key(|l| l.len())
        {
            words.drain(..lead.split(' ').count());
            if words.first().is_some_and(|w| bare(w) == "that") {
                words.remove(0);
            }
            continue;
        }
        // "Since we last spoke", "A lot's happened since our last chat -": the chat reopened,
        // said to the listener; "we" there is the two speakers, not the user and others.
        if let Some(lead) = catching_up().find(&words.join(" ").to_lowercase().replace('\u{2019}', "'")) {
            words.drain(..lead.as_str().split_whitespace().count().min(words.len()));
            continue;
        }
        if let Some(lead) = on_advice().find(&words.join(" ").to_lowercase().replace('\u{2019}', "'")) {
            let told = lead.as_str().split_whitespace().count().min(words.len());
            // Only a verb of the user's after it: "I tried your idea and it worked" tells of
            // the idea.
            let next = words.get(told).map(|w| bare(w)).unwrap_or_default();
            if !next.is_empty()
                && !super::lex::determines(&next)
                && !readable::leans_back(&next)
                && !first_person(&next)
                && !second_person(&next)
            {
                words.drain(1..told);
                continue;
            }
        }
        // "Speaking of healthy meals, …", "As for the move, …": the topic the other speaker
        // raised, said before the user's own clause (or their question).
        if let Some(lead) = topic_lead().find(&words.join(" ").to_lowercase()) {
            words.drain(..lead.as_str().split_whitespace().count().min(words.len()));
            continue;
        }
        // "Alright my lover.", "morning my dear, …": a name of endearment for the listener.
        let n = words.len();
        if (2..=3).contains(&n) && bare(&words[n - 2]) == "my" && ENDEARMENTS.contains(&bare(&words[n - 1]).as_str()) {
            return None;
        }
        let greeted = (0..2).find(|&i| {
            words.len() > i + 2
                && bare(&words[i]) == "my"
                && ENDEARMENTS.contains(&bare(&words[i + 1]).as_str())
                && words[i + 1].ends_with([',', '.', '!'])
                && (i == 0 || !words[0].ends_with([',', '.', '!']))
        });
        if let Some(i) = greeted {
            words.drain(..i + 2);
            continue;
        }
        // "I see, so that's the key": a reply to what was just said, its comma closing it ("I
        // see the physio on Monday" says what happens).
        if words.len() > 2
            && bare(&words[0]) == "i"
            && words[1].ends_with([',', '.', '!', '-'])
            && matches!(bare(&words[1]).as_str(), "see" | "mean" | "know" | "guess" | "bet" | "agree" | "understand")
        {
            words.drain(..2);
            continue;
        }
        let first = words.first()?;
        let b = squeezed(&bare(first));
        // "No more sugar in my tea": "no" before "more" or "longer" is what the sentence says.
        // Nor is it a reply before a thing ("no tattoo, my wife vetoed it"): only before a word
        // that opens a clause or a reply ("no I haven't", "no wait", "no thanks").
        let says_no = b == "no"
            && !first.ends_with([',', '.', '!'])
            && words.get(1).is_some_and(|w| {
                let n = bare(w);
                matches!(n.as_str(), "more" | "longer")
                    || (n.chars().all(char::is_alphabetic) && !REPLY_AFTER_NO.contains(&n.as_str()))
            });
        // "right, I went to the clinic": a word that opens a reply only with its comma ("right
        // now" says when).
        let comma_lead = first.ends_with(',')
            && (first.starts_with(char::is_uppercase) || matches!(b.as_str(), "right" | "morning" | "evening"));
        // "Luna, my cat, is asleep on my lap": not a name said to the listener but the one the
        // noun after it has; read as "my cat Luna is asleep …". A fragment ("Oscar, my guinea
        // pig.") only names a pet, which the identity family keeps; with a verb and no comma to
        // close it ("Sam, my brother is visiting") the name was said to the listener.
        // Only a relation or a pet says so: "Yeah, my family is awesome - me, the missus, and
        // the kids" opens on a reply word.
        let kin = |w: &String| {
            let b = bare(w);
            super::lex::is_relation_word(&b) || super::lex::is_pet_word(&b)
        };
        if comma_lead
            && first.starts_with(char::is_uppercase)
            && words.get(1).is_some_and(|w| matches!(bare(w).as_str(), "my" | "our"))
        {
            match words.iter().skip(2).position(|w| w.ends_with(',')).map(|p| p + 2) {
                Some(close) if kin(&words[close]) => {
                    let name = words[0].trim_end_matches(',').to_string();
                    words[close] = words[close].trim_end_matches(',').to_string();
                    words.remove(0);
                    words.insert(close, name);
                    continue;
                }
                None if words.len() <= 4 && words[2..].iter().any(kin) => return None,
                _ => {}
            }
        }
        // "Me I am doing a course": the learner's "me" before "I" says who, twice.
        let me_first = b == "me" && words.get(1).is_some_and(|w| matches!(bare(w).as_str(), "i" | "i'm" | "i've"));
        if (LEADS.contains(&b.as_str()) && !says_no) || comma_lead || me_first {
            words.remove(0);
            continue;
        }
        let rest = words.join(" ");
        if let Some(p) = when::past(&rest, s.at).filter(|p| p.start == 0) {
            when = Some(happened(&p, s.at));
            if p.vague {
                period = Some(rest[p.start..p.end].to_lowercase());
            }
            let consumed = rest[..p.end].split_whitespace().count();
            words.drain(..consumed.min(words.len()));
            if let Some(w) = words.first_mut() {
                *w = w.trim_start_matches(',').to_string();
            }
            words.retain(|w| !w.is_empty());
            continue;
        }
        // An aside before a dash or colon that is not the user's news ("Gina, you won't believe
        // it - I got ...", "Just wanted to give you the heads up- I took ...").
        let aside = words.iter().position(|w| w.ends_with(['-', '\u{2013}', '\u{2014}', ':'])).filter(|&b| {
            let (before, after) = (&words[..=b], &words[b + 1..]);
            let user = |ws: &[String]| ws.iter().any(|w| first_person(&bare(w)));
            user(after) && (!user(before) || before.iter().any(|w| second_person(&bare(w))))
        });
        if let Some(b) = aside {
            words.drain(..=b);
            continue;
        }
        break;
    }
    // Thanks and congratulations are about the other speaker ("Thanks for the advice yesterday,
    // it helped me", "Congrats on the cooking show, I'll be tuning in"); a proposal ("Let's rock
    // our workouts") is addressed to them.
    if matches!(
        bare(words.first()?).as_str(),
        "thanks" | "thank" | "thx" | "ty" | "cheers" | "congrats" | "congratulations" | "kudos" | "let's" | "lets"
    ) {
        return None;
    }
    // A request to the listener ("Keep me updated!", "Let me know how it goes", "Send me the
    // link") is the conversation going on, not news about the user.
    if addressed_to_listener(&words) {
        return None;
    }
    // "Been ages since we caught up" reopens a chat after time apart (see below).
    let reopens = bare(&words[0]) == "been" && spans_time(&words[1..]);
    // After a sentence about someone else ("She wrote well it seems. Now waiting for result."),
    // the one left out may be them as much as the user: nothing is said of the user.
    let elided = elided_subject(&words).filter(|_| !s.prev.is_some_and(about_someone_else));
    if elided_subject(&words).is_some() && elided.is_none() {
        return None;
    }
    if let Some(subject) = elided {
        words[0] = words[0].to_lowercase();
        words.insert(0, subject.to_string());
    } else if bare(&words[0]) == "gonna" && words.len() >= 3 {
        // "Gonna be a great night" is what the night will be: "it", not the user, left out.
        if bare(&words[1]) == "be"
            && matches!(bare(&words[2]).as_str(), "a" | "an" | "the" | "so" | "such" | "really" | "pretty" | "epic")
        {
            return None;
        }
        // "Gonna continue my edu" is "I'm going to continue my education".
        words.splice(0..1, ["I'm".to_string(), "going".to_string(), "to".to_string()]);
    }
    // "Mum's coming over Sunday", "Nan had her hip done": a kinship word said as a name is the
    // user's own relative ("my mum"), unless it is said to them ("Mum, I'm home").
    if !words.iter().any(|w| first_person(&bare(w))) {
        let b = bare(&words[0]);
        let kin = b.strip_suffix("'s").unwrap_or(&b);
        if super::lex::NAME_LIKE.contains(&kin) && !words[0].ends_with([',', '!', '?', ':']) && words.len() >= 4 {
            words[0] = words[0].to_lowercase();
            words.insert(0, "my".to_string());
        }
    }
    // The first word naming the user ("I", "my", "me", "we"): everything is told about them.
    // "out at a mine in the pilbara": "mine" after an article is the pit, not the user's.
    let k = words.iter().enumerate().position(|(i, w)| {
        first_person(&bare(w)) && !(bare(w) == "mine" && i > 0 && super::lex::determines(&bare(&words[i - 1])))
    })?;
    // Only a reaction before it ("Glad I could help", "So happy we got to chat"): courtesy to
    // the other speaker, not news.
    let reacts = |w: &String| FEELINGS.contains(&bare(w).as_str());
    if words[..k].iter().any(reacts) && words[..k].iter().all(|w| reacts(w) || adverb(&bare(w))) {
        return None;
    }
    let (user, verb_at) = user_form(&words, k)?;
    let mut v = verb_at;
    // Adverbs and degrees ("I 100% agree", "I no longer smoke").
    loop {
        if words.get(v).is_some_and(|w| adverb(&bare(w)) || (w.ends_with('%') && w.len() > 1)) {
            v += 1;
        } else if words.get(v).is_some_and(|w| bare(w) == "no") && words.get(v + 1).is_some_and(|w| bare(w) == "longer")
        {
            v += 2;
        } else {
            break;
        }
    }
    let verb = words.get(v).map(|w| bare(w)).unwrap_or_default();
    // Agreeing is about what the other person said ("I 100% agree, Mel."); an auxiliary that
    // ends its clause answers a question the sentence does not hold ("And yup, I do- Oscar").
    if matches!(verb.as_str(), "agree" | "disagree")
        || (v == verb_at
            && AUXILIARIES.contains(&verb.as_str())
            && words.get(v).is_some_and(|w| w.ends_with(['.', '!', '?', ';', '-', '\u{2013}', '\u{2014}'])))
    {
        return None;
    }
    let object = words.get(v + 1).map(|w| bare(w)).unwrap_or_default();
    // Doubt up to the verb ("I think I might ...", "I probably went") leaves nothing asserted;
    // later it is about something else ("I sent it in just to see how others might like it").
    if doubted(&words[..(v + 2).min(words.len())].join(" ").to_lowercase()) {
        return None;
    }
    // About the other speaker, not the user: "you" before the statement, as the object of its
    // verb ("I love your idea", "I miss you"), or after a feeling ("I'm so proud of you"). Later
    // it is a detail of the user's own news ("I'm reading the novel you mentioned").
    let feeling = REACTIONS.contains(&verb.as_str())
        || FEELINGS.contains(&verb.as_str())
        || LIKINGS.contains(&verb.as_str())
        || matches!(verb.as_str(), "am" | "is" | "so" | "very" | "super" | "too");
    // When the user is not the subject ("Stop talking about me, tell me about your day"), any
    // "you" makes it about the two speakers.
    // "My sister's wedding is Ginbot 16, I think this is May 24 for you": a later clause
    // turned to the listener is theirs, and goes; the news before it stays, with the date the
    // clause gave it in the listener's terms ("… is Ginbot 16 (May 24)").
    if !first_subject(&bare(&words[k])) {
        let to_listener = |ws: &[String]| ws.iter().any(|w| second_person(&bare(w)));
        let cut = (v + 2..words.len())
            .find(|&j| words[j - 1].ends_with([',', ';']) && to_listener(&words[j..]) && !to_listener(&words[..j]));
        if let Some(j) = cut {
            let clause = words[j..].join(" ");
            let date = super::when::find(&clause, s.at)
                .filter(|d| !d.vague && clause[d.start..d.end].chars().any(|c| c.is_ascii_digit()))
                .map(|d| clause[d.start..d.end].trim_end_matches([',', '.', ';']).to_string());
            words.truncate(j);
            if let Some(w) = words.last_mut() {
                *w = w.trim_end_matches([',', ';']).to_string();
                if let Some(date) = date {
                    w.push_str(&format!(" ({date})"));
                }
            }
        }
    }
    // "I took a road trip for my next movie while you were winning": when the other speaker
    // comes in only in a closing clause of time, that clause tells when, from their side;
    // the user's news is before it.
    if first_subject(&bare(&words[k])) {
        let closing = (v + 2..words.len()).find(|&j| {
            matches!(bare(&words[j]).as_str(), "while" | "when" | "whilst" | "after" | "before" | "since" | "until")
                && words.get(j + 1).is_some_and(|w| second_person(&bare(w)))
        });
        if let Some(j) = closing.filter(|&j| !words[..j].iter().any(|w| second_person(&bare(w)))) {
            words.truncate(j);
            if let Some(w) = words.last_mut() {
                *w = w.trim_end_matches([',', ';']).to_string();
            }
        }
    }
    let reach = if !first_subject(&bare(&words[k])) {
        words.len()
    } else if feeling {
        v + 4
    } else {
        v + 2
    };
    if words[..reach.min(words.len())].iter().any(|w| second_person(&bare(w))) {
        return None;
    }
    // What did not happen or does not hold ("I didn't call mom yet", "I don't live in Paris") is
    // not kept: a negation read back as a fact is the worst kind of memory error.
    // "I can't wait to …" looks forward to it, "I can't stop thinking about it" keeps at it and
    // "I couldn't help smiling" did smile: no negation.
    let span = &words[k..(v + 2).min(words.len())];
    let negated = span.iter().enumerate().any(|(i, w)| {
        NEGATIONS.contains(&bare(w).as_str())
            && !(matches!(bare(w).as_str(), "can't" | "cannot" | "couldn't" | "cant" | "couldnt")
                && span.get(i + 1).is_some_and(|n| matches!(bare(n).as_str(), "wait" | "stop" | "help")))
    });
    if negated {
        return None;
    }
    // "let me know", "call me back": a request to the other person, not news about the user.
    if k > 0 && bare(&words[k]) == "me" && REQUESTS.contains(&bare(&words[k - 1]).as_str()) {
        return None;
    }
    // A liking of something just said ("I love that explanation") or what one meant is about
    // the conversation, not the user's life.
    if HARD_REACTIONS.contains(&verb.as_str())
        || (LIKINGS.contains(&verb.as_str())
            && matches!(object.as_str(), "that" | "this" | "it" | "those" | "these" | "them"))
    {
        return None;
    }
    // What follows the verb (or "am" + adjective) must say something: "I think so", "I'm so
    // happy!" and "I agree" do not; "I feel it's important to help others" does.
    let subject = first_subject(&bare(&words[k]));
    let rest_from = if !subject {
        0
    } else if REACTIONS.contains(&verb.as_str()) || FEELINGS.contains(&verb.as_str()) {
        v + 1
    } else if matches!(verb.as_str(), "am" | "is" | "so" | "really" | "very" | "super") || user.ends_with(" is") {
        words[v..].iter().position(|w| FEELINGS.contains(&bare(w).as_str())).map_or(v, |p| v + p + 1)
    } else {
        verb_at
    };
    // What comes before a subject that is not the first word tells too ("It's a yoga studio I go
    // to often").
    let before = if rest_from > k { &words[..k] } else { &words[..0] };
    // Short words tell too when they are a number, its unit ("26 km") or an acronym ("QA").
    let scope: Vec<&String> = before.iter().chain(&words[rest_from.min(words.len())..]).collect();
    let told: Vec<String> = scope
        .iter()
        .enumerate()
        .filter_map(|(i, w)| {
            let b = bare(w);
            let digits = b.contains(|c: char| c.is_ascii_digit());
            let unit = b.len() == 2 && i > 0 && scope[i - 1].contains(|c: char| c.is_ascii_digit());
            let acronym = b.len() == 2
                && !matches!(b.as_str(), "ok" | "oh" | "hi" | "no" | "so" | "ya" | "yo" | "ha" | "ah" | "uh" | "um")
                && w.trim_matches(|c: char| !c.is_alphanumeric()).chars().all(|c| c.is_ascii_uppercase());
            ((b.len() > 2 || digits || unit || acronym) && !is_stopword(&b) && !is_filler(&b) && !first_person(&b))
                .then_some(b)
        })
        .collect();
    // A name, a place or a number ("Porto", "Dana's", "4 years") makes a statement more salient.
    let specific = words.iter().skip(1).any(|w| {
        (w.starts_with(char::is_uppercase) && !first_person(&bare(w))) || w.chars().any(|c| c.is_ascii_digit())
    });
    // "ok my nans old ford ka", "My favourite mug.": a thing of the user's with no verb after
    // it is named, not told about; a name, a number or a date makes it news ("my driving test
    // sat 9am").
    let lead_in = words[..k].iter().all(|w| {
        matches!(
            bare(w).as_str(),
            "ok" | "okay" | "so" | "and" | "oh" | "yeah" | "well" | "also" | "just" | "lol" | "plus" | "but"
        )
    });
    // "Here's my bookshelf" shows a photo of what the user has: kept, as before.
    // The noun may carry the verb itself ("my journal's pretty much my rock").
    let noun_has_verb = verb_at > 0 && words[verb_at - 1].contains(['\'', '\u{2019}']);
    if k <= 1
        && lead_in
        && !noun_has_verb
        && user.starts_with("User's ")
        && !specific
        && when.is_none()
        && verbless(&words[verb_at..])
    {
        return None;
    }
    // Two content words say something ("I'm a terrible cook", "This is where I practice and
    // compete").
    if told.len() < 2 {
        return None;
    }
    // A chat reopened tells nothing but the time apart unless more follows ("Been a while since
    // I went climbing, but I finally went back on Saturday").
    // The span's own number ("Been 3 weeks since …") names nothing.
    let beyond_span = words.iter().skip(4).any(|w| {
        (w.starts_with(char::is_uppercase) && !first_person(&bare(w))) || w.chars().any(|c| c.is_ascii_digit())
    });
    if reopens && !beyond_span && told.iter().filter(|w| !TIME_APART.contains(&w.as_str())).count() < 3 {
        return None;
    }
    // Without a name or a number, two content words leaning on the conversation ("it",
    // "that") are a reply, not a memory: "User will definitely keep that in mind", "This is
    // what makes me smile". Two that name a thing ("I live in leeds") still say something.
    let leans = words[rest_from.min(words.len())..]
        .iter()
        .chain(before)
        .any(|w| matches!(bare(w).as_str(), "it" | "this" | "that" | "them" | "these" | "those"));
    if !specific && told.len() < 3 && leans {
        return None;
    }
    // Resolve that names nothing ("I'll keep pushing and never give up", "I'm gonna make it
    // happen no matter what") is how people talk, not something about them.
    // Nor does a feeling about something the memory cannot name ("I find it so fulfilling",
    // "It makes me feel connected", "It's made a huge difference").
    if !specific && told.iter().all(|w| resolve(w) || affect(w) || is_filler(w)) {
        return None;
    }

    // The sentence in the third person: the first mention is "User", the verb agreeing.
    let mut out: Vec<String> = words[..k].to_vec();
    out.push(user.clone());
    // Whether the user's verb was put in the present third person ("ride" → "rides"): a
    // second verb joined to it by "and" agrees the same way ("rides and keeps jelly babies").
    let mut agreed_present = false;
    for (i, w) in words.iter().enumerate().skip(verb_at) {
        // "Jean and I are thinking": the verb is the pair's, and stays.
        // Only a pair opening the sentence: "another 3 and I drop" is two clauses.
        let paired = (2..=3).contains(&k) && matches!(bare(&words[k - 1]).as_str(), "and" | "n" | "&");
        // An "I" put in before a past verb needs no agreement; one before a liking does.
        let agrees = elided.is_none() || LIKING_VERBS.contains(&bare(w).as_str());
        if i == v && user == "User" && bare(&words[k]) == "i" && agrees && !paired {
            // "I quit my job last week": a verb whose past is its present is past before a
            // past time, and stays as said.
            // So is one beside another past verb ("i quit the bar, got on at harrahs"), and
            // "quit" said of a job or a habit is news, not a habit of quitting.
            let past = SAME_IN_PAST.contains(&bare(w).as_str())
                && (bare(w) == "quit"
                    || words[i + 1..].iter().any(|x| {
                        let x = bare(x);
                        matches!(x.as_str(), "last" | "yesterday" | "ago" | "earlier")
                            || (x.len() == 4
                                && (x.starts_with("19") || x.starts_with("20"))
                                && x.parse::<u16>().is_ok())
                            || (x.len() > 2 && is_past(&x) && !SAME_IN_PAST.contains(&x.as_str()))
                    }));
            // "I done sold the boat": a Southern perfective, "has sold"; "I done my return",
            // "did".
            let done = (bare(w) == "done").then(|| {
                let next_past = words.get(i + 1).is_some_and(|n| is_past(&bare(n)));
                if next_past { "has" } else { "did" }.to_string()
            });
            // The verb keeps what closed it ("I moved, I could not …" keeps its comma).
            let trail = &w[w.trim_end_matches([',', ';', ':', '.', '!', '?']).len()..];
            // "I no eat donut", as learners say it: "does not eat".
            let no_before_verb =
                bare(w) == "no" && words.get(i + 1).is_some_and(|n| super::lex::is_base_verb(&bare(n)));
            let verb = match done {
                Some(d) => d,
                None if no_before_verb => "does not".to_string(),
                None if past => bare(w),
                None => agree(&bare(w)),
            };
            agreed_present = verb != bare(w) && verb.ends_with('s') && !verb.contains(' ');
            out.push(format!("{verb}{trail}"));
        } else if i > v
            && user == "User"
            && bare(&words[k]) == "i"
            && !paired
            && matches!(bare(&words[i - 1]).as_str(), "and" | "but")
        {
            // "I gave up drinking and haven't looked back": an auxiliary after "and" is the
            // same subject's, and agrees with it too.
            let b = bare(w);
            let next_past = words.get(i + 1).is_some_and(|n| is_past(&bare(n)) || bare(n) == "been");
            // "before I ride and keep jelly babies in my jacket": a plain verb going on with
            // something after it agrees like the first ("I like coffee and work" is rare).
            let goes_on = words.get(i + 1).is_some_and(|n| !n.is_empty()) && !w.ends_with([',', '.', ';', '!', '?']);
            let agreed = match b.as_str() {
                "haven't" | "don't" => agree(&b),
                "have" if next_past => agree(&b),
                _ if agreed_present && goes_on && super::lex::is_base_verb(&b) && !matches!(b.as_str(), "water") => {
                    agree(&b)
                }
                _ => b.clone(),
            };
            out.push(w.replacen(&b, &agreed, 1));
        } else {
            out.push(w.clone());
        }
    }
    let head_len = k + 1;
    // With "we" for a subject, "their" would be everyone's: "my husband" stays the user's
    // ("User and others went to Whitby with User's husband").
    let group = user.starts_with("User and others");
    let rest: Vec<String> = out[head_len..]
        .iter()
        .map(|w| if group && bare(w) == "my" { "User's".to_string() } else { w.clone() })
        .collect();
    // Where someone else stood since the user was named ("Midwife said I should ask, she said
    // my BP …", "My doctor has me on …"), "they" would read as them: the user is named.
    // A plural stands there too: "My regulars keep telling me I should …" is told to the user
    // ("… keep telling User they should"), not "telling them", which reads as the regulars.
    let plural = |n: &str| n.len() > 3 && n.ends_with('s') && !n.ends_with("ss") && !n.ends_with("'s");
    let after_someone =
        !group && user.strip_prefix("User's ").is_some_and(|n| super::lex::is_relation_word(n) || plural(n));
    let tail = if group {
        third_person(&rest.join(" "))
    } else {
        super::lex::third_person_naming_user(&rest.join(" "), after_someone)
    };
    let joined = format!("{} {tail}", out[..head_len].join(" "));
    // A sentence whose lead-in was dropped starts with a capital all the same ("Now the hard
    // work starts ..." → "The hard work starts ...").
    let mut content = without_verdicts(&capitalised(&cut(joined.trim())));
    // A phrase with no verb of its own ("Question about my blood sugar" → "About User's blood
    // sugar", "near my sister") names a topic, not something that is so.
    let opens_on_preposition = content.split_whitespace().next().is_some_and(|w| {
        matches!(w.to_lowercase().as_str(), "about" | "near" | "with" | "for" | "regarding" | "from" | "of" | "re")
    });
    if opens_on_preposition && content.split_whitespace().count() <= 5 {
        return None;
    }
    // A leave-taking ("I'm off to go do some research now") names where only with a name or a
    // date ("I'm off to Lisbon on Friday").
    if content.starts_with("User is off to") && !specific && when.is_none() {
        return None;
    }
    // Nor is an offer to the listener ("I'm always here for a chat", "Count on me", "I'll ask
    // around") something about the user: it is what was said to the other speaker.
    if offer().is_match(&content) && !specific && when.is_none() {
        return None;
    }
    // Nor the conversation keeping itself going ("I just wanted to say hi", "I'll keep that in
    // mind", "I get how life can be busy", "Can't wait to see it for myself!").
    if reply().is_match(&content) && !specific && when.is_none() {
        return None;
    }
    // Nor the chat's own bookkeeping ("Hold on lemme say this b4 I forget"), a number or not.
    if meta_talk().is_match(&content) {
        return None;
    }
    // Nor a question for the listener ("I have a question about my visa", a learner's "I want
    // to make a question"): the chat answers it, and its topic is in the message archive.
    if asks().is_match(&content) {
        return None;
    }
    if let Some(shared) = shared(&content) {
        content = shared;
    }
    if let Some(period) = period {
        content = format!("{content} {period}");
    }
    if let Some(named) = someone_first(&content) {
        content = named;
    }
    // A rewrite that reads wrong ("it made User who they am") keeps the user's words instead:
    // faithful, but it says less on its own than a sentence that names what it is about.
    let mut quoted = false;
    let mut leaning = None;
    // A later clause that turns to "you" ("…, employed this time so they give you the van")
    // is general talk or the listener's: the news before it stays, the clause goes (before the
    // rewrite is judged, so a texting "n" in the clause cut does not make the whole a quote).
    if let Some(cut) = before_second_person(&content) {
        content = cut;
    }
    if let Some(named) = readable::the_for_this(&content) {
        content = named;
    }
    if let Some(flaw) = readable::flaw(&content) {
        if text.split_whitespace().count() > MAX_WORDS {
            return None;
        }
        // A quote leaning on what came before says nothing on its own when it names nothing
        // and tells little ("It's my own story.", "Those are my main focuses."); with more
        // words it still tells something ("It reminded me of my own struggles in the past").
        let tells = told.iter().filter(|w| !readable::leans_back(w)).count();
        if flaw == readable::Flaw::DanglingPronoun && !specific && tells < 3 {
            return None;
        }
        // So does a sentence shown to the listener ("Look who came to see me!", "Btw look what
        // I got!"), whose command is one of its words.
        if flaw == readable::Flaw::Addressed && !specific && tells < 4 {
            return None;
        }
        content = readable::quote(text, s.at);
        quoted = true;
        // "This is the shed where I practice" shows what it names (a photo, most often).
        let shows =
            text.split_whitespace().next().is_some_and(|w| matches!(bare(w).as_str(), "this" | "these" | "here's"));
        if flaw == readable::Flaw::DanglingPronoun && !specific && !shows {
            leaning = Some(text.to_string());
        }
    }
    // "You" in a memory has no referent: it was said to the other speaker ("Having a dedicated
    // space should help you stay focused"), so it is about them or about everyone.
    if !crate::pii::detect(&content).is_empty() || content.split_whitespace().any(|w| second_person(&bare(w))) {
        return None;
    }
    // After "is"/"are" a participle describes a state ("User is swamped"), not a past action.
    let state = user.ends_with(" is") || user.ends_with(" are");
    let past_verb =
        !state && (is_past(&verb) || user.ends_with(" has") || user.ends_with(" have") || elided == Some("I've"));
    if when.is_none() {
        when = when::past(text, s.at).map(|p| happened(&p, s.at));
    }
    let event = past_verb || when.is_some() || verb == "just";
    // What holds for "us" and names nothing ("We all need a timeout sometimes", "Having people
    // who lift us up is essential") is a truism, not something about the user; what "we" did
    // is news and stays.
    let about_us = !words
        .iter()
        .any(|w| matches!(bare(w).as_str(), "i" | "i'm" | "i've" | "i'll" | "me" | "my" | "myself" | "mine"));
    // What "we" are doing now ("We're considering adopting a rescue dog") is news all the same.
    // Not what "we all" go through ("We're all going through a lot"): that is everyone's.
    let ongoing = user.ends_with(" are")
        && verb.len() > 4
        && verb.ends_with("ing")
        && !words.iter().any(|w| matches!(bare(w).as_str(), "all" | "everyone" | "everybody"));
    // What "we" love or enjoy doing ("We love climbing, sliding and playing games") is the
    // household's liking, the user's among it; what "we all" like is everyone's.
    // Only "we" opening the sentence, the verb right after it: in "Moments like that make us
    // love sports" and "We're like a family" nobody says what they like.
    let our_liking = k == 0
        && v == verb_at
        && bare(&words[0]) == "we"
        && LIKINGS.contains(&verb.as_str())
        && verb != "appreciate"
        && !words.iter().any(|w| matches!(bare(w).as_str(), "all" | "everyone" | "everybody"));
    if about_us && !event && !specific && !ongoing && !our_liking {
        return None;
    }
    // The user speaking of themselves ("I ran", "my sister") tells more about them than "we" or
    // a sentence that only mentions them.
    let own = k == 0 && matches!(bare(&words[0]).as_str(), "i" | "i'm" | "i've" | "my" | "me");
    let salience = (if own {
        0.5
    } else if k == 0 {
        0.45
    } else {
        0.4
    } + if specific { 0.1 } else { 0.0 }
        + if event { 0.1 } else { 0.0 }
        + (told.len() as f32 * 0.02).min(0.15))
    .min(0.85)
        * if quoted { QUOTED_SALIENCE } else { 1.0 };
    Some(Episode {
        content,
        kind: if event { Kind::Event } else { Kind::Fact },
        // Every statement is dated: when it happened, or when it was said to hold.
        when: when.unwrap_or(s.at),
        salience,
        leaning,
        said: text.to_string(),
        quoted,
        at: s.at,
        asked: None,
    })
}

/// The day an event is dated: the day its phrase names ("yesterday", "last Saturday"), else, for
/// a period ("last week", "a few months ago"), the day it was told, the phrase staying in the
/// statement. A guessed day inside the period would read as a fact it is not.
fn happened(p: &when::TimePhrase, told: DateTime<Utc>) -> DateTime<Utc> {
    if p.vague { told } else { p.at }
}

/// Whether a word stands between a subject and its verb ("I really love", "I typically hold"):
/// a listed adverb, or a word in -ly that is not a verb.
fn adverb(w: &str) -> bool {
    ADVERBS.contains(&w)
        || (w.len() > 4
            && w.ends_with("ly")
            && !matches!(w, "apply" | "bully" | "multiply" | "rally" | "rely" | "reply" | "supply" | "tally"))
}

/// Whether a first-person word is a subject ("I", "we've"), not an object or possessive.
fn first_subject(w: &str) -> bool {
    matches!(w, "i" | "i'm" | "i've" | "i'll" | "we" | "we're" | "we've" | "we'll")
}

/// Whether a word names the other speaker.
fn second_person(w: &str) -> bool {
    matches!(w, "you" | "your" | "yours" | "you're" | "you've" | "you'll" | "u" | "ya" | "yourself")
}

/// Whether a word names the speaker.
pub(super) fn first_person(w: &str) -> bool {
    matches!(
        w,
        "i" | "i'm"
            | "i've"
            | "i'd"
            | "i'll"
            | "me"
            | "my"
            | "myself"
            | "mine"
            | "we"
            | "we're"
            | "we've"
            | "we'll"
            | "our"
            | "us"
    )
}

/// Verbs that stand for a whole clause when they end it ("I do.", "I have!", "I did-").
const AUXILIARIES: &[&str] =
    &["do", "does", "did", "have", "has", "had", "am", "was", "will", "can", "could", "would", "should", "might"];

/// Stems of verbs of feeling whose "-ing" form is mostly an adjective for what causes the
/// feeling ("Exciting but kinda nerve-wracking"), not the user's doing: such a word starts an
/// elided "I'm ..." only when an object or a place follows it ("Relaxing at home today").
const STIMULUS_ING: &[&str] = &[
    "amaz",
    "annoy",
    "bor",
    "challeng",
    "charm",
    "confus",
    "disappoint",
    "excit",
    "exhaust",
    "fascinat",
    "frighten",
    "frustrat",
    "inspir",
    "interest",
    "overwhelm",
    "refresh",
    "relax",
    "reward",
    "satisfy",
    "scar",
    "shock",
    "stun",
    "surpris",
    "terrify",
    "thrill",
    "tir",
    "touch",
    "worry",
    "humbl",
    "encourag",
    "intimidat",
    "embarrass",
];

/// The subject a casual sentence leaves out, put back: "Lost my job" (I), "Been running
/// longer" (I've), "Researching adoption agencies" (I'm), "Gonna continue my edu" (I'm).
/// The words of a span of time and the "since" after it, which tell nothing of their own.
const TIME_APART: &[&str] = &[
    "ages", "forever", "awhile", "while", "minute", "sec", "second", "long", "little", "time", "since", "few",
    "couple", "days", "weeks", "months", "years", "last", "chatted", "talked", "spoke", "caught", "chat", "talk",
];

/// A word with its drawn-out letters said once ("broooo" → "bro", "sooo" → "so"): how
/// texting stretches an interjection; a doubled letter ("aww", "all") stays.
fn squeezed(word: &str) -> String {
    let chars: Vec<char> = word.chars().collect();
    let mut out = String::with_capacity(word.len());
    let mut i = 0;
    while i < chars.len() {
        let run = chars[i..].iter().take_while(|c| **c == chars[i]).count();
        let keep = if run >= 3 { 1 } else { run };
        out.extend(std::iter::repeat_n(chars[i], keep));
        i += run;
    }
    out
}

/// Whether `words` (lead-ins gone) ask the listener for something.
fn addressed_to_listener(words: &[String]) -> bool {
    let w: Vec<String> = words.iter().take(6).map(|w| bare(w)).collect();
    let mut w: Vec<&str> = w.iter().map(String::as_str).collect();
    // "go on give us 2", "aye go ahead and add it": urging the listener on first.
    while let Some(n) = match w[..] {
        ["go", "on" | "ahead", "and", ..] => Some(3),
        ["go", "on" | "ahead", ..] | ["aye" | "please" | "pls" | "plz" | "just" | "ok" | "okay", ..] => {
            Some(if w[0] == "go" { 2 } else { 1 })
        }
        _ => None,
    } {
        w.drain(..n);
    }
    // "stick in bout the patch test", "pop that in", "add it": something to put in what the
    // listener writes.
    if matches!(
        w[..],
        [
            "stick" | "pop" | "chuck" | "bung" | "add" | "include" | "mention",
            "in" | "it" | "that" | "this" | "them" | "me" | "us",
            ..
        ] | ["write" | "draft" | "make", "me" | "us", ..]
    ) {
        return true;
    }
    matches!(
        w[..],
        [
            "keep" | "tell" | "send" | "show" | "give" | "text" | "ping" | "message" | "update" | "remind" | "hit",
            "me" | "us",
            ..
        ] | ["let" | "lemme", "me" | "us", "know", ..]
            // "tell him I'll water his beans", "give her my love": a message to pass on.
            | [
                "tell" | "send" | "give" | "show" | "text" | "message" | "remind" | "ask",
                "him" | "her" | "them" | "everyone" | "everybody",
                ..
            ]
    )
}

/// Whether `words` open on a span of time ("a while", "ages", "so long"): what "been" says of
/// "it", not of the user, in "Been a while since …".
fn spans_time(words: &[String]) -> bool {
    let lower: Vec<String> = words.iter().take(3).map(|w| bare(w)).collect();
    // "Been quite a ride", "Been a crazy week", "Been such a whirlwind": what the time was.
    const STRETCHES: &[&str] = &[
        "blur",
        "day",
        "journey",
        "month",
        "morning",
        "night",
        "ride",
        "rollercoaster",
        "summer",
        "week",
        "weekend",
        "whirlwind",
        "year",
    ];
    let opens_on_a = matches!(lower.first().map(String::as_str), Some("a" | "an" | "quite" | "such" | "one"));
    if opens_on_a && words.iter().take(5).any(|w| STRETCHES.contains(&bare(w).as_str())) {
        return true;
    }
    matches!(
        lower.iter().map(String::as_str).collect::<Vec<_>>()[..],
        ["ages" | "forever" | "awhile", ..]
            | ["a", "while" | "minute" | "sec" | "second", ..]
            | ["a", "few" | "couple", ..]
            | [_, "days" | "weeks" | "months" | "years", ..]
            | ["a", "long" | "little", "time" | "while", ..]
            | ["so" | "too", "long", ..]
    )
}

/// Participles and adjectives that say how the user is, not what they did, when a preposition
/// follows ("Fascinated by …", "Stoked about …", "Engaged to …", "Busy with studies …"): the
/// left-out subject is "I'm".
pub(super) const STATES_BEFORE: &[&str] = &[
    "addicted",
    "amazed",
    "annoyed",
    "anxious",
    "based",
    "blessed",
    "bored",
    "busy",
    "committed",
    "concerned",
    "confused",
    "delighted",
    "determined",
    "disappointed",
    "done",
    "eager",
    "engaged",
    "excited",
    "exhausted",
    "fascinated",
    "frustrated",
    "grateful",
    "hooked",
    "impressed",
    "inspired",
    "interested",
    "involved",
    "keen",
    "married",
    "motivated",
    "nervous",
    "obsessed",
    "overwhelmed",
    "pleased",
    "proud",
    "relieved",
    "scared",
    "shocked",
    "sick",
    "slammed",
    "stoked",
    "stressed",
    "surprised",
    "swamped",
    "terrified",
    "thankful",
    "thrilled",
    "tired",
    "worried",
];

/// Verbs whose past is spelt as their present ("I quit last week", "I cut my hair yesterday").
const SAME_IN_PAST: &[&str] =
    &["quit", "put", "set", "cut", "hit", "let", "shut", "hurt", "cost", "read", "upset", "split"];

/// Verbs of liking and needing that chat opens with, the "I" left out ("Hate driving at
/// night", "Need to book the MOT"); present tense, so they agree with "User" once it is put in.
const LIKING_VERBS: &[&str] = &["love", "hate", "miss", "enjoy", "prefer", "adore", "loathe", "dread", "need", "want"];

/// Whether a sentence speaks of someone else and not of the user ("She wrote well it seems",
/// "physics also he managed").
/// `content` up to the comma before the clause of its first "you", when four words or more
/// stand before it: "User packed in evri, starting with dpd on monday, employed this time so they
/// give you the van" keeps "User packed in evri, starting with dpd on monday".
fn before_second_person(content: &str) -> Option<String> {
    let words: Vec<&str> = content.split_whitespace().collect();
    let at = words.iter().position(|w| second_person(&bare(w)))?;
    // Only at a comma: "I love how it shows the power you were talking about" has the listener
    // inside the clause that says what is loved.
    let cut = (5..at).rev().find(|&i| words[i - 1].ends_with([',', ';']))?;
    // "I'm pasting our group chat, can you …": the clause turned to the listener asks for
    // something, and what led into it was the asking.
    let asks = matches!(
        (bare(words[cut]).as_str(), words.get(cut + 1).map(|w| bare(w)).as_deref()),
        ("can" | "could" | "would" | "will" | "do" | "pls" | "please", Some("you" | "u"))
    );
    if asks {
        return None;
    }
    let kept = words[..cut].join(" ").trim_end_matches([',', ';']).to_string();
    // "I have to say, you …", "I got it, Nate, you …": what stands before the listener's clause
    // only leads into it.
    let last = bare(words[cut - 1]);
    let leads_in =
        matches!(last.as_str(), "say" | "it" | "that" | "this" | "think" | "know" | "mean" | "guess" | "admit")
            || words[cut - 1].starts_with(char::is_uppercase);
    (!leads_in && readable::flaw(&kept).is_none()).then_some(kept)
}

/// Whether `words` hold no word that could be a verb: no auxiliary, contraction, past, "-ing"
/// (or texting's "-in") form, nor a listed base verb with or without its "-s". Unknown words
/// count as no verb, so a plural subject before an unlisted verb ("my kids adore it") reads as
/// verbless; the caller only drops short possessive phrases with nothing specific in them.
fn verbless(words: &[String]) -> bool {
    const BE: &[&str] = &["is", "are", "was", "were", "be", "been", "being", "am", "has", "got", "gets", "keeps"];
    !words.iter().any(|w| {
        let b = bare(w);
        let stem = b.strip_suffix("ies").map(|s| format!("{s}y")).or_else(|| b.strip_suffix("es").map(str::to_string));
        b.contains('\'')
            || BE.contains(&b.as_str())
            || AUXILIARIES.contains(&b.as_str())
            || super::lex::MODALS.contains(&b.as_str())
            || LIKING_VERBS.contains(&b.as_str())
            || is_past(&b)
            || super::lex::is_base_verb(&b)
            || b.strip_suffix('s').is_some_and(super::lex::is_base_verb)
            || stem.is_some_and(|s| super::lex::is_base_verb(&s))
            || (b.len() > 4 && (b.ends_with("ing") || b.ends_with("in")))
    })
}

fn about_someone_else(sentence: &str) -> bool {
    let words: Vec<String> = sentence.split_whitespace().map(bare).collect();
    words.iter().any(|w| matches!(w.as_str(), "she" | "he" | "they" | "she's" | "he's" | "they're"))
        && !words.iter().any(|w| first_person(w))
}

fn elided_subject(words: &[String]) -> Option<&'static str> {
    let w0 = bare(words.first()?);
    let w1 = words.get(1).map(|w| bare(w)).unwrap_or_default();
    if words.len() < 3 {
        return None;
    }
    // A gerund is the elided "I'm ..." only when nothing else in its clause is the verb: in
    // "Drawing flowers is one of my faves" it is the subject; in "Working on my car, the clutch
    // is shot" the verb after the comma is another clause's.
    // A verb in "-s" after an adverb of frequency or degree is one too, listed or not
    // ("Performing live always fuels my soul").
    let in_clause: Vec<String> = clause(words).skip(1).map(|x| bare(x)).collect();
    // Two gerunds joined ("Dancing and running my biz need hard work") take a plural verb.
    let paired = in_clause.windows(2).any(|pair| pair[0] == "and" && pair[1].len() > 4 && pair[1].ends_with("ing"));
    let verb_in_clause = in_clause.iter().any(|x| GERUND_SUBJECT_VERBS.contains(&x.as_str()))
        || (paired && in_clause.iter().any(|x| GERUND_PAIR_VERBS.contains(&x.as_str())))
        // A word in "-s" before "me" or "us" is the verb that did something to the user
        // ("Hearing that song takes me back").
        || in_clause.windows(2).any(|pair| {
            pair[0].len() > 3
                && pair[0].ends_with('s')
                && !pair[0].ends_with("ss")
                && matches!(pair[1].as_str(), "me" | "us")
        })
        // A gerund opening a list ("Swimming, yoga, and walking are good options for my knee")
        // is one of the subjects of the plural verb after it.
        || (words[0].ends_with(',') && words.iter().any(|x| matches!(bare(x).as_str(), "are" | "were")))
        || in_clause.windows(2).any(|pair| {
            ADVERBS_BEFORE_VERB.contains(&pair[0].as_str())
                && pair[1].len() > 3
                && pair[1].ends_with('s')
                && !pair[1].ends_with("ss")
                && !pair[1].ends_with("'s")
        });
    // "Was super nervous last week": a feeling after "was", the "I" left out ("Was a great
    // day" is the day's).
    let feeling_after = words[1..]
        .iter()
        .map(|w| bare(w))
        .find(|w| {
            !adverb(w) && !matches!(w.as_str(), "so" | "super" | "really" | "very" | "pretty" | "a" | "bit" | "little")
        })
        .is_some_and(|w| FEELINGS.contains(&w.as_str()) || super::lex::is_mood_word(&w));
    match w0.as_str() {
        // "Turned out to be an A2 pulley strain": what turned out is what was said before.
        "turned" | "turns" if w1 == "out" => None,
        // "Can't wait to see the kids", "Still working on my biz", "Just been tinkering with
        // the recipe", "Hoping my screenplay gets noticed": chat leaves the user unsaid.
        // Looking forward counts only with something of the user's or a name in it: "Can't
        // wait to catch up" is the chat's.
        "can't" | "cant" | "cannot"
            if w1 == "wait"
                && words[2..].iter().any(|w| {
                    first_person(&bare(w)) || w.starts_with(char::is_uppercase) || w.chars().any(|c| c.is_ascii_digit())
                }) =>
        {
            Some("I")
        }
        "was" if feeling_after => Some("I"),
        // "Hate driving on the motorway", "Miss my nan so much", "Need to book the MOT": a
        // liking or a need with the "I" left out. Only before a gerund, something of the
        // user's or "to": "Love it", "Love that idea" and "Love you" answer the chat.
        w if LIKING_VERBS.contains(&w)
            && ((w1.len() > 4 && w1.ends_with("ing") && !NOT_GERUNDS.contains(&w1.as_str()))
                || matches!(w1.as_str(), "my" | "our")
                || (matches!(w, "need" | "want") && w1 == "to")) =>
        {
            Some("I")
        }
        "just" if w1 == "been" => Some("I've"),
        "hoping" if matches!(w1.as_str(), "my" | "to" | "that" | "for" | "the" | "our" | "we" | "i" | "it") => {
            Some("I'm")
        }
        "still" | "currently"
            if w1.len() > 4 && w1.ends_with("ing") && !NOT_GERUNDS.contains(&w1.as_str()) && !verb_in_clause =>
        {
            Some("I'm")
        }
        // "driving test booked sat 9am": the user's thing, with "is" left out.
        w if w.len() > 5 && w.ends_with("ing") && done_to(words) => Some("my"),
        // "Been a while since we talked": the unsaid subject of a span of time is "it".
        "been" if !spans_time(&words[1..]) => Some("I've"),
        "just" if is_past(&w1) => Some("I"),
        "planning" | "hoping" | "trying" if !verb_in_clause => Some("I'm"),
        // "Fascinated by the traditions", "Engaged to Sam", "Based in Leeds": a state, the
        // "I'm" left out.
        w if STATES_BEFORE.contains(&w)
            && matches!(w1.as_str(), "by" | "with" | "about" | "for" | "of" | "at" | "to" | "in" | "that") =>
        {
            Some("I'm")
        }
        // A compound ("Much-needed break and …", "Long-awaited trip") is an adjective.
        // "Made me laugh so hard", "Took me ages": the verb's object is the user, so what was
        // left out is "it" or someone else, never "I". "Done me knee in" has "me" for "my".
        w if is_past(w)
            && !NOT_ELIDED.contains(&w)
            && !w.contains('-')
            && (!matches!(w1.as_str(), "me" | "us")
                || super::lex::me_is_my(words.get(2).map(String::as_str), false)) =>
        {
            Some("I")
        }
        // "Split up with my wife last year", "Quit the gym in March 2019": a verb whose past is
        // its present, a past time after it.
        w if SAME_IN_PAST.contains(&w)
            && !matches!(w1.as_str(), "me" | "us")
            && words[1..].iter().any(|x| {
                let x = bare(x);
                matches!(x.as_str(), "last" | "yesterday" | "ago" | "earlier")
                    || (x.len() == 4 && (x.starts_with("19") || x.starts_with("20")) && x.parse::<u16>().is_ok())
            }) =>
        {
            Some("I")
        }
        w if w.len() > 5
            && w.ends_with("ing")
            && !w.contains('-')
            && !NOT_GERUNDS.contains(&w)
            && !ING_NOUNS.contains(&w)
            && !verb_in_clause
            // "Lambing all done", "packing finished": the task is the subject, "is" left out.
            && !matches!(w1.as_str(), "all" | "done" | "finished" | "over" | "sorted" | "complete" | "completed")
            && !stimulus(w, words)
            && !named(words) =>
        {
            Some("I'm")
        }
        _ => None,
    }
}

/// Whether the "-ing" word names a thing that something was done to ("driving test booked sat
/// 9am", "swimming lesson cancelled"): a noun after it, then a past participle, is the user's
/// thing with "is" left out ("my driving test booked …"), not an elided "I'm driving".
fn done_to(words: &[String]) -> bool {
    let w1 = words.get(1).map(|w| bare(w)).unwrap_or_default();
    let w2 = words.get(2).map(|w| bare(w)).unwrap_or_default();
    !words[0].ends_with([',', '.', '!', '?', ';', '-'])
        && w1.len() > 2
        && !w1.ends_with("ly")
        && !matches!(
            w1.as_str(),
            "the"
                | "a"
                | "an"
                | "my"
                | "our"
                | "your"
                | "his"
                | "her"
                | "their"
                | "to"
                | "for"
                | "with"
                | "on"
                | "in"
                | "at"
                | "up"
                | "out"
                | "off"
                | "back"
                | "home"
                | "around"
                | "about"
                | "into"
                | "over"
                | "it"
                | "this"
                | "that"
                | "some"
                | "all"
                | "how"
                | "what"
                | "more"
                | "less"
                | "so"
                | "very"
                | "too"
                | "much"
        )
        && matches!(
            w2.as_str(),
            "booked"
                | "cancelled"
                | "canceled"
                | "sorted"
                | "postponed"
                | "rescheduled"
                | "moved"
                | "confirmed"
                | "scheduled"
                | "arranged"
                | "paid"
                | "fixed"
                | "delayed"
                | "passed"
                | "failed"
                | "approved"
                | "finished"
                | "planned"
                | "done"
        )
}

/// Whether the first two words are a capitalised name that a verb in "-s" follows ("Boxing Day
/// works for me", "Reading Festival sells out"): the "-ing" word is part of the name, not a verb
/// whose subject was left out ("Reading Harry Potter again" still is one).
fn named(words: &[String]) -> bool {
    let capital = |w: &String| w.starts_with(char::is_uppercase) && !first_person(&bare(w));
    let verb = |w: &String| w.starts_with(char::is_lowercase) && bare(w).ends_with('s') && !bare(w).ends_with("ss");
    words.len() > 2 && capital(&words[0]) && capital(&words[1]) && verb(&words[2])
}

/// Whether `w` (the first word, in "-ing") is an adjective of feeling here: a [`STIMULUS_ING`]
/// word that is not followed by what a verb would take (a preposition, a possessive, an object
/// pronoun, an article).
fn stimulus(w: &str, words: &[String]) -> bool {
    let stem = &w[..w.len() - 3];
    let takes = words.get(1).is_some_and(|next| {
        !words[0].ends_with([',', '.', '!', '?', ';', '-'])
            && matches!(
                bare(next).as_str(),
                "at" | "in"
                    | "on"
                    | "with"
                    | "by"
                    | "after"
                    | "before"
                    | "around"
                    | "my"
                    | "our"
                    | "the"
                    | "a"
                    | "an"
                    | "them"
                    | "him"
                    | "her"
                    | "some"
                    | "up"
                    | "out"
            )
    });
    STIMULUS_ING.contains(&stem) && !takes
}

/// The words of the first clause: up to and including the first that ends with a comma, a
/// semicolon or a dash.
fn clause(words: &[String]) -> impl Iterator<Item = &String> {
    let end = words
        .iter()
        .position(|w| w.ends_with([',', ';', ':', '-', '\u{2013}', '\u{2014}']))
        .map_or(words.len(), |i| i + 1);
    words[..end].iter()
}

/// The user's form of the first-person word at `k` and the index of the word after it (where
/// the verb is): "I'm" → "User is", "my" → "User's", "we" → "User and others".
fn user_form(words: &[String], k: usize) -> Option<(String, usize)> {
    let w = bare(&words[k]);
    let next = words.get(k + 1).map(|w| bare(w)).unwrap_or_default();
    // "(my cat)": what opened the word stays before it.
    let lead: String = words[k].chars().take_while(|c| !c.is_alphanumeric()).collect();
    let (form, at) = match w.as_str() {
        "i" => match next.as_str() {
            "am" => ("User is".into(), k + 2),
            "have" if words.get(k + 2).is_some_and(|w| is_past(&bare(w)) || bare(w) == "been") => {
                ("User has".into(), k + 2)
            }
            _ => ("User".into(), k + 1),
        },
        "i'm" => ("User is".into(), k + 1),
        "i've" => ("User has".into(), k + 1),
        // A conditional asserts nothing; what the user says they will do, and the plan family
        // did not read as a plan, is an intention ("I'll keep spreading positivity").
        "i'd" => return None,
        "i'll" => ("User will".into(), k + 1),
        "we'll" => ("User and others will".into(), k + 1),
        // "Me and my brother went ..."
        "me" if next == "and" && k == 0 => match words.get(k + 2).map(|w| bare(w)).as_deref() {
            Some("my") => (format!("User and their {}", words.get(k + 3)?), k + 4),
            _ => (format!("User and {}", words.get(k + 2)?), k + 3),
        },
        // "me ma helped with the van", "with me mates": "me" for "my".
        // "Me, I prefer tea": a word ending its clause is the user.
        "me" if !words[k].ends_with([',', ':', ';', '.', '!', '?', '-'])
            && super::lex::me_is_my(words.get(k + 1).map(String::as_str), k == 0) =>
        {
            (format!("User's {}", super::lex::relation_in_full(words.get(k + 1)?)), k + 2)
        }
        "me" | "myself" => ("User".into(), k + 1),
        // "our Daniel and Chloe have set the date": in British and Irish speech "our" before a
        // name is family, said by name; the person is the subject, not a thing of the user's.
        "our"
            if words.get(k + 1).is_some_and(|n| {
                n.starts_with(char::is_uppercase) && !super::lex::is_relation_word(&bare(n)) && bare(n) != "i"
            }) =>
        {
            (words[k + 1].clone(), k + 2)
        }
        "my" | "our" => {
            let noun = &super::lex::relation_in_full(words.get(k + 1)?);
            // "My husband and I went ...", "My partner Sam and I are getting married".
            let named = words.get(k + 2).is_some_and(|w| {
                w.starts_with(char::is_uppercase) && bare(w).chars().all(char::is_alphabetic) && bare(w) != "i"
            }) && super::lex::is_relation_word(&bare(&words[k + 1]));
            let and_at = if named { k + 3 } else { k + 2 };
            if words.get(and_at).is_some_and(|w| bare(w) == "and")
                && words.get(and_at + 1).is_some_and(|w| bare(w) == "i")
            {
                let name = if named { format!(" {}", bare_name(&words[k + 2])) } else { String::new() };
                (format!("User and their {noun}{name}"), and_at + 2)
            } else {
                (format!("User's {noun}"), k + 2)
            }
        }
        "mine" => ("User's".into(), k + 1),
        "we" | "us" => ("User and others".into(), k + 1),
        "we're" => ("User and others are".into(), k + 1),
        "we've" => ("User and others have".into(), k + 1),
        _ => return None,
    };
    // "The commute is killing me, 2 hours each way": an object ending its clause keeps the
    // comma that ends it.
    let trail = if at == k + 1 && matches!(w.as_str(), "me" | "myself" | "mine" | "us") {
        words[k].trim_start_matches(|c: char| !c.is_alphanumeric()).trim_start_matches(char::is_alphanumeric)
    } else {
        ""
    };
    Some((format!("{lead}{form}{trail}"), at))
}

/// A name as typed, without the punctuation around it.
fn bare_name(w: &str) -> &str {
    w.trim_matches(|c: char| !c.is_alphanumeric())
}

/// A statement about someone the user names ("User's sister Lucia is getting married in June")
/// led by that person, with the relation after the name: "Lucia (User's sister) is getting
/// married in June". What happens is theirs, and the memory says so from its first word; whose
/// relative stays said (a speaker's label puts the speaker there). `None` when the
/// memory does not open on a named relation doing something ("User's sister is named Lucia").
fn someone_first(content: &str) -> Option<String> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(&format!(
            r"^User's (?P<rel>{}) (?P<name>\p{{Lu}}[\p{{L}}-]+(?: \p{{Lu}}[\p{{L}}-]+)?) (?P<rest>\S.*)$",
            super::lex::RELATIONS
        ))
        .expect("someone-first regex")
    });
    let c = re.captures(content)?;
    let rest = &c["rest"];
    let first = rest.split_whitespace().next().unwrap_or("");
    // Naming is the identity rule's ("is named", "is called"); a name that is a word of the
    // sentence ("User's mum Always says") is no name.
    // A word shouted in capitals ("nan CRIED at the tickets") is no name.
    let shouted = c["name"].len() > 1 && c["name"].chars().filter(|ch| ch.is_alphabetic()).all(char::is_uppercase);
    if ["named", "called"].iter().any(|w| rest.split_whitespace().nth(1) == Some(*w))
        || shouted
        || super::lex::NOT_NAMES.contains(&c["name"].to_lowercase().as_str())
        || first.is_empty()
    {
        return None;
    }
    // One person doing something agrees with them ("Minh (User's son) starts university", said
    // "my son Minh start university"); a pair or a group ("kids", "parents") keeps its verb.
    let rel = c["rel"].to_lowercase();
    let one = !rel.ends_with('s') || matches!(rel.as_str(), "boss" | "missus" | "missis" | "sis" | "cuz");
    let rest = match rest.split_once(' ') {
        Some((verb, after)) if one && super::lex::is_base_verb(verb) => format!("{} {after}", third_singular(verb)),
        _ => rest.to_string(),
    };
    Some(format!("{} (User's {rel}) {rest}", &c["name"]))
}

/// A verb after "User" in the third person ("love" → "loves"; "went", "can" unchanged).
fn agree(b: &str) -> String {
    // Already agreeing ("I does take it", as a Trinidadian says it), or no verb at all ("I and
    // wife live …").
    // "I rides" as some say it: a verb in -s whose base is a verb agrees already.
    let inflected = b.strip_suffix('s').is_some_and(super::lex::is_base_verb)
        || b.strip_suffix("es").is_some_and(|v| v.len() > 2 && super::lex::is_base_verb(v));
    if same_after_any_subject(b)
        || inflected
        || matches!(b, "does" | "is" | "has" | "was" | "and" | "n" | "&" | "or" | "no" | "not" | "never")
        || super::lex::PIDGIN_MARKERS.contains(&b)
    {
        b.to_string()
    } else if b == "don't" {
        "doesn't".to_string()
    } else if b == "haven't" {
        "hasn't".to_string()
    } else {
        match b {
            "am" => "is".to_string(),
            "have" => "has".to_string(),
            "do" => "does".to_string(),
            // "I been meaning to …" (the "have" left out, as people type it): "has been".
            "been" => "has been".to_string(),
            // "i going call da doctor" (the "am" left out): "is going", never "goings".
            _ if b.len() >= 5
                && b.ends_with("ing")
                && !matches!(
                    b,
                    "bring" | "sting" | "swing" | "cling" | "fling" | "wring" | "spring" | "string" | "thing"
                ) =>
            {
                format!("is {b}")
            }
            _ => third_singular(b),
        }
    }
}

/// Greetings of other languages said in English chat whose first word is also an English word.
const GREETING_PHRASES: &[&str] = &["sat sri akal", "sat shri akal", "sat sree akal"];

/// The most statements of one message kept together.
const PER_MESSAGE: usize = 2;

/// Folds one message's captured statements into one memory: the most salient two, in the order
/// they were said. A message is one moment of the user's life; one memory per message keeps the
/// count in step with the conversation and the statements' shared context together.
pub(super) fn merge(mut episodes: Vec<Episode>) -> Option<Draft> {
    if episodes.is_empty() {
        return None;
    }
    if episodes.len() > PER_MESSAGE {
        let mut order: Vec<usize> = (0..episodes.len()).collect();
        order.sort_by(|&a, &b| episodes[b].salience.total_cmp(&episodes[a].salience).then(a.cmp(&b)));
        let keep: Vec<usize> = order.into_iter().take(PER_MESSAGE).collect();
        let mut i = 0;
        episodes.retain(|_| {
            i += 1;
            keep.contains(&(i - 1))
        });
    }
    let event = episodes.iter().find(|e| e.kind == Kind::Event);
    let kind = if event.is_some() { Kind::Event } else { Kind::Fact };
    let valid_from = event.or(episodes.first()).map(|e| e.when);
    let salience = episodes.iter().map(|e| e.salience).fold(0.0f32, f32::max);
    // Quotes said one after the other are one quote ('On … User said: "A. B."', not two dated
    // quotes glued with a full stop); a rewrite beside a quote stays a sentence of its own.
    let mut pieces: Vec<String> = Vec::new();
    let mut run: Vec<&Episode> = Vec::new();
    let flush = |run: &mut Vec<&Episode>, pieces: &mut Vec<String>| {
        match run.as_slice() {
            [] => {}
            [one] => pieces.push(one.content.clone()),
            [first, ..] => {
                let said: Vec<String> = run
                    .iter()
                    .map(|e| {
                        let t = e.said.trim();
                        if t.ends_with(['.', '!', '?', '…']) { t.to_string() } else { format!("{t}.") }
                    })
                    .collect();
                pieces.push(match first.asked.as_deref() {
                    Some(question) => readable::answer(question, &said.join(" "), first.at),
                    None => readable::quote(&said.join(" "), first.at),
                });
            }
        }
        run.clear();
    };
    for e in &episodes {
        if e.quoted {
            run.push(e);
        } else {
            flush(&mut run, &mut pieces);
            pieces.push(e.content.clone());
        }
    }
    flush(&mut run, &mut pieces);
    let mut content = String::new();
    for piece in pieces {
        if !content.is_empty() {
            // A quote ends on its closing mark: a space, not a full stop, before what follows.
            content.push_str(if content.ends_with('"') { " " } else { ". " });
        }
        content.push_str(&piece);
    }
    let mut draft = Draft::new(kind, content, CONFIDENCE, salience);
    draft.valid_from = valid_from;
    draft.rule = Some(RULE.to_string());
    // A capture is context the model may use, never a command: only a typed rule that read a
    // specific phrasing earns "do not contradict" (a fact's default surface).
    if kind == Kind::Fact {
        draft.surface = Some(Surface::Adapt);
    }
    Some(draft)
}

/// The name episodic capture records as a memory's rule: it is no pattern of the registry but
/// the catch-all for first-person statements no rule claimed.
pub(super) const RULE: &str = "episodic.capture";

/// How sure a plainly stated first-person statement is: above the gate's floor for facts, below
/// what a rule that read a specific phrasing gives.
pub(super) const CONFIDENCE: f32 = 0.75;

/// Words that fill a sentence without telling anything ("really", "stuff", "today").
pub(super) const FILLERS: &[&str] = &[
    "again",
    "also",
    "always",
    "amazing",
    "anymore",
    "anything",
    "awesome",
    "cool",
    "definitely",
    "everything",
    "fun",
    "gonna",
    "good",
    "gotta",
    "great",
    "haha",
    "it's",
    "just",
    "kinda",
    "lately",
    "like",
    "lol",
    "lot",
    "lots",
    "love",
    "much",
    "nice",
    "now",
    "pretty",
    "really",
    "recently",
    "someone",
    "something",
    "stuff",
    "super",
    "that's",
    "there",
    "thing",
    "things",
    "today",
    "tonight",
    "too",
    "totally",
    "very",
    "wanna",
    "yeah",
    "yesterday",
];

fn is_filler(w: &str) -> bool {
    FILLERS.contains(&w)
}

/// A word list kept as data (`words/*.txt`), read on first use.
pub(super) struct Words(std::sync::OnceLock<Vec<&'static str>>, &'static str);

impl Words {
    pub(super) const fn new(text: &'static str) -> Self {
        Self(std::sync::OnceLock::new(), text)
    }

    /// Whether `w`, in any of its forms, is in the list ([`listed`]).
    pub(super) fn has(&self, w: &str) -> bool {
        listed(self.0.get_or_init(|| super::word_list(self.1).collect()), w)
    }
}

/// Words of resolve that name nothing.
static RESOLVE: Words = Words::new(include_str!("words/resolve.txt"));

/// Words of feeling or value that name nothing.
static AFFECT: Words = Words::new(include_str!("words/affect.txt"));

/// Whether `w` is a word of resolve that names nothing (`words/resolve.txt`).
fn resolve(w: &str) -> bool {
    RESOLVE.has(w)
}

/// Whether `w` or its plain form is in a word list: a list names "dream", and "dreams",
/// "dreaming" and "dreamed" are the same word ("pushing" → "push", "hoping" → "hope").
fn listed(list: &[&str], w: &str) -> bool {
    if list.contains(&w) {
        return true;
    }
    ["ing", "ed", "es", "s"].iter().filter_map(|end| w.strip_suffix(end)).filter(|stem| stem.len() > 2).any(|stem| {
        list.contains(&stem)
            || list.iter().any(|l| l.strip_suffix('e') == Some(stem))
            || stem.strip_suffix(|c: char| stem.ends_with(&format!("{c}{c}"))).is_some_and(|s| list.contains(&s))
    })
}

/// An offer to the listener, in the third person: "User is always here for …", "Count on
/// User …", "User is happy to help …", "User will ask around …".
/// A sentence's opening that reopens the chat since the speakers last talked, with what
/// follows it (punctuation, a dash) up to the news. Said on its own before a comma or a dash
/// ("It's been a while,", "Haven't talked in a few days,", "Long time no see -") the time apart
/// is the two speakers', and the news after it is the user's.
fn catching_up() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^(?:(?:(?:(?:a lot|lots|much|so much|loads|tons|quite a bit|a few things|(?:\w+ )?things|something(?: \w+)?)(?:'s| has| have)? (?:been )?(?:happened|happening|going on|changed)(?: (?:to|with|for) me| in my life)?|(?:quite a|what a|such a|a crazy|a busy|a long|a big) (?:week|month|day|few weeks|few days|few months|time)(?: it's been)?) )?since (?:(?:the )?last time )?(?:we (?:last )?(?:spoke|talked|chatted|caught up|met|hung out)(?: last)?|(?:our|the) last (?:chat|talk|conversation|catch-up)|(?:i )?last (?:spoke|talked|chatted) (?:to|with) you|last we (?:spoke|talked|chatted))\b[\s,.!:;\u{2013}\u{2014}-]*|(?:(?:it's|its|it has|it's been|its been|it has been|been) (?:a while|ages|forever|so long|too long|a minute|a bit|a hot minute)|(?:we )?(?:haven't|havent|have not) (?:talked|spoken|chatted|caught up|seen each other)(?: (?:in|for) (?:a while|ages|forever|so long|too long|a bit|a (?:few|couple of|couple) (?:days|weeks|months)|days|weeks|months))?|long time no (?:see|talk|chat|speak))(?:\s*[,.!:;\u{2013}\u{2014}-]+|\s+[\u{2013}\u{2014}-])\s*)",
        )
        .expect("catching-up regex")
    })
}

/// "I took your advice and …": what the user did on the other speaker's word, told from the
/// clause after it. The advice is theirs; what the user then did is the news.
fn on_advice() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^(?:i|we) (?:took|followed|tried|listened to) (?:your|ur) (?:advice|recommendations?|reccomendations?|recs?|suggestions?|tips?|idea)(?:,? and|,| [\u{2013}\u{2014}-]) (?:(?:i|we) )?",
        )
        .expect("advice regex")
    })
}

/// A topic named before the clause that speaks of it, up to its comma.
fn topic_lead() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^(?:speaking of|talking of|talking about|as for|as to|regarding|re:)\s+[^,.!?;]{1,60}(?:,\s*|$)")
            .expect("topic lead regex")
    })
}

/// A reply that keeps the conversation going, in the third person: "User just wanted to say
/// hi", "User will keep that in mind next time", "User will make sure to remember this", "User
/// gets how life can be busy", "Can't wait to see it for User's self".
fn reply() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)^(?:User (?:just |only )?wanted to (?:say (?:hi|hello|hey)|check in|catch up|touch base)\b|User (?:gets|understands|knows) (?:how|why|what) (?:life|things|it|that)\b|User will (?:make sure to |definitely |totally |always )?remember (?:this|that|it)\b|User has heard (?:so many |lots of |a lot of )?(?:great|good|amazing) things\b|(?:User )?can't wait to (?:see|experience|try|hear|read|watch|check out) (?:it|that|this|them)\b)|\bkeep (?:that|this|it|those|these) in mind\b",
        )
        .expect("reply regex")
    })
}

/// What the user says to keep the chat going, in the third person: "before User forgets",
/// "lemme say this", "let me just ask something".
fn meta_talk() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)^(?:(?:hold on|hang on|wait|oh|ok|okay|also|and|btw|before|b4)[,!]?\s+)*(?:(?:let me|lemme) (?:just )?(?:say|tell|mention|add|ask|put) (?:this|that|something|one thing)\b[^,;]*|(?:before|b4|bfore) User forgets)\s*[.!]?$",
        )
        .expect("meta talk regex")
    })
}

/// A question for the listener, in the third person: "User has a question about their visa",
/// "User wants to make a question", "User would like to ask a few questions", "User wants to
/// know about selling the boat".
fn asks() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"(?i)^User (?:just |also |only )?(?:has|had|has got|got|wants to (?:make|ask|have)|wanted to (?:make|ask)|would like to (?:make|ask)|needs to ask|will ask|is asking|is making)\s+(?:you\s+)?(?:(?:a|one|another|some|few|quick|small|little|couple|of)\s+)*(?:question|questions|query|queries|doubt|doubts)\b|^User (?:just |also |only |really )?(?:wants|wanted|would like|needs) to know (?:about|how|what|if|whether|where|when|why|which)\b|^User (?:just |also |only )?(?:wants|wanted|would like|needs) to ask(?:\s+(?:also|too|something|you|one\s+more\s+thing))?\s*[.!]?$",
        )
        .expect("asks regex")
    })
}

fn offer() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^(?:(?i:not a problem|no problem|no worries|of course|sure|anytime|any time)[,!.]?\s+)?(?:Count on User\b|User is (?:always |just |still |totally |really )?here (?:to (?:help|support|listen|lend|chat|talk)|for (?:them|a chat|a talk|anything|whatever|support))\b|User is (?:always |more than |so |really )?(?:happy|glad|ready|willing) to help\b|User will (?:definitely |totally )?ask around\b)",
        )
        .expect("offer regex")
    })
}

/// What the user showed, told as what they shared: "Here's a pic of User's fam at the beach" is
/// "User shared a photo of their fam at the beach", "Check out User's painting for the art show"
/// is "User shared their painting for the art show". Addressed to the other speaker, the
/// sentence would read as a command in a memory.
fn shared(content: &str) -> Option<String> {
    let lower = content.to_lowercase();
    let leads = [
        "here's a ",
        "here is a ",
        "this is a ",
        "check out this ",
        "check out a ",
        "here's another ",
        "here is another ",
    ];
    let photo = leads.iter().find_map(|lead| {
        let rest = lower.strip_prefix(lead)?;
        let noun = ["pic", "photo", "picture", "snapshot", "snap", "shot", "selfie"]
            .iter()
            .find(|n| rest.starts_with(&format!("{n} of ")) || rest.starts_with(&format!("{n} from ")))?;
        Some((lead.len() + noun.len(), lead.ends_with("another ")))
    });
    let (lead, object) = match photo {
        Some((end, false)) => ("User shared a photo", &content[end..]),
        Some((end, true)) => ("User shared another photo", &content[end..]),
        None => ("User shared", content.strip_prefix("Check out ").or_else(|| content.strip_prefix("check out "))?),
    };
    // "Check out what User made" has the user as a subject inside: no rewrite reads right.
    let object = object.trim().replace("User's", "their");
    (object.split_whitespace().count() >= 2 && !object.contains("User")).then(|| format!("{lead} {object}"))
}

/// Whether a phrase says nothing about a life: no name or number, and every content word one of
/// resolve, feeling or filler ("never give up and keep striving for success"). Encouragement
/// is how people talk, not a way of working nor a memory.
pub(super) fn says_nothing(phrase: &str) -> bool {
    let words: Vec<&str> = phrase.split_whitespace().collect();
    let named =
        words.iter().skip(1).any(|w| w.starts_with(char::is_uppercase) || w.chars().any(|c| c.is_ascii_digit()));
    !named
        && words
            .iter()
            .map(|w| bare(w))
            .filter(|w| w.len() > 2 && !is_stopword(w))
            .all(|w| resolve(&w) || affect(&w) || is_filler(&w))
}

/// Whether `w` is a word of feeling or value that names nothing (`words/affect.txt`).
fn affect(w: &str) -> bool {
    AFFECT.has(w)
}

/// Drops the clauses after the first that only judge what was said ("…, it was so fun", "…,
/// which is pretty exciting", "…, so that was awesome"): the memory keeps what happened, and
/// the verdict, naming nothing, only thins it out. A verdict that names something ("it was so
/// fun to see them playing in the ocean") stays.
fn without_verdicts(content: &str) -> String {
    const OPENS: &[&str] = &["it", "it's", "its", "that", "that's", "which", "this", "so", "such"];
    let words: Vec<&str> = content.split_whitespace().collect();
    // Where each clause after the first begins: after a comma, dash or full stop.
    let mut breaks: Vec<usize> = (1..words.len())
        .filter(|&i| {
            words[i - 1].ends_with([',', ';', '.', '!']) || matches!(words[i - 1], "-" | "\u{2013}" | "\u{2014}")
        })
        .collect();
    breaks.push(words.len());
    let mut kept: Vec<String> = words[..breaks[0]].iter().map(|w| w.to_string()).collect();
    for pair in breaks.windows(2) {
        let clause = &words[pair[0]..pair[1]];
        // "and it was great" judges; "and stayed motivated", "but they made it" tell.
        let first = clause.iter().position(|w| !matches!(bare(w).as_str(), "and" | "but")).unwrap_or(0);
        let opens = first < 2 && clause.get(first).is_some_and(|w| OPENS.contains(&bare(w).as_str()));
        // Degree words ("such a relief", "both stressful and great") name nothing either.
        let phrase = clause
            .iter()
            .filter(|w| !matches!(bare(w).as_str(), "such" | "both" | "quite" | "absolutely" | "truly" | "bit"))
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        if opens && clause.len() <= 8 && !phrase.contains("User") && says_nothing(&phrase) {
            // The clause before ends as the dropped one did ("…studio, it was great. User got …").
            let end = clause.last().map_or("", |w| &w[w.trim_end_matches(['.', '!', ',', ';']).len()..]);
            if let Some(last) = kept.last_mut() {
                let bare_end = last.trim_end_matches([',', ';']).len();
                if matches!(last.as_str(), "-" | "\u{2013}" | "\u{2014}") {
                    kept.pop();
                } else {
                    last.truncate(bare_end);
                    last.push_str(end);
                }
            }
            continue;
        }
        kept.extend(clause.iter().map(|w| w.to_string()));
    }
    if kept.len() == words.len() {
        return content.to_string();
    }
    without_stray_end(&kept.join(" "))
}

/// Cuts a long statement at a clause break before [`MAX_WORDS`] words, dropping a trailing
/// emoji or exclamation.
fn cut(content: &str) -> String {
    let words: Vec<&str> = content.split_whitespace().collect();
    let mut end = words.len().min(MAX_WORDS);
    if words.len() > MAX_WORDS {
        if let Some(i) =
            (8..end).rev().find(|&i| words[i - 1].ends_with([',', ';', ':']) || words[i] == "and" || words[i] == "but")
        {
            end = i;
        }
    }
    without_stray_end(&words[..end].join(" "))
}

/// `s` without the punctuation left dangling at its end; a bracket or quote closes something
/// and stays, and so does the "+" of a number ("passed his 11+", "over 50+").
fn without_stray_end(s: &str) -> String {
    let kept = s.trim_end_matches(|c: char| !c.is_alphanumeric() && c != ')' && c != '"' && c != '\'');
    let plus = s[kept.len()..].starts_with('+') && kept.ends_with(|c: char| c.is_ascii_digit());
    if plus { format!("{kept}+") } else { kept.to_string() }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_number_keeps_its_plus_at_the_end() {
        assert_eq!(super::without_stray_end("Tobi passed his 11+"), "Tobi passed his 11+");
        assert_eq!(super::without_stray_end("Tobi passed his exam +"), "Tobi passed his exam");
        assert_eq!(super::without_stray_end("the party (in May),"), "the party (in May)");
    }
    use crate::extract::heuristic::tests::run;
    use crate::kind::Kind;

    fn episode(text: &str) -> Option<(Kind, String, Option<String>)> {
        run(text)
            .into_iter()
            // A take-back's amendment is the correction family's, not an episode.
            .find(|o| {
                matches!(o.draft.kind, Kind::Event | Kind::Fact) && !matches!(o.action, crate::op::Action::Amend(_))
            })
            .map(|o| (o.draft.kind, o.draft.content, o.draft.valid_from.map(|d| d.date_naive().to_string())))
    }

    #[test]
    fn a_verb_as_learners_and_texters_say_it_agrees_once() {
        let said = |text: &str| episode(text).map(|(_, c, _)| c).unwrap_or_default();
        assert_eq!(said("I no eat donut, only smell all day"), "User does not eat donut, only smell all day");
        assert_eq!(said("I no longer smoke"), "User no longer smokes");
        assert_eq!(
            said("I ride and keep jelly babies in my jacket"),
            "User rides and keeps jelly babies in their jacket"
        );
        assert_eq!(said("I cook and she cleans most nights"), "User cooks and she cleans most nights");
        assert!(said("I went home and watch telly").starts_with("User went home and watch"));
        assert!(said("i rides to work on a honda").starts_with("User rides to work"), "{}", said("i rides to work"));
        // "quit" is news, and so is a verb beside a past one
        assert!(said("i quit the bar, got on at harrahs downtown").starts_with("User quit the bar"));
        assert!(said("I quit my job").starts_with("User quit their job"));
        // texting's "n" for "and" leads nothing
        assert!(said("n i need a suit for the wedding").starts_with("User needs a suit"));
    }

    #[test]
    fn what_happened_is_kept_and_dated() {
        // The test clock is Monday 2 March 2026.
        let (kind, content, when) =
            episode("I went to a jazz concert in Lisbon last night and it was amazing!").unwrap();
        assert_eq!(kind, Kind::Event);
        assert!(content.starts_with("User went to a jazz concert in Lisbon"), "{content}");
        assert_eq!(when.as_deref(), Some("2026-03-01"));
        let (_, content, when) = episode("Last Saturday I ran my first half marathon in Porto.").unwrap();
        assert_eq!(content, "User ran their first half marathon in Porto");
        assert_eq!(when.as_deref(), Some("2026-02-28"));
        let (_, content, when) = episode("Lost my job as a banker yesterday, so it's been rough.").unwrap();
        assert!(content.starts_with("User lost their job as a banker yesterday"), "{content}");
        assert_eq!(when.as_deref(), Some("2026-03-01"));
        let (_, content, _) = episode("My kids loved the dinosaur museum we visited.").unwrap();
        assert_eq!(content, "User's kids loved the dinosaur museum they visited");
    }

    #[test]
    fn a_thing_of_the_users_with_nothing_said_of_it_is_no_memory() {
        for said in
            ["ok my nans old ford ka", "My favourite mug.", "my sisters new flat in leeds", "Just my fur babies"]
        {
            assert_eq!(episode(said), None, "{said}");
        }
        assert!(episode("My journal's pretty much my rock.").is_some());
        for said in [
            "my kids loved the dinosaur museum",
            "my brother crashed his bike on the way home",
            "me mas gettin her knee done on the 3rd",
            "my driving test sat 9am",
            "my car's in the garage again",
        ] {
            assert!(episode(said).is_some(), "{said}");
        }
    }

    #[test]
    fn a_later_clause_turned_to_you_goes_and_the_news_stays() {
        let got = episode("I started with dpd on monday, employed this time so they give you the van").map(|e| e.1);
        assert_eq!(got.as_deref(), Some("User started with dpd on monday"));
        assert_eq!(episode("I told you about my sister"), None);
        let got = episode(
            "packed in evri, startin with dpd on monday, employed this time so they give you the van n no more mither",
        );
        assert_eq!(got.map(|e| e.1).as_deref(), Some("User packed in evri, starting with dpd on monday"));
        assert_eq!(episode("I have to say, you really nailed that speech"), None);
        assert_eq!(
            episode("pasting our group chat from last night, can you turn it into a to-do list with who's doing what?"),
            None
        );
        assert_eq!(episode("I got it, Nate, you were right about the oven"), None);
    }

    #[test]
    fn an_object_me_means_the_left_out_subject_was_not_the_user() {
        for said in ["Made me laugh so hard at the party.", "Took me ages to find the right flat."] {
            let got = episode(said).map(|e| e.1).unwrap_or_default();
            assert!(!got.starts_with("User made") && !got.starts_with("User took"), "{said}: {got}");
        }
    }

    #[test]
    fn a_gerund_the_reply_left_bare_takes_its_object_from_the_question() {
        let fill = super::with_object_from;
        assert_eq!(
            fill("User has been playing for about four months now", "Cool! How long have you been playing the violin?")
                .as_deref(),
            Some("User has been playing the violin for about four months now")
        );
        assert_eq!(
            fill("User has been playing for about four months now", "How long have you been playing the piano again?")
                .as_deref(),
            Some("User has been playing the piano for about four months now")
        );
        assert_eq!(
            fill("User loves running it", "How's running your own studio going?"),
            None,
            "the reply names its object"
        );
        assert_eq!(fill("User has been painting for years", "What have you been painting lately?"), None);
    }

    #[test]
    fn what_a_reply_wraps_around_the_news_is_left_and_the_news_kept() {
        // "Can't stop" keeps at it; the clause after ", so I" is the news.
        let (_, content, _) = episode(
            "I can't stop thinking about the screenplay, so I just started writing another one while I wait to hear back.",
        )
        .unwrap();
        assert!(content.starts_with("User can't stop thinking about the screenplay"), "{content}");
        // After "but" the second half often leans on the first ("I haven't worked with other
        // languages, but I hope to work in the future"): nothing is kept of a negated statement.
        assert!(episode("I haven't worked with any other languages, but I hope to work in the future.").is_none());
        // The other speaker only in a closing clause of time: the clause goes, the news stays.
        let (_, content, _) =
            episode("BTW, I took a road trip to Galway for my next book while you were away.").unwrap();
        assert_eq!(content, "User took a road trip to Galway for their next book");
        // "I see," replies; what follows says nothing of the user.
        assert!(episode("I see, so that's the key to making a difference.").is_none());
        assert_eq!(
            episode("I see the physio on Monday about my knee.").map(|e| e.1).as_deref(),
            Some("User sees the physio on Monday about their knee")
        );
        // A relative between commas is no name of endearment.
        assert!(episode("My brother, Tom, is visiting from Leeds next week.").is_some_and(|e| e.1.contains("Tom")));
        // A greeting with a name of endearment says nothing of the user.
        assert!(episode("alright my lover.").is_none());
        assert!(
            episode("morning my dear, I finally booked the dentist for Friday.")
                .is_some_and(|e| e.1.starts_with("User finally booked the dentist"))
        );
        // A sentence whose "it" was left out leans on a turn the memory does not hold.
        assert!(episode("Gives me a visual of my progress.").is_none());
    }

    #[test]
    fn a_verdict_that_names_nothing_is_left_off_what_happened() {
        let (_, content, _) = episode("We drove up to the Lake District on Sunday, it was so good!").unwrap();
        assert_eq!(content, "User and others drove up to the Lake District on Sunday");
        let (_, content, _) =
            episode("I finally repainted the spare room last week, which was such a relief. Now I'm doing the hall.")
                .unwrap();
        assert!(!content.contains("relief"), "{content}");
        assert!(content.starts_with("User finally repainted the spare room last week."), "{content}");
        // A verdict that names something is what happened too.
        let (_, content, _) =
            episode("I took my nephews to the aquarium, it was fun watching them chase the sharks.").unwrap();
        assert!(content.contains("chase the sharks"), "{content}");
        assert_eq!(super::without_verdicts("User sold the old van - so that was great"), "User sold the old van");
        assert_eq!(super::without_verdicts("User sold the old van"), "User sold the old van");
        assert_eq!(super::without_verdicts("User fixed the boiler, and it was great"), "User fixed the boiler");
        let told = "User fixed the boiler, but they made it";
        assert_eq!(super::without_verdicts(told), told, "a clause with its own verb tells");
    }

    #[test]
    fn a_capture_is_context_to_use_never_a_fact_not_to_contradict() {
        let ops = run("I volunteer at the animal shelter downtown every Sunday morning.");
        let op = ops.iter().find(|o| o.draft.rule.as_deref() == Some(super::RULE)).expect("captured");
        assert_eq!(op.draft.effective_surface(), crate::kind::Surface::Adapt);
        let ops = run("Last Saturday I ran my first half marathon in Porto.");
        let op = ops.iter().find(|o| o.draft.rule.as_deref() == Some(super::RULE)).expect("captured");
        assert_eq!(op.draft.effective_surface(), crate::kind::Surface::Speak, "an event keeps its own surface");
    }

    #[test]
    fn what_holds_now_is_a_fact_in_the_third_person() {
        let (kind, content, when) =
            episode("I volunteer at the animal shelter downtown every Sunday morning.").unwrap();
        assert_eq!((kind, when.as_deref()), (Kind::Fact, Some("2026-03-02")), "dated as of when it was said");
        assert_eq!(content, "User volunteers at the animal shelter downtown every Sunday morning");
        let (_, content, _) = episode("i coach my daughter's football team on saturdays").unwrap();
        assert_eq!(content, "User coaches their daughter's football team on saturdays");
    }

    #[test]
    fn a_statement_that_mentions_the_user_anywhere_is_told_about_them() {
        let (_, content, _) =
            episode("I've known these friends for 4 years, they've been there through everything.").unwrap();
        assert!(content.contains("User has known these friends for 4 years"), "{content}");
        // Opening on "they've", the clause leans on someone named before: the user's words; the
        // clause after it reads on its own.
        let (_, content, _) =
            episode("They've been there through everything, I've known these friends for 4 years.").unwrap();
        assert_eq!(
            content,
            "On 2026-03-02 User said: \"They've been there through everything.\" User has known these friends for 4 years"
        );
        // "It" stands for something said before: the user's words are kept as a dated quote
        // instead of a rewrite that reads as a riddle, with the sentence before that says what
        // "it" is; alone in its message, "it" was in the other speaker's turn, and the quote
        // would name nothing.
        let (_, content, _) = episode("The school play was last night. It reminded me of my own struggles").unwrap();
        assert_eq!(
            content,
            "On 2026-03-02 User said: \"The school play was last night. It reminded me of my own struggles\""
        );
        // After a sentence told as news, the two are one memory and "it" has its antecedent.
        let (_, content, _) = episode("I joined a choir in May. It reminded me of my own struggles").unwrap();
        assert_eq!(
            content,
            "User joined a choir in May. On 2026-03-02 User said: \"It reminded me of my own struggles\""
        );
        // Two quotes of one message are one quote.
        let (_, content, _) =
            episode("I ran my first 10k wi my brother. My sister Ana got the job wi the council").unwrap();
        assert_eq!(
            content,
            "On 2026-03-02 User said: \"I ran my first 10k wi my brother. My sister Ana got the job wi the council.\""
        );
        // Laughter or "tbh" at the end is no shorthand inside the sentence: both are rewritten.
        let (_, content, _) = episode("I ran my first 10k lol. My sister Ana got the job tbh").unwrap();
        assert_eq!(content, "User ran their first 10k. Ana (User's sister) got the job");
        // One person's plain verb agrees, as learners leave its "-s" out; a group's stays.
        let (_, content, _) = episode("My son Minh start university in Leeds in September").unwrap();
        assert_eq!(content, "Minh (User's son) starts university in Leeds in September");
        let (_, content, _) = episode("My son Minh also start university in Leeds in September").unwrap();
        assert!(content.contains("Minh (User's son) also start"), "{content}");
        assert_eq!(episode("It reminded me of my own struggles in the past"), None);
        // Nor is a sentence said to the other speaker an antecedent.
        assert_eq!(episode("You're super helpful. That gives me some new ideas for the garden!"), None);
        let (_, content, _) = episode("Researching adoption agencies for our future kids this week.").unwrap();
        assert_eq!(content, "User is researching adoption agencies for their future kids this week");
        let (_, content, _) = episode("Drawing flowers is one of my faves, honestly").unwrap();
        assert!(!content.contains("User is drawing") && content.contains("Drawing flowers"), "{content}");
        // What "we" love doing is the household's liking; what "we all" need is everyone's.
        let (_, content, _) = episode("We love climbing, sliding, and playing games.").unwrap();
        assert_eq!(content, "User and others love climbing, sliding, and playing games");
        assert_eq!(episode("We all love a good laugh sometimes."), None);
        let listed = episode("Swimming, yoga, and walking are good options for my knee");
        assert!(listed.as_ref().is_none_or(|(_, c, _)| !c.contains("User is swimming")), "{listed:?}");
        // A verb in "-s" after "always" is the gerund's, listed among those verbs or not.
        let (_, content, _) = episode("Performing live always fuels my soul").unwrap();
        assert_eq!(content, "Performing live always fuels User's soul");
        // A gerund subject before a verb that does something to the user is no elided "I'm";
        // nor is a task said done.
        for said in [
            "Watching the lambs play fills my heart every spring",
            "Hearing that old song takes me right back",
            "Harvesting all done, 30 tonnes of spuds off the top field",
            "Seeing how much it changed sparked ideas for my next script.",
            "Yeah, knowing another language opens up a lot of opportunities for my career",
        ] {
            let got = episode(said).map(|e| e.1);
            assert!(got.as_deref().is_none_or(|c| !c.starts_with("User is")), "{said}: {got:?}");
        }
        let got = episode("housing association offered us a 3 bed in norris green, viewin is tues");
        assert!(got.as_ref().is_none_or(|(_, c, _)| !c.starts_with("User is housing")), "{got:?}");
        let got = episode("Turned out to be an A2 pulley strain, grade 1. Physio says 6 weeks off my finger");
        assert!(got.as_ref().is_none_or(|(_, c, _)| !c.starts_with("User turned out")), "{got:?}");
        // the unsaid subject of "been quite a ride" is the time, not the user
        let got = episode("Been quite a ride - in a good way - had an audition yesterday for a writing gig.");
        assert!(got.as_ref().is_none_or(|(_, c, _)| !c.starts_with("User has been quite")), "{got:?}");
        let (_, content, _) = episode("Hiking really clears my head").unwrap();
        assert_eq!(content, "Hiking really clears User's head");
        let (_, content, _) = episode("Yeah, I felt so alive at the summit of Mont Blanc").unwrap();
        assert!(content.starts_with("User felt so alive"), "{content}");
    }

    #[test]
    fn news_told_as_a_switch_an_intention_or_after_an_aside_is_kept() {
        let (kind, content, _) = episode("now i have a second job at the pharmacy on weekends, its tiring").unwrap();
        assert_eq!(kind, Kind::Fact);
        assert!(content.starts_with("User has a second job at the pharmacy"), "{content}");
        let (kind, content, _) = episode("I just started volunteering at the food bank near my flat").unwrap();
        assert_eq!(
            (kind, content.as_str()),
            (Kind::Event, "User just started volunteering at the food bank near their flat")
        );
        let (_, content, _) = episode("Honestly I'm considering going back to uni to study physiotherapy.").unwrap();
        assert_eq!(content, "User is considering going back to uni to study physiotherapy");
        let (_, content, when) =
            episode("Gina, you won't believe it - I got mentored by a retired shipbuilder yesterday!").unwrap();
        assert_eq!(content, "User got mentored by a retired shipbuilder yesterday");
        assert_eq!(when.as_deref(), Some("2026-03-01"));
        let (_, content, _) = episode("Wanted to let you know that I'm running for the town council again.").unwrap();
        assert_eq!(content, "User is running for the town council again");
        // "You" would be left without a referent in the memory; the turn itself stays in the
        // archive, where the reply around it says who "you" was.
        assert_eq!(episode("I'm reading that novel you mentioned and I can't put it down."), None);
        let (_, content, _) = episode("Me and my brother went fishing on Loch Lomond on Sunday.").unwrap();
        assert!(content.starts_with("User and their brother went fishing"), "{content}");
        let (_, content, _) = episode("This is the shed where I practice and compose.").unwrap();
        assert_eq!(content, "On 2026-03-02 User said: \"This is the shed where I practice and compose.\"");
        let (_, content, _) = episode("I really need my morning run before work, it clears my head").unwrap();
        assert!(content.starts_with("User really needs their morning run"), "{content}");
        let (_, content, _) = episode("I used to have a dog back in Michigan").unwrap();
        assert!(content.starts_with("User used to have a dog"), "{content}");
        let (_, content, _) = episode("I typically hold the plank for sixty seconds.").unwrap();
        assert_eq!(content, "User typically holds the plank for sixty seconds");
        let (_, content, _) =
            episode("I sent my screenplay to a film contest just to see how others might like it!").unwrap();
        assert!(content.starts_with("User sent their screenplay"), "doubt after the verb is about something else");
    }

    #[test]
    fn a_period_keeps_its_words_and_dates_the_event_when_it_was_told() {
        // "Last week" names no day: a guessed one would read as a fact.
        let (kind, content, when) = episode("We went camping with the kids a few weeks ago, had a blast.").unwrap();
        assert_eq!((kind, when.as_deref()), (Kind::Event, Some("2026-03-02")));
        assert!(content.contains("a few weeks ago"), "{content}");
        let (_, content, when) = episode("Last month I ran my first marathon in Rotterdam.").unwrap();
        assert_eq!(content, "User ran their first marathon in Rotterdam last month");
        assert_eq!(when.as_deref(), Some("2026-03-02"));
        // A named day keeps its day.
        let (_, _, when) = episode("Two days ago I repainted the whole kitchen yellow.").unwrap();
        assert_eq!(when.as_deref(), Some("2026-02-28"));
    }

    #[test]
    fn the_longest_lead_sets_how_many_words_are_compared() {
        let longest = super::MULTI_LEADS.iter().map(|l| l.split(' ').count()).max();
        assert_eq!(longest, Some(super::MULTI_LEAD_WORDS));
    }

    #[test]
    fn reactions_opinions_and_chat_are_not_kept() {
        for text in [
            "I'm so happy for you!",
            "I think that's a great idea.",
            "I love your painting, it's beautiful.",
            "I agree, taking risks is key.",
            "Thanks! I appreciate it.",
            "I know right, haha.",
            "Wow, that's awesome!",
            "I'm really proud of what you did there.",
            "What did you do last weekend?",
            "If I won the lottery I'd buy a boat in Greece.",
            "I see.",
            "Sounds great, let me know how it goes!",
            "I love that explanation, it makes sense now",
            "wait, sorry, I meant Cambridge, not Boston",
            "I didn't call my mom yet",
            "I don't live in Paris anymore",
            "call me back later",
            "I'm so proud of you for sticking with it!",
            "Thanks so much for the advice yesterday, it really helped me calm down.",
            "Actually I meant Leeds, not Leicester.",
            "I think I might try the new ramen place.",
            "I probably went too far with the jokes.",
            // Courtesy, proposals and replies that lean on the conversation.
            "Glad I could help!",
            "So happy we got to catch up.",
            "Let's rock our workouts and reach our goals!",
            "I'll definitely keep that in mind.",
            "This is what makes me smile.",
            "I will definitely check it out.",
            // A gerund that is the subject, and advice to the other speaker.
            "Having a pet totally brightens up your life.",
            "Trying new things takes guts and it can be so rewarding.",
            "Having a dedicated space should help you stay focused.",
            // A truism about "us".
            "We all need a timeout from everything sometimes.",
            "Having people who lift us up is essential.",
            // Agreement, an elliptical answer, and an adjective of feeling for what causes it.
            "I 100% agree, Mel.",
            "I totally agree with you on that, Gina!",
            "And yup, I do- Oscar, my guinea pig.",
            "Exciting but kinda nerve-wracking.",
            "Amazing, I can't wait!",
        ] {
            assert_eq!(episode(text), None, "{text}");
        }
    }

    #[test]
    fn a_mine_after_an_article_is_a_pit() {
        let got = episode("fifo sparky out at a mine near karratha, 2 on 1 off, my missus hates it").map(|e| e.1);
        assert!(got.as_deref().is_some_and(|c| c.contains("a mine near karratha")), "{got:?}");
    }

    #[test]
    fn our_before_a_name_is_family_said_by_name() {
        let got = episode("Great news, our Siobhan passed her driving test this morning!").map(|e| e.1);
        assert_eq!(got.as_deref(), Some("Siobhan passed her driving test this morning"));
        let got = episode("Our Kev and his missus got engaged in Cardiff at the weekend.").map(|e| e.1);
        assert!(got.as_deref().is_some_and(|c| c.starts_with("Kev and his missus got engaged in Cardiff")), "{got:?}");
        // A relation is still the user's own.
        let ops = run("Our Nan turned ninety last Sunday.");
        assert!(ops.iter().any(|o| o.draft.content.starts_with("User's nan turned ninety")), "{ops:#?}");
    }

    #[test]
    fn a_clause_after_a_comma_is_read_when_the_whole_says_nothing() {
        let got = episode("I'm not in the choir anymore, I started a book club at the library.");
        assert_eq!(got.map(|e| e.1), Some("User started a book club at the library".to_string()));
        // Nor does a clause before it lend the later one a negation.
        assert_eq!(episode("I don't drink coffee, I never have."), None);
    }

    #[test]
    fn a_name_before_my_is_the_relations_own_or_said_to_the_listener() {
        let got = episode("Pepper, my old dog, stole a whole sandwich today.").map(|e| e.1);
        assert_eq!(got.as_deref(), Some("User's old dog Pepper stole a whole sandwich today"));
        let got = episode("Sam, my brother is visiting from Leeds tomorrow.").map(|e| e.1);
        assert!(got.is_some_and(|c| c.starts_with("User's brother is visiting from Leeds")));
        // A reply word before "my" is no name, with a comma later or none.
        let got = episode("Yeah, my week is packed - work, the gym, and a wedding.").map(|e| e.1);
        assert!(got.is_some_and(|c| c.starts_with("User's week is packed")));
        let got = episode("Yeah, my plan is to finish the thesis in May.").map(|e| e.1);
        assert!(got.is_some_and(|c| c.starts_with("User's plan is to finish the thesis")));
    }

    #[test]
    fn a_number_its_unit_and_an_acronym_say_something() {
        assert!(episode("Sunday I did 12 km.").is_some_and(|e| e.1.contains("12 km")));
        assert!(episode("I switched to PR.").is_some());
        assert_eq!(episode("I'm OK."), None);
    }

    #[test]
    fn a_name_in_ing_is_no_elided_i_am() {
        assert_eq!(episode("Boxing Day works for the whole family"), None);
        let (_, content, _) = episode("Reading Harry Potter again with my son").unwrap();
        assert!(content.starts_with("User is reading Harry Potter"), "{content}");
    }

    #[test]
    fn resolve_and_quotes_leaning_on_what_came_before_say_nothing() {
        for said in [
            "I'm gonna keep going and reach my dreams no matter what!",
            "I will keep pushing forward and doing my best.",
            "Yeah, I'm not gonna quit, I'll make it happen",
            "I'm staying positive and working hard",
            "I'm gonna keep grinding and moving ahead",
            "I put my heart into it and I'm determined to keep going",
            "It's my own story.",
            "Those are my main focuses.",
            "It's been on my list forever.",
        ] {
            assert_eq!(episode(said), None, "{said}");
        }
        // Resolve about something named is news.
        let (_, content, _) = episode("I'll keep working hard on my thesis until March").unwrap();
        assert!(content.contains("thesis"), "{content}");
        let (_, content, _) = episode("I'm determined to finish the Berlin marathon").unwrap();
        assert!(content.contains("Berlin marathon"), "{content}");
    }

    #[test]
    fn a_reply_leaning_on_the_question_before_it_is_kept_with_the_question() {
        use crate::extract::Extractor;
        use crate::extract::heuristic::HeuristicExtractor;
        use crate::extract::heuristic::tests::message;
        use crate::message::Role;
        let replied = |asked: &str, said: &str| {
            let ops = HeuristicExtractor.extract(&[
                crate::message::Message { role: Role::Assistant, ..message("a1", asked) },
                message("m1", said),
            ]);
            ops.into_iter().find(|o| o.draft.kind == Kind::Fact || o.draft.kind == Kind::Event).map(|o| o.draft.content)
        };
        let said = "They are still my favorites - I love how they take me to other places.";
        assert_eq!(
            replied("Nice! Are Harry Potter and GoT still your favorites?", said).as_deref(),
            Some(
                "On 2026-03-02 asked \"Are Harry Potter and GoT still your favorites?\", User said: \"They are still my \
                 favorites - I love how they take me to other places.\""
            )
        );
        // A question that leans back itself ("Where was it taken?"), or none, names nothing.
        assert_eq!(replied("Wow! Where was it taken?", "It's a yoga studio I go to often."), None);
        assert_eq!(replied("What made you decide to get that?", "I got this because it means a lot to me."), None);
        assert_eq!(replied("That looks fun.", said), None);
    }

    #[test]
    fn what_was_shown_is_told_as_shared_and_a_leave_taking_is_not_kept() {
        let (_, content, _) = episode("Here's a pic of my grandpa's boat on the lake").unwrap();
        assert_eq!(content, "User shared a photo of their grandpa's boat on the lake");
        let (_, content, _) = episode("Check out my new woodworking bench!").unwrap();
        assert_eq!(content, "User shared their new woodworking bench");
        assert_eq!(episode("By the way, look who came to see me!"), None);
        // "It" stood in the other speaker's turn; the reaction before it names nothing.
        assert_eq!(episode("Wow, that sounds amazing! I'll have to check it out sometime!"), None);
        assert_eq!(episode("Btw look what i got!"), None);
        let (_, content, _) = episode("Check out what I built in the garage this weekend!").unwrap();
        assert!(!content.starts_with("User shared"), "{content}");
        assert_eq!(episode("Anyway, I'm off to go grab some groceries now."), None);
        let (_, content, _) = episode("I'm off to Lisbon on Friday for the conference").unwrap();
        assert!(content.contains("Lisbon"), "{content}");
    }

    #[test]
    fn an_offer_to_the_listener_is_not_kept() {
        for said in [
            "I'm here to support, whatever you decide.",
            "I'm always here for a chat if things get rough.",
            "Count on me for support.",
            "I'll ask around to see if anyone I know wants to help.",
            "I'm happy to help with the move.",
            "Not a problem, I'm glad to help!",
            // A picture shown and nothing said of it.
            "Here's a pic I took.",
        ] {
            assert_eq!(episode(said), None, "{said}");
        }
        let (_, content, _) = episode("Here's a pic I took at the Grand Canyon last summer").unwrap();
        assert!(content.contains("Grand Canyon"), "{content}");
        // What the user will do with a name or a day is a plan.
        let (_, content, _) = episode("I'll ask around at the Riverside Clinic on Monday").unwrap();
        assert!(content.contains("Riverside Clinic"), "{content}");
        let (_, content, _) = episode("I'm here in Porto for the whole summer").unwrap();
        assert!(content.contains("Porto"), "{content}");
        // Being somewhere for something is no offer.
        let (_, content, _) = episode("I'm here for the conference all week, staying near the venue").unwrap();
        assert!(content.contains("conference"), "{content}");
    }

    #[test]
    fn the_time_apart_said_before_the_news_is_the_chats_and_the_news_is_kept() {
        for (said, news) in [
            ("It's been a while, I started a pottery class at the community centre", "User started a pottery class"),
            (
                "haven't talked in a couple of weeks - we adopted a greyhound called Pip",
                "User and others adopted a greyhound",
            ),
            ("Long time no chat! I ran my first half marathon on Sunday", "User ran their first half marathon"),
            ("We haven't spoken for ages, I passed my driving test", "User passed their driving test"),
        ] {
            let (_, content, _) = episode(said).unwrap_or_else(|| panic!("{said:?}"));
            assert!(content.starts_with(news), "{said:?} -> {content}");
        }
        // A time apart that is the user's own ("been a bit busy") stays their statement, and
        // one that only reopens the chat says nothing.
        let (_, content, _) = episode("Been a bit busy with the allotment").unwrap();
        assert!(content.starts_with("User has been a bit busy"), "{content}");
        assert_eq!(episode("It's been ages, how are things?"), None);
    }

    #[test]
    fn a_clause_that_reads_well_after_one_leaning_on_the_chat_is_rewritten() {
        let (_, content, _) =
            episode("They kept me sane all winter, I've volunteered at the food bank for 3 years now").unwrap();
        assert_eq!(
            content,
            "On 2026-03-02 User said: \"They kept me sane all winter.\" User has volunteered at the food bank for 3 years now"
        );
        // A reaction before it says nothing and goes.
        let (_, content, _) = episode("That's so cool, I just booked my first solo trip to Porto").unwrap();
        assert_eq!(content, "User just booked their first solo trip to Porto");
        // With no clause of its own after it, the sentence stays the user's words.
        let (_, content, _) = episode("It reminded me of the summers at my grandparents' farm in Galway").unwrap();
        assert!(content.starts_with("On 2026-03-02 User said: \"It reminded me"), "{content}");
    }

    #[test]
    fn an_unsaid_it_is_not_read_as_the_user() {
        assert_eq!(episode("Gonna be a great night with all the stalls and the brass band!"), None);
        // After a plural of the user's, the user is named: "them" would be the plural.
        let (_, content, _) = episode("My regulars keep telling me I should open my own place").unwrap();
        assert_eq!(content, "User's regulars keep telling User they should open their own place");
        // A word shouted in capitals after a relative is no name of theirs.
        assert_eq!(super::someone_first("User's nan CRIED at the tickets"), None);
        assert_eq!(
            super::someone_first("User's nan Bridie cried at the tickets").as_deref(),
            Some("Bridie (User's nan) cried at the tickets")
        );
        // A compound adjective opening a fragment is no verb with its "I" left out.
        for said in ["Much-needed break and a chance to explore new places", "Never-ending drizzle here in my town"] {
            assert!(
                episode(said).is_none_or(|e| !e.1.starts_with("User much") && !e.1.starts_with("User is never")),
                "{said}"
            );
        }
        // Two gerunds with their plural verb are the subject: no "I'm" was left out.
        let content = episode("Gardening and cycling keep me sane between shifts").map(|e| e.1);
        assert!(!content.as_deref().is_some_and(|c| c.starts_with("User is gardening")), "{content:?}");
    }

    #[test]
    fn chat_that_leaves_the_user_unsaid_is_read_with_them() {
        for (said, told) in [
            (
                "Can't wait to take the grandkids to Blackpool in August",
                "User can't wait to take the grandkids to Blackpool",
            ),
            ("Was so nervous before my viva on Tuesday", "User was so nervous before their viva"),
            ("can't wait to show my sister the new kitchen", "User can't wait to show their sister"),
            ("Still building the shed at the bottom of the garden", "User is still building the shed"),
            ("Just been repotting my chillies all afternoon", "User has just been repotting their chillies"),
            (
                "Hoping my transfer to the Bristol office goes through",
                "User is hoping their transfer to the Bristol office",
            ),
            ("Hate driving on the motorway, it scares me", "User hates driving on the motorway"),
            ("miss my nan's cooking so much since she passed", "User misses their nan's cooking"),
        ] {
            let (_, content, _) = episode(said).unwrap_or_else(|| panic!("{said:?}"));
            assert!(content.starts_with(told), "{said:?} -> {content}");
        }
        // A liking of what was just said answers the chat.
        for said in ["Love that idea, thanks so much", "Love you lots x", "Hate it when that happens"] {
            assert!(episode(said).is_none_or(|e| !e.1.starts_with("User loves") && !e.1.starts_with("User hates")));
        }
        // A later clause turned to the listener goes; the news before it stays, with the date
        // the clause gave it.
        let (_, content, _) = episode("My sister's wedding is Ginbot 16, I think this is May 24 for you.").unwrap();
        assert_eq!(content, "User's sister's wedding is Ginbot 16 (May 24)");
        let (_, content, _) = episode("My Eid party is the second day, maybe Sunday for you").unwrap();
        assert_eq!(content, "User's Eid party is the second day");
        let (_, content, _) = episode("My sister's wedding is soon, are you coming").unwrap();
        assert_eq!(content, "User's sister's wedding is soon");
        // A "you" in the news itself still makes it the two speakers'.
        assert_eq!(episode("My sister loved the scarf you knitted, she wears it daily"), None);
        // A kinship word said as a name is the user's relative; said to them, it is no news.
        let (_, content, _) = episode("Mum's coming over Sunday for lunch").unwrap();
        assert_eq!(content, "User's mum's coming over Sunday for lunch");
        let (_, content, _) = episode("Nan had her cataract done on Tuesday").unwrap();
        assert_eq!(content, "User's nan had her cataract done on Tuesday");
        assert_eq!(episode("Mum, the kettle is broken again"), None);
        // The user and a named partner are the subject together.
        let (_, content, _) = episode("My partner Sam and I are getting married next June in Cork").unwrap();
        assert_eq!(content, "User and their partner Sam are getting married next June in Cork");
        // An auxiliary after "and" is the same subject's.
        for (said, told) in [
            (
                "I gave up drinking in 2021 and haven't looked back",
                "User gave up drinking in 2021 and hasn't looked back",
            ),
            (
                "I joined a choir in May and have been singing every week",
                "User joined a choir in May and has been singing every week",
            ),
        ] {
            assert_eq!(episode(said).map(|e| e.1).as_deref(), Some(told), "{said}");
        }
        // The object ending its clause keeps its comma.
        let (_, content, _) = episode("honestly the commute is killing me, 2 hours each way").unwrap();
        assert_eq!(content, "The commute is killing User, 2 hours each way");
        // A texting particle at the end goes; the sentence is rewritten, not quoted.
        for (said, told) in [
            ("I've been vegan since 2019 btw", "User has been vegan since 2019"),
            ("my flat in Govan floods every winter lol", "User's flat in Govan floods every winter"),
            ("I passed my theory test today :) xx", "User passed their theory test today"),
        ] {
            assert_eq!(episode(said).map(|e| e.1).as_deref(), Some(told), "{said}");
        }
        // Looking forward to nothing of the user's is the chat's.
        assert_eq!(episode("Can't wait to hear how it goes!"), None);
        assert_eq!(episode("cant wait to catch up properly"), None);
        let (_, content, _) = episode("i been meaning to fix the fence before winter").unwrap();
        assert!(content.starts_with("User has been meaning to fix the fence"), "{content}");
        // A modal with its "have" run on reads the same after any subject.
        let (_, content, _) = episode("I would've loved to hear that band live in Dublin").unwrap();
        assert!(content.starts_with("User would've loved to hear"), "{content}");
        assert!(episode("Still raining here in Keswick").is_none_or(|e| !e.1.starts_with("User is still raining")));
        // "Was" before no feeling is the day's or the thing's.
        assert!(episode("Was a brilliant day out at the coast").is_none_or(|e| !e.1.starts_with("User was")));
        // A topic handed back is no part of the news; a chat reopened with news after it is.
        let (_, content, _) = episode("I finally sorted my record collection, speaking of.").unwrap();
        assert_eq!(content, "User finally sorted their record collection");
        let (_, content, _) = episode("Quite a month since we last talked - I got engaged to Priya in Goa!").unwrap();
        assert!(content.starts_with("User got engaged to Priya"), "{content}");
        let (_, content, _) =
            episode("Wild things have happened since we last spoke - I joined a rowing club on the Tyne").unwrap();
        assert!(content.starts_with("User joined a rowing club"), "{content}");
    }

    #[test]
    fn what_the_user_did_on_the_listeners_advice_is_their_news() {
        let (_, content, _) = episode("I took your advice and booked a physio appointment for Monday").unwrap();
        assert!(content.starts_with("User booked a physio appointment"), "{content}");
        let (_, content, _) = episode("we followed your tip, and we drove the coast road to Oban").unwrap();
        assert!(content.starts_with("User and others drove the coast road to Oban"), "{content}");
        // What the advice did is not something the user did.
        assert!(episode("I tried your idea and it worked a treat").is_none_or(|e| !e.1.starts_with("User it")));
        // The advice alone is the other speaker's.
        assert_eq!(episode("I love your advice about sleep"), None);
    }

    #[test]
    fn a_chat_reopened_thanks_at_the_end_and_a_turn_to_the_listener_are_not_content() {
        assert_eq!(episode("Been ages since we caught up!"), None);
        assert_eq!(episode("Been a while since we talked properly, hasn't it?"), None);
        assert_eq!(episode("been forever since we hung out lol"), None);
        assert_eq!(episode("Hey Sam, been a few days since we last chatted."), None);
        assert_eq!(episode("been 3 weeks since we talked"), None);
        // A request to the listener, or a picture shown to them, is the chat going on.
        for said in [
            "Keep me updated on their progress!",
            "Let me know how the interview goes",
            "send me the link when you can",
        ] {
            assert_eq!(episode(said), None, "{said:?}");
        }
        let (_, content, _) = episode("Here is another photo from my classes.").unwrap();
        assert_eq!(content, "User shared another photo from their classes");
        let (_, content, _) =
            episode("Been a while since I went climbing, but I finally went back on Saturday").unwrap();
        assert!(content.contains("climbing"), "{content}");
        // The topic the other speaker raised is no statement of the user's, nor is the
        // question after it; a statement after it is.
        assert!(run("And speaking of healthy meals, do you have any favorite recipes you'd like to share?").is_empty());
        let (_, content, _) = episode("Speaking of trips, I booked a week in Crete for June").unwrap();
        assert!(content.starts_with("User booked a week in Crete"), "{content}");
        // The time apart is not what the user was, and what follows it is still news.
        let (_, content, _) =
            episode("Been a while since I went climbing, but I finally went back on Saturday").unwrap();
        assert!(content.contains("climbing") && !content.starts_with("User has been a while"), "{content}");
        let (_, content, _) = episode("Been a bit busy with the new job lately").unwrap();
        assert!(content.starts_with("User has been a bit busy"), "{content}");
        let (_, content, _) = episode("I finished the quarterly report last night, thanks!").unwrap();
        assert_eq!(content, "User finished the quarterly report last night");
        let (_, content, _) = episode("Sorted out my visa paperwork this morning, thank you").unwrap();
        assert!(content.starts_with("User sorted out their visa paperwork") && !content.contains("thank"), "{content}");
        // A turn to the listener keeps the user's own words, not a command in the memory.
        let (_, content, _) = episode("Check out this cool recipe I found for lentil soup").unwrap();
        assert_eq!(content, "On 2026-03-02 User said: \"Check out this cool recipe I found for lentil soup\"");
        let (_, content, _) = episode("Look what my cat did to my new sofa lol").unwrap();
        assert!(content.starts_with("On 2026-03-02 User said: \"Look what my cat did"), "{content}");
        // Been somewhere is news.
        let (_, content, _) = episode("Been to Kyoto twice this year for work").unwrap();
        assert!(content.contains("Kyoto"), "{content}");
        // "Since we last spoke" reopens the chat: its "we" is the two speakers, and the news
        // after it is the user's alone.
        let (_, content, _) = episode("Since we last spoke I went to my first community meeting").unwrap();
        assert_eq!(content, "User went to their first community meeting");
        let (_, content, _) =
            episode("A lot's happened since we last chatted - I just joined a new activist group").unwrap();
        assert!(content.starts_with("User just joined a new activist group"), "{content}");
        let (_, content, _) = episode("Since our last chat, I've started volunteering at the food bank").unwrap();
        assert!(content.starts_with("User has started volunteering at the food bank"), "{content}");
        assert_eq!(episode("So much has happened since we talked!"), None);
        let (_, content, _) =
            episode("Much has changed since last time we talked - I adopted a puppy named Toby").unwrap();
        assert!(content.starts_with("User adopted a puppy named Toby"), "{content}");
        let (_, content, _) = episode("Speaking of which, I signed up for a pottery class").unwrap();
        assert!(content.starts_with("User signed up for a pottery class"), "{content}");
    }

    #[test]
    fn a_name_said_at_the_end_is_no_content() {
        assert_eq!(episode("Count me in, John!"), None);
        let (_, content, _) = episode("I repainted the whole kitchen last weekend, Maria!").unwrap();
        assert_eq!(content, "User repainted the whole kitchen last weekend");
        // After a place or a person, the name says which.
        let (_, content, _) = episode("I spent the summer in my grandad's village, Castlemaine.").unwrap();
        assert_eq!(content, "User spent the summer in their grandad's village, Castlemaine");
        let (_, content, _) = episode("I went bouldering with my cousin, Aoife.").unwrap();
        assert!(content.ends_with("cousin, Aoife"), "{content}");
    }

    #[test]
    fn a_listed_word_is_found_in_any_of_its_forms() {
        let list = ["dream", "hope", "stop", "feel"];
        for w in ["dream", "dreams", "dreaming", "dreamed", "hoping", "hoped", "stopping", "stopped", "feels"] {
            assert!(super::listed(&list, w), "{w}");
        }
        for w in ["dreamy", "hop", "sing", "fee", "feet"] {
            assert!(!super::listed(&list, w), "{w}");
        }
    }

    #[test]
    fn an_i_left_out_before_a_verb_whose_past_is_its_present_is_put_back_with_a_past_time() {
        let (_, content, _) =
            episode("Split up with my wife last year and realised I can cook about four things.").unwrap();
        assert!(content.starts_with("User split up with their wife last year"), "{content}");
        // The verb keeps its comma.
        let (_, content, _) = episode("And I moved, I could not live with the cat anymore.").unwrap();
        assert!(content.starts_with("User moved, they could not"), "{content}");
        // Nor is saying a question is coming.
        assert_eq!(episode("I want to ask also."), None);
        // The chat's bookkeeping is no memory, a "b4" or not.
        assert_eq!(episode("hold on lemme say this b4 i forget"), None);
        // The "am" left out before a gerund: "is going", never "goings".
        let (_, content, _) = episode("i going call da doctor bumbye bout da asthma").unwrap();
        assert!(content.starts_with("User is going call"), "{content}");
    }

    #[test]
    fn a_feeling_about_what_the_memory_cannot_name_says_nothing() {
        for said in [
            "Honestly I find it so rewarding and meaningful.",
            "It makes me feel calm and connected.",
            "It's made a huge difference for me.",
            "That means so much to me, truly.",
        ] {
            assert_eq!(episode(said), None, "{said}");
        }
        // A feeling about something named is news.
        let (_, content, _) = episode("I find volunteering at the food bank so rewarding").unwrap();
        assert!(content.contains("food bank"), "{content}");
        let (_, content, _) = episode("Pottery makes me feel calm").unwrap();
        assert!(content.contains("Pottery"), "{content}");
    }

    #[test]
    fn a_short_statement_with_a_name_or_a_number_is_still_news() {
        let (_, content, _) = episode("I finally adopted Luna!").unwrap();
        assert!(content.contains("adopted Luna"), "{content}");
        let (_, content, _) = episode("Working on my car this weekend, the clutch is shot.").unwrap();
        assert!(content.starts_with("User is working on their car"), "{content}");
        // An adverb before the user is no reaction.
        let (_, content, _) = episode("Already I have cleared OET exam last month itself").unwrap();
        assert!(content.contains("cleared OET exam"), "{content}");
        let (_, content, _) = episode("We went camping in the mountains and it was stunning.").unwrap();
        assert!(content.starts_with("User and others went camping"), "{content}");
        // "my" beside a "we" stays the user's: "their" would be everyone's.
        // A thing something was done to is no "I'm …ing".
        assert!(
            episode("wedding prob next summer in her hometown in cork")
                .is_none_or(|(_, c, _)| !c.starts_with("User is wedding"))
        );
        let (_, content, _) = episode("driving test booked sat 9am").unwrap();
        assert_eq!(content, "User's driving test booked sat 9am");
        let (_, content, _) = episode("we drove up to see my nan on saturday").unwrap();
        assert_eq!(content, "User and others drove up to see User's nan on saturday");
        // Texting in lower case keeps a place all the same.
        let kept: Vec<String> = run("i live in leeds").into_iter().map(|o| o.draft.content).collect();
        assert!(kept.iter().any(|c| c.to_lowercase().contains("leeds")), "{kept:?}");
        let (_, content, _) = episode("We ran 10 miles.").unwrap();
        assert!(content.contains("10 miles"), "{content}");
        // A comma after an auxiliary is an aside, not the end of its clause.
        let (_, content, _) = episode("I was, like, so exhausted after the 10k yesterday.").unwrap();
        assert!(content.contains("exhausted after the 10k"), "{content}");
        // A statement whose lead-in was dropped still starts a sentence.
        let (_, content, _) = episode("Now the hard work starts to turn my dream into a reality.").unwrap();
        assert!(content.starts_with("The hard work starts to turn User's dream"), "{content}");
        // A verb of feeling with what a verb takes is still the user's doing.
        let (_, content, _) = episode("Relaxing at home with my cats after the marathon.").unwrap();
        assert!(content.starts_with("User is relaxing at home"), "{content}");
    }
}
