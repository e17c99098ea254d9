//! [`Observations`](mnemo_store::Observations): rows of one session each, listed per agent and
//! user, read back with their vectors per agent partition for mining, erased with their user.

use chrono::Duration;
use mnemo_core::{Observation, ObservationId, Outcome, Scope};
use mnemo_store::{Embedding, Store};

use super::{axis, t0};

fn observed(owner: &Scope, minutes: i64, outcome: Outcome, text: Option<&str>) -> Observation {
    Observation::new(owner.clone(), "edit_file", "SwiftUI view", outcome, text, t0() + Duration::minutes(minutes))
        .unwrap()
}

fn scope(tenant: &str, agent: Option<&str>, user: Option<&str>, chat: &str) -> Scope {
    Scope::parse(tenant, agent, user, Some(chat)).unwrap()
}

pub(crate) fn observations_round_trip_and_are_scoped(store: &dyn Store) {
    let s1 = scope("acme", Some("coder"), Some("dana"), "s1");
    let s2 = scope("acme", Some("coder"), Some("dana"), "s2");
    let sam = scope("acme", Some("coder"), Some("sam"), "s1");
    let other_agent = scope("acme", Some("writer"), Some("dana"), "s1");
    let no_agent = scope("acme", None, Some("dana"), "s1");
    let foreign = scope("globex", Some("coder"), Some("dana"), "s1");
    let e = Embedding { model: "test:8".into(), vector: axis(1, 3, 0.2) };
    let a = observed(&s1, 0, Outcome::Failure, Some("Check accessibility modifiers."));
    let b = observed(&s2, 1, Outcome::Corrected, None);
    let c = observed(&sam, 2, Outcome::Success, None);
    store.put_observation(&a, Some(&e)).unwrap();
    store.put_observation(&b, None).unwrap();
    store.put_observation(&c, None).unwrap();
    for (owner, minutes) in [(&other_agent, 3), (&no_agent, 4), (&foreign, 5)] {
        store.put_observation(&observed(owner, minutes, Outcome::Failure, None), None).unwrap();
    }

    // A user's observations with one agent, newest first, across chats or in one; paged.
    let ids = |v: Vec<Observation>| v.into_iter().map(|o| o.id).collect::<Vec<ObservationId>>();
    assert_eq!(ids(store.observations(&s1.without_chat(), 10, 0).unwrap()), [b.id, a.id]);
    assert_eq!(store.observations(&s1, 10, 0).unwrap(), vec![a.clone()]);
    assert_eq!(ids(store.observations(&s1.without_chat(), 1, 1).unwrap()), [a.id]);
    assert_eq!(store.observations(&foreign.without_chat(), 10, 0).unwrap().len(), 1);
    assert!(store.observations(&scope("globex", Some("coder"), Some("sam"), "s1"), 10, 0).unwrap().is_empty());

    // The partitions mining walks, and one agent's rows with their vectors, every user.
    let mut agents: Vec<String> = store.observation_agents(t0()).unwrap().iter().map(ToString::to_string).collect();
    agents.sort();
    assert_eq!(
        agents,
        ["tenant=acme", "tenant=acme agent=coder", "tenant=acme agent=writer", "tenant=globex agent=coder"]
    );
    assert!(store.observation_agents(t0() + Duration::minutes(6)).unwrap().is_empty());
    let coder = Scope::parse("acme", Some("coder"), None, None).unwrap();
    let rows = store.agent_observations(&coder, t0(), 10).unwrap();
    assert_eq!(rows.iter().map(|(o, _)| o.id).collect::<Vec<_>>(), [c.id, b.id, a.id]);
    assert_eq!(rows[2], (a, Some(e)));
    assert_eq!(rows[1].1, None);
    assert_eq!(store.agent_observations(&coder, t0() + Duration::minutes(1), 10).unwrap().len(), 2);
    assert_eq!(store.agent_observations(&coder, t0(), 1).unwrap()[0].0.id, c.id);
    let globex = Scope::parse("globex", Some("coder"), None, None).unwrap();
    assert_eq!(store.agent_observations(&globex, t0(), 10).unwrap().len(), 1);
}

pub(crate) fn erasure_deletes_the_users_observations_only(store: &dyn Store) {
    let dana = scope("acme", Some("coder"), Some("dana"), "s1");
    let sam = scope("acme", Some("coder"), Some("sam"), "s1");
    store.put_observation(&observed(&dana, 0, Outcome::Failure, Some("private note")), None).unwrap();
    store.put_observation(&observed(&sam, 1, Outcome::Failure, None), None).unwrap();
    let event = mnemo_store::DeletionEvent { subject: "s".into(), at: t0(), digest: "d".into() };
    let counts = store.erase_user(&dana.tenant, dana.user.as_ref().unwrap(), &event).unwrap();
    assert_eq!(counts.get("observations"), Some(&1));
    assert!(store.observations(&dana, 10, 0).unwrap().is_empty());
    assert_eq!(store.observations(&sam, 10, 0).unwrap().len(), 1);
}
