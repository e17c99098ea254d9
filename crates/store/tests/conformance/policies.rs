//! [`Policies`](mnemo_store::Policies): versions closed and opened per key.

use chrono::Duration;
use mnemo_core::{Policy, Scope};
use mnemo_store::Store;

use super::{scope, t0};

pub(crate) fn policies_are_versioned(store: &dyn Store) {
    let s = Scope::parse("acme", Some("support"), Some("dana"), None).unwrap();
    let p = Policy {
        tenant: s.tenant.clone(),
        agent: None,
        key: "refunds".into(),
        text: "Refunds within 30 days".into(),
        value: serde_json::json!({"days": 30}),
        version: 0,
        effective_from: t0(),
        effective_until: None,
    };
    assert_eq!(store.put_policy(&p).unwrap().version, 1);
    let p2 = Policy { text: "Refunds within 14 days".into(), effective_from: t0() + Duration::days(10), ..p };
    assert_eq!(store.put_policy(&p2).unwrap().version, 2);
    let all = store.policies(&s).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0].effective_until, Some(t0() + Duration::days(10)));
    assert!(all[0].in_force(t0() + Duration::days(1)) && !all[0].in_force(t0() + Duration::days(11)));
    assert!(all[1].in_force(t0() + Duration::days(11)));
    assert!(store.policies(&scope("other", Some("dana"), None)).unwrap().is_empty());
}
