use super::*;

fn spec(name: &str) -> crate::registry::BackendSpec {
    crate::registry::BackendSpec::by_name(name).expect("known")
}

fn params(scale: f64, initial: &str) -> serde_json::Value {
    serde_json::json!({"workload": "preset:cosmos", "scale": scale, "initial": initial})
}

#[test]
fn a_key_is_what_makes_two_loads_differ_and_nothing_else() {
    let k = |name, scale, initial, seed, threads, limit| {
        key(&spec(name), &params(scale, initial), seed, threads, limit)
    };
    let base = k("lmdb", 1.0, "only", 42, 5, Some(128 << 20));
    // How the state is come by is not part of it.
    assert_eq!(base, k("lmdb", 1.0, "given", 42, 5, Some(128 << 20)));
    for other in [
        k("mdbx", 1.0, "only", 42, 5, Some(128 << 20)),
        k("lmdb", 2.0, "only", 42, 5, Some(128 << 20)),
        k("lmdb", 1.0, "only", 7, 5, Some(128 << 20)),
        k("lmdb", 1.0, "only", 42, 1, Some(128 << 20)),
        k("lmdb", 1.0, "only", 42, 5, None),
    ] {
        assert_ne!(base, other);
    }
    let mut s = spec("lmdb");
    s.set_durability(ledgerbench_core::Durability::None)
        .expect("lmdb at none");
    assert_ne!(base, key(&s, &params(1.0, "only"), 42, 5, Some(128 << 20)));
}

#[test]
fn an_entry_is_found_only_once_made_whole_and_only_for_its_key() {
    let t = tempfile::tempdir().expect("tempdir");
    let cache = Cache::open(&t.path().join("cache")).expect("cache");
    let a = key(&spec("lmdb"), &params(1.0, "only"), 1, 1, None);
    let b = key(&spec("lmdb"), &params(1.0, "only"), 2, 1, None);
    assert!(cache.find(&a).expect("find").is_none());
    let part = cache.start(&a).expect("start");
    std::fs::create_dir_all(part.join("stores/s")).expect("mkdir");
    std::fs::write(part.join("stores/s/data"), vec![1u8; 8192]).expect("write");
    // Unfinished: not an entry.
    assert!(cache.find(&a).expect("find").is_none());
    let made = cache.finish(&a, &part, 2.5, t.path()).expect("finish");
    assert!(made.state.made_here);
    assert_eq!(made.state.load_secs, 2.5);
    assert!(made.state.bytes >= 8192);
    assert!(!part.exists());
    let found = cache.find(&a).expect("find").expect("made");
    assert!(!found.state.made_here);
    assert_eq!(found.stores, made.stores);
    assert_eq!(
        std::fs::read(found.stores.join("s/data"))
            .expect("read")
            .len(),
        8192
    );
    assert!(cache.find(&b).expect("find").is_none());
    // A state.json of other settings under this name is refused, not used.
    let other = cache.start(&b).expect("start");
    std::fs::rename(cache.path_of(&a), cache.path_of(&b)).expect("swap");
    let e = cache.find(&b).err().expect("refused").to_string();
    assert!(e.contains("other settings"), "{e}");
    cache.abandon(&other);
    assert!(!other.exists());
    // A load left by a process that is gone is cleared by the next one.
    let dead = cache.dir.join(format!(
        "{}.partial-{}",
        cache
            .path_of(&b)
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name"),
        4_194_400 // over the kernel's highest pid_max: no process has it
    ));
    std::fs::create_dir_all(dead.join("stores")).expect("mkdir");
    let part = cache.start(&b).expect("start");
    assert!(!dead.exists());
    assert!(part.exists());
}

/// A key whose floats do not read back from JSON to the last digit still
/// finds its entry: keys are compared as the text the hash took.
#[test]
fn a_key_with_floats_finds_its_own_entry() {
    let t = tempfile::tempdir().expect("tempdir");
    let cache = Cache::open(t.path()).expect("cache");
    let odd = 0.1 + 0.2;
    let k = key(&spec("lmdb"), &params(odd, "only"), 1, 1, None);
    let part = cache.start(&k).expect("start");
    std::fs::create_dir_all(part.join("stores/s")).expect("mkdir");
    cache.finish(&k, &part, 1.0, t.path()).expect("finish");
    assert!(cache.find(&k).expect("find").is_some());
}
