//! Range deletes for engines without one of their own: a range becomes a
//! delete of every key the store holds in it, found by a scan just before
//! the batch is written, plus the keys the batch itself put there earlier.

use std::borrow::Cow;

use crate::{Batch, BatchOp, KvStore, Result};

/// How an engine carries out a range delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RangeDelete {
    /// One tombstone for the whole range (RocksDB's and Pebble's
    /// DeleteRange), whatever the number of keys it covers.
    Native,
    /// Deletes the keys the store holds in the range, found by a scan just
    /// before the write ([`expand`]): a delete per key, and not atomic
    /// against another thread writing into the range meanwhile.
    Emulated,
}

impl RangeDelete {
    /// The name results use.
    pub fn name(self) -> &'static str {
        match self {
            RangeDelete::Native => "native",
            RangeDelete::Emulated => "emulated",
        }
    }
}

/// `batch` with each range delete replaced by deletes of the keys `store`
/// holds in the range and of the keys put in the range earlier in the
/// batch; the batch itself when it has no range delete.
pub fn expand<'a>(store: &dyn KvStore, batch: &'a Batch) -> Result<Cow<'a, Batch>> {
    if !batch.has_range_deletes() {
        return Ok(Cow::Borrowed(batch));
    }
    let mut out = Batch::with_capacity(batch.len(), batch.logical_bytes() as usize);
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for (i, op) in batch.iter().enumerate() {
        match op {
            BatchOp::Put(k, v) => out.put(k, v),
            BatchOp::Delete(k) => out.delete(k),
            BatchOp::DeleteRange(start, end) => {
                if start >= end {
                    continue;
                }
                keys.clear();
                store.scan(start, &mut |k, _| {
                    if k >= end {
                        return false;
                    }
                    keys.push(k.to_vec());
                    true
                })?;
                // Puts earlier in this batch are not in the store yet.
                for earlier in batch.iter().take(i) {
                    if let BatchOp::Put(k, _) = earlier
                        && k >= start
                        && k < end
                    {
                        keys.push(k.to_vec());
                    }
                }
                keys.sort_unstable();
                keys.dedup();
                for k in &keys {
                    out.delete(k);
                }
            }
        }
    }
    Ok(Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    /// A sorted map as a store, enough for `expand`'s scan.
    struct Map(Mutex<BTreeMap<Vec<u8>, Vec<u8>>>);

    impl KvStore for Map {
        fn engine(&self) -> &'static str {
            "map"
        }
        fn path(&self) -> &std::path::Path {
            std::path::Path::new("")
        }
        fn get_into(&self, key: &[u8], out: &mut Vec<u8>) -> Result<bool> {
            let m = self.0.lock().expect("map");
            out.clear();
            Ok(m.get(key).map(|v| out.extend_from_slice(v)).is_some())
        }
        fn write(&self, _: &Batch) -> Result<()> {
            unreachable!("expand only scans")
        }
        fn scan(&self, start: &[u8], visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
            let m = self.0.lock().expect("map");
            for (k, v) in m.range(start.to_vec()..) {
                if !visit(k, v) {
                    break;
                }
            }
            Ok(())
        }
        fn flush(&self) -> Result<()> {
            Ok(())
        }
        fn stats(&self) -> Result<crate::EngineStats> {
            Ok(Default::default())
        }
        fn capabilities(&self) -> crate::Capabilities {
            crate::Capabilities::BTREE
        }
        fn close(self: Box<Self>) -> Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_range_becomes_deletes_of_stored_and_earlier_keys_only() {
        let stored: BTreeMap<Vec<u8>, Vec<u8>> = [&b"a"[..], b"b1", b"b2", b"c"]
            .iter()
            .map(|k| (k.to_vec(), b"v".to_vec()))
            .collect();
        let store = Map(Mutex::new(stored));
        let mut b = Batch::new();
        b.put(b"b0", b"new");
        b.delete_range(b"b", b"c");
        b.put(b"b3", b"after");
        let e = expand(&store, &b).expect("expand");
        let ops: Vec<_> = e.iter().collect();
        assert_eq!(
            ops,
            vec![
                BatchOp::Put(b"b0", b"new"),
                BatchOp::Delete(b"b0"),
                BatchOp::Delete(b"b1"),
                BatchOp::Delete(b"b2"),
                BatchOp::Put(b"b3", b"after"),
            ],
            "the end is excluded, `a` and `c` stay, and the later put stays"
        );
        // An empty or inverted range deletes nothing.
        let mut b = Batch::new();
        b.delete_range(b"c", b"a");
        assert!(expand(&store, &b).expect("expand").is_empty());
        // Without ranges, the batch itself.
        let mut plain = Batch::new();
        plain.put(b"x", b"y");
        assert!(matches!(
            expand(&store, &plain).expect("expand"),
            Cow::Borrowed(_)
        ));
    }
}
