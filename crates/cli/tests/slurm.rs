//! A sweep on a real scheduler: a one-node Slurm cluster started by
//! `scripts/slurm-up.sh` runs a planned smoke sweep (two backends x two
//! memory limits) as a job array with `examples/slurm/sweep.sbatch`, and
//! `examples/slurm/merge.sbatch` merges it once the array is done
//! (`--dependency=afterok`). The merged verdict must be the cells' own and
//! their runs and counters the single-process sweep's, as `sweep.rs` checks
//! for `xargs -P2`; then one cell is cancelled before it runs, rerun alone
//! (`sbatch --array=3`) and merged again, with the same answer. The
//! commands are the ones `examples/slurm/README.md` gives.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

mod common;
use common::{
    SWEEP, cell_dirs as cells, concatenated, counters_match, ledgerbench, read_json, stderr, stdout,
};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A one-node cluster, taken down (daemons, state directory) when dropped.
struct Cluster {
    dir: PathBuf,
}

impl Cluster {
    /// `scripts/slurm-up.sh`, or why it could not start.
    fn up() -> Result<Self, String> {
        ledgerbench_testkit::root()?;
        let out = Command::new(root().join("scripts/slurm-up.sh"))
            .output()
            .map_err(|e| format!("scripts/slurm-up.sh: {e}"))?;
        if !out.status.success() {
            return Err(format!("scripts/slurm-up.sh: {}", stderr(&out)));
        }
        Ok(Self {
            dir: PathBuf::from(stdout(&out).trim()),
        })
    }

    /// A Slurm client command against this cluster.
    fn cmd(&self, program: &str, cwd: &Path) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", self.dir.join("slurm.conf"))
            .env("LEDGERBENCH", env!("CARGO_BIN_EXE_ledgerbench"))
            .current_dir(cwd);
        c
    }

    /// `sbatch --parsable ARGS`: the job id.
    fn sbatch(&self, cwd: &Path, args: &[&str]) -> String {
        let out = self
            .cmd("sbatch", cwd)
            .arg("--parsable")
            .args(args)
            .output()
            .expect("sbatch");
        assert!(out.status.success(), "sbatch {args:?}: {}", stderr(&out));
        stdout(&out).trim().to_string()
    }

    /// Waits until no job of this cluster is queued or running; fails
    /// after `limit`, cancelling what is left.
    fn drain(&self, cwd: &Path, limit: Duration) {
        let start = Instant::now();
        loop {
            let q = self
                .cmd("squeue", cwd)
                .args(["-h", "-o", "%i %T %r"])
                .output()
                .expect("squeue");
            let left = stdout(&q);
            if left.trim().is_empty() {
                return;
            }
            if start.elapsed() > limit {
                let _ = self.cmd("scancel", cwd).arg("--user=root").status();
                panic!("jobs still queued after {limit:?}:\n{left}");
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(root().join("scripts/slurm-down.sh"))
            .arg(&self.dir)
            .status();
    }
}

/// The merge job's verdict must be the cells' own, joined into one file.
fn merged_is_the_cells_verdict(t: &Path, cells_dir: &str, report: &str) {
    let cs = cells(&t.join(cells_dir));
    assert_eq!(cs.len(), 4, "{cs:?}");
    let joined = format!("{cells_dir}-joined");
    concatenated(&cs, &t.join(&joined));
    let one = ledgerbench(&["report", "--summary", &joined], t);
    assert!(one.status.success(), "{}", stderr(&one));
    let merged = std::fs::read_to_string(t.join(report).join("verdict.md")).expect("verdict.md");
    assert_eq!(merged.trim_end(), stdout(&one).trim_end());
    assert!(merged.contains("From 4 runs"), "{merged}");
    let md = std::fs::read_to_string(t.join(report).join("report.md")).expect("report.md");
    // Each cell says where the scheduler ran it.
    assert!(md.contains("| slurm |"), "{md}");
    for c in &cs {
        let h = read_json(&c.join("results.json"));
        assert_eq!(h["scheduler"]["scheduler"], "slurm", "{}", c.display());
        assert!(h["scheduler"]["task"].is_string(), "{}", c.display());
    }
}

#[test]
#[ignore = "privileged: needs root, memory cgroups and Slurm (scripts/slurm-up.sh installs slurm-wlm and munge); scripts/test.sh runs it as root"]
fn a_planned_sweep_runs_as_a_slurm_array_and_merges_as_in_one_process() {
    let here = ledgerbench_meter::cgroup::MemoryLimit::available().map_err(|e| e.to_string());
    if !ledgerbench_testkit::can_run(here) {
        return;
    }
    let cluster = match Cluster::up() {
        Ok(c) => c,
        Err(e) => {
            ledgerbench_testkit::can_run(Err(e));
            return;
        }
    };
    let t = tempfile::tempdir().expect("tempdir");
    let t = t.path();
    let mut plan = vec!["plan", "--dir", "plan"];
    plan.extend_from_slice(SWEEP);
    let p = ledgerbench(&plan, t);
    assert!(p.status.success(), "{}", stderr(&p));
    let n = read_json(&t.join("plan/matrix.json"))["jobs"]
        .as_u64()
        .expect("jobs");
    assert_eq!(n, 4, "2 backends x 2 limits");
    let sweep = root().join("examples/slurm/sweep.sbatch");
    let merge = root().join("examples/slurm/merge.sbatch");
    let (sweep, merge) = (sweep.to_str().expect("utf8"), merge.to_str().expect("utf8"));

    // The array and its dependent merge, as the README submits them.
    let array = cluster.sbatch(
        t,
        &[&format!("--array=0-{}%2", n - 1), sweep, "plan", "cells"],
    );
    let afterok = format!("--dependency=afterok:{array}");
    cluster.sbatch(t, &[&afterok, merge, "cells", "report"]);
    cluster.drain(t, Duration::from_secs(900));
    merged_is_the_cells_verdict(t, "cells", "report");

    // The same runs and counters as the sweep in one process.
    let mut single = SWEEP.to_vec();
    single.extend_from_slice(&["--out", "single"]);
    let s = ledgerbench(&single, t);
    assert!(s.status.success(), "{}", stderr(&s));
    let labels = |r: &serde_json::Value| -> Vec<String> {
        r["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .map(|x| x["label"].to_string())
            .collect()
    };
    assert_eq!(
        labels(&read_json(&t.join("cells-joined/results.json"))),
        labels(&read_json(&t.join("single/results.json")))
    );
    let cell_args: Vec<String> = cells(&t.join("cells"))
        .iter()
        .map(|c| c.display().to_string())
        .collect();
    let cell_refs: Vec<&str> = cell_args.iter().map(String::as_str).collect();
    counters_match(t, "single", &cell_refs);

    // One cell cancelled before it ran (the array is held until then),
    // rerun alone, then merged again.
    let held = cluster.sbatch(
        t,
        &[
            "--hold",
            &format!("--array=0-{}%1", n - 1),
            sweep,
            "plan",
            "again",
        ],
    );
    let cancel = cluster
        .cmd("scancel", t)
        .arg(format!("{held}_3"))
        .status()
        .expect("scancel");
    assert!(cancel.success());
    assert!(
        cluster
            .cmd("scontrol", t)
            .args(["release", &held])
            .status()
            .expect("release")
            .success()
    );
    cluster.drain(t, Duration::from_secs(900));
    assert_eq!(
        cells(&t.join("again")).len(),
        3,
        "the cancelled cell did not run"
    );
    cluster.sbatch(t, &["--array=3", sweep, "plan", "again"]);
    cluster.drain(t, Duration::from_secs(600));
    cluster.sbatch(t, &[merge, "again", "report-again"]);
    cluster.drain(t, Duration::from_secs(300));
    merged_is_the_cells_verdict(t, "again", "report-again");
    let dir = cluster.dir.clone();
    drop(cluster);
    assert!(
        !dir.exists(),
        "scripts/slurm-down.sh left {}",
        dir.display()
    );
    let daemons = Command::new("pgrep")
        .args(["-f", &dir.display().to_string()])
        .output()
        .expect("pgrep");
    assert!(
        stdout(&daemons).trim().is_empty(),
        "left running: {}",
        stdout(&daemons)
    );
}
