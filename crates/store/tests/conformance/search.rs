//! [`Search`](mnemo_store::Search): every candidate path filters by scope before it ranks.

use mnemo_core::{Kind, MemoryId};
use mnemo_store::{ListFilter, Store};

use super::{axis, insert, memory, scope};

pub(crate) fn every_read_is_scoped(store: &dyn Store) {
    let dana = scope("acme", Some("dana"), None);
    let dana_c1 = scope("acme", Some("dana"), Some("c1"));
    let eve = scope("acme", Some("eve"), None);
    let evil = scope("evil", Some("dana"), None);
    let tenant_wide = scope("acme", None, None);
    let mine = memory(&dana, Kind::Profile, "Dana keeps bees in the garden");
    let chatty = memory(&dana_c1, Kind::Profile, "Dana mentioned bees in chat one");
    let theirs = memory(&eve, Kind::Profile, "Eve keeps bees on the roof");
    let foreign = memory(&evil, Kind::Profile, "Other tenant keeps bees too");
    let shared = memory(&tenant_wide, Kind::Fact, "The office has bees on the roof");
    for (m, v) in [(&mine, 0), (&chatty, 0), (&theirs, 0), (&foreign, 0), (&shared, 1)] {
        insert(store, m, Some(axis(v, 2, 0.1)));
    }
    let terms = vec!["bees".to_string()];
    let q = axis(0, 2, 0.1);
    let ids = |v: Vec<(MemoryId, f32)>| v.into_iter().map(|x| x.0).collect::<Vec<_>>();
    for (req, expect) in [
        (&dana, vec![mine.id, shared.id]),
        (&dana_c1, vec![mine.id, chatty.id, shared.id]),
        (&eve, vec![theirs.id, shared.id]),
        (&evil, vec![foreign.id]),
    ] {
        let mut lex = ids(store.lexical(req, &terms, 50).unwrap());
        let mut vec = ids(store.vector(req, "test:8", &q, 50).unwrap());
        let mut sub = store.substring(req, &terms, 50).unwrap();
        let mut listed: Vec<_> = store.list(req, &ListFilter::default()).unwrap().into_iter().map(|m| m.id).collect();
        let mut expect = expect.clone();
        for v in [&mut lex, &mut vec, &mut sub, &mut listed, &mut expect] {
            v.sort();
        }
        assert_eq!(lex, expect, "lexical for {req}");
        assert_eq!(vec, expect, "vector for {req}");
        assert_eq!(sub, expect, "substring for {req}");
        assert_eq!(listed, expect, "list for {req}");
    }
    assert!(store.by_hash(&eve, &mine.content_hash).unwrap().is_empty());
    assert_eq!(
        store.by_hash(&dana, &mine.content_hash).unwrap().iter().map(|m| m.id).collect::<Vec<_>>(),
        vec![mine.id]
    );
    assert!(store.get_many(&eve, &[mine.id, theirs.id]).unwrap().iter().all(|m| m.id == theirs.id));
    // The vector ranking is by cosine, best first.
    let ranked = store.vector(&dana, "test:8", &axis(1, 2, 0.1), 2).unwrap();
    assert_eq!(ranked[0].0, shared.id);
    assert!(ranked[0].1 > ranked[1].1);
}
