//! Where the results came from: the machines table, where a scheduler ran
//! each file, and the results files with their commands as a reader can
//! rerun them.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::Path;

use crate::doc::Loaded;

/// The machines table: one row per machine and build among the results.
pub(super) fn machines_table(md: &mut String, docs: &[Loaded]) {
    md.push_str("## Machines\n\n| machine | CPU | cores | RAM GiB | kernel | data filesystem | build | commit | engines |\n|---|---|---:|---:|---|---|---|---|---|\n");
    let key = |d: &Loaded| {
        let e = d.env();
        (d.machine(), e.git_commit.clone(), e.build_profile.clone())
    };
    let mut seen = BTreeSet::new();
    for d in docs {
        let e = d.env();
        if !seen.insert(key(d)) {
            continue;
        }
        // The engines of every file of this machine and build, not the
        // first file's alone (each file may run other backends).
        let mut engines: BTreeSet<String> = BTreeSet::new();
        for other in docs.iter().filter(|o| key(o) == key(d)) {
            for (k, v) in &other.env().engine_versions {
                engines.insert(format!("{k} {v}"));
            }
        }
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {}{} | {} | {} |",
            d.machine(),
            e.cpu_model.as_deref().unwrap_or("?"),
            e.cores.map_or("?".into(), |c| c.to_string()),
            e.ram_bytes.map_or("?".into(), |b| format!(
                "{:.1}",
                b as f64 / f64::from(1u32 << 30)
            )),
            e.kernel.as_deref().unwrap_or("?"),
            e.data_fs
                .as_ref()
                .map_or("?".into(), |m| format!("{} ({})", m.fs_type, m.mount_point)),
            e.build_profile,
            if e.debug_assertions {
                " **DEBUG: figures not valid**"
            } else {
                ""
            },
            e.git_commit,
            engines.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    md.push('\n');
    scheduled_table(md, docs);
}

/// Which node, job and task a scheduler gave each results file, when any
/// ran under one: cells that shared a node shared its devices and page
/// cache, and a reader should see it.
fn scheduled_table(md: &mut String, docs: &[Loaded]) {
    if docs.iter().all(|d| d.header().scheduler.is_none()) {
        return;
    }
    md.push_str("Where the scheduler ran each results file:\n\n| file | cell | scheduler | job | task | node |\n|---|---|---|---|---|---|\n");
    for d in docs {
        let h = d.header();
        let cell = h.cell.as_ref().map_or("-".into(), |c| c.id.clone());
        let (kind, job, task, node) =
            h.scheduler
                .as_ref()
                .map_or(("none".into(), "-".into(), "-".into(), "-".into()), |s| {
                    (
                        s.scheduler.clone(),
                        s.job.clone(),
                        s.task.clone().unwrap_or_else(|| "-".into()),
                        s.node.clone().unwrap_or_else(|| "?".into()),
                    )
                });
        let _ = writeln!(
            md,
            "| {} | {cell} | {kind} | {job} | {task} | {node} |",
            d.path.display()
        );
    }
    md.push('\n');
}

/// A recorded command line as a user types it: the program is `ledgerbench`,
/// whatever path or name the binary had on the machine that ran it.
pub(super) fn as_typed(command: &str) -> String {
    match command.split_once(' ') {
        Some((_, rest)) => format!("ledgerbench {rest}"),
        None if command.is_empty() => String::new(),
        None => "ledgerbench".into(),
    }
}

/// The recorded command as a reader can rerun it: the binary as
/// `ledgerbench`, and a machine path given to `--out`, `--out-dir` or
/// `--config` shown relative to where the results file now is (the
/// results keep what was typed).
pub(super) fn for_reader(command: &str, results: &Path) -> String {
    let here = results_dir(results);
    let mut words: Vec<String> = as_typed(command).split(' ').map(str::to_string).collect();
    for i in 1..words.len() {
        if !words[i].starts_with('/') {
            continue;
        }
        match words[i - 1].as_str() {
            "--out" | "--out-dir" => words[i] = here.display().to_string(),
            "--config" => {
                let name = Path::new(&words[i])
                    .file_name()
                    .map(std::path::PathBuf::from)
                    .unwrap_or_default();
                // The run file published beside the results, if it is.
                let found = here
                    .ancestors()
                    .map(|a| a.join(&name))
                    .find(|p| p.is_file());
                words[i] = found.unwrap_or(name).display().to_string();
            }
            _ => {}
        }
    }
    words.join(" ")
}

/// The folder a results file is in, relative as the reader gave it (`.`
/// for a file given by its bare name).
fn results_dir(results: &Path) -> &Path {
    results
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// `text` with the machine path a recorded command gave `--out` (as in
/// an error naming a store under it) replaced by where the results file
/// now is, as [`for_reader`] shows the command.
pub(super) fn relative_out(text: &str, command: &str, results: &Path) -> String {
    let words: Vec<&str> = command.split(' ').collect();
    let out = words
        .windows(2)
        .find(|w| w[0] == "--out" && w[1].starts_with('/') && w[1].len() > 1)
        .map(|w| w[1].trim_end_matches('/'));
    match out {
        Some(out) => {
            let here = results_dir(results);
            text.replace(out, &here.display().to_string())
        }
        None => text.to_string(),
    }
}

/// The results files read, with the command that made each, as a reader can rerun it.
pub(super) fn sources_table(md: &mut String, docs: &[Loaded]) {
    md.push_str("## Results files\n\n| file | workload | seed | started | command |\n|---|---|---:|---|---|\n");
    for d in docs {
        let started = d.header().started_at.clone();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | `{}` |",
            d.path.display(),
            d.workload(),
            d.seed(),
            started,
            for_reader(d.command(), &d.path).replace('|', "\\|")
        );
    }
    md.push('\n');
}

#[cfg(test)]
mod tests {
    #[test]
    fn commands_read_as_typed() {
        assert_eq!(
            super::as_typed("/tmp/ledgerbench-crash run crash --cycles 50"),
            "ledgerbench run crash --cycles 50"
        );
        assert_eq!(super::as_typed("target/release/ledgerbench"), "ledgerbench");
        assert_eq!(super::as_typed(""), "");
    }

    #[test]
    fn an_error_naming_the_recorded_out_reads_relative_too() {
        use std::path::Path;
        let cmd = "ledgerbench run trie --out /var/tmp/t/n4m";
        assert_eq!(
            super::relative_out(
                "failed on /var/tmp/t/n4m/devices/db: x",
                cmd,
                Path::new("n4m/results.json")
            ),
            "failed on n4m/devices/db: x"
        );
        // Nothing to replace without an absolute --out.
        assert_eq!(
            super::relative_out(
                "/var/tmp/x",
                "ledgerbench run trie --out rel",
                Path::new("a/r.json")
            ),
            "/var/tmp/x"
        );
    }

    #[test]
    fn recorded_machine_paths_read_relative_to_the_results() {
        use std::path::Path;
        let cmd = "/tmp/pubbin/ledgerbench run stellar --out /var/tmp/verdict/manual --config /nowhere/manual.toml --backends mdbx";
        assert_eq!(
            super::for_reader(cmd, Path::new("manual/results.json")),
            "ledgerbench run stellar --out manual --config manual.toml --backends mdbx"
        );
        assert_eq!(
            super::for_reader(
                "ledgerbench run stellar --out /x",
                Path::new("results.json")
            ),
            "ledgerbench run stellar --out ."
        );
        // What was typed relative stays as typed.
        assert_eq!(
            super::for_reader(
                "ledgerbench report a --out rel",
                Path::new("x/results.json")
            ),
            "ledgerbench report a --out rel"
        );
    }
}
