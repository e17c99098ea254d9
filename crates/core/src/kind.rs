//! The closed vocabularies of memory: kind, status, surface policy — and each kind's defaults.

use std::fmt;

use serde::{Deserialize, Serialize};

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
    /// What a memory is; each kind has its own thresholds, decay, retrieval path and surfacing.
    Kind, "kind" {
        /// Stable identity: name, job, home, family.
        Profile => "profile",
        /// Likes, dislikes, how to do things; keyed ones are looked up exactly.
        Preference => "preference",
        /// A durable assertion about the user's world (stack, account, infra).
        Fact => "fact",
        /// Something that happened on a date.
        Event => "event",
        /// A completed task with outcome and key steps.
        Episode => "episode",
        /// A plan, promise or unresolved thread, possibly with a due date.
        OpenLoop => "open_loop",
        /// Inside jokes, nicknames, rituals of this relationship.
        Lore => "lore",
        /// How to interact: tone, length, initiative; boundaries.
        Protocol => "protocol",
        /// Transient context such as today's mood.
        Ephemeral => "ephemeral",
        /// A higher-level synthesis produced by a job.
        Reflection => "reflection",
        /// A consolidated pattern from many episodes.
        Knowledge => "knowledge",
        /// A tenant rule authored by an admin; never extracted.
        Policy => "policy",
        /// A rolling memo: 2-3 highlights of a range of one chat's messages,
        /// written by a job or by the user, shown in the chat's block in order.
        Memo => "memo",
        /// A daily, weekly or monthly summary of a user's conversations, written by a job.
        Summary => "summary",
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

impl Kind {
    /// The surface policy a memory of this kind gets unless its extractor says otherwise.
    pub fn default_surface(self) -> Surface {
        match self {
            Kind::Profile | Kind::Event | Kind::Lore | Kind::Knowledge | Kind::Memo => Surface::Speak,
            Kind::Preference
            | Kind::Episode
            | Kind::Protocol
            | Kind::Ephemeral
            | Kind::Reflection
            | Kind::Policy
            | Kind::Summary => Surface::Adapt,
            Kind::Fact => Surface::FactCheck,
            Kind::OpenLoop => Surface::Continue,
        }
    }

    /// Kinds that are only ever authored, never extracted from conversation.
    pub fn is_authored_only(self) -> bool {
        matches!(self, Kind::Policy)
    }

    /// Kinds written by jobs that read many messages or memories (memos, summaries,
    /// reflections), never proposed by an extractor reading one batch: they carry
    /// `derived_from` links or a message range instead.
    pub fn is_synthesised(self) -> bool {
        matches!(self, Kind::Memo | Kind::Summary | Kind::Reflection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
