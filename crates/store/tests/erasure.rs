//! Erasure on SQLite, read from the files themselves: after a user is erased, no byte of their
//! words is left in the database, its log or its shared memory, before or after a restart, while
//! the users who were not erased are still found by their words.
//!
//! Random shapes matter here: FTS5 keeps or drops what a delete leaves behind depending on how
//! many segments the index has and on which levels, which depends on how much was written and
//! in how many transactions. A fixed shape found one case; random ones find the others.

use std::path::Path;

use mnemo_core::{Kind, Scope, TenantId, UserId};
use mnemo_store::prelude::*;
use mnemo_store::{DeletionEvent, SqliteStore};
use proptest::prelude::*;

use crate::conformance::{insert, memory, msg, scope, t0};

/// Letters that the English stemmer leaves alone in any order (no vowel, no `s`, no `y`), so a
/// word is indexed exactly as it is written and a scan of the files for it means something.
const LETTERS: &[u8] = b"bcdfghjklmnpqrtvwxz";

/// A word of 12 such letters drawn from `seed` and the place it is said in, distinct from every
/// other (the test checks), so a hit in a file can only be that word.
fn word(seed: u64, place: [usize; 4]) -> String {
    let mut x = seed ^ 0x9e37_79b9_7f4a_7c15;
    for p in place {
        x = (x ^ p as u64).wrapping_mul(0xbf58_476d_1ce4_e5b9).rotate_left(29);
    }
    (0..12)
        .map(|_| {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            LETTERS[((x >> 33) % LETTERS.len() as u64) as usize] as char
        })
        .collect()
}

/// What a scan looks for: the last 8 letters of a word. FTS5 stores a term after the one before
/// it on a page as the bytes that differ from it, so a word that shares its first letters with
/// its neighbour is on disk only in part; its end is always there.
fn mark(word: &str) -> &str {
    &word[word.len() - 8..]
}

/// Every file in `dir` (database, `-wal`, `-shm`), as bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect()
}

/// The files holding `needle`.
fn holding(files: &[(String, Vec<u8>)], needle: &str) -> Vec<String> {
    files
        .iter()
        .filter(|(_, b)| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
        .map(|(n, _)| n.clone())
        .collect()
}

/// One user's rows: per chat, a batch of messages (one transaction, as ingest appends them),
/// each naming two of the user's words, and a memory naming a third.
struct User {
    name: String,
    words: Vec<String>,
}

/// Writes `shape[u][c]` messages in chat `c` of user `u`, returning each user's words.
fn fill(store: &dyn Store, seed: u64, shape: &[Vec<usize>]) -> Vec<User> {
    let mut users = Vec::new();
    for (u, chats) in shape.iter().enumerate() {
        let name = format!("user{u}");
        let mut words = Vec::new();
        for (c, &n) in chats.iter().enumerate() {
            let chat = scope("acme", Some(&name), Some(&format!("c{c}")));
            let mut batch = Vec::new();
            for m in 0..n {
                let (home, dog) = (word(seed, [u, c, m, 0]), word(seed, [u, c, m, 1]));
                let text = format!("I live in {home}. My dog is named {dog}.");
                batch.push(msg(&chat, &format!("{name}-c{c}-m{m}"), &text, t0()));
                words.extend([home, dog]);
            }
            store.append_messages(&batch).unwrap();
            let likes = word(seed, [u, c, 0, 2]);
            insert(store, &memory(&chat.without_chat(), Kind::Profile, &format!("User likes {likes}")), None);
            words.push(likes);
        }
        users.push(User { name, words });
    }
    users
}

/// The words of `users` still on disk in `dir`, with the files holding them.
fn left_on_disk<'a>(dir: &Path, users: impl Iterator<Item = &'a User>) -> Vec<(String, Vec<String>)> {
    let files = files(dir);
    users
        .flat_map(|u| u.words.iter())
        .map(|w| (w.clone(), holding(&files, mark(w))))
        .filter(|(_, found)| !found.is_empty())
        .collect()
}

/// `user`'s words that search no longer finds: each message word in the user's archive, each
/// memory word among the user's memories.
fn not_found(store: &dyn Store, user: &User) -> Vec<String> {
    let owner = Scope::parse("acme", None, Some(&user.name), None).unwrap();
    user.words
        .iter()
        .filter(|w| {
            let terms = [(*w).clone()];
            store.search_messages(&owner, &terms, 50).unwrap().is_empty()
                && store.lexical(&owner, &terms, 50).unwrap().is_empty()
        })
        .cloned()
        .collect()
}

/// Users (2 to 5) with 1 to 3 chats of 1 to 6 messages each, which of them to erase (at least
/// one), and the seed of their words.
fn shapes() -> impl Strategy<Value = (Vec<Vec<usize>>, Vec<bool>, u64)> {
    let users = prop::collection::vec(prop::collection::vec(1..=6usize, 1..=3), 2..=5);
    users
        .prop_flat_map(|shape| {
            let n = shape.len();
            (Just(shape), prop::collection::vec(any::<bool>(), n), any::<u64>())
        })
        .prop_filter("erase someone", |(_, erased, _)| erased.contains(&true))
}

/// Fills a store of `shape`, erases the users `erased` marks — one after another (as separate
/// requests), or `together` in one [`Users::erase_users`] (a tenant's reset) — then checks that
/// every file of the store is free of each erased user's words, after the erasures and again
/// after the store is closed and opened, and that every other user's words are still found by
/// search, before and after the restart.
fn check(shape: &[Vec<usize>], erased: &[bool], seed: u64, together: bool) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mnemo.db");
    let store = SqliteStore::open(&path).unwrap();
    let users = fill(&store, seed, shape);
    let all: Vec<&String> = users.iter().flat_map(|u| &u.words).collect();
    let distinct: std::collections::BTreeSet<&str> = all.iter().map(|w| mark(w)).collect();
    prop_assume!(distinct.len() == all.len(), "two words end alike; a hit would be ambiguous");
    prop_assert_eq!(left_on_disk(dir.path(), users.iter()).len(), all.len(), "the scan must see every word first");

    let tenant: TenantId = "acme".parse().unwrap();
    let event = DeletionEvent { subject: "s".into(), at: t0(), digest: "d".into() };
    let (mut gone, mut kept) = (Vec::new(), Vec::new());
    for (user, erase) in users.iter().zip(erased) {
        if *erase {
            if !together {
                store.erase_user(&tenant, &UserId::new(&user.name).unwrap(), &event).unwrap();
            }
            gone.push(user);
        } else {
            kept.push(user);
        }
    }
    if together {
        let erasures: Vec<_> = gone.iter().map(|u| (UserId::new(&u.name).unwrap(), event.clone())).collect();
        let counts = store.erase_users(&tenant, &erasures).unwrap();
        prop_assert_eq!(counts.len(), gone.len());
    }
    let left = left_on_disk(dir.path(), gone.iter().copied());
    prop_assert!(left.is_empty(), "erased words still on disk after the erasures: {left:?}");
    for user in &kept {
        let lost = not_found(&store, user);
        prop_assert!(lost.is_empty(), "{}'s words are no longer found: {lost:?}", user.name);
    }

    drop(store);
    let left = left_on_disk(dir.path(), gone.iter().copied());
    prop_assert!(left.is_empty(), "erased words on disk once the store is closed: {left:?}");
    let store = SqliteStore::open(&path).unwrap();
    let left = left_on_disk(dir.path(), gone.iter().copied());
    prop_assert!(left.is_empty(), "erased words on disk once the store is open again: {left:?}");
    for user in &kept {
        let lost = not_found(&store, user);
        prop_assert!(lost.is_empty(), "{}'s words are not found after a restart: {lost:?}", user.name);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Whatever the store's shape and whichever users are erased, no file keeps an erased
    /// user's words and the others' are still found (see [`check`]).
    #[test]
    fn erased_words_are_in_no_file_and_the_others_are_still_found((shape, erased, seed) in shapes()) {
        check(&shape, &erased, seed, false)?;
    }

    /// The same, the users erased together (a tenant's reset), with one purge at the end.
    #[test]
    fn users_erased_together_leave_no_word_in_any_file((shape, erased, seed) in shapes()) {
        check(&shape, &erased, seed, true)?;
    }
}

/// The shape the leak was reported with: 4 users with 3 chats of 5 messages each, the first
/// three erased. Before FTS5's secure-delete, the third user's words stayed in
/// `message_fts_data` as delete markers.
#[test]
fn the_reported_shape_leaves_nothing() {
    check(&vec![vec![5; 3]; 4], &[true, true, true, false], 7, false).unwrap();
}

/// A tenant's reset at scale: 36 of 40 users erased in one call (two transactions, one purge):
/// no word of theirs in any file (FTS5's shadow tables `message_fts_data` and `memory_fts_data`
/// included: they are pages of the database file), the other 4 users still found. One message
/// each, as every word costs a scan of every file.
#[test]
fn users_erased_together_across_transactions_leave_nothing() {
    let mut erased = vec![true; 36];
    erased.extend([false; 4]);
    const { assert!(36 > mnemo_store::ERASURES_PER_TRANSACTION) };
    check(&vec![vec![1]; 40], &erased, 11, true).unwrap();
}
