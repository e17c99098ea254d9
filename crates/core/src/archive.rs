//! Archival recall: what was said, not only what was kept.
//!
//! Extraction keeps what is worth keeping, but users ask about things no extractor would keep
//! ("what did I say the pottery teacher was called?"). The conversation itself is searched too,
//! within the user's own messages, and its best turns reach the block verbatim as excerpts. The
//! two signals are fused exactly as for memories ([`score::fuse`]), so one relevance floor means
//! the same thing on both sides.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::config::Tuning;
use crate::id::MessageId;
use crate::message::{Message, Role};
use crate::period::Period;
use crate::scope::Scope;
use crate::score;

/// A past message judged relevant to the query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Excerpt {
    /// The message, verbatim.
    pub message: Message,
    /// Normalised lexical signal, if it matched lexically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lexical: Option<f32>,
    /// Cosine with the query, if it has a vector of the query's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<f32>,
    /// Fused relevance in 0..=1, with the period's lift.
    pub relevance: f32,
    /// Relevance added because the message was said within the period the query asks about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<f32>,
}

/// The two halves' raw hits for one query.
#[derive(Debug, Clone, Copy, Default)]
pub struct MessageHits<'a> {
    /// Lexical hits with raw scores (higher is better), any scale.
    pub lexical: &'a [(MessageId, f32)],
    /// Vector hits with cosines, best first; `None` when the vector half did not run.
    pub vector: Option<&'a [(MessageId, f32)]>,
    /// Vector hits said within the period the query asks about, drawn beside `vector`'s
    /// shortlist: each counts with its own cosine, and none lowers the cosine assumed for a
    /// lexical-only hit (that floor is the shortlist's).
    pub in_period: &'a [(MessageId, f32)],
    /// The query's content words ([`crate::text::query_terms`]) and the names among them
    /// ([`crate::vocative::query_names`]): a lexical hit that holds a name only to address
    /// someone ("Thanks, Mel!") keeps only the share of its match the other words made.
    pub asked: Asked<'a>,
}

/// What a query asked for, as archival recall weighs a word match.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked<'a> {
    /// The query's content words.
    pub terms: &'a [String],
    /// The names among them.
    pub names: &'a [String],
}

impl Asked<'_> {
    /// The share of `text`'s lexical match that is about what was asked: 1 unless some name of
    /// the query occurs in `text` only as a vocative, then the query's other words `text`
    /// holds over those words and the vocative names (0 when the name was all it matched).
    pub fn share(&self, text: &str) -> f32 {
        let addressed = self.names.iter().filter(|n| crate::vocative::addressed_only(text, n)).count();
        if addressed == 0 {
            return 1.0;
        }
        let words: Vec<String> = crate::text::words(text).collect();
        let same = |w: &str, t: &str| w == t || (w.len().min(t.len()) >= 4 && (w.starts_with(t) || t.starts_with(w)));
        let other = self.terms.iter().filter(|t| !self.names.contains(t) && words.iter().any(|w| same(w, t))).count();
        other as f32 / (other + addressed) as f32
    }

    /// The words of a transcript line's speaker label ("Caroline: …"), lower-cased; none for
    /// a line without one.
    fn label(text: &str) -> Vec<String> {
        let (label, _) = crate::text::split_speaker(text);
        crate::text::words(label).collect()
    }

    /// The lines among `messages` spoken by someone other than the person the query names,
    /// when the messages tell who that is; none otherwise (see `ranking.other_speaker_weight`).
    ///
    /// A transcript's label says it ("Caroline: …"): when some line's label is a name the query
    /// asks about, every line labelled with another name is someone else's (an unlabelled line
    /// is the user's own). Without such a label, the side that calls the person by name is the
    /// other one: a user who writes "Hey Andrew!" is talking to Andrew, so when the asked
    /// person is addressed more often in the user's lines than in the assistant's, the user's
    /// lines are someone else's, and the other way round.
    pub fn said_by_others<'m>(&self, messages: &'m [Message]) -> HashSet<&'m MessageId> {
        if self.names.is_empty() {
            return HashSet::new();
        }
        let asked = |words: &[String]| words.iter().any(|w| self.names.contains(w));
        let labels: Vec<Vec<String>> = messages.iter().map(|m| Self::label(&m.content)).collect();
        if labels.iter().any(|l| asked(l)) {
            return messages
                .iter()
                .zip(&labels)
                .filter(|(_, l)| !l.is_empty() && !asked(l))
                .map(|(m, _)| &m.id)
                .collect();
        }
        let addressing = |role: Role| {
            messages
                .iter()
                .zip(&labels)
                .filter(|(m, l)| m.role == role && l.is_empty())
                .filter(|(m, _)| self.names.iter().any(|n| crate::vocative::addressed_only(&m.content, n)))
                .count()
        };
        let other = match addressing(Role::User).cmp(&addressing(Role::Assistant)) {
            std::cmp::Ordering::Greater => Role::User,
            std::cmp::Ordering::Less => Role::Assistant,
            std::cmp::Ordering::Equal => return HashSet::new(),
        };
        messages.iter().zip(&labels).filter(|(m, l)| m.role == other && l.is_empty()).map(|(m, _)| &m.id).collect()
    }
}

impl MessageHits<'_> {
    /// Every message id either half found (each once, in a stable order), to load.
    pub fn ids(&self) -> Vec<MessageId> {
        let mut seen = HashSet::new();
        self.lexical
            .iter()
            .chain(self.vector.unwrap_or_default())
            .chain(self.in_period)
            .filter(|(id, _)| seen.insert(id.clone()))
            .map(|(id, _)| id.clone())
            .collect()
    }
}

/// Ranks loaded messages by fused relevance, best first, keeping at most `limit` at or above the
/// relevance floor and none of `exclude` (messages already in the block verbatim).
///
/// A lexical hit the vector half did not return gets that half's lowest cosine: its true cosine
/// is at most that, and pretending the vector signal is absent would let a bare word match
/// outrank a close paraphrase. When the query names someone and the messages tell which lines
/// are theirs ([`Asked::said_by_others`]), a line said by anyone else keeps
/// `ranking.other_speaker_weight` of its relevance.
pub fn rank_excerpts(
    hits: MessageHits<'_>,
    messages: Vec<Message>,
    exclude: &HashSet<MessageId>,
    limit: usize,
    period: Option<&Period>,
    t: &Tuning,
) -> Vec<Excerpt> {
    let lift = |m: &Message| match period {
        Some(p) if p.covers(m.at) && t.ranking.period_boost > 0.0 => Some(t.ranking.period_boost),
        _ => None,
    };
    // A match on a name the message only addresses says who listened, not what was said. Only
    // lexical hits are read for it, and only when the query names someone.
    let content: HashMap<&MessageId, &str> = match hits.asked.names {
        [] => HashMap::new(),
        _ => messages.iter().map(|m| (&m.id, m.content.as_str())).collect(),
    };
    let raw: Vec<(&MessageId, f32)> = hits
        .lexical
        .iter()
        .map(|(id, s)| (id, s * content.get(id).map_or(1.0, |text| hits.asked.share(text))))
        .filter(|(_, s)| *s > 0.0)
        .collect();
    let best = raw.iter().map(|(_, s)| *s).fold(0.0f32, f32::max);
    let lexical: HashMap<&MessageId, f32> =
        raw.into_iter().map(|(id, s)| (id, if best > 0.0 { (s / best).clamp(0.0, 1.0) } else { 0.0 })).collect();
    let vector: HashMap<&MessageId, f32> =
        hits.in_period.iter().chain(hits.vector.unwrap_or_default()).map(|(id, c)| (id, *c)).collect();
    let floor_cosine = hits.vector.and_then(|v| v.iter().map(|(_, c)| *c).reduce(f32::min));
    // When the query names someone who speaks here, the others' lines weigh less.
    let others: HashSet<MessageId> = match t.ranking.other_speaker_weight < 1.0 {
        true => hits.asked.said_by_others(&messages).into_iter().cloned().collect(),
        false => HashSet::new(),
    };
    let mut out: Vec<Excerpt> = messages
        .into_iter()
        .filter(|m| !exclude.contains(&m.id) && !crate::pii::only_placeholders(&m.content))
        .map(|m| {
            let l = lexical.get(&m.id).copied();
            let v = vector.get(&m.id).copied().or(floor_cosine);
            let period = lift(&m);
            let weight = if others.contains(&m.id) { t.ranking.other_speaker_weight } else { 1.0 };
            let relevance = (weight * score::fuse(l, v, t) + period.unwrap_or(0.0)).min(1.0);
            Excerpt { relevance, period, lexical: l, vector: v, message: m }
        })
        .filter(|e| e.relevance >= t.ranking.min_relevance)
        .collect();
    by_relevance(&mut out);
    with_cohesion(&mut out, t);
    out.truncate(limit);
    out
}

/// How many of the best excerpts vote for their chat in [`with_cohesion`].
pub const COHESION_WINDOW: usize = 20;

/// Other hits of its chat an excerpt needs among the best for the whole lift.
pub const COHESION_FULL: usize = 3;

/// Lifts each excerpt (`excerpts` ranked best first) by `ranking.session_cohesion` times the
/// share of [`COHESION_FULL`] other excerpts of its own chat among the [`COHESION_WINDOW`]
/// best, and ranks again.
///
/// Why: what a question is about was usually talked through in one conversation, so a hit
/// whose chat holds other strong hits is more likely on topic than a lone hit that shares a
/// few words with the question. The chat is the retrieval unit above the turn; its turns keep
/// their own order within it.
pub fn with_cohesion(excerpts: &mut [Excerpt], t: &Tuning) {
    let w = t.ranking.session_cohesion;
    if w <= 0.0 {
        return;
    }
    let mut per_chat: HashMap<&Scope, usize> = HashMap::new();
    for e in excerpts.iter().take(COHESION_WINDOW) {
        *per_chat.entry(&e.message.scope).or_default() += 1;
    }
    if per_chat.len() < 2 {
        // Every hit from one chat (a chat-scoped memory, a user with one long thread): the
        // chat tells nothing apart, and lifting all excerpts would only crowd out memories.
        return;
    }
    let lifts: Vec<f32> = excerpts
        .iter()
        .map(|e| {
            let others = per_chat.get(&e.message.scope).map_or(0, |n| n.saturating_sub(1)).min(COHESION_FULL);
            w * others as f32 / COHESION_FULL as f32
        })
        .collect();
    for (e, lift) in excerpts.iter_mut().zip(lifts) {
        e.relevance = (e.relevance + lift).min(1.0);
    }
    by_relevance(excerpts);
}

/// Best first; ties by message id, so a ranking is reproducible.
fn by_relevance(excerpts: &mut [Excerpt]) {
    excerpts.sort_by(|a, b| b.relevance.total_cmp(&a.relevance).then_with(|| a.message.id.cmp(&b.message.id)));
}

/// A turn next to an archival hit in its own chat, as [`with_neighbours`] takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Adjacent {
    /// The hit it sits next to.
    pub hit: MessageId,
    /// The neighbouring turn.
    pub message: Message,
    /// Whether it was said after the hit: the answer, when the hit asked something.
    pub after: bool,
}

/// Adds the turns around the best excerpts (`adjacent`) and ranks again. A neighbour's
/// relevance is `neighbour_weight` of its best hit's, and `reply_weight` for the turn after a
/// hit that ends by asking ([`crate::text::ends_asking`]); a message already excerpted keeps
/// its own, one in `exclude` is not added, and the floor and `limit` hold as in
/// [`rank_excerpts`].
///
/// Why: an answer often does not repeat the words of the question that brought it up ("What
/// did you paint?" … "A sunset over the lake"), so the turn next to a hit is a better candidate
/// than the weak tail of the ranking; and when the hit is the question, its reply is what the
/// hit was worth ("Got any hobbies to help you relax?" … "Working on cars really helps me").
pub fn with_neighbours(
    mut excerpts: Vec<Excerpt>,
    adjacent: Vec<Adjacent>,
    exclude: &HashSet<MessageId>,
    limit: usize,
    t: &Tuning,
) -> Vec<Excerpt> {
    let hits: HashMap<MessageId, (f32, bool)> = excerpts
        .iter()
        .map(|e| (e.message.id.clone(), (e.relevance, crate::text::ends_asking(&e.message.content))))
        .collect();
    let mut added: HashMap<MessageId, Excerpt> = HashMap::new();
    for Adjacent { hit, message: m, after } in adjacent {
        if hits.contains_key(&m.id) || exclude.contains(&m.id) {
            continue;
        }
        let Some(&(relevance, asks)) = hits.get(&hit) else { continue };
        let r = relevance * if after && asks { t.ranking.reply_weight } else { t.ranking.neighbour_weight };
        if r < t.ranking.min_relevance {
            continue;
        }
        let entry = added.entry(m.id.clone()).or_insert(Excerpt {
            message: m,
            lexical: None,
            vector: None,
            relevance: r,
            period: None,
        });
        entry.relevance = entry.relevance.max(r);
    }
    excerpts.extend(added.into_values());
    by_relevance(&mut excerpts);
    excerpts.truncate(limit);
    excerpts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::Role;
    use crate::scope::Scope;
    use proptest::prelude::*;

    fn msg(id: &str, text: &str) -> Message {
        Message {
            id: MessageId::new(id).unwrap(),
            scope: Scope::parse("acme", None, Some("dana"), Some("c1")).unwrap(),
            role: Role::User,
            content: text.into(),
            at: "2026-03-02T09:00:00Z".parse().unwrap(),
        }
    }

    fn id(s: &str) -> MessageId {
        MessageId::new(s).unwrap()
    }

    fn adj(hit: &str, i: &str, text: &str, after: bool) -> Adjacent {
        Adjacent { hit: id(hit), message: msg(i, text), after }
    }

    #[test]
    fn both_signals_beat_one_and_a_bare_word_match_gets_the_vector_floor() {
        let t = Tuning::default();
        let lexical = [(id("a"), 8.0), (id("b"), 2.0)];
        let vector = [(id("a"), 0.7), (id("c"), 0.5), (id("d"), 0.3)];
        let hits = MessageHits { lexical: &lexical, vector: Some(&vector), in_period: &[], asked: Asked::default() };
        assert_eq!(hits.ids(), vec![id("a"), id("b"), id("c"), id("d")]);
        let msgs = ["a", "b", "c", "d"].map(|i| msg(i, i)).to_vec();
        let ranked = rank_excerpts(hits, msgs, &HashSet::new(), 10, None, &t);
        let order: Vec<_> = ranked.iter().map(|e| e.message.id.as_str()).collect();
        // a: both fire; c, d: paraphrases; b: one weak word match, its cosine at most 0.3.
        assert_eq!(order, vec!["a", "c", "d", "b"]);
        assert_eq!(ranked[3].vector, Some(0.3));
    }

    #[test]
    fn a_name_a_turn_only_addresses_is_no_match_on_that_name() {
        let t = Tuning::default();
        let (terms, names) = (vec!["mel".to_string(), "paint".to_string()], vec!["mel".to_string()]);
        let asked = Asked { terms: &terms, names: &names };
        let lexical = [(id("thanks"), 9.0), (id("greets"), 8.0), (id("about"), 6.0)];
        let hits = MessageHits { lexical: &lexical, vector: None, in_period: &[], asked };
        let msgs = vec![
            msg("thanks", "Thanks, Mel! That's really sweet of you."),
            msg("greets", "Hey Mel, I painted a sunrise yesterday."),
            msg("about", "Mel painted the lake last summer."),
        ];
        assert_eq!(asked.share(&msgs[0].content), 0.0);
        assert_eq!(asked.share(&msgs[1].content), 0.5);
        assert_eq!(asked.share(&msgs[2].content), 1.0);
        let ranked = rank_excerpts(hits, msgs, &HashSet::new(), 10, None, &t);
        let lexical: Vec<_> = ranked.iter().map(|e| (e.message.id.as_str(), e.lexical)).collect();
        assert_eq!(lexical, vec![("about", Some(1.0)), ("greets", Some(4.0 / 6.0))]);
    }

    #[test]
    fn the_lines_of_the_person_asked_about_outrank_anothers_alike() {
        let t = Tuning::default();
        let (terms, names) = (vec!["melanie".into(), "hikes".into()], vec!["melanie".to_string()]);
        let asked = Asked { terms: &terms, names: &names };
        let lexical = [(id("other"), 5.0), (id("hers"), 5.0), (id("mine"), 5.0)];
        let vector = [(id("other"), 0.6), (id("hers"), 0.6), (id("mine"), 0.6)];
        let msgs = vec![
            msg("other", "Caroline: I had a rough hike last week."),
            msg("hers", "Melanie: We roast marshmallows on our hikes."),
            msg("mine", "we went on a hike too"),
        ];
        let hits = MessageHits { lexical: &lexical, vector: Some(&vector), in_period: &[], asked };
        let ranked = rank_excerpts(hits, msgs.clone(), &HashSet::new(), 10, None, &t);
        let by_id = |i: &str| ranked.iter().find(|e| e.message.id.as_str() == i).map(|e| e.relevance).unwrap();
        assert_eq!(by_id("hers"), by_id("mine"), "the user's own line is never another speaker's");
        assert!((by_id("other") - by_id("hers") * t.ranking.other_speaker_weight).abs() < 1e-6);
        // A query naming nobody who speaks here (or the weight at 1) weighs every line alike.
        let names = vec!["sweden".to_string()];
        let asked = Asked { terms: &terms, names: &names };
        let hits = MessageHits { lexical: &lexical, vector: Some(&vector), in_period: &[], asked };
        let ranked = rank_excerpts(hits, msgs, &HashSet::new(), 10, None, &t);
        assert!(ranked.windows(2).all(|w| w[0].relevance == w[1].relevance), "{ranked:?}");
        // Without labels, the side that calls the person by name is talking to them: a user
        // who writes "Hey Andrew!" is not Andrew, so the assistant's lines are his.
        let (terms, names) = (vec!["andrew".into(), "work".into()], vec!["andrew".to_string()]);
        let asked = Asked { terms: &terms, names: &names };
        let mut msgs = vec![
            msg("hi", "Hey Andrew! How was your week?"),
            msg("his", "Work has been piling up and it's stressful."),
            msg("mine", "Work is fine for me, busy though."),
        ];
        msgs[1].role = Role::Assistant;
        let lexical = [(id("hi"), 5.0), (id("his"), 5.0), (id("mine"), 5.0)];
        let vector = [(id("hi"), 0.6), (id("his"), 0.6), (id("mine"), 0.6)];
        let hits = MessageHits { lexical: &lexical, vector: Some(&vector), in_period: &[], asked };
        let others = asked.said_by_others(&msgs);
        assert_eq!(others.len(), 2, "{others:?}");
        assert!(!others.contains(&id("his")));
        let ranked = rank_excerpts(hits, msgs, &HashSet::new(), 10, None, &t);
        assert_eq!(ranked[0].message.id.as_str(), "his");
    }

    #[test]
    fn a_message_left_with_placeholders_only_is_no_excerpt() {
        let t = Tuning::default();
        let lexical = [(id("a"), 8.0), (id("b"), 7.0)];
        let hits = MessageHits { lexical: &lexical, vector: None, in_period: &[], asked: Asked::default() };
        let msgs = vec![msg("a", "[redacted email] … [redacted phone]"), msg("b", "mail me at [redacted email]")];
        let ranked = rank_excerpts(hits, msgs, &HashSet::new(), 10, None, &t);
        assert_eq!(ranked.iter().map(|e| e.message.id.as_str()).collect::<Vec<_>>(), vec!["b"]);
        assert!(crate::pii::only_placeholders("[redacted email]!"));
        assert!(!crate::pii::only_placeholders("no placeholder at all"));
    }

    #[test]
    fn hits_from_the_asked_period_count_with_their_own_cosine_and_leave_the_floor() {
        let t = Tuning::default();
        let lexical = [(id("word"), 5.0)];
        let vector = [(id("a"), 0.8), (id("b"), 0.5)];
        let in_period = [(id("then"), 0.35), (id("a"), 0.8)];
        let hits =
            MessageHits { lexical: &lexical, vector: Some(&vector), in_period: &in_period, asked: Asked::default() };
        assert_eq!(hits.ids(), vec![id("word"), id("a"), id("b"), id("then")]);
        let mut then = msg("then", "then");
        then.at = "2026-02-10T12:00:00Z".parse().unwrap();
        let msgs = vec![msg("word", "w"), msg("a", "a"), msg("b", "b"), then];
        let period =
            Period { from: "2026-02-10T00:00:00Z".parse().unwrap(), to: "2026-02-11T00:00:00Z".parse().unwrap() };
        let ranked = rank_excerpts(hits, msgs, &HashSet::new(), 10, Some(&period), &t);
        let then = ranked.iter().find(|e| e.message.id == id("then")).expect("the period's hit is ranked");
        assert_eq!(then.vector, Some(0.35));
        assert_eq!(then.period, Some(t.ranking.period_boost));
        // The lexical-only hit still gets the shortlist's lowest cosine, not the period's.
        let word = ranked.iter().find(|e| e.message.id == id("word")).unwrap();
        assert_eq!(word.vector, Some(0.5));
    }

    #[test]
    fn neighbours_follow_their_hit_and_pass_the_weak_tail() {
        let t = Tuning::default();
        let ex =
            |i: &str, r: f32| Excerpt { message: msg(i, i), lexical: None, vector: None, relevance: r, period: None };
        let ranked = vec![ex("hit", 0.9), ex("mid", 0.6), ex("weak", 0.3)];
        let adjacent = vec![
            adj("hit", "answer", "A sunset over the lake", true),
            adj("hit", "mid", "already an excerpt", false),
            adj("weak", "faint", "too weak to follow", true),
            adj("mid", "answer", "neighbours two hits", false),
            adj("hit", "recent", "in the recent window", false),
            adj("unknown", "stray", "not next to any excerpt", true),
        ];
        let exclude = HashSet::from([id("recent")]);
        let out = with_neighbours(ranked, adjacent, &exclude, 10, &t);
        let order: Vec<(&str, f32)> = out.iter().map(|e| (e.message.id.as_str(), e.relevance)).collect();
        // The answer sits at 0.7 of its best hit; "mid" keeps its own relevance; the weak hit's
        // neighbour (0.21) still clears the floor, last.
        assert_eq!(order.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec!["hit", "answer", "mid", "weak", "faint"]);
        assert!((order[1].1 - 0.63).abs() < 1e-6 && (order[2].1 - 0.6).abs() < 1e-6, "{order:?}");
        // The limit holds, and a neighbour under the floor is not added.
        let ranked = vec![ex("hit", 0.9), ex("weak", 0.22)];
        let out = with_neighbours(ranked, vec![adj("weak", "faint", "x", true)], &HashSet::new(), 10, &t);
        assert_eq!(out.len(), 2);
        let ranked = vec![ex("hit", 0.9), ex("mid", 0.6)];
        let out = with_neighbours(ranked, vec![adj("hit", "answer", "x", true)], &HashSet::new(), 2, &t);
        assert_eq!(out.iter().map(|e| e.message.id.as_str()).collect::<Vec<_>>(), vec!["hit", "answer"]);
    }

    #[test]
    fn the_reply_to_a_question_is_worth_the_question() {
        let t = Tuning::default();
        let ex = |i: &str, text: &str, r: f32| Excerpt {
            message: msg(i, text),
            lexical: None,
            vector: None,
            relevance: r,
            period: None,
        };
        let ranked = vec![
            ex("q", "Nice car! Got any hobbies to help you relax? [shares a photo: an orange car]", 0.8),
            ex("s", "I went to a car show last weekend.", 0.8),
        ];
        let adjacent = vec![
            adj("q", "before-q", "Check out this project.", false),
            adj("q", "reply", "Working on cars really helps me relax.", true),
            adj("s", "after-s", "Cool, which cars?", true),
        ];
        let out = with_neighbours(ranked, adjacent, &HashSet::new(), 10, &t);
        let rel = |i: &str| out.iter().find(|e| e.message.id.as_str() == i).unwrap().relevance;
        // The question's answer follows at the question's relevance; the turn before it, and
        // the turn after a statement, at the neighbour share.
        assert!((rel("reply") - 0.8 * t.ranking.reply_weight).abs() < 1e-6);
        assert!((rel("before-q") - 0.8 * t.ranking.neighbour_weight).abs() < 1e-6);
        assert!((rel("after-s") - 0.8 * t.ranking.neighbour_weight).abs() < 1e-6);
        assert!(rel("reply") > rel("after-s"));
    }

    #[test]
    fn the_relevance_floor_drops_the_weak_tail() {
        let t = Tuning::default();
        let lexical = [(id("a"), 8.0), (id("b"), 1.0)];
        let vector = [(id("a"), 0.7), (id("c"), 0.1)];
        let hits = MessageHits { lexical: &lexical, vector: Some(&vector), in_period: &[], asked: Asked::default() };
        let msgs = ["a", "b", "c"].map(|i| msg(i, i)).to_vec();
        let ranked = rank_excerpts(hits, msgs, &HashSet::new(), 10, None, &t);
        assert_eq!(ranked.iter().map(|e| e.message.id.as_str()).collect::<Vec<_>>(), vec!["a"]);
    }

    #[test]
    fn excluded_messages_and_the_limit_are_respected() {
        let t = Tuning::default();
        let vector = [(id("a"), 0.9), (id("b"), 0.8), (id("c"), 0.7)];
        let hits = MessageHits { lexical: &[], vector: Some(&vector), in_period: &[], asked: Asked::default() };
        let msgs = ["a", "b", "c"].map(|i| msg(i, i)).to_vec();
        let ranked = rank_excerpts(hits, msgs, &HashSet::from([id("a")]), 1, None, &t);
        assert_eq!(ranked.len(), 1);
        assert_eq!(ranked[0].message.id, id("b"));
    }

    #[test]
    fn without_vectors_lexical_alone_ranks() {
        let t = Tuning::default();
        let lexical = [(id("a"), 1.0), (id("b"), 3.0)];
        let hits = MessageHits { lexical: &lexical, vector: None, in_period: &[], asked: Asked::default() };
        let ranked = rank_excerpts(hits, vec![msg("a", "a"), msg("b", "b")], &HashSet::new(), 5, None, &t);
        assert_eq!(ranked.iter().map(|e| e.message.id.as_str()).collect::<Vec<_>>(), vec!["b", "a"]);
        assert_eq!(ranked[0].relevance, 1.0);
    }

    fn in_chat(id: &str, chat: &str, relevance: f32) -> Excerpt {
        let mut m = msg(id, id);
        m.scope = Scope::parse("acme", None, Some("dana"), Some(chat)).unwrap();
        Excerpt { message: m, lexical: None, vector: None, relevance, period: None }
    }

    #[test]
    fn hits_that_cluster_in_a_chat_pass_a_lone_hit_of_the_same_strength() {
        let t = Tuning::default();
        let mut ranked = vec![
            in_chat("lone", "c1", 0.62),
            in_chat("a", "c2", 0.6),
            in_chat("b", "c2", 0.5),
            in_chat("c", "c2", 0.45),
            in_chat("d", "c2", 0.44),
            in_chat("e", "c2", 0.43),
        ];
        with_cohesion(&mut ranked, &t);
        let order: Vec<&str> = ranked.iter().map(|e| e.message.id.as_str()).collect();
        assert_eq!(order[..2], ["a", "lone"], "{order:?}");
        // The full lift needs three others of its chat; a lone hit keeps its own relevance.
        assert!((ranked[0].relevance - (0.6 + t.ranking.session_cohesion)).abs() < 1e-6);
        assert!((ranked[1].relevance - 0.62).abs() < 1e-6);
        // One chat alone tells nothing apart: no lift.
        let mut one =
            vec![in_chat("a", "c2", 0.6), in_chat("b", "c2", 0.5), in_chat("c", "c2", 0.4), in_chat("d", "c2", 0.3)];
        with_cohesion(&mut one, &t);
        assert_eq!(one.iter().map(|e| e.relevance).collect::<Vec<_>>(), [0.6, 0.5, 0.4, 0.3]);
        // Off, nothing moves.
        let mut off = Tuning::default();
        off.ranking.session_cohesion = 0.0;
        let mut ranked = vec![in_chat("lone", "c1", 0.62), in_chat("a", "c2", 0.6), in_chat("b", "c2", 0.5)];
        with_cohesion(&mut ranked, &off);
        assert_eq!(ranked[0].message.id.as_str(), "lone");
        assert_eq!(ranked[1].relevance, 0.6);
    }

    #[test]
    fn only_the_best_vote_for_their_chat() {
        let t = Tuning::default();
        // One strong hit in c1; its chat's other messages sit below the window.
        let mut ranked = vec![in_chat("top", "c1", 0.9)];
        ranked.extend((0..COHESION_WINDOW).map(|i| in_chat(&format!("x{i:02}"), "c2", 0.8 - i as f32 * 0.01)));
        ranked.extend((0..5).map(|i| in_chat(&format!("tail{i}"), "c1", 0.3)));
        with_cohesion(&mut ranked, &t);
        let top = ranked.iter().find(|e| e.message.id.as_str() == "top").unwrap();
        assert!((top.relevance - 0.9).abs() < 1e-6, "the tail below the window does not vote");
    }

    proptest! {
        #[test]
        fn cohesion_keeps_the_ranking_sorted_and_in_range(
            rel in proptest::collection::vec((0.0f32..1.0, 0usize..4), 0..40),
        ) {
            let t = Tuning::default();
            let mut ranked: Vec<Excerpt> =
                rel.iter().enumerate().map(|(i, (r, c))| in_chat(&format!("m{i}"), &format!("c{c}"), *r)).collect();
            by_relevance(&mut ranked);
            let before: Vec<f32> = ranked.iter().map(|e| e.relevance).collect();
            with_cohesion(&mut ranked, &t);
            prop_assert!(ranked.windows(2).all(|w| w[0].relevance >= w[1].relevance));
            prop_assert!(ranked.iter().all(|e| (0.0..=1.0).contains(&e.relevance)));
            prop_assert_eq!(ranked.len(), before.len());
        }

        #[test]
        fn ranking_is_sorted_bounded_and_floored(
            lex in proptest::collection::vec(0.0f32..20.0, 0..8),
            vecs in proptest::collection::vec(-1.0f32..1.0, 0..8),
            limit in 0usize..10,
        ) {
            let t = Tuning::default();
            let lexical: Vec<_> = lex.iter().enumerate().map(|(i, s)| (id(&format!("m{i}")), *s)).collect();
            let vector: Vec<_> = vecs.iter().enumerate().map(|(i, c)| (id(&format!("m{}", i + 3)), *c)).collect();
            let hits = MessageHits { lexical: &lexical, vector: Some(&vector), in_period: &[], asked: Asked::default() };
            let msgs = hits.ids().iter().map(|i| msg(i.as_str(), "x")).collect();
            let ranked = rank_excerpts(hits, msgs, &HashSet::new(), limit, None, &t);
            prop_assert!(ranked.len() <= limit);
            prop_assert!(ranked.windows(2).all(|w| w[0].relevance >= w[1].relevance));
            prop_assert!(ranked.iter().all(|e| (t.ranking.min_relevance..=1.0).contains(&e.relevance)));
        }
    }
}
