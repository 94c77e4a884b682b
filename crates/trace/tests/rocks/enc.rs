//! Writes RocksDB query traces the way RocksDB's `Tracer` does, from the
//! layout in `trace_replay/trace_replay.cc` and `db/write_batch.cc`, so
//! the reader is tested against bytes it did not make itself. (db_bench
//! 7.8's own traces are tested in the CLI's tests, from fixtures.)

/// A varint32, as RocksDB's `PutVarint32`.
pub fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A varint32-length-prefixed string.
pub fn prefixed(out: &mut Vec<u8>, s: &[u8]) {
    varint(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// One record: timestamp, type, payload length, payload.
pub fn record(out: &mut Vec<u8>, ts: u64, kind: u8, payload: &[u8]) {
    out.extend_from_slice(&ts.to_le_bytes());
    out.push(kind);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
}

/// The header record of a trace of this format version.
pub fn header(version: &str, ts: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let text = format!(
        "feedcafedeadbeef\tTrace Version: {version}\tRocksDB Version: 11.8\tFormat: Timestamp OpType Payload\n"
    );
    record(&mut out, ts, 1, text.as_bytes());
    out
}

/// The end record.
pub fn end(out: &mut Vec<u8>, ts: u64) {
    record(out, ts, 2, &[]);
}

/// A WriteBatch being built.
pub struct Batch {
    pub rep: Vec<u8>,
    pub count: u32,
}

impl Batch {
    pub fn new() -> Self {
        Batch {
            rep: vec![0; 12],
            count: 0,
        }
    }
    fn tag(&mut self, tag: u8, cf_tag: u8, cf: u32) {
        if cf == 0 {
            self.rep.push(tag);
        } else {
            self.rep.push(cf_tag);
            varint(&mut self.rep, u64::from(cf));
        }
    }
    pub fn put(mut self, cf: u32, k: &[u8], v: &[u8]) -> Self {
        self.tag(0x1, 0x5, cf);
        prefixed(&mut self.rep, k);
        prefixed(&mut self.rep, v);
        self.count += 1;
        self
    }
    pub fn delete(mut self, cf: u32, k: &[u8]) -> Self {
        self.tag(0x0, 0x4, cf);
        prefixed(&mut self.rep, k);
        self.count += 1;
        self
    }
    pub fn single_delete(mut self, cf: u32, k: &[u8]) -> Self {
        self.tag(0x7, 0x8, cf);
        prefixed(&mut self.rep, k);
        self.count += 1;
        self
    }
    pub fn delete_range(mut self, cf: u32, a: &[u8], b: &[u8]) -> Self {
        self.tag(0xF, 0xE, cf);
        prefixed(&mut self.rep, a);
        prefixed(&mut self.rep, b);
        self.count += 1;
        self
    }
    pub fn merge(mut self, cf: u32, k: &[u8], v: &[u8]) -> Self {
        self.tag(0x2, 0x6, cf);
        prefixed(&mut self.rep, k);
        prefixed(&mut self.rep, v);
        self.count += 1;
        self
    }
    pub fn timed_put(mut self, cf: u32, k: &[u8], v: &[u8], time: u64) -> Self {
        self.tag(0x18, 0x19, cf);
        prefixed(&mut self.rep, k);
        let mut packed = v.to_vec();
        packed.extend_from_slice(&time.to_le_bytes());
        prefixed(&mut self.rep, &packed);
        self.count += 1;
        self
    }
    pub fn log_data(mut self, blob: &[u8]) -> Self {
        self.rep.push(0x3);
        prefixed(&mut self.rep, blob);
        self
    }
    /// The batch's bytes with its count (or `count` to lie).
    pub fn bytes(&self, count: Option<u32>) -> Vec<u8> {
        let mut b = self.rep.clone();
        b[8..12].copy_from_slice(&count.unwrap_or(self.count).to_le_bytes());
        b
    }
}

/// A version 0.2 Write record.
pub fn write(out: &mut Vec<u8>, ts: u64, batch: &[u8]) {
    let mut p = (1u64 << 1).to_le_bytes().to_vec();
    prefixed(&mut p, batch);
    record(out, ts, 3, &p);
}

/// A version 0.2 Get record.
pub fn get(out: &mut Vec<u8>, ts: u64, cf: u32, key: &[u8]) {
    let mut p = ((1u64 << 2) | (1 << 3)).to_le_bytes().to_vec();
    p.extend_from_slice(&cf.to_le_bytes());
    prefixed(&mut p, key);
    record(out, ts, 4, &p);
}

/// A version 0.2 Seek (`prev`: SeekForPrev) record; empty bounds are left out.
pub fn seek(
    out: &mut Vec<u8>,
    ts: u64,
    prev: bool,
    cf: u32,
    key: &[u8],
    lower: &[u8],
    upper: &[u8],
) {
    let mut map = (1u64 << 4) | (1 << 5);
    if !lower.is_empty() {
        map |= 1 << 6;
    }
    if !upper.is_empty() {
        map |= 1 << 7;
    }
    let mut p = map.to_le_bytes().to_vec();
    p.extend_from_slice(&cf.to_le_bytes());
    prefixed(&mut p, key);
    for b in [lower, upper] {
        if !b.is_empty() {
            prefixed(&mut p, b);
        }
    }
    record(out, ts, if prev { 6 } else { 5 }, &p);
}

/// A version 0.2 MultiGet record.
pub fn multiget(out: &mut Vec<u8>, ts: u64, keys: &[(u32, &[u8])]) {
    let mut p = ((1u64 << 8) | (1 << 9) | (1 << 10)).to_le_bytes().to_vec();
    p.extend_from_slice(&(keys.len() as u32).to_le_bytes());
    let (mut cfs, mut ks) = (Vec::new(), Vec::new());
    for (cf, k) in keys {
        cfs.extend_from_slice(&cf.to_le_bytes());
        prefixed(&mut ks, k);
    }
    prefixed(&mut p, &cfs);
    prefixed(&mut p, &ks);
    record(out, ts, 13, &p);
}

/// A version 0.1 Get or Seek record: column family, then the key.
pub fn v1_cf_key(out: &mut Vec<u8>, ts: u64, kind: u8, cf: u32, key: &[u8]) {
    let mut p = cf.to_le_bytes().to_vec();
    prefixed(&mut p, key);
    record(out, ts, kind, &p);
}
