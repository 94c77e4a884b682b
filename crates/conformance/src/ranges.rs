//! Range deletes: one tombstone where the engine has them, a delete per key
//! where it does not (`Capabilities::range_delete` says which); either way
//! the same keys are gone.

use std::collections::BTreeMap;

use ledgerbench_core::{Batch, KvStore};

use crate::edges::check_model;
use crate::{Scratch, Subject, reopen};

fn key(i: u32) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

/// Every key of the model in `[start, end)` is gone from it.
fn model_range_delete(model: &mut BTreeMap<Vec<u8>, Vec<u8>>, start: &[u8], end: &[u8]) {
    model.retain(|k, _| !(k.as_slice() >= start && k.as_slice() < end));
}

/// Keys in `[from, to)` read as absent.
fn gone(s: &Subject, st: &dyn KvStore, from: u32, to: u32, except: &[u32], when: &str) {
    for i in (from..to).filter(|i| !except.contains(i)) {
        assert_eq!(
            st.get(&key(i)).unwrap(),
            None,
            "{}: {when}: key {i} survived its range delete",
            s.name
        );
    }
}

/// A range delete removes the keys in `[start, end)` (the end stays),
/// including those put earlier in its batch, but not those put after it in
/// the batch; an empty or inverted range deletes nothing; all of it
/// survives a reopen.
pub fn range_delete_removes_exactly_its_range(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    assert!(
        st.capabilities().range_delete.is_some(),
        "{}: says how it deletes a range",
        s.name
    );
    let mut model = BTreeMap::new();
    let mut b = Batch::new();
    for i in 0..100 {
        b.put(&key(i), &i.to_le_bytes());
        model.insert(key(i), i.to_le_bytes().to_vec());
    }
    st.write(&b).unwrap();

    let mut b = Batch::new();
    b.put(&key(500), b"earlier"); // outside: stays
    b.put(b"k0030x", b"earlier, inside"); // inside: goes
    b.delete_range(&key(30), &key(60));
    b.put(&key(45), b"later"); // after the range: stays
    b.delete_range(&key(80), &key(70)); // inverted: nothing
    b.delete_range(&key(90), &key(90)); // empty: nothing
    st.write(&b).unwrap();
    model.insert(key(500), b"earlier".to_vec());
    model_range_delete(&mut model, &key(30), &key(60));
    model.insert(key(45), b"later".to_vec());

    gone(s, &*st, 30, 60, &[45], "after the batch");
    assert_eq!(st.get(b"k0030x").unwrap(), None, "{}", s.name);
    check_model(s, &*st, &model, "after a range delete");
    let st = reopen(s, st);
    gone(s, &*st, 30, 60, &[45], "after reopen");
    check_model(s, &*st, &model, "after reopen");
    st.close().unwrap();
}

/// Range deletes over flushed data, then a flush and a compaction, then
/// puts back into the range: the tombstone hides what is older than it and
/// nothing newer.
pub fn range_delete_survives_flush_and_compaction(s: &Subject) {
    let sc = Scratch::new();
    let st = (s.open)(&sc.store).unwrap();
    let mut model = BTreeMap::new();
    for round in 0..3u32 {
        let mut b = Batch::new();
        for i in 0..400 {
            let v = format!("{round}-{i}").into_bytes();
            b.put(&key(i), &v);
            model.insert(key(i), v);
        }
        st.write(&b).unwrap();
        st.flush().unwrap();
    }
    let mut b = Batch::new();
    b.delete_range(&key(100), &key(300));
    st.write(&b).unwrap();
    model_range_delete(&mut model, &key(100), &key(300));
    st.flush().unwrap();
    gone(s, &*st, 100, 300, &[], "after a flush");
    if st.capabilities().manual_compaction {
        st.compact().unwrap();
        gone(s, &*st, 100, 300, &[], "after compaction");
    }
    // Newer puts inside the range are visible.
    let mut b = Batch::new();
    for i in (150..250).step_by(10) {
        b.put(&key(i), b"back");
        model.insert(key(i), b"back".to_vec());
    }
    st.write(&b).unwrap();
    check_model(s, &*st, &model, "after puts into the deleted range");
    let st = reopen(s, st);
    check_model(s, &*st, &model, "after reopen");
    let back: Vec<u32> = (150..250).step_by(10).collect();
    gone(s, &*st, 100, 300, &back, "after reopen");
    st.close().unwrap();
}
