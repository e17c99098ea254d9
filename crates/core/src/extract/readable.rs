//! Whether a memory written in the third person reads as a sentence that says what the user
//! said, and what to keep when it does not.
//!
//! Episodic capture rewrites any first-person statement ("I ran my first half marathon" → "User
//! ran their first half marathon"). The rewrite is right for the common shapes and wrong for
//! others: "it made me who I am" becomes "it made User who they am", "It inspired me" leaves "it"
//! pointing at a sentence the memory does not carry. A wrong sentence asserted as a fact is worse
//! than the user's own words, so a rewrite that shows one of these marks is replaced by a dated
//! quote of what was said.

use std::sync::OnceLock;

use chrono::{DateTime, Utc};
use regex::Regex;

/// What is wrong with a third-person memory text, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Flaw {
    /// "It inspired User …", "That was …": a pronoun subject whose antecedent is not in the text.
    DanglingPronoun,
    /// "User are", "they am": a verb that does not agree with its subject.
    Agreement,
    /// "I", "my", "me" left in a sentence about the user.
    FirstPerson,
    /// "…, Caroline." or "Hey Tom, …": a name said to the other speaker.
    Vocative,
    /// "Good news, …", "Wow, …": an interjection before the statement.
    Interjection,
    /// "User is feeling proud of": cut before its object, on a word no sentence ends with.
    Unfinished,
    /// "Check out this recipe User found", "Look what User made": a sentence that turns to
    /// the listener, a command in a memory.
    Addressed,
    /// "Can't wait 'til User's studio opens", "Reminds User of …": the speaker's own subject
    /// left out, so the sentence has none, or the thing it names as one is not the user.
    NoSubject,
    /// "User n the boys entered the uni tourney", "… User's just died mid ranked game lmaooo":
    /// chat shorthand kept in a sentence the memory asserts in its own voice. Quoted, the same
    /// words are plainly the user's way of writing.
    Texting,
}

/// The first flaw of `text`, a memory in the third person; `None` when it reads well.
pub(super) fn flaw(text: &str) -> Option<Flaw> {
    let lower = lowered(text);
    let first = lower.split_whitespace().next().unwrap_or("").trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
    if DANGLING.contains(&first)
        || ELIDED_IT.contains(&first)
        || object_left_out(text)
        || DANGLING_OWNER.contains(&first)
        || pointing_object().is_match(text)
        || object_points_back(text)
        || dangling_object(&lower)
    {
        return Some(Flaw::DanglingPronoun);
    }
    // "An User and others …": a word before the subject ("an" for "and") that no article is.
    if agreement().is_match(text) || lower.starts_with("an user") || lower.starts_with("a user ") {
        return Some(Flaw::Agreement);
    }
    if first_person().is_match(text) {
        return Some(Flaw::FirstPerson);
    }
    if vocative().is_match(text) && !appositive_at_end(text) {
        return Some(Flaw::Vocative);
    }
    if interjection().is_match(text) {
        return Some(Flaw::Interjection);
    }
    if shorthand(&lower) {
        return Some(Flaw::Texting);
    }
    if unfinished(text) {
        return Some(Flaw::Unfinished);
    }
    if addressed().is_match(text) {
        return Some(Flaw::Addressed);
    }
    // "Made User laugh so hard", "Dun User back in last week": a verb before the user with its
    // own subject left out ("it", "he", or the user as "I" with "me" for "my").
    let second = lower.split_whitespace().nth(1).unwrap_or("");
    let verb_first = super::lex::is_past(first) || matches!(first, "dun" | "done" | "did");
    if NO_SUBJECT.contains(&first) || (verb_first && matches!(second, "user" | "user's")) {
        return Some(Flaw::NoSubject);
    }
    // "Will ask when User picks up the next lot": "will" opening on a verb has lost its "I"
    // ("Will (User's brother) is …" is a name).
    if first == "will"
        && second.starts_with(|c: char| c.is_ascii_lowercase())
        && !matches!(second, "user's" | "and" | "or" | "is" | "was" | "has" | "said" | "says")
    {
        return Some(Flaw::NoSubject);
    }
    None
}

/// "Later User will send, now …": a verb that takes an object ends its clause without one, so
/// what is sent stood in the turn before.
fn object_left_out(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"\bUser\s+(?:will\s+|plans\s+to\s+|needs\s+to\s+|has\s+to\s+|should\s+|must\s+)([a-z]+)\s*(?:[,.;!]|$)",
        )
        .expect("object left out regex")
    });
    // A topic said first ("Interpreter for pre op, User must book") is the object.
    re.captures_iter(text).any(|c| {
        let before = &text[..c.get(0).map_or(0, |m| m.start())];
        !before.contains(',') && super::plan::TASK_VERBS.contains(&&c[1]) && !super::plan::ALONE.contains(&&c[1])
    })
}

/// Verbs that open a sentence whose "it" was left out ("Gives me a visual of my progress",
/// "Makes me so happy"): what gives or makes is in an earlier turn, as with a dangling "it".
pub(super) const ELIDED_IT: &[&str] =
    &["brings", "feels", "gives", "helps", "keeps", "looks", "makes", "means", "seems", "sounds"];

/// First words of a sentence whose subject was left out, as people do in chat ("Can't wait",
/// "Glad to help", "Reminds me of …"): before "User" was written in, the speaker was the
/// subject, and the rewrite has none to put there.
const NO_SUBJECT: &[&str] = &[
    "can't",
    "cant",
    "haven't",
    "havent",
    "hadn't",
    "cannot",
    "couldn't",
    "wouldn't",
    "won't",
    "wanna",
    "gonna",
    "gotta",
    // A texting clause that drops its "I": "Gone on the 0% lager now", "Shud book the test".
    "gone",
    "still",
    // Or its "it": "Is better, User sleeps more", "Was great".
    "is",
    "was",
    "went",
    "been",
    "got",
    "should",
    "shud",
    "need",
    "reminds",
    "remind",
    "appreciate",
    "appreciated",
    "glad",
    "hope",
    "hoping",
    "wish",
    "thanks",
    "thank",
    "miss",
    "missed",
    "guess",
    "bet",
    "dunno",
    "wonder",
    "wondering",
];

/// Whether `lower` keeps a word of chat shorthand: letters for words ("n", "r", "w", "u"),
/// acronyms of texting ("tbh", "ngl", "idk"), laughter ("lol", "lmaooo", "hahaha").
fn shorthand(lower: &str) -> bool {
    lower
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .any(|w| SHORTHAND.contains(&w) || laughter(w))
}

/// Whether `w` (lower case, bare) is laughter typed out: "lol", "lolol", "haha", "lmaooo".
pub(super) fn laughter(w: &str) -> bool {
    (w.len() >= 4 && w.starts_with("lmao"))
        || (w.len() >= 4 && w.starts_with("haha"))
        || (w.len() >= 3 && w.starts_with("lo") && w.ends_with('l') && w[1..w.len() - 1].bytes().all(|b| b == b'o'))
}

/// Chat shorthand no sentence in a memory's own voice uses.
const SHORTHAND: &[&str] = &[
    "n", "r", "w", "u", "ur", "ye", "yh", "ya", "tbh", "ngl", "idk", "imo", "imho", "omg", "smh", "rn", "bc", "cuz",
    "coz", "pls", "plz", "thx", "mb", "ikr", "bruh", "lmfao", "rofl", "af", "fr", "btw", "omw", "bf", "gf", "jk",
    // Scots as it is typed: "User is trying tae sort ma shifts" keeps "ma" for "my"; quoted, the
    // words are plainly the user's own.
    "tae", "wi", "ma", "roon", "hae", "cannae", "dinnae", "wouldnae", "couldnae", "didnae", "isnae", "wasnae", "masel",
    "gonnae", "aboot", "oot",
];

/// Possessives that open a sentence and stand for someone named before ("Their love has helped
/// User …", "Her name is Luna"): whose, the memory does not say.
const DANGLING_OWNER: &[&str] = &["their", "his", "her"];

/// Whether `text` stops on a word that needs another after it (an article, a possessive, a
/// conjunction, "of", "than"). Words that may end a sentence in speech ("someone to talk to",
/// "a place to live in") are not counted, nor a text that ends inside a quote.
pub(super) fn unfinished(text: &str) -> bool {
    let t = text.trim_end().trim_end_matches(['.', '!', '?', ',', ';', ':', '…']);
    if t.ends_with('"') {
        return false;
    }
    let last = t.rsplit(|c: char| c.is_whitespace()).next().unwrap_or("").to_lowercase();
    NEEDS_MORE.contains(&last.as_str()) || open_quote(t)
}

/// Whether `text` opens a quote it never closes ("… and said 'see"): what was cut off was what
/// was said. An apostrophe inside or after a word ("it's", "the boys'") opens nothing.
fn open_quote(text: &str) -> bool {
    ['\'', '"'].into_iter().any(|q| {
        let (mut opened, mut closed) = (0, 0);
        for (i, c) in text.char_indices() {
            if c != q {
                continue;
            }
            let before = text[..i].chars().next_back();
            let after = text[i + c.len_utf8()..].chars().next();
            // "'til", "'cause", "'em": a word's first letters left out, no quote.
            let clipped = q == '\'' && {
                let word: String = text[i + 1..].chars().take_while(|ch| ch.is_alphabetic()).collect();
                matches!(
                    word.to_lowercase().as_str(),
                    "til" | "till" | "cause" | "cos" | "coz" | "em" | "bout" | "round" | "n" | "s"
                )
            };
            if before.is_some_and(char::is_whitespace) && after.is_some_and(|a| !a.is_whitespace()) && !clipped {
                opened += 1;
            } else if before.is_some_and(|b| !b.is_whitespace()) && !after.is_some_and(char::is_alphanumeric) {
                closed += 1;
            }
        }
        opened > closed
    })
}

/// Words after which a sentence cannot stop.
const NEEDS_MORE: &[&str] =
    &["of", "the", "a", "an", "and", "or", "but", "my", "your", "their", "his", "her", "our", "than", "user's"];

/// The user's own words as a dated quote: what is kept when the rewrite reads wrong. "User" is
/// the speaker, as in every memory, so attribution names another speaker the same way.
pub(super) fn quote(said: &str, at: DateTime<Utc>) -> String {
    let said = past_the_greeting(said.trim().trim_matches('"'));
    format!("On {} User said: \"{said}\"", at.format("%Y-%m-%d"))
}

/// The user's reply as a dated quote after the question it answered ("On 2026-05-01 asked \"What
/// classes does your studio offer?\", User said: \"They offer yoga and kickboxing.\""): the
/// question holds what the reply's "it" or "they" stands for.
pub(super) fn answer(question: &str, said: &str, at: DateTime<Utc>) -> String {
    let said = past_the_greeting(said.trim().trim_matches('"'));
    let question = question.trim().trim_matches('"');
    format!("On {} asked \"{question}\", User said: \"{said}\"", at.format("%Y-%m-%d"))
}

/// The user's correcting words as a dated quote ("On 2026-09-09 User corrected: \"its wed not
/// tues\""): written after the memory they correct, or alone when nothing said before matches.
pub(super) fn corrected(said: &str, at: DateTime<Utc>) -> String {
    format!("On {} User corrected: \"{}\"", at.format("%Y-%m-%d"), said.trim().trim_matches('"'))
}

/// The user's words inside a dated quote as [`quote`] and [`corrected`] write it ("On 2026-05-18
/// User corrected: \"its the 10th\"" → "its the 10th"), or a speaker's under attribution ("On
/// … Mo corrected: …"); `None` for any other text. Read back here, beside the writers, so the
/// engine's amendment can rewrite a memory with what the take-back said.
pub(crate) fn quoted_words(text: &str) -> Option<&str> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| Regex::new(r#"^On \S+ [^"]*?(?:said|corrected): "(.*)"$"#).expect("dated quote regex"));
    re.captures(text.trim()).map(|c| c.get(1).expect("words").as_str())
}

/// `said` without what it opened with for the listener: a short first sentence of thanks or
/// surprise that says nothing of the user ("Thanks, Dave!", "Of course!", "Wow, Sam, that's
/// great to hear!"), then a reply word before a comma ("Yeah, it's …"). What is left is still
/// the user's words, in their order; a text that is nothing but a greeting is kept whole.
fn past_the_greeting(said: &str) -> String {
    let mut rest = said;
    while let Some(m) = greeting_sentence().find(rest) {
        if !only_greets(&rest[..m.end()]) || m.end() >= rest.len() {
            break;
        }
        rest = rest[m.end()..].trim_start();
    }
    if let Some(m) = reply_word().find(rest).filter(|m| m.end() < rest.len()) {
        rest = &rest[m.end()..];
    }
    super::lex::capitalised(rest)
}

/// Whether `sentence` only greets or reacts ("Thanks, Dave!", "Wow, that sounds amazing!"):
/// short, opening on thanks, surprise or a reply word, and nothing in it about the speaker.
pub(super) fn only_greets(sentence: &str) -> bool {
    let sentence = sentence.trim();
    let with_end = format!("{sentence} ");
    let own = sentence.split_whitespace().any(|w| super::episodic::first_person(&super::lex::bare(w)));
    greeting_sentence().find(&with_end).is_some_and(|m| m.end() == with_end.len())
        && sentence.split_whitespace().count() <= 6
        && !own
}

/// A first sentence opening on thanks, surprise or a reply word, up to its end.
fn greeting_sentence() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^(?i:thanks|thank you|thx|wow|woah|whoa|oh|ooh|yeah|yes|yep|yup|haha+|lol|of course|sure|hey|hi|hello|aw+|omg|ugh|ok|okay|well|cool|great|awesome|nice|congrats|congratulations|hmm+|yay|no way|totally|absolutely|exactly|true|same|sounds good)\b[^.!?]{0,60}[.!?]+\s+",
        )
        .expect("greeting sentence regex")
    })
}

/// A reply word and its comma at the start of a sentence ("Yeah, it's been great").
fn reply_word() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"^(?i:yeah|yes|yep|yup|oh|well|haha+|lol|wow|ok|okay|sure|hey|hi|aw+|ah|hmm+|so)\s*,\s+")
            .expect("reply word regex")
    })
}

/// Subjects that stand for something said before: the memory cannot carry what.
const DANGLING: &[&str] = &[
    "it", "it's", "it'll", "it'd", "that", "that's", "that'll", "this", "they", "they're", "they've", "they'll",
    "they'd", "these", "those", "he", "he's", "he'll", "she", "she's", "she'll", "its",
];

/// "This necklace is special to User" read later: "this" before a noun points at the thing
/// shown or named in the chat, and "the" names it as well once the chat is gone ("The necklace
/// is special to User"). Before a verb it stands for what was said ("This is my book
/// collection") and no word can replace it; before a time ("This week has been busy") it says
/// when and stays.
pub(super) fn the_for_this(text: &str) -> Option<String> {
    let mut words = text.splitn(3, ' ');
    let (first, second) = (words.next()?, words.next()?);
    let rest = words.next().unwrap_or("");
    let plural = match first {
        "This" | "That" => false,
        "These" | "Those" => true,
        _ => return None,
    };
    let noun = second.trim_end_matches("'s").trim_end_matches(['.', ',', '!', '?', ';', ':']);
    let word_like = !noun.is_empty() && noun == second && noun.chars().all(|c| c.is_ascii_lowercase() || c == '-');
    let next = rest.split_whitespace().next().unwrap_or("").to_lowercase();
    let timed = |w: &str| TIME_NOUNS.contains(&w);
    if !word_like || NOT_NOUNS.contains(&noun) || timed(noun) || timed(next.trim_end_matches(['.', ',', '!'])) {
        return None;
    }
    // "this" before a word in -s is before its verb ("This helps me relax"), save nouns in
    // -ss ("this class"); "these" before a plural noun ("These shoes").
    let verb_like = noun.ends_with("ly") || (noun.ends_with('s') && !noun.ends_with("ss") && !noun.ends_with("us"));
    if plural != verb_like || rest.is_empty() {
        return None;
    }
    Some(format!("The {noun} {rest}"))
}

/// Words after "this"/"that" that are not the noun it determines: verbs, adverbs, pronouns and
/// the words of set phrases ("that way", "that much", "this one").
const NOT_NOUNS: &[&str] = &[
    "about", "actually", "all", "also", "and", "are", "at", "be", "been", "but", "can", "could", "did", "do", "does",
    "felt", "for", "gave", "got", "had", "has", "have", "he", "her", "his", "how", "i", "in", "is", "it", "just",
    "kind", "made", "make", "many", "may", "me", "meant", "might", "much", "must", "my", "of", "on", "one", "or",
    "our", "really", "right", "said", "she", "should", "so", "sort", "their", "they", "to", "too", "took", "very",
    "was", "way", "we", "were", "what", "when", "where", "which", "who", "why", "will", "with", "would", "you", "your",
];

/// Nouns of time: "this week", "that morning" say when, not what was shown.
pub(super) const TIME_NOUNS: &[&str] = &[
    "morning",
    "afternoon",
    "evening",
    "night",
    "week",
    "weekend",
    "month",
    "year",
    "summer",
    "winter",
    "spring",
    "autumn",
    "fall",
    "term",
    "semester",
    "season",
    "time",
    "past",
    "coming",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "days",
    "weeks",
    "months",
    "years",
    "weekends",
    "nights",
];

/// Whether `word` (lower case) stands for something said before.
pub(super) fn leans_back(word: &str) -> bool {
    DANGLING.contains(&word) || word == "them"
}

fn agreement() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"\b(?:User(?:\s+(?:really|still|just|also|always|never|often|usually|actually|definitely))*\s+(?:am|are|were|have|do|don't|need|want|like|love|live|work|think|feel|hope|plan|try|go|get|make|know)\b|they am\b|they is\b|they was\b|they has\b|they does\b)",
        )
            .expect("agreement regex")
    })
}

fn first_person() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    // Outside quotes: a quote keeps the user's own words.
    // "We", "us" and "our" are left when the rewrite did not start the sentence ("… a good
    // workout for us", "We`ve already visited …").
    RE.get_or_init(|| {
        Regex::new(r#"^[^"]*\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself|we|We|us|our|Our|ours|ourselves)\b"#)
            .expect("first person regex")
    })
}

/// "User made it in pottery class", "User got them last week": the first verb's object a
/// pronoun standing for something said before. "User loves it when …" and "User finds it hard
/// to …" name what "it" is after it.
fn pointing_object() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^User(?:\s+(?:really|just|finally|also|actually|definitely|totally|still))*\s+[a-z]+(?:ed|t|de|ot|ve|ew|ught|ok|id|ng)\s+(?:it|them)\b(?:\s+(?:in|at|on|for|from|with|because|yesterday|today|last|recently|a|the|and|but|so|too|myself|themselves|together)\b|\s*[.!]?$)",
        )
        .expect("pointing object regex")
    })
}

/// Whether `text` only says someone called ("User's mother just called User", "The achar call
/// User's husband"): a moment of the chat, nothing to remember once it has passed. What the call
/// said is the sentence after it.
pub(super) fn only_a_call(text: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^[\w'() -]{1,40}?\s(?:just\s+|has\s+|have\s+|had\s+)?(?:called|calls?|rang|rings?|rung|phoned|phones?|texted|texts?|messaged|messages?)\s+(?:User|User's\s+\w+)\s*[.!]?$",
        )
        .expect("only-a-call regex")
    })
    .is_match(text)
}

/// Whether `text`, a rule's capture in the third person, points at what it is about with a
/// word that stood for something said before ("User enjoys the taste of these"): such a
/// capture is not kept, since the rule has no quote to fall back on.
pub(super) fn dangles(text: &str) -> bool {
    pointing_object().is_match(text) || object_points_back(text) || dangling_object(&lowered(text))
}

/// "User got them online", "User first watched it around 3 years ago", "User read it a while
/// back": the verb right after the user takes "it" or "them" for its object, nothing before it
/// in the sentence is what they stand for (it stood in the turn before), and little follows. Not an "it" that
/// looks ahead ("User finds it hard to sleep", "User loves it when …", "User made it to the
/// final") or an idiom ("take it easy", "made it").
fn object_points_back(text: &str) -> bool {
    const BEFORE_VERB: &[&str] = &[
        "really",
        "just",
        "finally",
        "also",
        "actually",
        "definitely",
        "totally",
        "still",
        "first",
        "even",
        "already",
        "recently",
        "always",
        "never",
        "usually",
        "often",
        "once",
        "then",
    ];
    const AUXILIARIES: &[&str] = &[
        "is", "was", "are", "were", "has", "have", "had", "will", "would", "can", "could", "should", "might", "may",
        "must", "does", "did", "do", "am", "be", "been", "being",
    ];
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.first() != Some(&"User") {
        return false;
    }
    let plain = |w: &str| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'').to_lowercase();
    let mut i = 1;
    while words.get(i).is_some_and(|w| BEFORE_VERB.contains(&w.to_lowercase().as_str())) {
        i += 1;
    }
    let (Some(verb), Some(object)) = (words.get(i), words.get(i + 1)) else { return false };
    if !verb.chars().all(|c| c.is_ascii_lowercase()) || AUXILIARIES.contains(verb) {
        return false;
    }
    if !matches!(plain(object).as_str(), "it" | "them") || object.ends_with(['\'', '\u{2019}']) {
        return false;
    }
    // With more to tell after it ("User painted it after they visited the beach"), the memory
    // says what happened though it leaves the thing unnamed: only a bare pointer dangles.
    const TIME: &[&str] = &[
        "ago",
        "year",
        "years",
        "month",
        "months",
        "week",
        "weeks",
        "day",
        "days",
        "while",
        "back",
        "yesterday",
        "today",
        "last",
        "recently",
        "around",
        "online",
        "again",
        "already",
        "together",
        "myself",
        "themselves",
    ];
    let tells = words[i + 2..]
        .iter()
        .map(|w| plain(w))
        .filter(|w| w.len() > 2 && !crate::text::is_stopword(w) && !TIME.contains(&w.as_str()))
        .count();
    if tells >= 2 {
        return false;
    }
    let rest: Vec<String> = words[i + 2..].iter().take(3).map(|w| plain(w)).collect();
    let ahead = rest.iter().any(|w| {
        matches!(
            w.as_str(),
            "to" | "when"
                | "that"
                | "if"
                | "here"
                | "easy"
                | "slow"
                | "up"
                | "through"
                | "happen"
                | "work"
                | "clear"
                | "off"
                | "hard"
                | "difficult"
                | "tough"
        )
    });
    let idiom = matches!(*verb, "make" | "made" | "makes" | "making") && rest.is_empty();
    !ahead && !idiom
}

/// `text` in lower case with curly and back-tick apostrophes made straight, as the word lists
/// are written.
fn lowered(text: &str) -> String {
    text.to_lowercase().replace(['\u{2019}', '`'], "'")
}

/// "User enjoys the taste of these", "User often goes there to relax", "User is excited to
/// give it a try", "User will always cherish those moments": what the sentence is about stood
/// in the turn before, and the memory does not carry it. A demonstrative with no noun after it
/// (or a vague one: "those moments"), "there" after a verb of being or going ("been there for
/// User" is support, not a place), and "it" or "them" ending a clause or after a preposition
/// when nothing before it in the sentence could be what they stand for ("User sent their
/// screenplay to a contest to see how others like it" names it).
fn dangling_object(lower: &str) -> bool {
    let text = lower.split('"').next().unwrap_or("");
    if demonstrative().is_match(text) {
        return true;
    }
    if there().find_iter(text).any(|m| {
        let after = text[m.end()..].trim_start();
        !(after.starts_with("for ") || after.starts_with("through "))
    }) {
        return true;
    }
    it_object().find_iter(text).any(|m| !names_a_thing().is_match(&text[..m.start()]))
}

fn demonstrative() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"\b(?:this|these|those)\s*(?:[.!?,;]|$)|\b(?:this|these|those)\s+(?:a few|for|every|since|again|too|all|so|now|yesterday|today|last)\b|\b(?:this|these)\s+(?:as|at|in|on|with|from|to|when|because|up|back|off)\b|\b(?:those|these)\s+(?:moments?|things?|ones?|books?|places?|pics?|photos?|pictures?|memories|guys|kinds?)\b",
        )
        .expect("demonstrative regex")
    })
}

fn there() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\b(?:go|goes|going|gone|went|been|was|were|'re|are|'m|am|is|'s|live|lives|lived|living|stay|stays|stayed|move|moved|get|got|visit|visited|back|out|over|trip|holiday|vacation|time|week|weekend|flight|drive|stay)\s+there\b")
            .expect("there regex")
    })
}

fn it_object() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"\b(?:it|them)\s*(?:[.!?;]|$)|\b(?:about|with|into|onto|without|of)\s+(?:it|them)\b|\b(?:what|how)\s+it(?:'s|\s+(?:is|was|could|can|will|would|might|feels|looks))\b|\b(?:sure|hopes?|hoping|thinks?|guess(?:es)?|bets?|knows?|feels?|believes?|wish(?:es)?)\s+(?:it|it's|it'll|they|they're|they'll|these|those|that's)\b|\b(?:give|gives|gave|giving)\s+it\s+a\b|\b(?:check|checked|checking|try|tried|trying)\s+(?:it|them)\s+out\b",
        )
        .expect("it object regex")
    })
}

/// A noun phrase opened by an article or a possessive: something "it" may stand for.
fn names_a_thing() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"\b(?:the|a|an|their|his|her|its|user's|some|this|that|these|those|every|each)\s+[a-z]")
            .expect("names a thing regex")
    })
}

/// Whether `word` (lower case, bare), said before a comma, is a place or a person that the
/// name after the comma says: "in my home country, Sweden", "with my cousin, Aoife". Said to
/// the listener, a name follows a whole clause ("I loved it, Maria").
pub(super) fn named_after_comma(word: &str) -> bool {
    const PLACES: &[&str] = &[
        "area",
        "city",
        "country",
        "county",
        "hometown",
        "island",
        "neighborhood",
        "neighbourhood",
        "province",
        "region",
        "state",
        "suburb",
        "town",
        "village",
    ];
    PLACES.contains(&word) || super::lex::is_relation_word(word) || super::lex::is_pet_word(word)
}

/// Whether the name a text ends on, after a comma, is what its place or person is called.
fn appositive_at_end(text: &str) -> bool {
    let Some((before, _)) = text.trim_end().rsplit_once(',') else { return false };
    let last = before.rsplit(char::is_whitespace).next().unwrap_or("");
    named_after_comma(last.to_lowercase().trim_matches(|c: char| !c.is_alphanumeric()))
}

fn vocative() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(r"(?:,\s*[A-Z][a-z]+[.!?]*$|^(?i:hey|hi|hello|dear|thanks|thank you)\s+[A-Z][a-z]+,)")
            .expect("vocative regex")
    })
}

fn interjection() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^(?i:good news|great news|bad news|big news|big change|some news|exciting news|sad news|guess what|another question|one more question|also question|right so|right then|abeg|excuse me|excuse User|pardon me|real talk|quick one|quick question|wow|haha+|lol|omg|yeah|yes|oh|well|so|ok|okay|hey|hi|hiya|hello|yo|aw+|ugh|phew|btw|tbh|not a problem|no problem|no worries|sorry|alright|anyway|anyways|by the way|hmm+|yay|of course)\b[,!.]?\s",
        )
        .expect("interjection regex")
    })
}

/// A sentence opening on a command or a presentation to the listener.
fn addressed() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(
            r"^(?i:(?:kindly|please) (?:assist|help|advise|guide|suggest|tell)|check (?:out|this)|look (?:at|what|how|who|where)|take a look|have a look|see (?:what|how|this|these)|here'?s (?:what|how|where|why|who)|guess (?:what|who|where)|(?:here'?s|here is) (?:a|the|this|my|User's) (?:pic|photo|picture|snap|snapshot|shot|selfie)s?)\b",
        )
        .expect("addressed regex")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_alone_says_nothing_to_keep() {
        for said in ["User's mother just called User", "The achar call User's husband", "Mum rang User."] {
            assert!(only_a_call(said), "{said}");
        }
        for said in ["User called the surgery about the scan", "Mum rang User to say she's moving to Leeds"] {
            assert!(!only_a_call(said), "{said}");
        }
    }

    #[test]
    fn a_dated_quote_gives_back_the_words_it_was_written_from() {
        let at: DateTime<Utc> = "2026-05-18T10:00:00Z".parse().unwrap();
        for said in ["its the 10th , I was looking at the wrong page", "Sorry, 9th of June."] {
            assert_eq!(quoted_words(&corrected(said, at)), Some(said), "{said}");
        }
        // A quote drops a greeting it opened with; the words after it come back.
        let said = "They move the test to March 27 because of the snow storm.";
        assert_eq!(quoted_words(&quote(said, at)), Some(said));
        assert_eq!(quoted_words("On 2026-04-09 Mo corrected: \"it's Sunday 24 May\""), Some("it's Sunday 24 May"));
        assert_eq!(quoted_words("Keith is having his knee replaced on the 2nd of June"), None);
    }

    #[test]
    fn this_before_a_noun_becomes_the_and_before_a_verb_or_a_time_stays() {
        assert_eq!(
            the_for_this("This quilt was stitched by User's great-aunt in Cork").as_deref(),
            Some("The quilt was stitched by User's great-aunt in Cork")
        );
        assert_eq!(
            the_for_this("These boots have done three Munros with User").as_deref(),
            Some("The boots have done three Munros with User")
        );
        assert_eq!(
            the_for_this("That class changed how User cooks").as_deref(),
            Some("The class changed how User cooks")
        );
        for kept in [
            "This is User's allotment",
            "This helps User unwind after shifts",
            "These are User's running shoes",
            "This week has been hectic for User",
            "That way User can see the kids more",
            "This one is User's favourite",
            "This summer's trip was User's best",
            "Those dogs",
        ] {
            assert_eq!(the_for_this(kept), None, "{kept}");
        }
        assert_eq!(flaw("The quilt was stitched by User's great-aunt in Cork"), None);
    }

    #[test]
    fn a_lead_for_the_listener_is_an_interjection() {
        assert_eq!(flaw("Quick one, User is definitely staying in Cardiff"), Some(Flaw::Interjection));
        assert_eq!(flaw("Good news, User submitted the thesis chapter"), Some(Flaw::Interjection));
        assert_eq!(flaw("Excuse User they want to ask about their bonsai"), Some(Flaw::Interjection));
    }

    #[test]
    fn will_opening_on_a_verb_has_lost_its_subject_and_will_the_name_has_not() {
        assert_eq!(flaw("Will ask when User picks up the next lot"), Some(Flaw::NoSubject));
        assert_eq!(flaw("Made User laugh so hard at the party"), Some(Flaw::NoSubject));
        assert_eq!(flaw("Later User will send, now they are tired"), Some(Flaw::DanglingPronoun));
        assert_eq!(flaw("User will send the forms on Monday"), None);
        assert_eq!(flaw("User will move, the flat is too small"), None);
        assert_eq!(flaw("Interpreter for pre op, User must book"), None);
        assert_eq!(flaw("Priya will drive, they've got the new Corsa"), None);
        assert_eq!(flaw("Dun User back in last week liftin tubes"), Some(Flaw::NoSubject));
        assert_eq!(flaw("Yesterday User went to the coast"), None);
        assert_eq!(flaw("Will (User's brother) is moving to Leeds in June"), None);
        assert_eq!(flaw("Will and User went camping in May"), None);
        assert_eq!(flaw("Will is User's oldest friend"), None);
    }

    #[test]
    fn chat_shorthand_in_the_memorys_own_voice_is_a_flaw() {
        for t in [
            "User n the boys entered the uni tourney",
            "User is on pc mostly valorant w the boys",
            "User's headset just died mid ranked game lmaooo",
            "User won the match lol",
            "User is so tired tbh",
            "User got the job hahaha",
        ] {
            assert_eq!(flaw(t), Some(Flaw::Texting), "{t:?}");
        }
        for t in ["User lost 4 pounds", "User listens to R&B", "User's son Kuba is 8", "User bought a Lola dress"] {
            assert_eq!(flaw(t), None, "{t:?}");
        }
    }

    #[test]
    fn an_object_standing_for_the_turn_before_dangles() {
        for t in [
            "User bought them online",
            "User first read it around 5 years ago",
            "User picked this up at the garage sale",
            "User had a lovely week there with the grandkids",
            "User is planning a holiday there next spring",
            "User brought this to the potluck",
        ] {
            assert_eq!(flaw(t), Some(Flaw::DanglingPronoun), "{t:?}");
        }
        // An "it" that looks ahead, an idiom, and a thing named before the pronoun.
        for t in [
            "User finds it hard to sleep before a night shift",
            "User loves it when the grandkids visit",
            "User made it to the regional final",
            "User is taking it easy this week",
            "User sold their bike and regrets it",
            "User painted it after they visited the beach last week",
        ] {
            assert!(!object_points_back(t), "{t:?}");
        }
        // "those in need" are people, not something said before.
        assert_eq!(flaw("User and others worked together to help those in need"), None);
    }

    #[test]
    fn a_text_cut_before_its_object_is_unfinished() {
        assert_eq!(flaw("User is feeling proud of"), Some(Flaw::Unfinished));
        assert_eq!(flaw("User went hiking with their"), Some(Flaw::Unfinished));
        assert_eq!(flaw("User is taller than."), Some(Flaw::Unfinished));
        assert_eq!(flaw("User needs someone to talk to"), None);
        assert_eq!(flaw("User is proud of their daughter"), None);
        assert_eq!(flaw("On 2026-03-02 User said: \"I'm so proud of\""), None);
        // A quote opened and never closed was cut inside what was said.
        assert_eq!(flaw("User's sister came to help unpack and said 'see"), Some(Flaw::Unfinished));
        assert_eq!(flaw("User's sister said 'see, you are a hoarder', fair enough"), None);
        assert_eq!(flaw("User's boys' bikes are in the shed and it's raining"), None);
    }

    #[test]
    fn flawed_rewrites_are_named() {
        let cases = [
            ("It inspired User to make some art", Flaw::DanglingPronoun),
            ("That was the best day for User", Flaw::DanglingPronoun),
            ("The support group made User who they am", Flaw::Agreement),
            ("User are going to the lake", Flaw::Agreement),
            ("User really need to repaint their kitchen", Flaw::Agreement),
            ("User loves my cooking", Flaw::FirstPerson),
            ("User is trying tae sort ma shifts roon the wedding", Flaw::Texting),
            ("User is getting there, Caroline.", Flaw::Vocative),
            ("Hey Tom, User finished the thesis", Flaw::Vocative),
            ("Good news, User submitted the thesis chapter", Flaw::Interjection),
            ("Wow User ran a marathon", Flaw::Interjection),
            ("User made it in pottery class yesterday", Flaw::DanglingPronoun),
            ("User painted it because it was calming", Flaw::DanglingPronoun),
            ("User got them last week", Flaw::DanglingPronoun),
            ("User finally fixed it", Flaw::DanglingPronoun),
            ("Check out this cool recipe User found for lentil soup", Flaw::Addressed),
            ("Look what the cat did to User's sofa", Flaw::Addressed),
            ("Here's what User painted last week", Flaw::Addressed),
            ("They've been there for User every step of the way", Flaw::DanglingPronoun),
            ("It'll be tough as a single parent, but User is up for the challenge", Flaw::DanglingPronoun),
            ("Their love and encouragement has really helped User", Flaw::DanglingPronoun),
            ("User is taking them out for a stroll - it's a good workout for us", Flaw::FirstPerson),
            ("User and their family are on the road. We`ve already visited Josh", Flaw::FirstPerson),
            ("Not a problem, User is glad to help", Flaw::Interjection),
            ("Can't wait 'til User's studio starts welcoming dancers", Flaw::NoSubject),
            ("Reminds User of when they used to play games", Flaw::NoSubject),
            ("Gives User a visual of their progress and keeps them organized", Flaw::DanglingPronoun),
            ("Makes User so happy to see them grow", Flaw::DanglingPronoun),
            ("Appreciate the support of those close to User", Flaw::NoSubject),
            ("User enjoys the taste of these", Flaw::DanglingPronoun),
            ("User often goes there to relax and unwind", Flaw::DanglingPronoun),
            ("User was there a few years back, it's such a beautiful city", Flaw::DanglingPronoun),
            ("User is feeling excited to give it a try", Flaw::DanglingPronoun),
            ("User is feeling excited to jump into it", Flaw::DanglingPronoun),
            ("User will definitely check out those books", Flaw::DanglingPronoun),
            ("User will always cherish those moments", Flaw::DanglingPronoun),
            ("User always worries about them in new places", Flaw::DanglingPronoun),
            ("User started doing this a few years back", Flaw::DanglingPronoun),
            ("User will have to check it out sometime", Flaw::DanglingPronoun),
            ("User is going to try some poutine while they're there", Flaw::DanglingPronoun),
            ("User is feeling excited about what it could lead to", Flaw::DanglingPronoun),
            ("User likes how it's so unique", Flaw::DanglingPronoun),
            ("Haven't been to the mountains but User is keen to go", Flaw::NoSubject),
            ("Gone on the 0% lager now, proper lager was half User's problem", Flaw::NoSubject),
            ("Shud rlly book User's theory test at some point", Flaw::NoSubject),
            ("Kindly assist User", Flaw::Addressed),
            ("Big news, User is changing from layers to kienyeji chicken", Flaw::Interjection),
            ("User is sure it made a big impact", Flaw::DanglingPronoun),
            ("User hopes it's easy to control", Flaw::DanglingPronoun),
        ];
        for (text, want) in cases {
            assert_eq!(flaw(text), Some(want), "{text:?}");
        }
    }

    #[test]
    fn sound_sentences_and_quotes_pass() {
        for text in [
            "User ran their first half marathon last Saturday",
            "User's sister Lucia is getting married in June",
            "User and their partner moved to York",
            "User is a nurse in Leeds",
            "On 2023-05-08 User said: \"It inspired me to make some art\"",
            "Itinerary planning is what User does for work",
            "User loved it when the kids sang along",
            "User found it hard to leave Porto",
            "User visited their aunt in Leeds",
            "User looks after their neighbour's dog",
            "User checked out the new library downtown",
            "User visited the US last summer",
            "User's sister Lucia thinks her wedding will be in June",
            "Hiking with the dogs is what User loves most",
            "User goes to the lake there is near their house",
            "User has been feeling tired these days",
            "User moved to York last weekend",
            "User's dogs love it when it snows",
            "User helps those who need it most with their taxes",
            "There are three turtles in User's tank",
            "User loves their new job and what it could lead to",
            "User bought a kayak and hopes it's easy to control",
        ] {
            assert_eq!(flaw(text), None, "{text:?}");
        }
    }

    #[test]
    fn a_quote_starts_past_what_was_said_to_the_listener() {
        let at = "2023-05-08T10:00:00Z".parse().unwrap();
        let cases = [
            (
                "Thanks, Dave! I got it from another artist as a gift.",
                "On 2023-05-08 User said: \"I got it from another artist as a gift.\"",
            ),
            (
                "Of course! It's been great, filled with tutorials.",
                "On 2023-05-08 User said: \"It's been great, filled with tutorials.\"",
            ),
            (
                "Thanks, Sam. Yeah, it's a great way to express myself.",
                "On 2023-05-08 User said: \"It's a great way to express myself.\"",
            ),
            ("Yeah, it was. That place shaped me.", "On 2023-05-08 User said: \"That place shaped me.\""),
            // Thanks that say what for, with the user in them, are the user's news.
            (
                "Thanks, I finally finished my thesis! It took years.",
                "On 2023-05-08 User said: \"Thanks, I finally finished my thesis! It took years.\"",
            ),
            ("Thanks so much!", "On 2023-05-08 User said: \"Thanks so much!\""),
        ];
        for (said, want) in cases {
            assert_eq!(quote(said, at), want, "{said:?}");
        }
    }

    #[test]
    fn a_quote_is_dated_and_keeps_the_words() {
        let at = "2023-05-08T10:00:00Z".parse().unwrap();
        assert_eq!(
            quote("It inspired me to make some art.", at),
            "On 2023-05-08 User said: \"It inspired me to make some art.\""
        );
    }
}
