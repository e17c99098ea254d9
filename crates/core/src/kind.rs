//! The closed vocabularies of memory: kind, status, surface policy — and the kind table
//! ([`Kind::spec`]) that every per-kind rule reads.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::export::MemoryMdHeading;
use crate::id::MemoryId;

/// Declares a fieldless enum with a stable snake_case text form used in storage, JSON and CLI.
macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident, $what:literal { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stable text form.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::error::CoreError;
            fn from_str(s: &str) -> ::std::result::Result<Self, $crate::error::CoreError> {
                match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
                    $($text => Ok($name::$variant),)+
                    _ => Err($crate::error::CoreError::UnknownVariant {
                        what: $what,
                        value: s.to_string(),
                        expected: concat!($($text, " "),+),
                    }),
                }
            }
        }
    };
}
pub(crate) use text_enum;

text_enum!(
    /// What a memory is. Everything that differs between kinds is one row of [`Kind::spec`].
    Kind, "kind" {
        /// Who the user is.
        Profile => "profile",
        /// What the user likes and how they want things done.
        Preference => "preference",
        /// An assertion about the user's world.
        Fact => "fact",
        /// Something that happened.
        Event => "event",
        /// A task done together.
        Episode => "episode",
        /// A thread still to be picked up.
        OpenLoop => "open_loop",
        /// The relationship's own language.
        Lore => "lore",
        /// How to interact.
        Protocol => "protocol",
        /// Context that will not last.
        Ephemeral => "ephemeral",
        /// An insight drawn from many memories.
        Reflection => "reflection",
        /// A pattern seen across chats.
        Knowledge => "knowledge",
        /// A tenant rule.
        Policy => "policy",
        /// A chat's rolling highlights.
        Memo => "memo",
        /// A period's summary.
        Summary => "summary",
        /// A rule an agent learned from what it did across sessions.
        Skill => "skill",
    }
);

text_enum!(
    /// Where a memory is in its life. Computed by the engine; callers can never set it.
    StatusKind, "status" {
        /// Written, but not yet trusted (e.g. tenant-scoped facts awaiting review).
        Provisional => "provisional",
        /// Recalled normally.
        Active => "active",
        /// Out of the retrieval pool through age; preserved.
        Stale => "stale",
        /// Hard-filtered, kept for audit (also the result of a user's delete).
        Archived => "archived",
        /// Proven wrong.
        Contradicted => "contradicted",
        /// Replaced by a newer memory.
        Superseded => "superseded",
        /// Content removed by erasure; only a tombstone remains.
        Erased => "erased",
    }
);

text_enum!(
    /// How the generating model should use an item.
    Surface, "surface" {
        /// Mention naturally.
        Speak => "speak",
        /// Shape the answer silently.
        Adapt => "adapt",
        /// Never raise unless the user does.
        Avoid => "avoid",
        /// Pick the thread up.
        Continue => "continue",
        /// Do not contradict.
        FactCheck => "fact_check",
    }
);

/// Status with the data some states need, so a superseded row always says by what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Status {
    /// See [`StatusKind::Provisional`].
    Provisional,
    /// See [`StatusKind::Active`].
    Active,
    /// See [`StatusKind::Stale`].
    Stale,
    /// See [`StatusKind::Archived`].
    Archived,
    /// See [`StatusKind::Contradicted`].
    Contradicted,
    /// Replaced by `by`.
    Superseded {
        /// The memory that replaced this one.
        by: MemoryId,
    },
    /// See [`StatusKind::Erased`].
    Erased,
}

impl Status {
    /// The variant without its data, for storage and filters.
    pub fn kind(self) -> StatusKind {
        match self {
            Status::Provisional => StatusKind::Provisional,
            Status::Active => StatusKind::Active,
            Status::Stale => StatusKind::Stale,
            Status::Archived => StatusKind::Archived,
            Status::Contradicted => StatusKind::Contradicted,
            Status::Superseded { .. } => StatusKind::Superseded,
            Status::Erased => StatusKind::Erased,
        }
    }

    /// Rebuilds a status from storage; a superseded row without its successor is corrupt.
    pub fn from_parts(kind: StatusKind, superseded_by: Option<MemoryId>) -> Option<Self> {
        Some(match kind {
            StatusKind::Provisional => Status::Provisional,
            StatusKind::Active => Status::Active,
            StatusKind::Stale => Status::Stale,
            StatusKind::Archived => Status::Archived,
            StatusKind::Contradicted => Status::Contradicted,
            StatusKind::Superseded => Status::Superseded { by: superseded_by? },
            StatusKind::Erased => Status::Erased,
        })
    }

    /// The successor of a superseded memory.
    pub fn superseded_by(self) -> Option<MemoryId> {
        match self {
            Status::Superseded { by } => Some(by),
            _ => None,
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Superseded { by } => write!(f, "superseded by {by}"),
            other => f.write_str(other.kind().as_str()),
        }
    }
}

/// Where memories of a kind come from. One origin per kind, so a kind can never be both
/// extractable and synthesised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Read off one batch of conversation by an extractor (heuristic or LLM).
    Extracted,
    /// Written by a job that reads many messages or memories; such rows carry `derived_from`
    /// links or a message range, and are never proposed by an extractor.
    Synthesised,
    /// Written by a person through a dedicated path (an admin's policy); the gate refuses it.
    Authored,
}

/// Which of the gate's two floors a kind must clear. The numbers stay in
/// [`crate::config::GateTuning`] so deployments tune them; the table only says which applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Floor {
    /// `gate.min_confidence` / `gate.min_salience`.
    Base,
    /// `gate.fact_min_confidence` / `gate.ephemeral_min_salience`: for kinds that are costly
    /// when wrong (facts are checked against) or cheap to regenerate (today's mood).
    Raised,
}

/// How an active memory of a kind leaves the recall pool with time. The periods are in
/// [`crate::config::LifecycleTuning`]; [`crate::lifecycle::next`] applies the rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aging {
    /// Stays active until replaced, forgotten, expired or archived by the per-user cap.
    Durable,
    /// Stale after `lifecycle.ephemeral_stale_days` without being recalled or updated.
    StaleWhenUnreferenced,
    /// Stale after `lifecycle.event_stale_days` without being reinforced.
    StaleWhenUnreinforced,
    /// Closed (archived) once overdue by `lifecycle.open_loop_overdue_days`, or after
    /// `lifecycle.open_loop_silence_days` unreferenced.
    ClosesWhenOverdueOrSilent,
}

/// Everything that differs between kinds, in one row per kind, so that adding a kind is one
/// row here plus whatever the compiler then points at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KindSpec {
    /// One line saying what the kind holds: shown to the extraction model, in the OpenAPI
    /// document, the MCP tool schemas and the docs, so all of them say the same thing.
    pub description: &'static str,
    /// Extra guidance for the extraction model only (fields to set, surfaces to choose).
    pub extraction_hint: Option<&'static str>,
    /// Who writes memories of this kind.
    pub origin: Origin,
    /// The surface policy a memory gets unless its extractor says otherwise.
    pub surface: Surface,
    /// Default power-law decay exponent (λ in `(1 + t)^-λ`, t in days); `decay.lambda.<kind>`
    /// overrides it.
    pub decay_lambda: f32,
    /// Confidence floor at the gate.
    pub confidence_floor: Floor,
    /// Salience floor at the gate.
    pub salience_floor: Floor,
    /// How it ages out of the recall pool.
    pub aging: Aging,
    /// Whether the per-user cap may archive it; boundaries and rules forgotten because too much
    /// else was said would be the worst kind of forgetting.
    pub capped: bool,
    /// Whether its recurrence across chats is consolidated into [`Kind::Knowledge`].
    pub consolidates: bool,
    /// The MEMORY.md heading it is exported under; `None` leaves it out of the file.
    pub memory_md: Option<MemoryMdHeading>,
}

impl Kind {
    /// This kind's row of the table. The one exhaustive match over kinds: a new variant fails to
    /// compile until its row is written.
    pub const fn spec(self) -> &'static KindSpec {
        use Aging::*;
        use Floor::*;
        use MemoryMdHeading::*;
        use Origin::*;
        match self {
            Kind::Profile => &KindSpec {
                description: "stable identity (name, job, home, family, pets)",
                extraction_hint: None,
                origin: Extracted,
                surface: Surface::Speak,
                decay_lambda: 0.05,
                confidence_floor: Base,
                salience_floor: Base,
                aging: Durable,
                capped: true,
                consolidates: false,
                memory_md: Some(AboutTheUser),
            },
            Kind::Preference => &KindSpec {
                description: "likes, dislikes, how the user wants things done",
                extraction_hint: None,
                origin: Extracted,
                surface: Surface::Adapt,
                // Slow: a newer value supersedes a preference rather than time.
                decay_lambda: 0.05,
                confidence_floor: Base,
                salience_floor: Base,
                aging: Durable,
                capped: true,
                consolidates: false,
                memory_md: Some(Preferences),
            },
            Kind::Fact => &KindSpec {
                description: "a durable assertion about the user's world (stack, account, infrastructure)",
                extraction_hint: None,
                origin: Extracted,
                surface: Surface::FactCheck,
                decay_lambda: 0.10,
                confidence_floor: Raised,
                salience_floor: Base,
                aging: Durable,
                capped: true,
                consolidates: true,
                memory_md: Some(Facts),
            },
            Kind::Event => &KindSpec {
                description: "something that happened",
                extraction_hint: Some("set happened_at when the date is known"),
                origin: Extracted,
                surface: Surface::Speak,
                decay_lambda: 0.30,
                confidence_floor: Base,
                salience_floor: Base,
                aging: StaleWhenUnreinforced,
                capped: true,
                consolidates: true,
                memory_md: Some(Events),
            },
            Kind::Episode => &KindSpec {
                description: "a task completed together: what was done and how it ended",
                extraction_hint: None,
                origin: Extracted,
                surface: Surface::Adapt,
                decay_lambda: 0.10,
                confidence_floor: Base,
                salience_floor: Base,
                aging: Durable,
                capped: true,
                consolidates: true,
                memory_md: Some(Events),
            },
            Kind::OpenLoop => &KindSpec {
                description: "a plan, promise or unresolved thread",
                extraction_hint: Some("set due when a date is known"),
                origin: Extracted,
                surface: Surface::Continue,
                decay_lambda: 0.20,
                confidence_floor: Base,
                salience_floor: Base,
                aging: ClosesWhenOverdueOrSilent,
                capped: true,
                consolidates: false,
                memory_md: Some(OpenLoops),
            },
            Kind::Lore => &KindSpec {
                description: "nicknames, inside jokes, rituals of this relationship",
                extraction_hint: None,
                origin: Extracted,
                surface: Surface::Speak,
                decay_lambda: 0.05,
                confidence_floor: Base,
                salience_floor: Base,
                aging: Durable,
                capped: true,
                consolidates: false,
                memory_md: Some(SharedLanguage),
            },
            Kind::Protocol => &KindSpec {
                description: "how to interact (tone, length, initiative) and boundaries",
                extraction_hint: Some("a boundary (\"never mention X\") gets surface avoid"),
                origin: Extracted,
                surface: Surface::Adapt,
                // Behaves like a pinned row.
                decay_lambda: 0.0,
                confidence_floor: Base,
                salience_floor: Base,
                aging: Durable,
                capped: false,
                consolidates: false,
                memory_md: Some(Boundaries),
            },
            Kind::Ephemeral => &KindSpec {
                description: "transient context such as today's mood",
                extraction_hint: None,
                origin: Extracted,
                surface: Surface::Adapt,
                decay_lambda: 0.80,
                confidence_floor: Base,
                salience_floor: Raised,
                aging: StaleWhenUnreferenced,
                capped: true,
                consolidates: false,
                memory_md: None,
            },
            Kind::Reflection => &KindSpec {
                description: "a higher-level insight a job drew from many memories",
                extraction_hint: None,
                origin: Synthesised,
                surface: Surface::Adapt,
                decay_lambda: 0.10,
                confidence_floor: Base,
                salience_floor: Base,
                aging: Durable,
                capped: true,
                consolidates: false,
                memory_md: Some(Reflections),
            },
            Kind::Knowledge => &KindSpec {
                description: "an assertion repeated across chats, consolidated by a job from facts, events and episodes",
                extraction_hint: None,
                origin: Synthesised,
                surface: Surface::Speak,
                // Much slower than the episodes it comes from.
                decay_lambda: 0.02,
                confidence_floor: Base,
                salience_floor: Base,
                aging: Durable,
                capped: true,
                consolidates: false,
                memory_md: Some(Facts),
            },
            Kind::Policy => &KindSpec {
                description: "a tenant rule authored by an admin",
                extraction_hint: None,
                origin: Authored,
                surface: Surface::Adapt,
                decay_lambda: 0.0,
                confidence_floor: Base,
                salience_floor: Base,
                aging: Durable,
                capped: false,
                consolidates: false,
                memory_md: None,
            },
            Kind::Memo => &KindSpec {
                description: "2-3 highlights of a range of one chat's messages, written by a job or by the user",
                extraction_hint: None,
                origin: Synthesised,
                surface: Surface::Speak,
                // A chat's timeline: fades slowly.
                decay_lambda: 0.05,
                confidence_floor: Base,
                salience_floor: Base,
                aging: Durable,
                capped: true,
                consolidates: false,
                memory_md: None,
            },
            Kind::Summary => &KindSpec {
                description: "a daily, weekly or monthly summary of a user's conversations, written by a job",
                extraction_hint: None,
                origin: Synthesised,
                surface: Surface::Adapt,
                decay_lambda: 0.10,
                confidence_floor: Base,
                salience_floor: Base,
                aging: Durable,
                capped: true,
                consolidates: false,
                memory_md: None,
            },
            // Mined by consolidation from an agent's observations (`crate::skill`), provisional
            // at the agent layer until a person approves it; exported one file per skill.
            Kind::Skill => &KindSpec {
                description: "a rule an agent learned from what it did across sessions (\"when X, do Y\"), mined from its observations",
                extraction_hint: None,
                origin: Synthesised,
                surface: Surface::Adapt,
                // A rule a person approved holds until rejected or replaced, like a protocol.
                decay_lambda: 0.0,
                confidence_floor: Base,
                salience_floor: Base,
                aging: Durable,
                capped: false,
                consolidates: false,
                memory_md: None,
            },
        }
    }

    /// The surface policy a memory of this kind gets unless its extractor says otherwise.
    pub fn default_surface(self) -> Surface {
        self.spec().surface
    }

    /// Kinds that are only ever authored, never extracted from conversation.
    pub fn is_authored_only(self) -> bool {
        self.spec().origin == Origin::Authored
    }

    /// Kinds written by jobs that read many messages or memories (memos, summaries,
    /// reflections, knowledge), never proposed by an extractor reading one batch: they carry
    /// `derived_from` links or a message range instead.
    pub fn is_synthesised(self) -> bool {
        self.spec().origin == Origin::Synthesised
    }

    /// Kinds a conversation can teach: the only ones an extractor may propose.
    pub fn is_extractable(self) -> bool {
        self.spec().origin == Origin::Extracted
    }

    /// Every kind an extractor may propose, in declaration order.
    pub fn extractable() -> impl Iterator<Item = Kind> {
        Kind::ALL.iter().copied().filter(|k| k.is_extractable())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use proptest::sample::select;

    #[test]
    fn text_forms_round_trip() {
        for k in Kind::ALL {
            assert_eq!(k.as_str().parse::<Kind>().unwrap(), *k);
            assert_eq!(serde_json::to_string(k).unwrap(), format!("\"{}\"", k.as_str()));
        }
        for s in Surface::ALL {
            assert_eq!(s.as_str().parse::<Surface>().unwrap(), *s);
        }
        for s in StatusKind::ALL {
            assert_eq!(s.as_str().parse::<StatusKind>().unwrap(), *s);
        }
        assert_eq!("open-loop".parse::<Kind>().unwrap(), Kind::OpenLoop);
        let err = "profil".parse::<Kind>().unwrap_err().to_string();
        assert!(err.contains("profile") && err.contains("profil"), "{err}");
    }

    #[test]
    fn superseded_status_needs_its_successor() {
        assert_eq!(Status::from_parts(StatusKind::Superseded, None), None);
        let by = MemoryId::new();
        let s = Status::from_parts(StatusKind::Superseded, Some(by)).unwrap();
        assert_eq!(s.superseded_by(), Some(by));
        assert_eq!(s.kind(), StatusKind::Superseded);
    }

    proptest! {
        #[test]
        fn every_kind_has_one_line_of_description(kind in select(Kind::ALL)) {
            let spec = kind.spec();
            prop_assert!(!spec.description.trim().is_empty(), "{kind} has no description");
            prop_assert!(!spec.description.contains('\n') && !spec.description.ends_with('.'));
            prop_assert!(spec.extraction_hint.is_none_or(|h| !h.trim().is_empty() && !h.contains('\n')));
            prop_assert!(spec.extraction_hint.is_none() || kind.is_extractable(), "{kind}: a hint nobody reads");
        }

        #[test]
        fn every_kind_has_exactly_one_origin(kind in select(Kind::ALL)) {
            let origins = [kind.is_extractable(), kind.is_synthesised(), kind.is_authored_only()];
            prop_assert_eq!(origins.iter().filter(|o| **o).count(), 1, "{}", kind);
            prop_assert_eq!(Kind::extractable().any(|k| k == kind), kind.is_extractable());
        }

        #[test]
        fn every_decay_rate_is_a_finite_non_negative_exponent(kind in select(Kind::ALL)) {
            let lambda = kind.spec().decay_lambda;
            prop_assert!(lambda.is_finite() && lambda >= 0.0, "{kind}: {lambda}");
        }

        #[test]
        fn only_what_extraction_reads_gets_raised_floors_or_hints(kind in select(Kind::ALL)) {
            let spec = kind.spec();
            if !kind.is_extractable() {
                prop_assert_eq!(spec.confidence_floor, Floor::Base);
                prop_assert_eq!(spec.salience_floor, Floor::Base);
            }
        }
    }

    #[test]
    fn jobs_write_knowledge_and_people_write_policies() {
        // Knowledge comes only from consolidation: a pattern across chats is never in one batch.
        assert!(Kind::Knowledge.is_synthesised() && !Kind::Knowledge.is_extractable());
        assert!(Kind::Policy.is_authored_only());
        assert!(!Kind::Protocol.spec().capped && !Kind::Policy.spec().capped);
    }
}
