//! db_bench's staples: each backend's lines in db_bench's own layout, and
//! one table of ops/s with ledgerbench's percentiles beside them.

use std::fmt::Write;

use super::*;
use crate::table::Table;
use ledgerbench_results::micro::{MicroBench, MicroResults};

/// One benchmark as db_bench prints it (`name : X micros/op Y ops/sec; ...`).
pub fn micro_line(b: &MicroBench) -> String {
    let mut line = format!(
        "{:<12} : {:>11.3} micros/op {} ops/sec;",
        b.name, b.micros_per_op, b.ops_per_sec as u64
    );
    if let Some(mb) = b.mb_per_sec {
        let _ = write!(line, " {mb:>6.1} MB/s");
    }
    if let Some(found) = b.found {
        let _ = write!(line, " ({found} of {} found)", b.ops);
    }
    if let Some(w) = b.background_writes {
        let _ = write!(line, " ({w} writes beside)");
    }
    line
}

/// A micro results file: db_bench's lines per backend, then the table.
pub fn micro_summary(m: &MicroResults) -> String {
    let c = &m.config;
    let mut md = format!(
        "# db_bench staples: --num {} --reads {} --key_size {} --value_size {} --threads {} --batch_size {}\n\n\
         Lines in db_bench's layout (micros/op: every measured thread's seconds over the operations; \
         MB/s: key and value bytes, MiB); the table adds ledgerbench's latency percentiles of one \
         operation (one commit for writes).\n\n",
        c.num, c.reads, c.key_size, c.value_size, c.threads, c.batch_size
    );
    for r in &m.runs {
        let _ = writeln!(md, "```\n{}", r.backend);
        for b in &r.benchmarks {
            let _ = writeln!(md, "{}", micro_line(b));
        }
        if let Some(e) = &r.error {
            let _ = writeln!(md, "failed: {e}");
        }
        md.push_str("```\n\n");
    }
    let mut tab = Table::new(&[
        "benchmark",
        "backend",
        "ops/s",
        "micros/op",
        "p50 µs",
        "p99 µs",
        "p99.9 µs",
    ]);
    for name in &c.benchmarks {
        for r in &m.runs {
            let Some(b) = r.benchmarks.iter().find(|b| &b.name == name) else {
                continue;
            };
            let pct = |f: fn(&ledgerbench_results::Latency) -> f64| {
                b.latency
                    .as_ref()
                    .map_or("n/a".into(), |l| format!("{:.1}", f(l)))
            };
            tab.row([
                name.clone(),
                r.backend.clone(),
                format!("{:.0}", b.ops_per_sec),
                format!("{:.3}", b.micros_per_op),
                pct(|l| l.p50_us),
                pct(|l| l.p99_us),
                pct(|l| l.p999_us),
            ]);
        }
    }
    md.push_str(&tab.render());
    md
}

/// Every micro file among the inputs.
pub(super) fn micro_section(out: &mut Out, docs: &[Loaded]) {
    for d in docs {
        if let Doc::Micro(m) = &d.doc {
            out.md.push_str(&micro_summary(m).replacen("# ", "## ", 1));
            out.md.push('\n');
        }
    }
}
