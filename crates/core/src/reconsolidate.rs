//! Reconsolidation: a recalled memory that the current message contradicts is flagged
//! `possibly_outdated` (recall is when a memory is re-examined).
//!
//! The current message has not been ingested yet when its context is assembled, so the
//! correction it carries has not superseded anything. The extractor's own reading of the message
//! says what it would change — a new value for a keyed slot, a fact denied or dropped — and the
//! memories it would change are flagged for the model, which should then confirm rather than
//! assert them. No LLM: the heuristic extractor's ops are the signal.

use std::collections::HashMap;

use crate::id::MemoryId;
use crate::memory::Memory;
use crate::op::{Action, ProposedOp, Target};
use crate::shape::{ValueShape, recent_enough};
use crate::text::query_terms;

/// Memories among `recalled` that the ops read from the current message would change, each with
/// the reason to show: `(id, what the user just said)`.
pub fn outdated_by(ops: &[ProposedOp], recalled: &[&Memory]) -> HashMap<MemoryId, String> {
    let mut out = HashMap::new();
    for op in ops {
        let said = op.draft.content.as_str();
        // A take-back naming only its new value corrects one memory, the latest of its shape,
        // as the engine resolves it: never every dated memory of the last two days.
        let latest = match op.action.target() {
            Some(Target::Latest(_)) => {
                recalled.iter().filter(|m| changes(op, m)).max_by_key(|m| (m.valid_from, m.updated_at)).map(|m| m.id)
            }
            _ => None,
        };
        for m in recalled {
            if out.contains_key(&m.id) || !changes(op, m) || latest.is_some_and(|id| id != m.id) {
                continue;
            }
            out.insert(m.id, said.to_string());
        }
    }
    out
}

/// Whether `op` would update, contradict or drop `m`.
fn changes(op: &ProposedOp, m: &Memory) -> bool {
    let same_slot = |key: &str| m.kind == op.draft.kind && m.key.as_deref() == Some(key);
    match &op.action {
        // A keyed assertion with another value replaces the slot's current value.
        Action::Add | Action::Update(Target::Key(_)) => match (&op.draft.key, &op.draft.value) {
            (Some(key), Some(value)) => {
                same_slot(key) && m.value.as_deref().is_some_and(|v| !v.eq_ignore_ascii_case(value))
            }
            _ => false,
        },
        Action::Update(Target::Matching(text)) | Action::Contradict(Target::Matching(text)) => {
            op.draft.key.as_deref().is_some_and(same_slot) || shares_a_distinctive_word(text, &m.content)
        }
        Action::Forget(Target::Matching(text)) | Action::Amend(Target::Matching(text)) => {
            shares_a_distinctive_word(text, &m.content)
        }
        Action::Update(Target::Id(id))
        | Action::Contradict(Target::Id(id))
        | Action::Forget(Target::Id(id))
        | Action::Amend(Target::Id(id)) => *id == m.id,
        Action::Contradict(Target::Key(key)) | Action::Forget(Target::Key(key)) | Action::Amend(Target::Key(key)) => {
            same_slot(key)
        }
        Action::Update(Target::Latest(shape))
        | Action::Contradict(Target::Latest(shape))
        | Action::Forget(Target::Latest(shape))
        | Action::Amend(Target::Latest(shape)) => latest_of_shape(*shape, op, m),
        Action::Reinforce(_) | Action::CloseLoop(_) => false,
    }
}

/// Whether `m` could be what a take-back naming only a value of `shape` corrects: it names one,
/// and was said shortly before the take-back.
fn latest_of_shape(shape: ValueShape, op: &ProposedOp, m: &Memory) -> bool {
    let (Some(said), Some(at)) = (m.valid_from, op.draft.valid_from) else { return false };
    shape.named_in(&m.content) && recent_enough(said, at)
}

/// One content word in common (three letters or more, not a stopword), compared on a
/// five-letter stem so "dogs" meets "dog's": the same thing named, not merely the same topic.
fn shares_a_distinctive_word(a: &str, b: &str) -> bool {
    let stems = |t: &str| -> Vec<String> {
        query_terms(t).into_iter().filter(|w| w.chars().count() >= 3).map(|w| w.chars().take(5).collect()).collect()
    };
    let (a, b) = (stems(a), stems(b));
    a.iter().any(|w| b.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::{Extractor, HeuristicExtractor};
    use crate::kind::Kind;
    use crate::message::{Message, Role};
    use crate::scope::Scope;
    use chrono::{DateTime, Utc};

    fn now() -> DateTime<Utc> {
        "2026-03-10T12:00:00Z".parse().unwrap()
    }

    fn owner() -> Scope {
        Scope::parse("acme", None, Some("dana"), None).unwrap()
    }

    fn keyed(kind: Kind, content: &str, key: &str, value: &str) -> Memory {
        Memory { key: Some(key.into()), value: Some(value.into()), ..Memory::new(owner(), kind, content, now()) }
    }

    fn ops_for(text: &str) -> Vec<ProposedOp> {
        let m = Message {
            id: crate::id::MessageId::new("q").unwrap(),
            scope: Scope::parse("acme", None, Some("dana"), Some("c1")).unwrap(),
            role: Role::User,
            content: text.into(),
            at: now(),
        };
        HeuristicExtractor.extract(&[m])
    }

    #[test]
    fn a_new_value_for_a_keyed_slot_flags_the_old_one() {
        let home = keyed(Kind::Profile, "User lives in Lisbon", "home", "Lisbon");
        let ops = ops_for("Actually I live in Porto now.");
        assert!(!ops.is_empty(), "the extractor reads a correction");
        let flagged = outdated_by(&ops, &[&home]);
        assert!(flagged.contains_key(&home.id), "{ops:#?}");
        // The same value again is a confirmation, not a contradiction.
        let same = keyed(Kind::Profile, "User lives in Porto", "home", "Porto");
        assert!(outdated_by(&ops, &[&same]).is_empty());
    }

    #[test]
    fn a_dropped_fact_flags_what_it_names_and_nothing_else() {
        let dog = Memory::new(owner(), Kind::Fact, "User has a dog named Biscuit", now());
        let job = Memory::new(owner(), Kind::Fact, "User works at a fintech startup", now());
        let ops = ops_for("I don't have a dog anymore.");
        let flagged = outdated_by(&ops, &[&dog, &job]);
        assert!(flagged.contains_key(&dog.id), "{ops:#?}");
        assert!(!flagged.contains_key(&job.id));
    }

    #[test]
    fn a_take_back_naming_only_its_day_flags_the_latest_dated_memory_said_just_before() {
        let dated = |content: &str, hours_before: i64| Memory {
            valid_from: Some(now() - chrono::Duration::hours(hours_before)),
            ..Memory::new(owner(), Kind::Fact, content, now())
        };
        let party = dated("User's niece has her christening on the 14th", 1);
        let dentist = dated("User has the dentist on Thursday", 20);
        let old = dated("User's exam was on the 3rd of May", 24 * 30);
        let ops = ops_for("no sorry its the 21st, I was reading the wrong line");
        assert!(ops.iter().any(|o| o.action == crate::op::Action::Amend(Target::Latest(ValueShape::Date))), "{ops:#?}");
        let flagged = outdated_by(&ops, &[&dentist, &party, &old]);
        assert_eq!(flagged.keys().collect::<Vec<_>>(), vec![&party.id], "{flagged:?}");
    }

    #[test]
    fn questions_and_chatter_flag_nothing() {
        let home = keyed(Kind::Profile, "User lives in Lisbon", "home", "Lisbon");
        let dog = Memory::new(owner(), Kind::Fact, "User has a dog named Biscuit", now());
        for text in ["Where do I live again?", "Do you remember my dog?", "What a lovely day in Lisbon!"] {
            assert!(outdated_by(&ops_for(text), &[&home, &dog]).is_empty(), "{text}");
        }
    }
}
