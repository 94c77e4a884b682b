//! A RocksDB query trace as ledgerbench operations (`ledgerbench import
//! rocksdb-trace`). Every record and batch entry has a defined fate,
//! counted in a [`Summary`]; what has no engine-neutral meaning is refused
//! unless an option maps it, and the options are kept in the trace's header
//! so every result replayed from it records them.
//!
//! The file is read twice, in constant memory: a survey checks every record
//! and counts the fates (so a refused trace writes nothing, and the column
//! families are known before the header is written), then the import turns
//! records into operations, a record's time first.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::batch::{Entries, Entry};
use super::survey::{ImportOptions, Summary, batch_error, store_name, survey};
use super::{Record, RocksTraceReader, SeekKind};
use crate::{Expect, Header, Op, OpSource, TraceError, ValueRef};

/// What the import hands out next, as ranges into its own buffers (so the
/// operation can borrow them after the state has moved on).
#[derive(Debug, Clone)]
enum Step {
    At(u64),
    Mark,
    Put(u8, Range, Range),
    Delete(u8, Range),
    DeleteRange(u8, Range, Range),
    Commit,
    Get(u8, Range),
    Scan(u8, Range, Range),
    End,
}

type Range = std::ops::Range<usize>;

/// A surveyed trace as an operation stream.
pub struct RocksImport {
    reader: RocksTraceReader,
    /// The files in order, and the one being read.
    paths: Vec<PathBuf>,
    file: usize,
    /// The first file's start: the zero of every time handed out.
    origin: u64,
    path: PathBuf,
    header: Header,
    summary: Summary,
    opts: ImportOptions,
    stores: BTreeMap<u32, u8>,
    /// The batch being handed out, its file offset, and its entries'
    /// position (offset, entries found) while it is open.
    batch: Vec<u8>,
    batch_at: u64,
    in_batch: Option<(usize, u32)>,
    /// Keys of the MultiGet being handed out, and the next one.
    mg: Vec<u8>,
    mg_spans: Vec<(u8, usize, usize)>,
    mg_next: usize,
    /// One operation's bytes (a get's key; a scan's start and end).
    one: Vec<u8>,
    /// A record's single operation, handed out after its time.
    pending: Option<Step>,
    /// The time to hand out before the record's operations.
    at: Option<u64>,
    last_at: Option<u64>,
    done_records: u64,
    mark_due: bool,
    label: String,
    finished: bool,
    /// Disguised keys of the operation being handed out.
    hk: Vec<u8>,
    hk2: Vec<u8>,
    /// Puts handed out: the position each dropped value's seed comes from.
    values: u64,
}

impl RocksImport {
    /// Surveys `paths` (every record checked, fates counted) and opens the
    /// first for the import; the files are one stream, in this order.
    pub fn open(paths: &[PathBuf], opts: ImportOptions) -> Result<Self, TraceError> {
        let Some(path) = paths.first() else {
            return Err(TraceError::Source("no trace file to import".into()));
        };
        let summary = survey(paths, &opts)?;
        let reader = RocksTraceReader::open(path)?.allow_missing_end(opts.allow_missing_end);
        let origin = reader.start_micros();
        let stores: BTreeMap<u32, u8> = summary
            .column_families
            .keys()
            .enumerate()
            .map(|(i, &cf)| (cf, i as u8))
            .collect();
        let mut names: Vec<String> = summary.column_families.values().cloned().collect();
        if names.is_empty() {
            names.push(store_name(0, &opts));
        }
        let header = Header {
            workload: "rocksdb-trace".into(),
            seed: 0,
            stores: names,
            source: serde_json::json!({
                "rocksdb_trace": &summary,
                "options": &opts,
            }),
        };
        Ok(RocksImport {
            reader,
            paths: paths.to_vec(),
            file: 0,
            origin,
            path: path.clone(),
            header,
            summary,
            opts,
            stores,
            batch: Vec::new(),
            batch_at: 0,
            in_batch: None,
            mg: Vec::new(),
            mg_spans: Vec::new(),
            mg_next: 0,
            one: Vec::new(),
            pending: None,
            at: None,
            last_at: None,
            done_records: 0,
            mark_due: false,
            label: String::new(),
            finished: false,
            hk: Vec::new(),
            hk2: Vec::new(),
            values: 0,
        })
    }

    /// What the survey counted.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The options it was made with.
    pub fn options(&self) -> &ImportOptions {
        &self.opts
    }

    fn store(&self, cf: u32) -> u8 {
        // The survey saw every family the import meets; a file changed
        // between the passes is caught by its other checks or not at all.
        self.stores.get(&cf).copied().unwrap_or(0)
    }

    /// The next entry of the open batch; its commit once every entry is out.
    fn batch_step(&mut self) -> Result<Option<Step>, TraceError> {
        let Some((pos, found)) = self.in_batch else {
            return Ok(None);
        };
        let bad = |b| batch_error(&self.path, self.batch_at, b);
        let mut e = Entries::resume(&self.batch, pos, found).map_err(bad)?;
        // Entries borrow the batch buffer: their offsets in it are the
        // ranges the operation is later cut from.
        let base = self.batch.as_ptr() as usize;
        let span = |s: &[u8]| {
            let a = s.as_ptr() as usize - base;
            a..a + s.len()
        };
        loop {
            let Some(entry) = e.next_entry().map_err(bad)? else {
                self.in_batch = None;
                return Ok(Some(Step::Commit));
            };
            let step = match entry {
                Entry::Put { cf, key, value, .. }
                | Entry::Merge {
                    cf,
                    key,
                    operand: value,
                } => Step::Put(self.store(cf), span(key), span(value)),
                Entry::Delete { cf, key, .. } => Step::Delete(self.store(cf), span(key)),
                Entry::DeleteRange { cf, start, end } => {
                    Step::DeleteRange(self.store(cf), span(start), span(end))
                }
                Entry::Unportable { .. } | Entry::Marker { .. } => continue,
            };
            self.in_batch = Some(e.position());
            return Ok(Some(step));
        }
    }

    /// Reads the next record, from the next file when one ends, and sets
    /// up what it hands out; false after the last file.
    ///
    /// Long because one arm per record kind, each setting up what it hands out.
    fn read_record(&mut self) -> Result<bool, TraceError> {
        let start = self.origin;
        while !self.reader.advance()? {
            self.file += 1;
            let Some(next) = self.paths.get(self.file) else {
                return Ok(false);
            };
            self.reader =
                RocksTraceReader::open(next)?.allow_missing_end(self.opts.allow_missing_end);
            self.path = next.clone();
        }
        let Some(rec) = self.reader.current() else {
            return Ok(false);
        };
        let mut one = std::mem::take(&mut self.one);
        one.clear();
        let mut put = |b: &[u8]| {
            let s = one.len();
            one.extend_from_slice(b);
            s..one.len()
        };
        let ts = match rec {
            Record::Write { ts, batch, at } => {
                self.batch.clear();
                self.batch.extend_from_slice(batch);
                self.batch_at = at;
                let e = Entries::new(&self.batch).map_err(|b| batch_error(&self.path, at, b))?;
                self.in_batch = Some(e.position());
                ts
            }
            Record::Get { ts, cf, key } => {
                self.pending = Some(Step::Get(
                    self.stores.get(&cf).copied().unwrap_or(0),
                    put(key),
                ));
                ts
            }
            Record::MultiGet { ts, keys } => {
                self.mg.clear();
                self.mg_spans.clear();
                for (cf, k) in keys.iter() {
                    let a = self.mg.len();
                    self.mg.extend_from_slice(k);
                    let s = self.stores.get(&cf).copied().unwrap_or(0);
                    self.mg_spans.push((s, a, self.mg.len()));
                }
                self.mg_next = 0;
                ts
            }
            Record::Seek {
                ts,
                kind,
                cf,
                key,
                lower,
                upper,
            } => {
                // A Seek below the lower bound lands on it; a SeekForPrev
                // scanned forward has no upper bound that means anything.
                let (from, end) = match kind {
                    SeekKind::Seek => (if key < lower { lower } else { key }, upper),
                    SeekKind::SeekForPrev => (key, &[][..]),
                };
                let s = self.stores.get(&cf).copied().unwrap_or(0);
                let a = put(from);
                self.pending = Some(Step::Scan(s, a, put(end)));
                ts
            }
        };
        self.one = one;
        self.done_records += 1;
        if self.opts.mark_every > 0 && self.done_records.is_multiple_of(self.opts.mark_every) {
            self.mark_due = true;
        }
        let micros = ts.saturating_sub(start);
        if self.last_at != Some(micros) {
            self.last_at = Some(micros);
            self.at = Some(micros);
        }
        Ok(true)
    }

    /// What to hand out next: a record's time, its operations, then a mark
    /// after every `mark_every` records.
    fn step(&mut self) -> Result<Step, TraceError> {
        loop {
            if let Some(t) = self.at.take() {
                return Ok(Step::At(t));
            }
            if let Some(s) = self.pending.take() {
                return Ok(s);
            }
            if let Some(s) = self.batch_step()? {
                return Ok(s);
            }
            if self.mg_next < self.mg_spans.len() {
                let (s, a, b) = self.mg_spans[self.mg_next];
                self.mg_next += 1;
                self.one.clear();
                self.one.extend_from_slice(&self.mg[a..b]);
                return Ok(Step::Get(s, 0..b - a));
            }
            if std::mem::take(&mut self.mark_due) {
                self.label = format!("records {}", self.done_records);
                return Ok(Step::Mark);
            }
            if self.finished || !self.read_record()? {
                self.finished = true;
                return Ok(Step::End);
            }
        }
    }
}

impl RocksImport {
    /// Disguises the step's keys into `hk` (a key, a range's start) and
    /// `hk2` (a range's or a scan's end) when keys are hashed.
    fn disguise(&mut self, step: &Step) {
        let p = &self.opts.privacy;
        if !p.hashes() {
            return;
        }
        let (b, o) = (&self.batch, &self.one);
        match step {
            Step::Put(_, k, _) | Step::Delete(_, k) => p.key(&b[k.clone()], &mut self.hk),
            Step::DeleteRange(_, s, e) => {
                p.key(&b[s.clone()], &mut self.hk);
                p.key(&b[e.clone()], &mut self.hk2);
            }
            Step::Get(_, k) => p.key(&o[k.clone()], &mut self.hk),
            Step::Scan(_, s, e) => {
                p.key(&o[s.clone()], &mut self.hk);
                // An open end stays open.
                if e.is_empty() {
                    self.hk2.clear();
                } else {
                    p.key(&o[e.clone()], &mut self.hk2);
                }
            }
            Step::At(_) | Step::Mark | Step::Commit | Step::End => {}
        }
    }
}

impl OpSource for RocksImport {
    fn header(&self) -> &Header {
        &self.header
    }

    fn next_op(&mut self) -> Result<Option<Op<'_>>, TraceError> {
        let step = self.step()?;
        self.disguise(&step);
        let seed = match step {
            Step::Put(..) => {
                self.values += 1;
                self.opts.privacy.value_seed(self.values)
            }
            _ => None,
        };
        let hashed = self.opts.privacy.hashes();
        let (b, o) = (&self.batch, &self.one);
        // A key as handed out: disguised, or the trace's own bytes.
        let (k1, k2) = (&self.hk[..], &self.hk2[..]);
        fn pick<'x>(hashed: bool, raw: &'x [u8], disguised: &'x [u8]) -> &'x [u8] {
            if hashed { disguised } else { raw }
        }
        Ok(Some(match step {
            Step::End => return Ok(None),
            Step::At(micros) => Op::At { micros },
            Step::Mark => Op::Mark { label: &self.label },
            Step::Put(store, k, v) => Op::Put {
                store,
                key: pick(hashed, &b[k], k1),
                value: match seed {
                    Some(seed) => ValueRef::Generated {
                        len: v.len() as u32,
                        seed,
                    },
                    None => ValueRef::Bytes(&b[v]),
                },
            },
            Step::Delete(store, k) => Op::Delete {
                store,
                key: pick(hashed, &b[k], k1),
            },
            Step::DeleteRange(store, s, e) => Op::DeleteRange {
                store,
                start: pick(hashed, &b[s], k1),
                end: pick(hashed, &b[e], k2),
            },
            Step::Commit => Op::Commit { sync: false },
            Step::Get(store, k) => Op::Get {
                store,
                key: pick(hashed, &o[k], k1),
                expect: Expect::Unchecked,
            },
            Step::Scan(store, s, e) => Op::Scan {
                store,
                start: pick(hashed, &o[s], k1),
                end: pick(hashed, &o[e], k2),
                limit: self.opts.scan_length.unwrap_or(0),
            },
        }))
    }

    fn progress(&self) -> Option<(u64, u64)> {
        let s = &self.summary;
        Some((
            self.done_records,
            s.writes + s.gets + s.multigets + s.seeks + s.seeks_for_prev,
        ))
    }
}
