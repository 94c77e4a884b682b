//! The scheduler examples (`examples/`): checked by the tools their users
//! run (actionlint, kubernetes-validate) and run here the way the
//! scheduler would run them, against a plan of this build.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::{ledgerbench, read_json, stderr};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// Runs a checker; `Err` when it is not installed (`scripts/setup.sh`
/// installs both).
fn check(program: &str, args: &[&str]) -> Result<std::process::Output, String> {
    Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program} is not installed ({e}); scripts/setup.sh installs it"))
}

#[test]
fn the_github_actions_workflow_lints_clean_and_reads_the_plan_s_matrix() {
    let wf = examples().join("github-actions/sweep.yml");
    let path = wf.display().to_string();
    let home = std::env::var("HOME").unwrap_or_default();
    let cargo_bin = format!("{home}/.cargo/bin/actionlint");
    let lint = check("actionlint", &[&path]).or_else(|_| check(&cargo_bin, &[&path]));
    if let Some(out) = ledgerbench_testkit::can_run(lint.as_ref().map(|_| ()).map_err(Clone::clone))
        .then(|| lint.expect("checked"))
    {
        assert!(
            out.status.success(),
            "actionlint: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    // The fields the workflow takes from a plan exist in one.
    let text = std::fs::read_to_string(&wf).expect("workflow");
    assert!(text.contains("fromJSON(needs.plan.outputs.matrix)"));
    assert!(text.contains("jq -c '{include: .include}' plan/matrix.json"));
    let t = tempfile::tempdir().expect("tempdir");
    let p = ledgerbench(
        &[
            "plan",
            "--dir",
            "plan",
            "run",
            "stellar",
            "--preset",
            "smoke",
            "--backends",
            "mem",
            "--device",
            "none",
            "--repeat",
            "2",
        ],
        t.path(),
    );
    assert!(p.status.success(), "{}", stderr(&p));
    let m = read_json(&t.path().join("plan/matrix.json"));
    for key in ["job", "id"] {
        assert!(text.contains(&format!("matrix.{key} }}}}")), "matrix.{key}");
        assert!(m["include"][1][key].is_string(), "matrix.json lacks {key}");
    }
    let job = m["include"][1]["job"].as_str().expect("job");
    assert!(t.path().join("plan").join(job).is_file());
    assert!(text.contains("bin/ledgerbench run --job \"plan/$JOB\" --out-dir cells"));
    assert!(text.contains("bin/ledgerbench report cells/* --out report"));
}

#[test]
fn the_kubernetes_manifests_validate_and_the_indexed_job_s_command_runs_its_cell() {
    let dir = examples().join("kubernetes");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("examples/kubernetes")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    assert_eq!(files.len(), 4, "{files:?}");
    let mut args = vec!["-m", "kubernetes_validate", "--strict", "--quiet"];
    args.extend(files.iter().map(String::as_str));
    let valid = check("python3", &args).and_then(|o| {
        if String::from_utf8_lossy(&o.stderr).contains("No module named") {
            Err("kubernetes-validate is not installed; scripts/setup.sh installs it".into())
        } else {
            Ok(o)
        }
    });
    if let Some(out) =
        ledgerbench_testkit::can_run(valid.as_ref().map(|_| ()).map_err(Clone::clone))
            .then(|| valid.expect("checked"))
    {
        assert!(
            out.status.success(),
            "kubernetes-validate: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let sweep = std::fs::read_to_string(dir.join("sweep-job.yaml")).expect("sweep job");
    assert!(sweep.contains("completionMode: Indexed"));
    // The pod's own command, with the volume at a temporary directory
    // and this build as `ledgerbench`, for the plan's second cell.
    let line = sweep
        .lines()
        .map(str::trim)
        .find(|l| l.contains("ledgerbench run --job"))
        .expect("the cell's command");
    let t = tempfile::tempdir().expect("tempdir");
    let work = t.path().display().to_string();
    let script = line.trim_start_matches("- ").replace("/work", &work);
    let p = ledgerbench(
        &[
            "plan",
            "--dir",
            &format!("{work}/plan"),
            "run",
            "stellar",
            "--preset",
            "smoke",
            "--backends",
            "mem,redb",
            "--device",
            "none",
        ],
        t.path(),
    );
    assert!(p.status.success(), "{}", stderr(&p));
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_ledgerbench"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let pod = Command::new("sh")
        .args(["-c", &script])
        .env("JOB_COMPLETION_INDEX", "1")
        .env("PATH", path)
        .current_dir(t.path())
        .output()
        .expect("sh");
    assert!(pod.status.success(), "{script}: {}", stderr(&pod));
    let r = read_json(&t.path().join("cells/001-redb/results.json"));
    assert_eq!(r["runs"][0]["label"], "redb");
    assert_eq!(r["cell"]["index"], 1);
    // The merge job's command reads what the cells wrote.
    let merge = std::fs::read_to_string(dir.join("merge-job.yaml")).expect("merge job");
    let line = merge
        .lines()
        .map(str::trim)
        .find(|l| l.contains("ledgerbench report"))
        .expect("the merge command");
    let script = line.trim_start_matches("- ").replace("/work", &work);
    let merged = Command::new("sh")
        .args(["-c", &script])
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.parent().expect("bin dir").display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .expect("sh");
    assert!(merged.status.success(), "{}", stderr(&merged));
    assert!(t.path().join("report/report.md").is_file());
}
