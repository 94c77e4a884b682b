//! `ledgerbench plan` and `ledgerbench run --job`: a sweep split into
//! independent cells for a scheduler teams already run (a CI matrix,
//! Kubernetes Indexed Jobs, Slurm arrays), one small job file per cell,
//! each run by its own process, merged afterwards by `ledgerbench report`.
//!
//! A job file holds the sweep's own command line and names its cell (run
//! label and repeat); `run --job` runs that command with the cell filter,
//! so a cell is exactly the run the single-process sweep makes, repeat
//! index and label included.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use ledgerbench_driver::results::Cell;
use serde::{Deserialize, Serialize};

use crate::output::write_json;

/// The `schema` of a job file this build reads and writes.
pub const JOB_SCHEMA: &str = "ledgerbench-job/1";

/// One cell of a sweep, as `ledgerbench plan` writes it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// [`JOB_SCHEMA`].
    pub schema: String,
    /// Which plan and which of its jobs.
    pub cell: Cell,
    /// The workload (`stellar`).
    pub workload: String,
    /// The run's label, as the single-process sweep labels it.
    pub label: String,
    /// What it measures without the limit (the verdict's group).
    pub design: String,
    /// The backend of each store.
    pub backends: Vec<String>,
    /// The run's memory limit, bytes (absent: none).
    pub memory_limit_bytes: Option<u64>,
    /// Seed of every generator.
    pub seed: u64,
    /// Repeat index (0 for the first), as `--repeat K` numbers them.
    pub repeat: u32,
    /// The preset the workload starts from.
    pub preset: String,
    /// The workload's resolved config.
    pub config: serde_json::Value,
    /// The sweep's command line after `ledgerbench`, e.g. `run stellar ...`.
    pub argv: Vec<String>,
    /// Git commit of the build that planned it.
    pub commit: String,
}

impl Job {
    /// Reads and checks a job file.
    pub fn load(path: &Path) -> anyhow::Result<Job> {
        let bytes =
            std::fs::read(path).with_context(|| format!("reading job file {}", path.display()))?;
        let job: Job = serde_json::from_slice(&bytes).with_context(|| {
            format!(
                "job file {}: not a job of `ledgerbench plan` (schema {JOB_SCHEMA})",
                path.display()
            )
        })?;
        if job.schema != JOB_SCHEMA {
            bail!(
                "job file {}: schema `{}`, this build reads `{JOB_SCHEMA}`; plan the sweep again with this build",
                path.display(),
                job.schema
            );
        }
        if job.argv.first().map(String::as_str) != Some("run") {
            bail!(
                "job file {}: its command does not start with `run`",
                path.display()
            );
        }
        Ok(job)
    }
}

/// One cell a planner found: a run of the sweep and its repeat.
pub struct PlannedCell {
    /// The run's label.
    pub label: String,
    /// Its design.
    pub design: String,
    /// The backend of each store.
    pub backends: Vec<String>,
    /// Its memory limit, bytes.
    pub memory_limit_bytes: Option<u64>,
    /// Its repeat index.
    pub repeat: u32,
}

/// What a workload's planner gives: the cells and what they share.
pub struct Planned {
    /// The workload.
    pub workload: String,
    /// The preset.
    pub preset: String,
    /// The seed.
    pub seed: u64,
    /// The workload's resolved config.
    pub config: serde_json::Value,
    /// Every cell, in the order the single-process sweep runs them.
    pub cells: Vec<PlannedCell>,
    /// What each cell expects (data, disk, least time), said to the user.
    pub expected: String,
}

/// A cell's directory name: its index, then its label and repeat with
/// every character a path or a scheduler's name dislikes replaced.
pub fn cell_id(index: usize, label: &str, repeat: u32) -> String {
    let mut id = format!("{index:03}-");
    id.extend(label.chars().map(|c| {
        if c.is_ascii_alphanumeric() || matches!(c, '@' | '.' | '-' | '_') {
            c
        } else {
            '_'
        }
    }));
    if repeat > 0 {
        id.push_str(&format!("-r{}", repeat + 1));
    }
    id
}

/// A 64-bit FNV-1a digest, as 16 hex digits: a plan's id only has to be the
/// same in every job file of one plan and differ between plans.
fn digest(parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// Writes the plan into `dir` (new, or empty): `jobs/NNN.json` per cell and
/// `matrix.json` listing them (its `include` list is a GitHub Actions
/// matrix as it stands). Returns how many jobs were written.
pub fn write(dir: &Path, argv: &[String], planned: &Planned) -> anyhow::Result<usize> {
    if planned.cells.is_empty() {
        bail!("the command plans no runs");
    }
    if ledgerbench_core::fsutil::holds_files(dir)
        .with_context(|| format!("--dir {}", dir.display()))?
    {
        bail!(
            "--dir {} holds files; give a new or empty directory (a plan never replaces one)",
            dir.display()
        );
    }
    let commit = ledgerbench_driver::env::GIT_COMMIT.to_string();
    let planned_at = ledgerbench_driver::timefmt::now_rfc3339();
    let joined = argv.join("\u{1f}");
    let plan = digest(&[&joined, &commit, &planned_at]);
    let jobs_dir = dir.join("jobs");
    std::fs::create_dir_all(&jobs_dir)
        .with_context(|| format!("creating {}", jobs_dir.display()))?;
    let of = planned.cells.len();
    let mut include = Vec::new();
    for (index, c) in planned.cells.iter().enumerate() {
        let id = cell_id(index, &c.label, c.repeat);
        let job = Job {
            schema: JOB_SCHEMA.into(),
            cell: Cell {
                plan: plan.clone(),
                index,
                of,
                id: id.clone(),
            },
            workload: planned.workload.clone(),
            label: c.label.clone(),
            design: c.design.clone(),
            backends: c.backends.clone(),
            memory_limit_bytes: c.memory_limit_bytes,
            seed: planned.seed,
            repeat: c.repeat,
            preset: planned.preset.clone(),
            config: planned.config.clone(),
            argv: argv.to_vec(),
            commit: commit.clone(),
        };
        let file = format!("jobs/{index:03}.json");
        write_json(&dir.join(&file), &job)?;
        include.push(serde_json::json!({
            "index": index,
            "id": id,
            "job": file,
            "label": c.label,
            "repeat": c.repeat,
        }));
    }
    write_json(
        &dir.join("matrix.json"),
        &serde_json::json!({
            "plan": plan,
            "planned_at": planned_at,
            "commit": commit,
            "command": format!("ledgerbench {}", argv.join(" ")),
            "jobs": of,
            "include": include,
        }),
    )?;
    Ok(of)
}

/// The command line `ledgerbench run --job FILE --out-dir DIR` stands for:
/// the sweep's own, limited to the job's cell, writing `DIR/<cell id>`.
pub fn job_command(file: &Path, out_dir: &Path) -> anyhow::Result<Vec<String>> {
    let job = Job::load(file)?;
    let this = ledgerbench_driver::env::GIT_COMMIT;
    if job.commit != this {
        ledgerbench_core::note!(
            "ledgerbench: warning: job {} was planned by commit {}, this build is {this}; cells of one sweep should share a build",
            job.cell.id,
            job.commit
        );
    }
    let file = std::path::absolute(file).with_context(|| format!("job file {}", file.display()))?;
    let out: PathBuf = out_dir.join(&job.cell.id);
    let mut argv = job.argv.clone();
    argv.push("--cell".into());
    argv.push(file.display().to_string());
    argv.push("--out".into());
    argv.push(out.display().to_string());
    Ok(argv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_ids_are_path_safe_unique_by_index_and_name_the_repeat() {
        assert_eq!(
            cell_id(3, "rocksdb-leveled@512MiB", 0),
            "003-rocksdb-leveled@512MiB"
        );
        assert_eq!(
            cell_id(
                12,
                "ledgers=mdbx,txdata=rocksdb-blob,txindex=mdbx@256MiB",
                1
            ),
            "012-ledgers_mdbx_txdata_rocksdb-blob_txindex_mdbx@256MiB-r2"
        );
    }

    #[test]
    fn a_plan_refuses_a_directory_with_files_and_writes_a_job_per_cell() {
        let t = tempfile::tempdir().expect("tempdir");
        std::fs::write(t.path().join("mine.txt"), "keep").expect("write");
        let planned = Planned {
            workload: "stellar".into(),
            preset: "smoke".into(),
            seed: 7,
            config: serde_json::json!({}),
            cells: (0..2)
                .map(|r| PlannedCell {
                    label: "mem".into(),
                    design: "mem".into(),
                    backends: vec!["mem".into(); 3],
                    memory_limit_bytes: None,
                    repeat: r,
                })
                .collect(),
            expected: String::new(),
        };
        let argv: Vec<String> = ["run", "stellar", "--backends", "mem", "--repeat", "2"]
            .map(String::from)
            .to_vec();
        let e = write(t.path(), &argv, &planned).expect_err("not empty");
        assert!(e.to_string().contains("holds files"), "{e}");
        assert_eq!(
            std::fs::read_to_string(t.path().join("mine.txt")).expect("kept"),
            "keep"
        );
        let dir = t.path().join("plan");
        assert_eq!(write(&dir, &argv, &planned).expect("plan"), 2);
        let second = Job::load(&dir.join("jobs/001.json")).expect("job");
        assert_eq!((second.repeat, second.cell.of), (1, 2));
        assert_eq!(second.cell.id, "001-mem-r2");
        let first = Job::load(&dir.join("jobs/000.json")).expect("job");
        assert_eq!(first.cell.plan, second.cell.plan);
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("matrix.json")).expect("matrix"))
                .expect("json");
        assert_eq!(m["include"][1]["job"], "jobs/001.json");
        let cmd = job_command(&dir.join("jobs/001.json"), Path::new("cells")).expect("cmd");
        assert_eq!(&cmd[..6], &argv[..]);
        assert_eq!(cmd[6], "--cell");
        assert_eq!(cmd.last().map(String::as_str), Some("cells/001-mem-r2"));
    }

    #[test]
    fn a_job_file_of_another_schema_is_refused_with_what_to_do() {
        let t = tempfile::tempdir().expect("tempdir");
        let f = t.path().join("j.json");
        std::fs::write(&f, r#"{"workload":"stellar"}"#).expect("write");
        let e = Job::load(&f).expect_err("refused");
        assert!(format!("{e:#}").contains("not a job"), "{e:#}");
    }
}
