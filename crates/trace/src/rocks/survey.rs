//! The first of an import's two passes over a RocksDB trace: every record
//! and batch entry checked and its fate counted, the column families found,
//! and whatever the options refuse listed in one error, before anything is
//! written.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::batch::{BadBatch, Entries, Entry};
use super::{Record, RocksTraceReader, SeekKind};
use crate::TraceError;

/// Store names by column family id.
pub type CfNames = BTreeMap<u32, String>;

/// How records without an engine-neutral meaning are mapped, and how the
/// trace is cut into segments.
#[derive(Debug, Clone, Serialize)]
pub struct ImportOptions {
    /// Store names by column family id; an id not named is `cf<ID>`
    /// (`default` for 0).
    pub cf_names: CfNames,
    /// Entries a Seek visits (not traced); `None` refuses Seek records.
    pub scan_length: Option<u32>,
    /// A Merge operand becomes a put of the operand as the value.
    pub merge_as_put: bool,
    /// A SeekForPrev becomes a forward scan from its target.
    pub seek_for_prev_forward: bool,
    /// A trace without its end record (cut short at a record boundary) is
    /// accepted.
    pub allow_missing_end: bool,
    /// Records per segment: a mark (meters read, threads meet) after each.
    pub mark_every: u64,
    /// Keys hashed, values dropped: a trace safe to share.
    pub privacy: super::privacy::Privacy,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            cf_names: BTreeMap::new(),
            scan_length: None,
            merge_as_put: false,
            seek_for_prev_forward: false,
            allow_missing_end: false,
            mark_every: 100_000,
            privacy: super::privacy::Privacy::default(),
        }
    }
}

/// What a trace held and what each part became.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Summary {
    /// The trace files, in the order imported.
    pub files: Vec<String>,
    /// Trace format versions (comma-separated when files differ).
    pub trace_version: String,
    /// RocksDB versions that wrote them.
    pub rocksdb_version: String,
    /// Bytes read.
    pub bytes: u64,
    /// Microseconds from the first file's header to the last record.
    pub micros: u64,
    /// Store names by column family id, of the families the trace touches.
    pub column_families: BTreeMap<u32, String>,
    /// Write records (one atomic commit each).
    pub writes: u64,
    /// Write records whose batch changes no data (log data, markers).
    pub empty_writes: u64,
    /// Get records.
    pub gets: u64,
    /// MultiGet records.
    pub multigets: u64,
    /// Keys of those MultiGets (one get each).
    pub multiget_keys: u64,
    /// Seek records.
    pub seeks: u64,
    /// SeekForPrev records.
    pub seeks_for_prev: u64,
    /// Put entries.
    pub puts: u64,
    /// TimedPut entries (puts; the write time dropped).
    pub timed_puts: u64,
    /// Delete entries.
    pub deletes: u64,
    /// SingleDelete entries (deletes).
    pub single_deletes: u64,
    /// DeleteRange entries.
    pub delete_ranges: u64,
    /// Merge entries.
    pub merges: u64,
    /// Log data, no-op and transaction-marker entries (no change to data).
    pub markers: u64,
}

impl Summary {
    /// One line per kind present: what, how many, what it became.
    pub fn fates(&self, opts: &ImportOptions) -> Vec<(&'static str, u64, String)> {
        let scan = |kind: &str| match opts.scan_length {
            Some(n) => format!("{kind} of {n} entries (--scan-length)"),
            None => "refused".into(),
        };
        let lines = [
            (
                "Write records",
                self.writes,
                "one atomic commit each".to_string(),
            ),
            (
                "  of them with no data change",
                self.empty_writes,
                "an empty commit".into(),
            ),
            ("Put entries", self.puts, "put".into()),
            (
                "TimedPut entries",
                self.timed_puts,
                "put (write time dropped)".into(),
            ),
            ("Delete entries", self.deletes, "delete".into()),
            ("SingleDelete entries", self.single_deletes, "delete".into()),
            (
                "DeleteRange entries",
                self.delete_ranges,
                "range delete".into(),
            ),
            (
                "Merge entries",
                self.merges,
                if opts.merge_as_put {
                    "put of the operand (--merge-as-put)".into()
                } else {
                    "refused".into()
                },
            ),
            (
                "log data, no-op, transaction markers",
                self.markers,
                "skipped: no data change".into(),
            ),
            ("Get records", self.gets, "get".into()),
            (
                "MultiGet records",
                self.multigets,
                format!("{} gets, one per key", self.multiget_keys),
            ),
            (
                "Seek records",
                self.seeks,
                scan("forward scan from max(target, lower bound) below the upper bound"),
            ),
            (
                "SeekForPrev records",
                self.seeks_for_prev,
                if opts.seek_for_prev_forward {
                    scan("forward scan from the target (--seek-for-prev-forward)")
                } else {
                    "refused".into()
                },
            ),
        ];
        lines.into_iter().filter(|l| l.1 > 0).collect()
    }
}

/// Something the options refuse, with where it first occurs.
struct Refusal {
    count: u64,
    first: (String, u64),
    remedy: &'static str,
}

/// What the survey gathers across files.
#[derive(Default)]
struct Tally {
    s: Summary,
    refused: BTreeMap<&'static str, Refusal>,
    cfs: std::collections::BTreeSet<u32>,
    /// The first file's start: the zero of every time in the import.
    origin: Option<u64>,
}

/// Reads the trace files once, in order: checks every record and batch,
/// counts fates, finds the column families. Every refusal is listed in one
/// error.
pub fn survey(paths: &[std::path::PathBuf], opts: &ImportOptions) -> Result<Summary, TraceError> {
    let mut t = Tally::default();
    let mut versions: Vec<String> = Vec::new();
    let mut rocksdb: Vec<String> = Vec::new();
    for path in paths {
        let r = survey_file(path, opts, &mut t)?;
        for (list, v) in [(&mut versions, r.0), (&mut rocksdb, r.1)] {
            if !list.contains(&v) {
                list.push(v);
            }
        }
        t.s.files.push(path.display().to_string());
    }
    t.s.trace_version = versions.join(",");
    t.s.rocksdb_version = rocksdb.join(",");
    if !t.refused.is_empty() {
        let lines: Vec<String> = t
            .refused
            .iter()
            .map(|(what, f)| {
                format!(
                    "{} {what} (the first in {} at byte {}): {}",
                    f.count, f.first.0, f.first.1, f.remedy
                )
            })
            .collect();
        return Err(TraceError::Source(
            format!(
                "the trace holds what has no engine-neutral meaning:\n  {}",
                lines.join("\n  ")
            )
            .into(),
        ));
    }
    if t.cfs.len() > 254 {
        return Err(TraceError::Source(
            format!(
                "the trace touches {} column families; a ledgerbench trace holds at most 254 stores",
                t.cfs.len()
            )
            .into(),
        ));
    }
    t.s.column_families = t.cfs.iter().map(|&cf| (cf, store_name(cf, opts))).collect();
    Ok(t.s)
}

/// Surveys one file into the tally; its format and RocksDB versions.
fn survey_file(
    path: &Path,
    opts: &ImportOptions,
    t: &mut Tally,
) -> Result<(String, String), TraceError> {
    let mut r = RocksTraceReader::open(path)?.allow_missing_end(opts.allow_missing_end);
    let versions = (
        r.format_version().to_string(),
        r.rocksdb_version().to_string(),
    );
    let origin = *t.origin.get_or_insert(r.start_micros());
    let name = path.display().to_string();
    let Tally {
        s, refused, cfs, ..
    } = t;
    loop {
        let at = r.offset();
        let Some(rec) = r.next_record()? else { break };
        let mut refuse = |what: &'static str, remedy: &'static str| {
            let e = refused.entry(what).or_insert(Refusal {
                count: 0,
                first: (name.clone(), at),
                remedy,
            });
            e.count += 1;
        };
        let ts = match rec {
            Record::Write { ts, batch, at } => {
                s.writes += 1;
                let mut e = Entries::new(batch).map_err(|b| batch_error(path, at, b))?;
                let mut changes = 0;
                while let Some(entry) = e.next_entry().map_err(|b| batch_error(path, at, b))? {
                    if let Some(cf) = count_entry(s, entry, opts, &mut refuse) {
                        cfs.insert(cf);
                        changes += 1;
                    }
                }
                s.empty_writes += u64::from(changes == 0);
                ts
            }
            Record::Get { ts, cf, .. } => {
                s.gets += 1;
                cfs.insert(cf);
                ts
            }
            Record::MultiGet { ts, keys } => {
                s.multigets += 1;
                s.multiget_keys += keys.len() as u64;
                cfs.extend(keys.iter().map(|(cf, _)| cf));
                ts
            }
            Record::Seek { ts, kind, cf, .. } => {
                cfs.insert(cf);
                if kind == SeekKind::Seek {
                    s.seeks += 1;
                } else {
                    s.seeks_for_prev += 1;
                    if !opts.seek_for_prev_forward {
                        refuse(
                            "SeekForPrev records",
                            "no engine here iterates backwards: give --seek-for-prev-forward to scan forward from the target (recorded)",
                        );
                    }
                }
                if opts.scan_length.is_none() {
                    refuse(
                        "Seek and SeekForPrev records",
                        "how far the iterator went is not traced: give --scan-length N, the entries each scan visits (recorded)",
                    );
                }
                ts
            }
        };
        s.micros = s.micros.max(ts.saturating_sub(origin));
    }
    s.bytes += r.offset();
    Ok(versions)
}

/// Counts one batch entry; the column family it changes, if it changes data.
fn count_entry(
    s: &mut Summary,
    e: Entry<'_>,
    opts: &ImportOptions,
    refuse: &mut impl FnMut(&'static str, &'static str),
) -> Option<u32> {
    match e {
        Entry::Put { cf, timed, .. } => {
            *if timed {
                &mut s.timed_puts
            } else {
                &mut s.puts
            } += 1;
            Some(cf)
        }
        Entry::Delete { cf, single, .. } => {
            *if single {
                &mut s.single_deletes
            } else {
                &mut s.deletes
            } += 1;
            Some(cf)
        }
        Entry::DeleteRange { cf, .. } => {
            s.delete_ranges += 1;
            Some(cf)
        }
        Entry::Merge { cf, .. } => {
            s.merges += 1;
            if !opts.merge_as_put {
                refuse(
                    "Merge entries",
                    "what a merge leaves depends on a merge operator the trace does not name: give --merge-as-put to write each operand as the value (recorded)",
                );
            }
            Some(cf)
        }
        Entry::Unportable { what, cf } => {
            refuse(
                if what.contains("blob") {
                    "BlobDB blob indexes"
                } else {
                    "wide-column entities (PutEntity)"
                },
                "they have no engine-neutral meaning and no mapping",
            );
            Some(cf)
        }
        Entry::Marker { .. } => {
            s.markers += 1;
            None
        }
    }
}

pub(crate) fn batch_error(path: &Path, at: u64, b: BadBatch) -> TraceError {
    TraceError::Format {
        path: path.display().to_string(),
        offset: at + b.at as u64,
        what: b.what,
    }
}

/// The store name of a column family.
pub fn store_name(cf: u32, opts: &ImportOptions) -> String {
    match opts.cf_names.get(&cf) {
        Some(n) => n.clone(),
        None if cf == 0 => "default".into(),
        None => format!("cf{cf}"),
    }
}
