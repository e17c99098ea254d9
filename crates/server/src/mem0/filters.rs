//! mem0's `filters` object, parsed into a typed tree and evaluated against memories.
//!
//! What is supported (docs/mem0.md lists it for users): `AND` / `OR` / `NOT`; the entity ids
//! `user_id`, `agent_id`, `app_id` (mnemo's agent), `run_id` (mnemo's chat) as a bare value or
//! `eq` / `ne` / `in` / `"*"`; `created_at` and `updated_at` with `gt` / `gte` / `lt` / `lte`;
//! `categories` (mnemo's kinds) with `in` / `contains`; `metadata` by equality of its keys.
//! Anything else is refused with a message naming the filter, so a query is never silently
//! answered with a wider result than asked.

use chrono::{DateTime, NaiveDate, Utc};
use mnemo::core::{Memory as Row, Metadata, Scope};
use serde_json::{Map, Value};

/// An entity id field of mem0, and the part of a mnemo scope it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Entity {
    /// `user_id`: the user.
    User,
    /// `agent_id`: the agent.
    Agent,
    /// `app_id`: also the agent (mnemo has one level for both; docs/mem0.md).
    App,
    /// `run_id`: the chat.
    Run,
}

impl Entity {
    /// Every entity field, in the order mem0 documents them.
    pub(crate) const ALL: [Entity; 4] = [Entity::User, Entity::Agent, Entity::App, Entity::Run];

    /// The field's name in mem0 requests.
    pub(crate) fn field(self) -> &'static str {
        match self {
            Entity::User => "user_id",
            Entity::Agent => "agent_id",
            Entity::App => "app_id",
            Entity::Run => "run_id",
        }
    }

    fn parse(field: &str) -> Option<Entity> {
        Entity::ALL.into_iter().find(|e| e.field() == field)
    }

    /// The value of this field for a memory or entity owned by `owner`.
    pub(crate) fn of(self, owner: &Scope) -> Option<String> {
        match self {
            Entity::User => owner.user.as_ref().map(ToString::to_string),
            Entity::Agent | Entity::App => owner.agent.as_ref().map(ToString::to_string),
            Entity::Run => owner.chat.as_ref().map(ToString::to_string),
        }
    }
}

/// A condition on an entity id.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Match {
    /// Equal to the value.
    Eq(String),
    /// Set and different from the value.
    Ne(String),
    /// One of the values.
    In(Vec<String>),
    /// Set at all (`"*"`).
    Any,
}

/// A time field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeField {
    /// When the memory was written.
    Created,
    /// When it last changed.
    Updated,
}

/// A comparison of a time with a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    /// Later than.
    Gt,
    /// Not earlier than.
    Gte,
    /// Earlier than.
    Lt,
    /// Not later than.
    Lte,
}

/// A parsed `filters` object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Filter {
    /// Every child holds (`AND`, and sibling keys).
    All(Vec<Filter>),
    /// Some child holds (`OR`).
    AnyOf(Vec<Filter>),
    /// The child does not hold (`NOT`).
    Not(Box<Filter>),
    /// An entity id condition.
    Entity(Entity, Match),
    /// A time bound.
    Time(TimeField, Cmp, DateTime<Utc>),
    /// The memory's kind is one of these (`categories: {in: [...]}`).
    CategoryIn(Vec<String>),
    /// The memory's kind contains this text, case-insensitively (`categories: {contains: ...}`).
    CategoryContains(String),
    /// Each of these keys of the memory's metadata equals the given value.
    Metadata(Metadata),
}

/// Why a filter was refused: the message names the filter.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported filter {path}: {why}")]
pub(crate) struct FilterError {
    path: String,
    why: String,
}

fn refuse(path: &str, why: impl Into<String>) -> FilterError {
    FilterError { path: format!("`{path}`"), why: why.into() }
}

impl Filter {
    /// Matches everything: what an absent `filters` means.
    pub(crate) fn everything() -> Filter {
        Filter::All(Vec::new())
    }

    /// Parses a `filters` value; `null` matches everything.
    pub(crate) fn parse(value: &Value) -> Result<Filter, FilterError> {
        match value {
            Value::Null => Ok(Filter::everything()),
            Value::Object(map) => object(map, "filters"),
            _ => Err(refuse("filters", "expected an object")),
        }
    }

    /// Adds `entity == value` to the filter (a top-level id in a request body).
    pub(crate) fn and_entity(self, entity: Entity, value: &str) -> Filter {
        let cond = Filter::Entity(entity, Match::Eq(value.to_string()));
        match self {
            Filter::All(mut v) => {
                v.push(cond);
                Filter::All(v)
            }
            other => Filter::All(vec![other, cond]),
        }
    }

    /// The entity ids the filter pins with a plain equality at its top level (the scope a write
    /// addressed through `filters` goes to).
    pub(crate) fn pinned(&self, entity: Entity) -> Option<&str> {
        match self {
            Filter::Entity(e, Match::Eq(v)) if *e == entity => Some(v),
            Filter::All(children) => children.iter().find_map(|c| c.pinned(entity)),
            _ => None,
        }
    }

    /// Whether some memory owned exactly by `owner` could match: the entity conditions decide,
    /// everything else is taken as possibly true. Used to pick which owners to read.
    pub(crate) fn may_hold_for(&self, owner: &Scope) -> bool {
        match self {
            Filter::All(v) => v.iter().all(|c| c.may_hold_for(owner)),
            Filter::AnyOf(v) => v.is_empty() || v.iter().any(|c| c.may_hold_for(owner)),
            // A negation of anything but an entity condition may hold for some row.
            Filter::Not(inner) => match inner.as_ref() {
                Filter::Entity(..) => !inner.may_hold_for(owner),
                _ => true,
            },
            Filter::Entity(e, m) => entity_matches(e.of(owner).as_deref(), m),
            Filter::Time(..) | Filter::CategoryIn(_) | Filter::CategoryContains(_) | Filter::Metadata(_) => true,
        }
    }

    /// Whether the memory matches.
    pub(crate) fn holds(&self, row: &Row) -> bool {
        match self {
            Filter::All(v) => v.iter().all(|c| c.holds(row)),
            Filter::AnyOf(v) => v.is_empty() || v.iter().any(|c| c.holds(row)),
            Filter::Not(inner) => !inner.holds(row),
            Filter::Entity(e, m) => entity_matches(e.of(&row.owner).as_deref(), m),
            Filter::Time(field, cmp, bound) => {
                let at = match field {
                    TimeField::Created => row.created_at,
                    TimeField::Updated => row.updated_at,
                };
                match cmp {
                    Cmp::Gt => at > *bound,
                    Cmp::Gte => at >= *bound,
                    Cmp::Lt => at < *bound,
                    Cmp::Lte => at <= *bound,
                }
            }
            Filter::CategoryIn(kinds) => kinds.iter().any(|k| k.eq_ignore_ascii_case(row.kind.as_str())),
            Filter::CategoryContains(text) => row.kind.as_str().contains(&text.to_lowercase()),
            Filter::Metadata(want) => {
                row.metadata.as_ref().is_some_and(|have| want.iter().all(|(k, v)| have.get(k) == Some(v)))
            }
        }
    }
}

fn entity_matches(value: Option<&str>, m: &Match) -> bool {
    match (value, m) {
        (Some(v), Match::Eq(want)) => v == want,
        (Some(v), Match::Ne(other)) => v != other,
        (Some(v), Match::In(set)) => set.iter().any(|s| s == v),
        (Some(_), Match::Any) => true,
        (None, _) => false,
    }
}

fn object(map: &Map<String, Value>, path: &str) -> Result<Filter, FilterError> {
    let mut all = Vec::with_capacity(map.len());
    for (key, value) in map {
        let here = format!("{path}.{key}");
        all.push(match key.as_str() {
            "AND" | "OR" => {
                let items = value.as_array().ok_or_else(|| refuse(&here, "expected a list of filters"))?;
                let children = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| match v {
                        Value::Object(m) => object(m, &format!("{here}[{i}]")),
                        _ => Err(refuse(&format!("{here}[{i}]"), "expected an object")),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                if key == "AND" { Filter::All(children) } else { Filter::AnyOf(children) }
            }
            "NOT" => {
                // mem0 writes NOT with a list (all of which must fail) or a single object.
                let inner = match value {
                    Value::Object(m) => object(m, &here)?,
                    Value::Array(items) => Filter::AnyOf(
                        items
                            .iter()
                            .enumerate()
                            .map(|(i, v)| match v {
                                Value::Object(m) => object(m, &format!("{here}[{i}]")),
                                _ => Err(refuse(&format!("{here}[{i}]"), "expected an object")),
                            })
                            .collect::<Result<Vec<_>, _>>()?,
                    ),
                    _ => return Err(refuse(&here, "expected an object or a list of filters")),
                };
                Filter::Not(Box::new(inner))
            }
            "created_at" => time(TimeField::Created, value, &here)?,
            "updated_at" => time(TimeField::Updated, value, &here)?,
            "categories" => categories(value, &here)?,
            "metadata" => metadata(value, &here)?,
            field => match Entity::parse(field) {
                Some(entity) => Filter::Entity(entity, entity_match(value, &here)?),
                None => return Err(refuse(&here, "not a field mnemo filters on (see docs/mem0.md)")),
            },
        });
    }
    Ok(if all.len() == 1 { all.remove(0) } else { Filter::All(all) })
}

fn id_text(value: &Value, path: &str) -> Result<String, FilterError> {
    match value {
        Value::String(s) if !s.is_empty() => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        _ => Err(refuse(path, "expected a non-empty string")),
    }
}

fn entity_match(value: &Value, path: &str) -> Result<Match, FilterError> {
    match value {
        Value::String(s) if s == "*" => Ok(Match::Any),
        Value::Object(ops) if ops.len() == 1 => {
            let (op, arg) = ops.iter().next().expect("one operator");
            let here = format!("{path}.{op}");
            match op.as_str() {
                "eq" => Ok(Match::Eq(id_text(arg, &here)?)),
                "ne" => Ok(Match::Ne(id_text(arg, &here)?)),
                "in" => {
                    let items = arg.as_array().ok_or_else(|| refuse(&here, "expected a list"))?;
                    Ok(Match::In(items.iter().map(|v| id_text(v, &here)).collect::<Result<_, _>>()?))
                }
                _ => Err(refuse(&here, "entity ids take a bare value, eq, ne, in or \"*\"")),
            }
        }
        Value::Object(_) => Err(refuse(path, "expected exactly one operator")),
        other => Ok(Match::Eq(id_text(other, path)?)),
    }
}

/// A date (`2024-07-01`, midnight UTC) or an RFC 3339 time.
fn instant(value: &Value, path: &str) -> Result<DateTime<Utc>, FilterError> {
    let text = value.as_str().ok_or_else(|| refuse(path, "expected a date or an RFC 3339 time"))?;
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&Utc));
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
        .ok_or_else(|| refuse(path, format!("{text:?} is neither a date (2024-07-01) nor an RFC 3339 time")))
}

fn time(field: TimeField, value: &Value, path: &str) -> Result<Filter, FilterError> {
    let ops = value.as_object().ok_or_else(|| refuse(path, "expected {gte, lte, gt or lt: time}"))?;
    let mut bounds = Vec::with_capacity(ops.len());
    for (op, arg) in ops {
        let here = format!("{path}.{op}");
        let cmp = match op.as_str() {
            "gt" => Cmp::Gt,
            "gte" => Cmp::Gte,
            "lt" => Cmp::Lt,
            "lte" => Cmp::Lte,
            _ => return Err(refuse(&here, "times take gt, gte, lt or lte")),
        };
        bounds.push(Filter::Time(field, cmp, instant(arg, &here)?));
    }
    if bounds.is_empty() {
        return Err(refuse(path, "expected at least one of gt, gte, lt, lte"));
    }
    Ok(if bounds.len() == 1 { bounds.remove(0) } else { Filter::All(bounds) })
}

/// `{"metadata": {"key": value, ...}}`: plain equality of each key (operators are refused).
fn metadata(value: &Value, path: &str) -> Result<Filter, FilterError> {
    let want = value.as_object().filter(|o| !o.is_empty()).ok_or_else(|| refuse(path, "expected {key: value}"))?;
    if let Some((k, _)) = want.iter().find(|(_, v)| v.is_object()) {
        return Err(refuse(&format!("{path}.{k}"), "metadata is matched by plain equality only"));
    }
    Ok(Filter::Metadata(want.clone()))
}

fn categories(value: &Value, path: &str) -> Result<Filter, FilterError> {
    let ops = value
        .as_object()
        .filter(|o| o.len() == 1)
        .ok_or_else(|| refuse(path, "expected {in: [...]} or {contains: ...}"))?;
    let (op, arg) = ops.iter().next().expect("one operator");
    let here = format!("{path}.{op}");
    match op.as_str() {
        "in" => {
            let items = arg.as_array().ok_or_else(|| refuse(&here, "expected a list"))?;
            Ok(Filter::CategoryIn(items.iter().map(|v| id_text(v, &here)).collect::<Result<_, _>>()?))
        }
        "contains" => Ok(Filter::CategoryContains(id_text(arg, &here)?)),
        _ => Err(refuse(&here, "categories take in or contains")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mnemo::core::Kind;
    use serde_json::json;

    fn row(agent: Option<&str>, user: Option<&str>, chat: Option<&str>, kind: Kind, day: u32) -> Row {
        let at = NaiveDate::from_ymd_opt(2024, 7, day).unwrap().and_hms_opt(12, 0, 0).unwrap().and_utc();
        Row::new(Scope::parse("t", agent, user, chat).unwrap(), kind, "x", at)
    }

    fn parse(v: &Value) -> Filter {
        Filter::parse(v).unwrap()
    }

    #[test]
    fn bare_ids_and_and_or_not_select_by_owner() {
        let alice = row(None, Some("alice"), None, Kind::Fact, 1);
        let bob_bot = row(Some("bot"), Some("bob"), Some("r1"), Kind::Preference, 2);
        assert!(parse(&json!({"user_id": "alice"})).holds(&alice));
        assert!(!parse(&json!({"user_id": "alice"})).holds(&bob_bot));
        let either = parse(&json!({"OR": [{"user_id": "alice"}, {"agent_id": {"in": ["bot", "x"]}}]}));
        assert!(either.holds(&alice) && either.holds(&bob_bot));
        let both = parse(&json!({"AND": [{"user_id": "bob"}, {"run_id": "r1"}, {"app_id": "bot"}]}));
        assert!(both.holds(&bob_bot) && !both.holds(&alice));
        let not = parse(&json!({"NOT": [{"user_id": "alice"}]}));
        assert!(!not.holds(&alice) && not.holds(&bob_bot));
        assert!(parse(&json!({"agent_id": "*"})).holds(&bob_bot) && !parse(&json!({"agent_id": "*"})).holds(&alice));
        assert!(parse(&json!({"user_id": {"ne": "alice"}})).holds(&bob_bot));
    }

    #[test]
    fn times_and_categories_compare_with_the_row() {
        let early = row(None, Some("a"), None, Kind::Preference, 1);
        let late = row(None, Some("a"), None, Kind::Fact, 20);
        let july_tenth_on = parse(&json!({"created_at": {"gte": "2024-07-10", "lte": "2024-07-31T00:00:00Z"}}));
        assert!(!july_tenth_on.holds(&early) && july_tenth_on.holds(&late));
        assert!(parse(&json!({"updated_at": {"lt": "2024-07-02"}})).holds(&early));
        assert!(parse(&json!({"categories": {"in": ["preference"]}})).holds(&early));
        assert!(!parse(&json!({"categories": {"in": ["preference"]}})).holds(&late));
        assert!(parse(&json!({"categories": {"contains": "PREF"}})).holds(&early));
    }

    #[test]
    fn metadata_matches_by_equality_of_every_key_given() {
        let mut tagged = row(None, Some("a"), None, Kind::Fact, 1);
        tagged.metadata = json!({"src": "chat", "n": 2}).as_object().cloned();
        let plain = row(None, Some("a"), None, Kind::Fact, 1);
        assert!(parse(&json!({"metadata": {"src": "chat"}})).holds(&tagged));
        assert!(parse(&json!({"metadata": {"src": "chat", "n": 2}})).holds(&tagged));
        assert!(!parse(&json!({"metadata": {"src": "chat", "n": 3}})).holds(&tagged));
        assert!(!parse(&json!({"metadata": {"src": "chat"}})).holds(&plain));
    }

    #[test]
    fn owners_are_pruned_by_entity_conditions_only() {
        let f = parse(&json!({"AND": [{"user_id": "alice"}, {"created_at": {"gte": "2024-01-01"}}]}));
        assert!(f.may_hold_for(&Scope::parse("t", Some("bot"), Some("alice"), None).unwrap()));
        assert!(!f.may_hold_for(&Scope::parse("t", None, Some("bob"), None).unwrap()));
        assert_eq!(f.pinned(Entity::User), Some("alice"));
        assert_eq!(f.pinned(Entity::Agent), None);
    }

    #[test]
    fn what_is_not_supported_is_refused_by_name() {
        for (bad, named) in [
            (json!({"metadata": {"k": {"contains": "v"}}}), "filters.metadata.k"),
            (json!({"keywords": {"contains": "x"}}), "filters.keywords"),
            (json!({"created_at": "2024-07-01"}), "filters.created_at"),
            (json!({"created_at": {"eq": "2024-07-01"}}), "filters.created_at.eq"),
            (json!({"categories": {"eq": "fact"}}), "filters.categories.eq"),
            (json!({"OR": [{"user_id": {"nin": ["a"]}}]}), "filters.OR[0].user_id.nin"),
            (json!({"user_id": ""}), "filters.user_id"),
            (json!([]), "filters"),
        ] {
            let e = Filter::parse(&bad).unwrap_err().to_string();
            assert!(e.contains(&format!("`{named}`")), "{bad}: {e}");
        }
    }
}
