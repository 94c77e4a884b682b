//! The registry: every name resolves, every config round-trips and gives
//! every level, capabilities come from the engines.
use super::*;

#[test]
fn every_config_round_trips_through_json() {
    // What results record and what a crash worker's job carries.
    for n in names() {
        let s = BackendSpec::by_name(n).expect("known");
        let j = serde_json::to_string(&s.config).expect("serializes");
        let back: EngineConfig =
            serde_json::from_str(&j).unwrap_or_else(|e| panic!("{n}: {e}: {j}"));
        assert_eq!(back, s.config, "{n}");
    }
}

#[test]
fn every_backend_gives_every_level_it_is_set_to() {
    for n in names() {
        for level in Durability::ALL {
            let mut s = BackendSpec::by_name(n).expect("known");
            // The null engines keep nothing, so they promise nothing more.
            if s.discards_writes() && level != Durability::None {
                let e = s.set_durability(level).expect_err("refused").to_string();
                assert!(e.contains("--durability none"), "{n}: {e}");
                continue;
            }
            s.set_durability(level)
                .expect("every backend has every level");
            assert_eq!(s.durability(), level, "{n}");
            s.check_durability(level).expect("same level");
        }
    }
    // An override that weakens a level is caught, naming the backend.
    let mut specs = parse_list("lmdb", Durability::Power).expect("known");
    apply_sets(&mut specs, &["lmdb.no_sync=true".into()]).expect("valid --set");
    let e = specs[0]
        .check_durability(Durability::Power)
        .expect_err("weakened")
        .to_string();
    assert!(e.contains("lmdb") && e.contains("`none`"), "{e}");
}

#[test]
fn the_default_list_is_the_default_backends() {
    assert_eq!(DEFAULT_LIST, DEFAULT_BACKENDS.join(","));
    for n in POINT_READ_LIST.split(',').chain(FAN_OUT_LIST.split(',')) {
        assert!(names().any(|m| m == n), "{n}");
    }
}

#[test]
fn every_name_resolves_and_unknown_lists_accepted() {
    for n in names() {
        assert_eq!(BackendSpec::by_name(n).expect("known").name, n);
    }
    let e = BackendSpec::by_name("rocksdb")
        .expect_err("unknown")
        .to_string();
    assert!(e.contains("rocksdb-leveled") && e.contains("mdbx"), "{e}");
    assert!(parse_list("lmdb,lmdb", Durability::Process).is_err());
    assert!(parse_list(" , ", Durability::Process).is_err());
}

#[test]
fn overrides_merge_and_refuse_unknown_keys() {
    let mut s = BackendSpec::by_name("rocksdb-fifo").expect("known");
    let t: toml::Table =
        toml::from_str("write_buffer_size = 1048576\n[compaction]\nmax_table_files_size = 5\n")
            .expect("toml");
    s.apply_overrides(&t).expect("valid overrides");
    let EngineConfig::Rocksdb(c) = &s.config else {
        panic!("not rocksdb")
    };
    assert_eq!(c.write_buffer_size, 1 << 20);
    assert_eq!(
        c.compaction,
        Compaction::Fifo {
            max_table_files_size: 5
        }
    );
    let bad: toml::Table = toml::from_str("write_bufer_size = 1").expect("toml");
    let e = s
        .apply_overrides(&bad)
        .expect_err("typo refused")
        .to_string();
    assert!(e.contains("write_bufer_size"), "{e}");
}

#[test]
fn set_lines_reach_the_named_backend_only() {
    let mut specs = parse_list("rocksdb-leveled,lmdb", Durability::Process).expect("known");
    apply_sets(
        &mut specs,
        &["rocksdb-leveled.use_direct_reads=true".into()],
    )
    .expect("valid --set");
    let EngineConfig::Rocksdb(c) = &specs[0].config else {
        panic!("not rocksdb")
    };
    assert!(c.use_direct_reads);
    for bad in [
        "use_direct_reads=true",
        "mdbx.write_map=true",
        "lmdb.no_such_key=1",
        "rocksdb-leveled.use_direct_reads",
        "lmdb.map_size=abc",
    ] {
        assert!(apply_sets(&mut specs, &[bad.into()]).is_err(), "{bad}");
    }
}

#[test]
fn capabilities_come_from_each_engine_not_from_its_name() {
    let spec = |n: &str| BackendSpec::by_name(n).expect("known");
    for n in names() {
        assert_eq!(spec(n).evicts_oldest(), n == "rocksdb-fifo", "{n}");
    }
    assert_eq!(spec("lmdb").read_path(), ReadPath::Mmap);
    assert_eq!(spec("mem").read_path(), ReadPath::Memory);
    assert_eq!(spec("null").read_path(), ReadPath::None);
    // A tuning reaches the engine's setting, also through a partitioned
    // store's base config.
    for n in ["rocksdb-leveled", "rocksdb-partitioned", "rocksdb-sharded"] {
        let mut s = spec(n);
        assert_eq!(s.read_path(), ReadPath::Buffered, "{n}");
        assert!(s.tune(Tuning::DirectReads(true)), "{n}");
        assert_eq!(s.read_path(), ReadPath::Direct, "{n}");
    }
    // An engine without the setting says so and keeps its config.
    let mut m = spec("mdbx");
    assert!(!m.tune(Tuning::NoBackgroundCompaction));
    assert_eq!(m.config, spec("mdbx").config);
    // The eviction cap only grows, and only where there is eviction.
    let mut f = spec("rocksdb-fifo");
    assert!(f.tune(Tuning::EvictionCapAtLeast(16 << 30)));
    let EngineConfig::Rocksdb(c) = &f.config else {
        panic!("not rocksdb")
    };
    assert_eq!(
        c.compaction,
        Compaction::Fifo {
            max_table_files_size: 16 << 30
        }
    );
    assert!(f.tune(Tuning::EvictionCapAtLeast(1)));
    assert_eq!(f.config, {
        let mut g = spec("rocksdb-fifo");
        g.tune(Tuning::EvictionCapAtLeast(16 << 30));
        g.config
    });
    assert!(!spec("rocksdb-leveled").tune(Tuning::EvictionCapAtLeast(1)));
}
