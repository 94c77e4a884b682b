//! The docs are tested like code: every link and anchor of the README, the
//! guide (`docs/src`) and the results folders resolves; every `ledgerbench`
//! command in a fenced shell block parses with the binary's own flags (it
//! is run with `--help` appended, which clap honours only after every
//! earlier flag and value parsed); the blocks marked `run` are executed in
//! a scratch directory; and every subcommand's `--help` gives an example
//! and its chapter. A renamed flag fails here, not on a reader's first try.
//!
//! In the README and the guide a shell block that holds a command must say
//! what happens to it: `run` (executed) or `norun` (it needs hours or root:
//! its flags are checked, nothing runs). A `run` block's `--preset quick`
//! runs as `--preset smoke` here: the same code path in seconds. A block
//! marked `fails` shows a refusal on purpose; the `text output` block after
//! it holds what it prints.

mod common;
#[path = "docs/markdown.rs"]
mod markdown;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use markdown::Block;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The markdown files and their text.
fn docs() -> BTreeMap<PathBuf, String> {
    let root = root();
    markdown::files(&root)
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(root.join(&f)).expect("read markdown");
            (f, text)
        })
        .collect()
}

/// Whether a file is the README or a chapter of the guide, where every
/// command block must be marked.
fn front(file: &Path) -> bool {
    file == Path::new("README.md") || file.starts_with("docs/src")
}

/// What is wrong with one link of `file`, if anything.
fn broken(file: &Path, target: &str, all: &BTreeMap<PathBuf, String>) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
    let resolved = if path.is_empty() {
        file.to_path_buf()
    } else {
        normalize(&file.parent().expect("file in a folder").join(path))
    };
    if resolved.starts_with("..") {
        return Some("points outside the repository".into());
    }
    if !root().join(&resolved).exists() {
        return Some(format!("{} does not exist", resolved.display()));
    }
    let in_book = |p: &Path| p.starts_with("docs/src");
    if in_book(file) && !in_book(&resolved) && path.ends_with(".md") {
        return Some(
            "mdBook turns a link to a .md file into .html, which only the book has: link the folder instead".into(),
        );
    }
    if anchor.is_empty() || resolved.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let text = all
        .get(&resolved)
        .cloned()
        .unwrap_or_else(|| std::fs::read_to_string(root().join(&resolved)).unwrap_or_default());
    (!markdown::anchors(&text).iter().any(|a| a == anchor)).then(|| {
        format!(
            "{} has no heading with anchor #{anchor}",
            resolved.display()
        )
    })
}

/// `p` with `.` and `a/..` folded away, relative to the repository.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir if out.file_name().is_some_and(|n| n != "..") => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[test]
fn every_link_and_anchor_resolves() {
    let all = docs();
    let mut bad = Vec::new();
    for (file, text) in &all {
        let (_, prose) = markdown::split(text);
        for (line, target) in markdown::links(&prose) {
            if let Some(why) = broken(file, &target, &all) {
                bad.push(format!("{}:{line}: ({target}) {why}", file.display()));
            }
        }
    }
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

/// The shell blocks that hold commands, per file.
fn command_blocks(all: &BTreeMap<PathBuf, String>) -> Vec<(PathBuf, Block)> {
    let mut v = Vec::new();
    for (file, text) in all {
        let (blocks, _) = markdown::split(text);
        for b in blocks {
            // Unmarked blocks outside the README and the guide are read as
            // shell when they call ledgerbench (results READMEs record
            // commands that way).
            let plain = b.info.is_empty() && !front(file);
            if (b.is_shell() || plain) && !markdown::commands(&b).is_empty() {
                v.push((file.clone(), b));
            }
        }
    }
    v
}

/// `ledgerbench ARGS --help`: whether clap accepts every flag and value
/// before it, and its complaint when not.
fn parses(args: &[String]) -> Result<(), String> {
    // `plan`'s own flags, then the command it plans: each is checked alone
    // (`--help` after the planned command would be the planned command's).
    if args.first().is_some_and(|a| a == "plan")
        && let Some(at) = args.iter().position(|a| a == "run")
    {
        parses_whole(&args[..at])?;
        return parses_whole(&args[at..]);
    }
    parses_whole(args)
}

/// [`parses`] for one command line.
fn parses_whole(args: &[String]) -> Result<(), String> {
    let mut args = args.to_vec();
    // After `--` the words belong to another command (`ab -- run ...`).
    let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
    args.insert(at, "--help".into());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::ledgerbench(&args, &root());
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

#[test]
fn every_documented_command_parses_and_says_whether_it_runs() {
    let all = docs();
    let mut bad = Vec::new();
    let mut checked = 0;
    for (file, b) in command_blocks(&all) {
        let at = format!("{}:{}", file.display(), b.line);
        if front(&file) && !b.has("run") && !b.has("norun") {
            bad.push(format!(
                "{at}: mark the block `run` (a test runs it) or `norun` (hours or root)"
            ));
        }
        // A block marked `fails` shows a refusal on purpose: what it prints
        // is checked by the runnable blocks' test.
        if b.has("fails") {
            continue;
        }
        for cmd in markdown::commands(&b) {
            // An unmarked block may be printed output: only its lines that
            // start with a command are commands.
            let first = cmd.split_whitespace().next().unwrap_or("");
            let named = ["ledgerbench", "kvbench"]
                .iter()
                .any(|n| first == *n || first.ends_with(&format!("/{n}")));
            if !b.is_shell() && !named && !first.starts_with("scripts/") {
                continue;
            }
            if cmd
                .split_whitespace()
                .any(|w| w == "kvbench" || w.ends_with("/kvbench"))
            {
                bad.push(format!("{at}: `{cmd}` uses the old name kvbench"));
            }
            for script in cmd.split_whitespace().filter(|w| w.starts_with("scripts/")) {
                if !root().join(script).exists() {
                    bad.push(format!("{at}: {script} does not exist"));
                }
            }
            for args in markdown::invocations(&cmd) {
                checked += 1;
                if let Err(e) = parses(&args) {
                    bad.push(format!("{at}: `ledgerbench {}`: {e}", args.join(" ")));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} documented commands found");
    assert!(bad.is_empty(), "documented commands:\n{}", bad.join("\n\n"));
}

/// A scratch directory holding links to what documented commands read.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for name in ["results", "fixtures", "examples", "scripts", "docs"] {
        std::os::unix::fs::symlink(root().join(name), dir.path().join(name)).expect("symlink");
    }
    dir
}

#[test]
fn runnable_blocks_run_and_print_what_the_docs_show() {
    let all = docs();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_ledgerbench"))
        .parent()
        .expect("binary dir")
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The target directory holds release/ledgerbench.
    let target_dir = bin_dir.parent().expect("target dir").to_path_buf();
    let mut ran = 0;
    let mut bad = Vec::new();
    for (file, text) in &all {
        let (blocks, _) = markdown::split(text);
        let dir = scratch();
        for (i, b) in blocks.iter().enumerate() {
            if !b.has("run") {
                continue;
            }
            ran += 1;
            let script = b.text.replace("--preset quick", "--preset smoke");
            // A block that calls cargo runs in the repository, on the build
            // this test is part of.
            let cargo = script.contains("cargo ");
            let out = Command::new("bash")
                .args(["-euo", "pipefail", "-c", &script])
                .current_dir(if cargo {
                    root()
                } else {
                    dir.path().to_path_buf()
                })
                .env("CARGO_TARGET_DIR", &target_dir)
                .env("PATH", &path)
                .env("LEDGERBENCH_RUNS_DIR", dir.path().join("runs"))
                .output()
                .expect("run bash");
            let at = format!("{}:{}", file.display(), b.line);
            if !out.status.success() {
                bad.push(format!(
                    "{at}: exit {:?}\n{}",
                    out.status.code(),
                    String::from_utf8_lossy(&out.stderr)
                ));
                continue;
            }
            // A block marked `output` right after shows what it prints.
            if let Some(shown) = blocks.get(i + 1).filter(|n| n.has("output")) {
                let printed = String::from_utf8_lossy(&out.stdout);
                if printed.trim_end() != shown.text.trim_end() {
                    bad.push(format!(
                        "{at}: printed\n{printed}\nbut the docs show\n{}",
                        shown.text
                    ));
                }
            }
        }
    }
    assert!(ran >= 3, "only {ran} runnable blocks");
    assert!(bad.is_empty(), "runnable blocks:\n{}", bad.join("\n\n"));
}

#[test]
fn every_subcommand_help_gives_an_example_and_its_chapter() {
    let all = common::subcommands(&[], &root());
    assert!(all.len() > 20, "{all:?}");
    let mut bad = Vec::new();
    for p in &all {
        let mut args: Vec<&str> = p.iter().map(String::as_str).collect();
        args.push("--help");
        let out = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
            .args(&args)
            .output()
            .expect("help");
        let text = String::from_utf8_lossy(&out.stdout);
        let name = p.join(" ");
        let example = text
            .lines()
            .skip_while(|l| !l.starts_with("Example"))
            .nth(1)
            .map(str::trim);
        match example.and_then(|e| e.strip_prefix("ledgerbench ")) {
            Some(e) => match markdown::words(e).map(|w| parses(&w)) {
                Some(Ok(())) => {}
                other => bad.push(format!("{name}: its example does not parse: {other:?}")),
            },
            None => bad.push(format!(
                "{name}: no `Example:` line followed by a ledgerbench command"
            )),
        }
        let chapter = text
            .lines()
            .find_map(|l| l.trim().strip_prefix("Guide: "))
            .map(str::trim);
        match chapter {
            Some(c) if root().join(c).exists() => {}
            other => bad.push(format!(
                "{name}: names no existing chapter of the guide ({other:?})"
            )),
        }
    }
    assert!(bad.is_empty(), "--help:\n{}", bad.join("\n"));
}

#[test]
fn every_setting_of_the_generated_workloads_is_in_the_guide_and_its_help() {
    let guide =
        std::fs::read_to_string(root().join("docs/src/workloads.md")).expect("workloads.md");
    let mut bad = Vec::new();
    for (w, model) in [
        ("ycsb", None),
        ("solana", None),
        ("blobs", None),
        ("accounts", None),
        ("synth", Some(["--preset", "mixgraph"])),
    ] {
        // The keys the workload accepts, from its own refusal of one it
        // does not: the generator's config, not a list kept here.
        let out = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
            .args(["run", w, "--param", "no_such_key=1"])
            .args(model.iter().flatten())
            .output()
            .expect("run ledgerbench");
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        let listed = err
            .split("expected one of")
            .nth(1)
            .unwrap_or_else(|| panic!("{w}: {err}"));
        let keys: Vec<&str> = listed.split('`').skip(1).step_by(2).collect();
        assert!(keys.len() >= 6, "{w}: {err}");
        let heading = format!("### `run {w}`");
        let section = guide
            .split(&heading)
            .nth(1)
            .and_then(|s| s.split("\n#").next())
            .unwrap_or_else(|| panic!("docs/src/workloads.md has no {heading}"));
        let documented: Vec<&str> = section
            .lines()
            .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
            .collect();
        for k in &keys {
            if !documented.contains(k) {
                bad.push(format!(
                    "{w}: `{k}` is accepted but not in the guide's table"
                ));
            }
        }
        for k in &documented {
            if !keys.contains(k) {
                bad.push(format!("{w}: `{k}` is in the guide's table but refused"));
            }
        }
        // `run W --help` lists each with its meaning and default.
        let help = Command::new(env!("CARGO_BIN_EXE_ledgerbench"))
            .args(["run", w, "--help"])
            .output()
            .expect("run ledgerbench");
        let help = String::from_utf8_lossy(&help.stdout).to_string();
        let settings = help
            .split("Settings (--param KEY=VALUE):")
            .nth(1)
            .unwrap_or_else(|| panic!("run {w} --help lists no settings:\n{help}"));
        for k in &keys {
            let line = settings
                .lines()
                .find(|l| l.split_whitespace().next() == Some(k));
            if !line.is_some_and(|l| l.contains("[default: ")) {
                bad.push(format!("{w}: `{k}` is not in --help with its default"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
