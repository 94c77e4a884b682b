//! How much each config's batches grew, first batch to last, per store:
//! the answer's growth table.

use std::fmt::Write;

use crate::model::Point;

/// The smallest and largest of `v`, when it has any.
pub(super) fn range(v: &[f64]) -> Option<(f64, f64)> {
    let lo = v.iter().copied().reduce(f64::min)?;
    Some((lo, v.iter().copied().fold(lo, f64::max)))
}

/// How much a config's batches grew in one store, first batch to last, over
/// its runs (memory limits).
pub struct Growth {
    store: String,
    config: String,
    /// Smallest and largest last/first ratio over the runs.
    range: Option<(f64, f64)>,
}

impl Growth {
    /// From the batches of each run of `config` in `store`.
    pub(super) fn of<'a>(
        store: &str,
        config: &str,
        runs: impl Iterator<Item = &'a [Point]>,
    ) -> Self {
        let ratios: Vec<f64> = runs
            .filter_map(|p| Some(p.last()?.secs / p.first()?.secs.max(1e-9)))
            .collect();
        Self {
            store: store.to_string(),
            config: config.to_string(),
            range: range(&ratios),
        }
    }
}

/// The growth table: a row per config, a column per store of `stores`.
pub(super) fn table(growth: &[Growth], stores: &[String], s: &mut String) {
    let head: Vec<String> = stores.iter().map(|st| format!(" {st} |")).collect();
    let _ = writeln!(
        s,
        "| config |{}\n|---|{}",
        head.concat(),
        "---:|".repeat(stores.len())
    );
    let mut configs: Vec<&str> = Vec::new();
    for g in growth {
        if !configs.contains(&g.config.as_str()) {
            configs.push(&g.config);
        }
    }
    for c in configs {
        let cell = |store: &str| {
            growth
                .iter()
                .find(|g| g.config == c && g.store == store)
                .and_then(|g| g.range)
                .map_or("n/a".into(), |(a, b)| {
                    if (b - a).abs() < 0.05 {
                        format!("{a:.1}x")
                    } else {
                        format!("{a:.1}-{b:.1}x")
                    }
                })
        };
        let cells: Vec<String> = stores.iter().map(|st| format!(" {} |", cell(st))).collect();
        let _ = writeln!(s, "| `{c}` |{}", cells.concat());
    }
}
