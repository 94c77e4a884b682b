//! The state-trie sections: what an account read and an update cost per
//! engine and scheme, and the answer to the "log N x log N" question in one
//! table across every trie results file given.

use std::fmt::Write;

use super::*;
use crate::table::Table;
use ledgerbench_results::trie::{TrieBlock, TrieResults, TrieRun};

/// The blocks figures are averaged over: the second half, after the cold
/// start has warmed the caches (all blocks when there are fewer than 2).
fn steady(run: &TrieRun) -> &[TrieBlock] {
    let n = run.blocks.len();
    &run.blocks[n / 2..]
}

fn mean(blocks: &[TrieBlock], f: impl Fn(&TrieBlock) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = blocks.iter().map(f).collect::<Option<Vec<f64>>>()?;
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn opt(v: Option<f64>, digits: usize) -> String {
    v.map_or("n/a".into(), |v| format!("{v:.digits$}"))
}

/// Device bytes over logical bytes written by the blocks, the writes left
/// dirty after the last block included; absent where either was not
/// measured (results from before the tail was counted leave it out rather
/// than count it as nothing).
fn write_amp(run: &TrieRun) -> Option<f64> {
    let dev: Option<u64> = run
        .blocks
        .iter()
        .map(|b| b.device_write_bytes)
        .chain([run.tail_device_write_bytes])
        .sum();
    let logical: u64 = run.blocks.iter().map(|b| b.logical_write_bytes).sum();
    dev.filter(|_| logical > 0)
        .map(|d| d as f64 / logical as f64)
}

/// Store growth per block, bytes: first block to last.
fn growth(run: &TrieRun) -> Option<f64> {
    let first = run.blocks.first()?.disk_allocated_bytes?;
    let last = run.blocks.last()?.disk_allocated_bytes?;
    let n = run.blocks.len().saturating_sub(1);
    (n > 0).then(|| (last as f64 - first as f64) / n as f64)
}

/// Share of trie-walk GETs at `level` in the steady blocks that read
/// nothing from the device.
fn cached_share(blocks: &[TrieBlock], level: usize) -> Option<f64> {
    let (mut gets, mut cached) = (0u64, 0u64);
    for b in blocks {
        let l = b.trie.levels.get(level)?;
        gets += l.gets;
        cached += l.cached_gets?;
    }
    (gets > 0).then(|| cached as f64 / gets as f64)
}

/// The file's heading and how its figures were taken, as a paragraph.
fn trie_intro(t: &TrieResults) -> String {
    let c = &t.config;
    format!(
        "# State trie: {} accounts, {} blocks of {} updates and {} reads ({}), memory limit {}\n\n\
         Averages over the second half of the blocks (the first half warms the cache after a cold start), \
         but for device write amplification and growth, which span every block (write amplification \
         with the writes still dirty after the last). \
         Device reads come from each store's private loop device, counted around every GET; \
         `cached` is the share of GETs at a level that read nothing from the device. \
         Latencies include those two counter reads per GET ({}).\n\n",
        c.accounts,
        c.blocks,
        c.updates_per_block,
        c.reads_per_block,
        c.dist,
        t.memory_limit_bytes
            .map_or("none".into(), |b| format!("{} MiB", b >> 20)),
        match t
            .runs
            .iter()
            .filter_map(|r| r.device_stat_micros)
            .reduce(f64::max)
        {
            Some(us) => format!("at most {us:.1} µs each in these runs"),
            None => "their cost was not measured in these runs".into(),
        }
    )
}

/// A row per backend and scheme, over the steady half of the blocks.
fn trie_table(t: &TrieResults) -> Table {
    let mut tab = Table::new(&[
        "backend",
        "scheme",
        "blocks",
        "GETs / trie read",
        "device reads / trie read",
        "device reads / flat read",
        "trie read p99 µs",
        "flat read p99 µs",
        "nodes read / update",
        "nodes written / update",
        "bytes written / update",
        "device write amp",
        "growth / block MiB",
        "walk / hash / commit s per block",
        "root check",
    ]);
    for r in &t.runs {
        let s = steady(r);
        let per_update = |f: &dyn Fn(&TrieBlock) -> u64| {
            let u: u64 = s.iter().map(|b| b.updates).sum();
            (u > 0).then(|| s.iter().map(f).sum::<u64>() as f64 / u as f64)
        };
        let check = match (&r.reference_root, r.blocks.last()) {
            (Some(want), Some(b)) if *want == b.root => "matches".to_string(),
            (Some(_), Some(_)) => "DIFFERS".to_string(),
            _ => r
                .error
                .as_ref()
                .map_or("not run".into(), |_| "failed".into()),
        };
        tab.row([
            r.backend.clone(),
            r.scheme.clone(),
            r.blocks.len().to_string(),
            opt(mean(s, |b| Some(b.trie.gets_per_read)), 2),
            opt(mean(s, |b| b.trie.device_reads_per_read), 2),
            opt(mean(s, |b| b.flat.device_reads_per_read), 2),
            opt(mean(s, |b| b.trie.latency.as_ref().map(|l| l.p99_us)), 0),
            opt(mean(s, |b| b.flat.latency.as_ref().map(|l| l.p99_us)), 0),
            opt(per_update(&|b| b.nodes_read), 1),
            opt(per_update(&|b| b.nodes_written), 1),
            opt(per_update(&|b| b.node_bytes_written), 0),
            opt(write_amp(r), 1),
            opt(growth(r).map(|g| g / (1 << 20) as f64), 2),
            format!(
                "{} / {} / {}",
                opt(mean(s, |b| Some(b.walk_secs)), 3),
                opt(mean(s, |b| Some(b.hash_secs)), 3),
                opt(mean(s, |b| Some(b.commit_secs)), 3)
            ),
            check,
        ]);
    }
    tab
}

/// One trie results file: a row per backend and scheme.
pub fn trie_summary(t: &TrieResults) -> String {
    let mut md = trie_intro(t);
    md.push_str(&trie_table(t).render());
    let errors: Vec<String> = t
        .runs
        .iter()
        .filter_map(|r| {
            Some(format!(
                "- {} {}: {}",
                r.backend,
                r.scheme,
                r.error.as_ref()?
            ))
        })
        .collect();
    if !errors.is_empty() {
        let _ = write!(md, "\nFailed:\n{}\n", errors.join("\n"));
    }
    md
}

/// The answer across every trie file: reads per account read against the
/// depth walked and against "every level a GET at a flat GET's cost".
pub fn trie_answer(files: &[&TrieResults]) -> Option<String> {
    let mut tab = Table::new(&[
        "accounts",
        "backend",
        "scheme",
        "log16 N",
        "levels walked",
        "device reads / flat GET",
        "estimate: levels x flat GET",
        "measured device reads / trie read",
        "measured / estimate",
        "levels fully cached",
    ]);
    let mut rows = 0;
    for t in files {
        for r in &t.runs {
            let s = steady(r);
            let Some(levels) = mean(s, |b| Some(b.trie.gets_per_read)) else {
                continue;
            };
            let flat = mean(s, |b| b.flat.device_reads_per_read);
            let trie = mean(s, |b| b.trie.device_reads_per_read);
            let estimate = flat.map(|f| f * levels);
            let depth = s.iter().map(|b| b.trie.levels.len()).max().unwrap_or(0);
            // Levels whose GETs read from the device less than 1 time in 100.
            let cached = (0..depth)
                .take_while(|&l| cached_share(s, l).is_some_and(|c| c >= 0.99))
                .count();
            tab.row([
                t.config.accounts.to_string(),
                r.backend.clone(),
                r.scheme.clone(),
                format!("{:.1}", (t.config.accounts as f64).log(16.0)),
                format!("{levels:.2}"),
                opt(flat, 2),
                opt(estimate, 2),
                opt(trie, 2),
                opt(
                    trie.zip(estimate)
                        .filter(|(_, e)| *e > 0.0)
                        .map(|(t, e)| t / e),
                    2,
                ),
                match cached_share(s, 0) {
                    Some(_) => format!("{cached} of {depth}"),
                    None => "n/a".into(),
                },
            ]);
            rows += 1;
        }
    }
    (rows > 0).then(|| {
        format!(
            "## Reads per account read: the trie walk against \"log N x log N\"\n\n\
             The hypothesis reads each of a trie's ~log16 N levels as a GET costing what a flat GET costs (itself ~log N in a generic store); \
             `estimate` is that product with the flat GET's measured device reads, `measured` what the walk read. \
             `levels fully cached`: top levels whose GETs read from the device less than once in 100.\n\n{}",
            tab.render()
        )
    })
}

/// Every trie file among the inputs: the answer table, then each file.
pub(super) fn trie_section(out: &mut Out, docs: &[Loaded]) {
    let files: Vec<&TrieResults> = docs
        .iter()
        .filter_map(|d| match &d.doc {
            Doc::Trie(t) => Some(t.as_ref()),
            _ => None,
        })
        .collect();
    if let Some(a) = trie_answer(&files) {
        out.md.push_str(&a);
        out.md.push('\n');
    }
    for t in files {
        out.md.push_str(&trie_summary(t).replacen("# ", "## ", 1));
        out.md.push('\n');
        let per_block = |f: fn(&TrieBlock) -> Option<f64>| {
            t.runs
                .iter()
                .map(|r| Series {
                    marked: false,
                    name: format!("{} {}", r.backend, r.scheme),
                    points: r
                        .blocks
                        .iter()
                        .filter_map(|b| Some((b.block as f64, f(b)?)))
                        .collect(),
                })
                .filter(|s| !s.points.is_empty())
                .collect::<Vec<_>>()
        };
        let series = per_block(|b| b.trie.device_reads_per_read);
        if !series.is_empty() {
            let mut names: Vec<&str> = t.runs.iter().map(|r| r.backend.as_str()).collect();
            names.dedup();
            let title = format!(
                "Device reads per trie read, {} accounts: {}",
                t.config.accounts,
                names.join(", ")
            );
            out.chart(
                &title,
                svg::line_chart(&title, "block", "device reads per account read", &series),
            );
        }
    }
}
