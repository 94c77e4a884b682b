//! The `--param` settings of each generated workload in its `--help`, from
//! the guide's tables (`docs/src/workloads.md`), which a test holds to the
//! keys each workload accepts: one list, read by the user in either place.

const GUIDE: &str = include_str!("../../../docs/src/workloads.md");

/// The generated workloads whose `run` page lists its settings.
const WORKLOADS: [&str; 5] = ["ycsb", "solana", "blobs", "accounts", "synth"];

/// The guide's table for `run NAME`: (key, meaning, default) per row.
fn table(name: &str) -> Vec<[String; 3]> {
    let heading = format!("### `run {name}`");
    let cell = |c: &str| c.trim().replace('`', "");
    GUIDE
        .lines()
        .skip_while(|l| l.trim() != heading)
        .skip(1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter(|l| l.starts_with("| `"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim().trim_matches('|').split('|').collect();
            match cells.as_slice() {
                [k, m, d] => Some([cell(k), cell(m), cell(d)]),
                _ => None,
            }
        })
        .collect()
}

/// The settings of `run NAME` as help text; empty when the guide has none.
pub fn settings(name: &str) -> String {
    let rows = table(name);
    let width = rows.iter().map(|r| r[0].len()).max().unwrap_or(0);
    let mut s = String::new();
    for [k, m, d] in &rows {
        s.push_str(&format!("  {k:<width$}  {m} [default: {d}]\n"));
    }
    s
}

/// `cmd` with each generated workload's settings before the rest of its
/// long help.
pub fn with_settings(cmd: clap::Command) -> clap::Command {
    cmd.mut_subcommand("run", |mut run| {
        for name in WORKLOADS {
            run = run.mut_subcommand(name, |c| {
                let rest = c
                    .get_after_long_help()
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                let text = format!("Settings (--param KEY=VALUE):\n{}\n{rest}", settings(name));
                c.after_long_help(text)
            });
        }
        run
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_generated_workload_has_its_table() {
        for name in super::WORKLOADS {
            let rows = super::table(name);
            assert!(rows.len() >= 4, "{name}: {rows:?}");
            assert!(rows.iter().all(|r| !r[2].is_empty()), "{name}: {rows:?}");
        }
        let s = super::settings("blobs");
        assert!(s.contains("ttl_batches"), "{s}");
        assert!(
            s.contains("batches a blob lives before it expires [default: 50]"),
            "{s}"
        );
    }
}
