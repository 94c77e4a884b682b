/// One operation of a [`Batch`], borrowed from its buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOp<'a> {
    /// Insert or overwrite `key` with `value`.
    Put(&'a [u8], &'a [u8]),
    /// Remove `key` (a no-op when absent).
    Delete(&'a [u8]),
    /// Remove every key from `start` (included) to `end` (excluded),
    /// including keys put earlier in the same batch; keys put after it in
    /// the batch stay. Engines without a native range delete expand it to
    /// deletes ([`crate::ranges::expand`]); `Capabilities::range_delete`
    /// says which.
    DeleteRange(&'a [u8], &'a [u8]),
}

impl BatchOp<'_> {
    /// The key the operation writes or deletes (a range's start).
    pub fn key(&self) -> &[u8] {
        match self {
            BatchOp::Put(k, _) | BatchOp::Delete(k) | BatchOp::DeleteRange(k, _) => k,
        }
    }
}

/// What follows an operation's key in a batch's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Len {
    /// A put's value, this many bytes.
    Value(usize),
    /// Nothing: a delete.
    Delete,
    /// A range delete's end key, this many bytes.
    RangeEnd(usize),
}

impl Len {
    /// Bytes after the key.
    fn bytes(self) -> usize {
        match self {
            Len::Value(n) | Len::RangeEnd(n) => n,
            Len::Delete => 0,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Rec {
    start: usize,
    key_len: usize,
    then: Len,
}

/// An atomic group of puts, deletes and range deletes, applied in order.
///
/// Keys and values live in one growing buffer so building a batch of
/// thousands of entries costs no allocation per entry; `clear` keeps the
/// capacity for the next batch.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    buf: Vec<u8>,
    recs: Vec<Rec>,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty batch with room for `ops` operations and `bytes` of keys and values.
    pub fn with_capacity(ops: usize, bytes: usize) -> Self {
        Self {
            buf: Vec::with_capacity(bytes),
            recs: Vec::with_capacity(ops),
        }
    }

    /// Makes room for `additional` more bytes. Past 1 MiB the buffer grows
    /// by an eighth, not by doubling: a batch of hundreds of MiB must not
    /// hold twice its size (the harness's own heap is measured and bounded).
    fn grow(&mut self, additional: usize) {
        let cap = self.buf.capacity();
        if cap - self.buf.len() < additional {
            let step = if cap >= 1 << 20 { cap / 8 } else { cap };
            self.buf.reserve_exact(additional.max(step));
        }
    }

    /// Appends a put.
    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        self.grow(key.len() + value.len());
        let start = self.buf.len();
        self.buf.extend_from_slice(key);
        self.buf.extend_from_slice(value);
        self.recs.push(Rec {
            start,
            key_len: key.len(),
            then: Len::Value(value.len()),
        });
    }

    /// Appends a delete.
    pub fn delete(&mut self, key: &[u8]) {
        self.grow(key.len());
        let start = self.buf.len();
        self.buf.extend_from_slice(key);
        self.recs.push(Rec {
            start,
            key_len: key.len(),
            then: Len::Delete,
        });
    }

    /// Appends a delete of every key in `start..end`.
    pub fn delete_range(&mut self, start: &[u8], end: &[u8]) {
        self.grow(start.len() + end.len());
        let at = self.buf.len();
        self.buf.extend_from_slice(start);
        self.buf.extend_from_slice(end);
        self.recs.push(Rec {
            start: at,
            key_len: start.len(),
            then: Len::RangeEnd(end.len()),
        });
    }

    /// True when some operation is a range delete.
    pub fn has_range_deletes(&self) -> bool {
        self.recs.iter().any(|r| matches!(r.then, Len::RangeEnd(_)))
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// True when the batch holds no operation.
    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    /// Bytes of keys plus values handed to the engine: the logical bytes that
    /// write amplification is measured against.
    pub fn logical_bytes(&self) -> u64 {
        self.buf.len() as u64
    }

    /// Removes every operation, keeping the allocation.
    pub fn clear(&mut self) {
        self.buf.clear();
        self.recs.clear();
    }

    /// Keys and values of every operation, concatenated in order (a put's
    /// key then its value): with [`Batch::lengths`], the whole batch, for
    /// spooling it to a file in two writes.
    pub fn data(&self) -> &[u8] {
        &self.buf
    }

    /// Each operation's key length and what follows the key.
    pub fn lengths(&self) -> impl ExactSizeIterator<Item = (usize, Len)> + '_ {
        self.recs.iter().map(|r| (r.key_len, r.then))
    }

    /// Rebuilds a batch from [`Batch::data`] and [`Batch::lengths`];
    /// `None` when the lengths do not cover `data` exactly.
    pub fn from_parts(
        data: Vec<u8>,
        lengths: impl IntoIterator<Item = (usize, Len)>,
    ) -> Option<Batch> {
        let mut recs = Vec::new();
        let mut start = 0usize;
        for (key_len, then) in lengths {
            recs.push(Rec {
                start,
                key_len,
                then,
            });
            start = start.checked_add(key_len)?.checked_add(then.bytes())?;
        }
        (start == data.len()).then_some(Batch { buf: data, recs })
    }

    /// The operations in the order they were added.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = BatchOp<'_>> + '_ {
        self.recs.iter().map(move |r| {
            let key = &self.buf[r.start..r.start + r.key_len];
            let v = r.start + r.key_len;
            match r.then {
                Len::Value(n) => BatchOp::Put(key, &self.buf[v..v + n]),
                Len::Delete => BatchOp::Delete(key),
                Len::RangeEnd(n) => BatchOp::DeleteRange(key, &self.buf[v..v + n]),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebuilds_from_its_parts_and_refuses_lengths_that_do_not_fit() {
        let mut b = Batch::new();
        b.put(b"k1", b"value");
        b.delete(b"gone");
        b.delete_range(b"a", b"b");
        b.put(b"k2", b"");
        let lens: Vec<_> = b.lengths().collect();
        let c = Batch::from_parts(b.data().to_vec(), lens.clone()).expect("fits");
        assert_eq!(b.iter().collect::<Vec<_>>(), c.iter().collect::<Vec<_>>());
        assert!(Batch::from_parts(b.data()[1..].to_vec(), lens).is_none());
    }

    #[test]
    fn keeps_order_and_counts_logical_bytes() {
        let mut b = Batch::new();
        b.put(b"k1", b"value");
        b.delete(b"k2");
        b.put(b"", b"");
        let ops: Vec<_> = b.iter().collect();
        assert_eq!(
            ops,
            vec![
                BatchOp::Put(b"k1", b"value"),
                BatchOp::Delete(b"k2"),
                BatchOp::Put(b"", b"")
            ]
        );
        assert_eq!(b.logical_bytes(), 2 + 5 + 2);
        b.clear();
        assert!(b.is_empty());
        assert_eq!(b.logical_bytes(), 0);
    }
}
