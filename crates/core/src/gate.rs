//! The write gate: a pure function from a proposed op and the scope's relevant state to a decision.
//!
//! Extraction is loose, the gate is strict. The engine gathers what the gate needs (the memory
//! with the same hash, the nearest same-kind neighbour, the same-key row, the resolved target)
//! and the gate decides; nothing here touches storage, so every rule is unit-tested.

use serde::{Deserialize, Serialize};

use crate::config::GateTuning;
use crate::id::MemoryId;
use crate::kind::{Floor, Kind, Status};
use crate::op::{Action, ProposedOp};
use crate::pii;
use crate::scope::Layer;
use crate::text::normalize;
use crate::verdict::{DedupBy, RejectReason};

/// What the gate needs to know about an existing memory.
#[derive(Debug, Clone, PartialEq)]
pub struct Existing {
    /// Its id.
    pub id: MemoryId,
    /// Its kind.
    pub kind: Kind,
    /// Its status.
    pub status: Status,
    /// Its value, for keyed rows.
    pub value: Option<String>,
}

/// The slice of scope state one op is judged against. Only active rows belong here.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GateContext {
    /// The layer the draft would be owned at.
    pub owner_layer: Option<Layer>,
    /// An active memory in scope with the same normalised content hash.
    pub same_hash: Option<Existing>,
    /// A memory in scope, in any status, with the same hash that already cites every source
    /// message of the op: the op is a replay of an extraction that already happened.
    pub replay_of: Option<Existing>,
    /// The most similar active memory of the same kind in scope, with its cosine.
    pub nearest: Option<(Existing, f32)>,
    /// The active memory of the same kind and key in the same partition.
    pub same_key: Option<Existing>,
    /// The op's target, resolved (for every op but add).
    pub target: Option<Existing>,
}

/// How a new memory relates to the one it replaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Replacement {
    /// The old one is superseded (a correction or a newer value).
    Supersedes,
    /// The old one is marked contradicted (proven wrong).
    Contradicts,
}

/// What the engine must do. Turned into a [`crate::verdict::Verdict`] once applied.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Write the draft with this status, possibly replacing an older memory.
    Write {
        /// Active, or provisional for tenant-scoped facts.
        status: Status,
        /// The memory it replaces.
        replaces: Option<(MemoryId, Replacement)>,
    },
    /// Change nothing: the op was already applied from the same message.
    Replay {
        /// The memory it produced back then.
        existing: MemoryId,
    },
    /// Write nothing; reinforce the existing memory.
    Reinforce {
        /// The existing memory.
        existing: MemoryId,
        /// How it was recognised.
        by: DedupBy,
    },
    /// Close the open loop.
    Close {
        /// The loop.
        target: MemoryId,
    },
    /// Archive the memory at the user's request.
    Forget {
        /// The memory.
        target: MemoryId,
    },
    /// Change nothing.
    Reject(RejectReason),
}

/// Confidence floor for a kind: its row says which of the two tuned floors applies.
pub fn confidence_floor(kind: Kind, t: &GateTuning) -> f32 {
    match kind.spec().confidence_floor {
        Floor::Base => t.min_confidence,
        Floor::Raised => t.fact_min_confidence,
    }
}

/// Salience floor for a kind: its row says which of the two tuned floors applies.
pub fn salience_floor(kind: Kind, t: &GateTuning) -> f32 {
    match kind.spec().salience_floor {
        Floor::Base => t.min_salience,
        Floor::Raised => t.ephemeral_min_salience,
    }
}

/// Judges one op. Pure and total: every input yields a decision.
pub fn judge(op: &ProposedOp, ctx: &GateContext, t: &GateTuning) -> Decision {
    if let Some(e) = &ctx.replay_of {
        return Decision::Replay { existing: e.id };
    }
    let target = || ctx.target.as_ref().filter(|e| e.status == Status::Active);
    match &op.action {
        Action::Forget(_) => {
            return match target() {
                Some(e) => Decision::Forget { target: e.id },
                None => Decision::Reject(RejectReason::TargetNotFound { op: "forget".into() }),
            };
        }
        Action::CloseLoop(_) => {
            return match target() {
                Some(e) if e.kind == Kind::OpenLoop => Decision::Close { target: e.id },
                Some(e) => Decision::Reject(RejectReason::NotAnOpenLoop { target: e.id, kind: e.kind }),
                None => Decision::Reject(RejectReason::TargetNotFound { op: "close_loop".into() }),
            };
        }
        Action::Reinforce(_) => {
            return match target() {
                Some(e) => Decision::Reinforce { existing: e.id, by: DedupBy::Explicit },
                None => Decision::Reject(RejectReason::TargetNotFound { op: "reinforce".into() }),
            };
        }
        // The engine writes an amendment as an update of its target, text composed; one that
        // reaches the gate as it was proposed has nothing to amend unless its target resolved.
        Action::Amend(_) if target().is_none() => {
            return Decision::Reject(RejectReason::TargetNotFound { op: "amend".into() });
        }
        Action::Add | Action::Update(_) | Action::Contradict(_) | Action::Amend(_) => {}
    }

    let draft = &op.draft;
    if let Some(reason) = content_problem(draft.kind, &draft.content, t) {
        return Decision::Reject(reason);
    }
    // A key or value is stored beside the content: the same promise holds for both.
    if let Some(f) = [&draft.key, &draft.value].into_iter().flatten().find_map(|t| pii::detect(t).into_iter().next()) {
        return Decision::Reject(RejectReason::ContainsPii { kind: f.kind });
    }
    let min_conf = confidence_floor(draft.kind, t);
    // NaN compares false either way: `is_nan` keeps a NaN from slipping past the floor.
    if draft.confidence.is_nan() || draft.confidence < min_conf {
        return Decision::Reject(RejectReason::LowConfidence { got: draft.confidence, min: min_conf });
    }
    let min_sal = salience_floor(draft.kind, t);
    if draft.salience.is_nan() || draft.salience < min_sal {
        return Decision::Reject(RejectReason::LowSalience { got: draft.salience, min: min_sal });
    }

    // Exact duplicate: the statement is already known, whatever the op said.
    if let Some(e) = ctx.same_hash.as_ref().filter(|e| e.status == Status::Active) {
        return Decision::Reinforce { existing: e.id, by: DedupBy::Hash };
    }

    // An explicit replacement target wins over key and similarity.
    let explicit = match &op.action {
        Action::Update(_) | Action::Amend(_) => target().map(|e| (e.id, Replacement::Supersedes)),
        Action::Contradict(_) => target().map(|e| (e.id, Replacement::Contradicts)),
        _ => None,
    };

    // Same key: same value reinforces, a new value supersedes (most recent assertion wins).
    let keyed = match ctx.same_key.as_ref().filter(|e| e.status == Status::Active && e.kind == draft.kind) {
        Some(e) if draft.key.is_some() => {
            let same_value = match (&e.value, &draft.value) {
                (Some(a), Some(b)) => normalize(a) == normalize(b),
                _ => false,
            };
            if same_value && explicit.is_none() {
                return Decision::Reinforce { existing: e.id, by: DedupBy::Key };
            }
            Some((e.id, Replacement::Supersedes))
        }
        _ => None,
    };

    if explicit.is_none() && keyed.is_none() {
        if let Some((e, cos)) = &ctx.nearest {
            if e.status == Status::Active && e.kind == draft.kind && *cos >= t.dedup_cosine {
                return Decision::Reinforce { existing: e.id, by: DedupBy::Embedding { cosine: *cos } };
            }
        }
    }

    let status = match ctx.owner_layer {
        Some(Layer::Tenant | Layer::TenantAgent) => Status::Provisional,
        _ => Status::Active,
    };
    Decision::Write { status, replaces: explicit.or(keyed) }
}

/// Content rules shared by extraction and by memories people add through the API.
pub fn content_problem(kind: Kind, content: &str, t: &GateTuning) -> Option<RejectReason> {
    if kind.is_authored_only() {
        return Some(RejectReason::PolicyNotExtractable);
    }
    let chars = content.trim().chars().count();
    if chars < t.min_content_chars {
        return Some(RejectReason::TooShort { chars, min: t.min_content_chars });
    }
    if chars > t.max_content_chars {
        return Some(RejectReason::TooLong { chars, max: t.max_content_chars });
    }
    pii::detect(content).first().map(|f| RejectReason::ContainsPii { kind: f.kind })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::op::{Draft, Target};
    use crate::pii::PiiKind;
    use proptest::prelude::*;

    fn t() -> GateTuning {
        GateTuning::default()
    }

    fn add(kind: Kind, content: &str, conf: f32, sal: f32) -> ProposedOp {
        ProposedOp { action: Action::Add, draft: Draft::new(kind, content, conf, sal), sources: vec![] }
    }

    fn existing(kind: Kind) -> Existing {
        Existing { id: MemoryId::new(), kind, status: Status::Active, value: None }
    }

    fn user_ctx() -> GateContext {
        GateContext { owner_layer: Some(Layer::User), ..Default::default() }
    }

    #[test]
    fn a_good_profile_fact_is_written_active() {
        let d = judge(&add(Kind::Profile, "User's name is Dana", 0.9, 0.8), &user_ctx(), &t());
        assert_eq!(d, Decision::Write { status: Status::Active, replaces: None });
    }

    #[test]
    fn short_content_and_low_scores_are_rejected() {
        let ctx = user_ctx();
        assert!(matches!(
            judge(&add(Kind::Profile, "ok", 0.9, 0.9), &ctx, &t()),
            Decision::Reject(RejectReason::TooShort { chars: 2, .. })
        ));
        assert!(matches!(
            judge(&add(Kind::Profile, &"x".repeat(3000), 0.9, 0.9), &ctx, &t()),
            Decision::Reject(RejectReason::TooLong { .. })
        ));
        assert!(matches!(
            judge(&add(Kind::Profile, "User likes long walks", 0.39, 0.9), &ctx, &t()),
            Decision::Reject(RejectReason::LowConfidence { .. })
        ));
        assert!(matches!(
            judge(&add(Kind::Profile, "User likes long walks", 0.9, 0.1), &ctx, &t()),
            Decision::Reject(RejectReason::LowSalience { .. })
        ));
        assert!(matches!(
            judge(&add(Kind::Profile, "User likes long walks", f32::NAN, 0.9), &ctx, &t()),
            Decision::Reject(RejectReason::LowConfidence { .. })
        ));
    }

    #[test]
    fn facts_and_ephemerals_have_stricter_floors() {
        let ctx = user_ctx();
        assert!(matches!(
            judge(&add(Kind::Fact, "User's stack is Rust and Postgres", 0.6, 0.9), &ctx, &t()),
            Decision::Reject(RejectReason::LowConfidence { min, .. }) if min == 0.7
        ));
        assert!(matches!(
            judge(&add(Kind::Ephemeral, "User feels tired today", 0.9, 0.5), &ctx, &t()),
            Decision::Reject(RejectReason::LowSalience { min, .. }) if min == 0.6
        ));
        assert!(matches!(
            judge(&add(Kind::Ephemeral, "User feels tired today", 0.9, 0.7), &ctx, &t()),
            Decision::Write { .. }
        ));
    }

    #[test]
    fn pii_and_policies_never_pass() {
        let ctx = user_ctx();
        assert_eq!(
            judge(&add(Kind::Fact, "User's card is 4111 1111 1111 1111", 0.9, 0.9), &ctx, &t()),
            Decision::Reject(RejectReason::ContainsPii { kind: PiiKind::CardNumber })
        );
        let mut keyed = add(Kind::Profile, "User's contact address", 0.9, 0.9);
        keyed.draft.value = Some("dana@example.org".into());
        assert_eq!(judge(&keyed, &ctx, &t()), Decision::Reject(RejectReason::ContainsPii { kind: PiiKind::Email }));
        keyed.draft.value = None;
        keyed.draft.key = Some("iban DE89370400440532013000".into());
        assert_eq!(judge(&keyed, &ctx, &t()), Decision::Reject(RejectReason::ContainsPii { kind: PiiKind::Iban }));
        assert_eq!(
            judge(&add(Kind::Policy, "Never discuss competitor pricing", 0.99, 0.99), &ctx, &t()),
            Decision::Reject(RejectReason::PolicyNotExtractable)
        );
    }

    #[test]
    fn duplicates_reinforce_instead_of_writing() {
        let e = existing(Kind::Profile);
        let ctx = GateContext { same_hash: Some(e.clone()), ..user_ctx() };
        assert_eq!(
            judge(&add(Kind::Profile, "User's name is Dana", 0.9, 0.8), &ctx, &t()),
            Decision::Reinforce { existing: e.id, by: DedupBy::Hash }
        );
        let ctx = GateContext { nearest: Some((e.clone(), 0.95)), ..user_ctx() };
        assert_eq!(
            judge(&add(Kind::Profile, "User is called Dana", 0.9, 0.8), &ctx, &t()),
            Decision::Reinforce { existing: e.id, by: DedupBy::Embedding { cosine: 0.95 } }
        );
        // Below the threshold, or a different kind, is a new memory.
        let ctx = GateContext { nearest: Some((e.clone(), 0.80)), ..user_ctx() };
        assert!(matches!(
            judge(&add(Kind::Profile, "User is called Dana", 0.9, 0.8), &ctx, &t()),
            Decision::Write { .. }
        ));
        let ctx = GateContext { nearest: Some((existing(Kind::Lore), 0.99)), ..user_ctx() };
        assert!(matches!(
            judge(&add(Kind::Profile, "User is called Dana", 0.9, 0.8), &ctx, &t()),
            Decision::Write { .. }
        ));
        // A non-active row is not a duplicate.
        let mut stale = e;
        stale.status = Status::Stale;
        let ctx = GateContext { same_hash: Some(stale), ..user_ctx() };
        assert!(matches!(
            judge(&add(Kind::Profile, "User's name is Dana", 0.9, 0.8), &ctx, &t()),
            Decision::Write { .. }
        ));
    }

    #[test]
    fn same_key_preferences_supersede_or_reinforce() {
        let mut old = existing(Kind::Preference);
        old.value = Some("short".into());
        let ctx = GateContext { same_key: Some(old.clone()), ..user_ctx() };
        let longer = ProposedOp {
            action: Action::Add,
            draft: Draft::new(Kind::Preference, "User prefers detailed answers", 0.9, 0.7)
                .keyed("answer_length", "long"),
            sources: vec![],
        };
        assert_eq!(
            judge(&longer, &ctx, &t()),
            Decision::Write { status: Status::Active, replaces: Some((old.id, Replacement::Supersedes)) }
        );
        let same = ProposedOp {
            draft: Draft::new(Kind::Preference, "User wants short answers", 0.9, 0.7).keyed("answer_length", "Short"),
            ..longer
        };
        assert_eq!(judge(&same, &ctx, &t()), Decision::Reinforce { existing: old.id, by: DedupBy::Key });
    }

    #[test]
    fn targeted_ops_need_an_active_target() {
        let loop_ = existing(Kind::OpenLoop);
        let op =
            |action| ProposedOp { action, draft: Draft::new(Kind::OpenLoop, "call mom", 0.9, 0.5), sources: vec![] };
        let ctx = GateContext { target: Some(loop_.clone()), ..user_ctx() };
        let tgt = Target::Matching("call mom".into());
        assert_eq!(judge(&op(Action::CloseLoop(tgt.clone())), &ctx, &t()), Decision::Close { target: loop_.id });
        assert_eq!(judge(&op(Action::Forget(tgt.clone())), &ctx, &t()), Decision::Forget { target: loop_.id });
        assert_eq!(
            judge(&op(Action::Reinforce(tgt.clone())), &ctx, &t()),
            Decision::Reinforce { existing: loop_.id, by: DedupBy::Explicit }
        );
        let none = user_ctx();
        assert!(matches!(
            judge(&op(Action::Forget(tgt.clone())), &none, &t()),
            Decision::Reject(RejectReason::TargetNotFound { .. })
        ));
        let profile = existing(Kind::Profile);
        let ctx = GateContext { target: Some(profile.clone()), ..user_ctx() };
        assert_eq!(
            judge(&op(Action::CloseLoop(tgt)), &ctx, &t()),
            Decision::Reject(RejectReason::NotAnOpenLoop { target: profile.id, kind: Kind::Profile })
        );
    }

    #[test]
    fn corrections_supersede_and_contradictions_contradict() {
        let old = existing(Kind::Profile);
        let ctx = GateContext { target: Some(old.clone()), nearest: Some((old.clone(), 0.97)), ..user_ctx() };
        let draft = Draft::new(Kind::Profile, "User works in product design", 0.9, 0.8);
        let upd = ProposedOp { action: Action::Update(Target::Id(old.id)), draft: draft.clone(), sources: vec![] };
        assert_eq!(
            judge(&upd, &ctx, &t()),
            Decision::Write { status: Status::Active, replaces: Some((old.id, Replacement::Supersedes)) }
        );
        let con = ProposedOp { action: Action::Contradict(Target::Id(old.id)), draft: draft.clone(), sources: vec![] };
        assert_eq!(
            judge(&con, &ctx, &t()),
            Decision::Write { status: Status::Active, replaces: Some((old.id, Replacement::Contradicts)) }
        );
        // A correction whose target is gone still records the new statement.
        let upd = ProposedOp { action: Action::Update(Target::Matching("x".into())), draft, sources: vec![] };
        assert_eq!(judge(&upd, &user_ctx(), &t()), Decision::Write { status: Status::Active, replaces: None });
    }

    #[test]
    fn a_replayed_extraction_changes_nothing_whatever_the_op() {
        let old = existing(Kind::Profile);
        let ctx = GateContext { replay_of: Some(old.clone()), target: Some(existing(Kind::Profile)), ..user_ctx() };
        let d = Draft::new(Kind::Profile, "User is a backend engineer", 0.9, 0.8);
        for action in [Action::Add, Action::Update(Target::Key("job".into()))] {
            let op = ProposedOp { action, draft: d.clone(), sources: vec![] };
            assert_eq!(judge(&op, &ctx, &t()), Decision::Replay { existing: old.id });
        }
    }

    #[test]
    fn tenant_scoped_writes_are_provisional() {
        let ctx = GateContext { owner_layer: Some(Layer::Tenant), ..Default::default() };
        let d = judge(&add(Kind::Fact, "Acme's database runs in us-east-1", 0.9, 0.8), &ctx, &t());
        assert_eq!(d, Decision::Write { status: Status::Provisional, replaces: None });
    }

    proptest! {
        #[test]
        fn every_kind_is_judged_by_its_own_floors(
            conf in 0.0f32..1.0,
            sal in 0.0f32..1.0,
            kind in proptest::sample::select(Kind::ALL),
        ) {
            let op = add(kind, "User enjoys sailing on weekends", conf, sal);
            let d = judge(&op, &user_ctx(), &t());
            if kind.is_authored_only() {
                prop_assert_eq!(d, Decision::Reject(RejectReason::PolicyNotExtractable));
            } else if conf < confidence_floor(kind, &t()) || sal < salience_floor(kind, &t()) {
                prop_assert!(matches!(d, Decision::Reject(_)), "expected a rejection, got {:?}", d);
            } else {
                prop_assert!(matches!(d, Decision::Write { .. }), "expected a write, got {:?}", d);
            }
        }

        #[test]
        fn a_kinds_floors_are_the_ones_its_row_names(kind in proptest::sample::select(Kind::ALL)) {
            let g = GateTuning { min_confidence: 0.1, fact_min_confidence: 0.9, min_salience: 0.2, ephemeral_min_salience: 0.8, ..t() };
            let spec = kind.spec();
            prop_assert_eq!(confidence_floor(kind, &g), if spec.confidence_floor == Floor::Raised { 0.9 } else { 0.1 });
            prop_assert_eq!(salience_floor(kind, &g), if spec.salience_floor == Floor::Raised { 0.8 } else { 0.2 });
        }

        #[test]
        fn the_gate_is_total_on_arbitrary_text(s in "\\PC{0,300}") {
            let _ = judge(&add(Kind::Profile, &s, 0.9, 0.9), &user_ctx(), &t());
        }
    }
}
