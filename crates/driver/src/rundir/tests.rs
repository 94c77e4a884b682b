//! Run directories: claimed atomically, never shared, never left to block a retry.

use super::*;

#[test]
fn refuses_foreign_dirs_unless_forced_and_never_touches_them() {
    let t = tempfile::tempdir().expect("tempdir");
    let out = t.path().join("run");
    let rd = RunDir::claim(Some(&out), "stellar", false).expect("new dir");
    assert_eq!(rd.path(), out);
    assert!(out.join(RUN_MARKER).exists());
    let s = rd
        .store_dir("ledgers=lmdb,txdata=mdbx", "txdata")
        .expect("fresh");
    assert!(s.ends_with("stores/ledgers_lmdb_txdata_mdbx/txdata"));
    assert!(
        rd.remove_store_dir(t.path()).is_err(),
        "outside stores/ is refused"
    );

    let foreign = t.path().join("foreign");
    fs::create_dir(&foreign).expect("mkdir");
    fs::write(foreign.join("keep.txt"), "mine").expect("write");
    let e = RunDir::claim(Some(&foreign), "stellar", false).expect_err("refused");
    assert!(e.to_string().contains("--force"), "{e}");
    let forced = RunDir::claim(Some(&foreign), "stellar", true).expect("forced");
    assert_ne!(forced.path(), foreign, "a run of its own beside the files");
    assert!(forced.path().starts_with(&foreign));
    assert!(forced.path().join(RUN_MARKER).exists());
    assert_eq!(
        fs::read_to_string(foreign.join("keep.txt")).expect("kept"),
        "mine"
    );
    assert!(
        !foreign.join(RUN_MARKER).exists(),
        "the parent is not claimed"
    );

    let file = foreign.join("keep.txt");
    assert!(RunDir::claim(Some(&file), "stellar", true).is_err());
}

#[test]
fn forced_runs_into_an_earlier_run_never_share_files() {
    let t = tempfile::tempdir().expect("tempdir");
    let out = t.path().join("run");
    let first = RunDir::claim(Some(&out), "stellar", false).expect("first");
    fs::write(first.path().join("results.json"), "{\"runs\":[1]}").expect("results");
    let second = RunDir::claim(Some(&out), "stellar", true).expect("second");
    let third = RunDir::claim(Some(&out), "stellar", true).expect("third");
    assert_ne!(second.path(), third.path(), "same second, two names");
    assert_eq!(
        fs::read_to_string(out.join("results.json")).expect("kept"),
        "{\"runs\":[1]}"
    );
}

#[test]
fn an_empty_directory_is_claimed_by_one_run_only() {
    let t = tempfile::tempdir().expect("tempdir");
    let out = t.path().join("empty");
    fs::create_dir(&out).expect("mkdir");
    let a = RunDir::claim(Some(&out), "stellar", false).expect("first claims it");
    // The second sees a non-empty directory (the marker) and is refused
    // without --force, or gets its own subdirectory with it.
    assert!(RunDir::claim(Some(&out), "stellar", false).is_err());
    assert!(
        RunDir::mark(&out, false).is_err(),
        "the marker is exclusive"
    );
    assert!(a.path().join(RUN_MARKER).exists());
}

#[test]
fn default_directories_never_collide() {
    let t = tempfile::tempdir().expect("tempdir");
    let a = RunDir::fresh_in(t.path(), "ycsb").expect("a");
    let b = RunDir::fresh_in(t.path(), "ycsb").expect("b");
    assert_ne!(a.path(), b.path());
}

#[test]
fn a_runs_root_made_for_a_run_that_kept_nothing_goes_with_it() {
    let t = tempfile::tempdir().expect("tempdir");
    let root = t.path().join("ledgerbench-runs");
    drop(RunDir::fresh_in(&root, "stellar").expect("claim"));
    assert!(!root.exists(), "made for the run, removed with it");
    std::fs::create_dir(&root).expect("the user's");
    drop(RunDir::fresh_in(&root, "stellar").expect("claim"));
    assert!(root.is_dir(), "a root that was there stays");
}

#[test]
fn a_run_that_kept_nothing_leaves_nothing_to_block_its_retry() {
    let t = tempfile::tempdir().expect("tempdir");
    let out = t.path().join("run");
    let rd = RunDir::claim(Some(&out), "stellar", false).expect("claim");
    fs::write(out.join("results.json"), "{\"runs\": []}").expect("results");
    fs::write(out.join("results.json.tmp"), "").expect("tmp");
    fs::create_dir_all(rd.stores_of("lmdb").join("txdata")).expect("stores");
    assert!(rd.discard_if_empty());
    assert!(!out.exists(), "made by the run, removed with it");
    RunDir::claim(Some(&out), "stellar", false).expect("the retry goes ahead");

    // A user's empty directory stays; a run that kept something is kept.
    let theirs = t.path().join("theirs");
    fs::create_dir(&theirs).expect("mkdir");
    let rd = RunDir::claim(Some(&theirs), "stellar", false).expect("claim");
    assert!(rd.discard_if_empty());
    assert!(theirs.is_dir() && !theirs.join(RUN_MARKER).exists());
    let rd = RunDir::claim(Some(&theirs), "stellar", false).expect("claim");
    fs::write(theirs.join("batches.jsonl"), "{}\n").expect("a batch");
    fs::write(theirs.join("results.json.tmp"), "").expect("tmp");
    assert!(!rd.discard_if_empty());
    assert!(theirs.join("batches.jsonl").exists() && theirs.join(RUN_MARKER).exists());
    assert!(
        !theirs.join("results.json.tmp").exists(),
        "partial writes go"
    );
}

#[test]
fn removing_a_store_removes_its_empty_folders() {
    let t = tempfile::tempdir().expect("tempdir");
    let rd = RunDir::claim(Some(&t.path().join("run")), "stellar", false).expect("claim");
    let a = rd.store_dir("lmdb", "txdata").expect("dir");
    let b = rd.store_dir("lmdb", "ledgers").expect("dir");
    fs::create_dir_all(&a).expect("a");
    fs::create_dir_all(&b).expect("b");
    fs::write(a.join("data.mdb"), "x").expect("data");
    rd.remove_store_dir(&a).expect("remove");
    assert!(rd.stores_of("lmdb").exists(), "ledgers is still there");
    rd.remove_store_dir(&b).expect("remove");
    assert!(!rd.path().join("stores").exists(), "no empty folders left");
}
