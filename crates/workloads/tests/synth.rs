//! The round trip: a workload model played by `synth`, fitted again by
//! `fit`'s survey, gives the model back within the bands stated here (and
//! in docs/src/fit.md); and the generator holds nothing per key.

use ledgerbench_model::model::{
    Access, Commits, Inserts, Mix, Pareto, Power, Quantiles, Sizes, Store, VERSION, Workload,
};
use ledgerbench_model::{Options, finish, survey};
use ledgerbench_trace::queue::Queued;
use ledgerbench_workloads::synth::{Synth, SynthConfig};

fn model() -> Workload {
    let q = |min: f64, max: f64| Quantiles {
        min,
        max,
        p10: min,
        p50: min,
        p90: max,
        p99: max,
        mean: min,
        count: 1,
    };
    Workload {
        version: VERSION,
        source: "by hand".into(),
        stores: vec![Store {
            name: "state".into(),
            operations: 40_000,
            keys: 0,
            initial_keys: 4000,
            mix: Mix {
                insert: 0.10,
                overwrite: 0.15,
                delete: 0.05,
                get_found: 0.55,
                get_missing: 0.10,
                scan: 0.05,
                ..Mix::default()
            },
            key_size: Sizes {
                fixed: Some(32),
                ..Sizes::default()
            },
            value_size: Sizes {
                fixed: None,
                quantiles: Some(q(10.0, 100_000.0)),
                pareto: Some(Pareto {
                    loc: 10.0,
                    shape: 0.2615,
                    scale: 25.45,
                    ks: 0.0,
                    floor: 0.0,
                }),
            },
            scan_length: Some(Sizes {
                fixed: Some(10),
                ..Sizes::default()
            }),
            inserts: Inserts::default(),
            access: Access {
                power: Some(Power {
                    a: 0.1,
                    b: 0.3,
                    max_gap: 0.0,
                }),
                ..Access::default()
            },
            read_age: None,
            lifetime: None,
        }],
        commits: Commits {
            writes: Some(q(10.0, 10.0)),
            ..Commits::default()
        },
        roles: Vec::new(),
    }
}

fn round_trip(m: &Workload) -> Workload {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("w.toml");
    std::fs::write(&path, ledgerbench_model::write(m)).expect("write");
    let cfg = SynthConfig {
        workload: path.display().to_string(),
        ..SynthConfig::default()
    };
    let mut src = Queued::new(Synth::new(5, cfg).expect("synth"));
    let s = survey(&mut src, &Options::default(), &mut |_| {}).expect("survey");
    finish(&s, "round trip")
}

#[test]
fn a_model_played_and_fitted_again_comes_back_within_its_bands() {
    let m = model();
    let f = round_trip(&m);
    let (want, got) = (&m.stores[0], &f.stores[0]);
    assert_eq!(got.operations, want.operations);
    assert_eq!(got.initial_keys, want.initial_keys);
    // Shares within 0.01 of the model's.
    for ((k, w), (_, g)) in want.mix.shares().iter().zip(got.mix.shares()) {
        assert!((w - g).abs() <= 0.01, "mix.{k}: {g} against {w}");
    }
    assert_eq!(got.key_size.fixed, Some(32));
    assert_eq!(got.scan_length.as_ref().and_then(|s| s.fixed), Some(10));
    // The Pareto's shape within 0.05, its scale within 10%.
    let p = got.value_size.pareto.as_ref().expect("pareto");
    assert!((p.shape - 0.2615).abs() <= 0.05, "{p:?}");
    assert!((p.scale / 25.45 - 1.0).abs() <= 0.10, "{p:?}");
    // The power law's b within 0.1 (accesses include inserts and deletes,
    // which the law does not pick).
    let pw = got.access.power.as_ref().expect("power law");
    assert!((pw.b - 0.3).abs() <= 0.1, "{pw:?}");
    assert!(got.inserts.ascending < 0.05, "{:?}", got.inserts);
    let c = f.commits.writes.as_ref().expect("commits");
    assert_eq!(c.p50, 10.0, "{c:?}");
}

#[test]
fn the_applications_flushes_and_compactions_come_back_at_their_cadence() {
    let mut m = model();
    assert_eq!(round_trip(&m).commits.flush_every_writes, None);
    m.commits.flush_every_writes = Some(1000);
    m.commits.compact_every_writes = Some(3000);
    let f = round_trip(&m);
    assert_eq!(f.commits.flush_every_writes, Some(1000), "{:?}", f.commits);
    assert_eq!(
        f.commits.compact_every_writes,
        Some(3000),
        "{:?}",
        f.commits
    );
}

#[test]
fn a_sequential_store_is_played_in_key_order() {
    let mut m = model();
    m.stores[0].inserts.ascending = 1.0;
    let f = round_trip(&m);
    assert!(
        f.stores[0].inserts.ascending > 0.99,
        "{:?}",
        f.stores[0].inserts
    );
}

#[test]
fn a_model_file_that_is_missing_or_wrong_is_refused_saying_why() {
    let e = Synth::new(1, SynthConfig::default())
        .err()
        .expect("no file")
        .to_string();
    assert!(e.contains("set workload"), "{e}");
    let cfg = SynthConfig {
        workload: "/nonexistent/w.toml".into(),
        ..SynthConfig::default()
    };
    let e = Synth::new(1, cfg).err().expect("missing").to_string();
    assert!(e.contains("/nonexistent/w.toml"), "{e}");
}

/// A Cosmos-SDK-like node: a block of 50 state writes every period from one
/// writer, two RPC readers of 15 gets each a period, 100 keys loaded first.
fn cosmos() -> Workload {
    use ledgerbench_model::model::Role;
    let mut m = model();
    let st = &mut m.stores[0];
    st.initial_keys = 100;
    st.access = Access::default();
    m.commits = Commits {
        period_micros: Some(6_000_000),
        ..Commits::default()
    };
    let role = |name: &str, threads, ops_per_period, mix, block| Role {
        name: name.into(),
        threads,
        ops_per_period,
        mix,
        stores: Vec::new(),
        block,
    };
    m.roles = vec![
        role(
            "block",
            1,
            50,
            Mix {
                insert: 0.1,
                overwrite: 0.9,
                ..Mix::default()
            },
            true,
        ),
        role(
            "rpc",
            2,
            30,
            Mix {
                get_found: 1.0,
                ..Mix::default()
            },
            false,
        ),
    ];
    m
}

#[test]
fn roles_play_on_their_own_threads_at_the_period() {
    use ledgerbench_trace::{Expect, Op};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cosmos.toml");
    std::fs::write(&path, ledgerbench_model::write(&cosmos())).expect("write");
    let params = serde_json::json!({"workload": path.display().to_string(), "periods": 3});
    assert!(ledgerbench_workloads::timed("synth", &params));
    let e = ledgerbench_workloads::threads("synth", 1, params.clone(), 2)
        .err()
        .expect("2 threads");
    assert!(e.to_string().contains("--threads 3"), "{e}");
    let mut streams = ledgerbench_workloads::threads("synth", 1, params, 3).expect("threads");
    let mut loaded = std::collections::HashSet::new();
    for (t, src) in streams.iter_mut().enumerate() {
        let (mut marks, mut times, mut puts, mut gets, mut commits) =
            (Vec::new(), Vec::new(), 0, 0, 0);
        while let Some(op) = src.next_op().expect("op") {
            match op {
                Op::Mark { label } => marks.push(label.to_string()),
                Op::At { micros } => times.push(micros),
                Op::Put { key, .. } if marks.is_empty() => {
                    loaded.insert(key.to_vec());
                }
                Op::Put { .. } => puts += 1,
                Op::Get { key, expect, .. } => {
                    assert_eq!(expect, Expect::Unchecked);
                    assert!(loaded.contains(key), "thread {t} reads a key not loaded");
                    gets += 1;
                }
                Op::Commit { .. } if !marks.is_empty() => commits += 1,
                _ => {}
            }
        }
        assert_eq!(
            marks,
            ["load", "period 0", "period 1", "period 2"],
            "thread {t}"
        );
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "thread {t}: {times:?}"
        );
        if t == 0 {
            assert_eq!(loaded.len(), 100);
            // A block a period: one time, 50 writes, one commit.
            assert_eq!(
                (puts, commits, times.clone()),
                (150, 3, vec![0, 6_000_000, 12_000_000])
            );
        } else {
            assert_eq!((puts, gets, times.len()), (0, 45, 45), "thread {t}");
        }
    }
}

/// Each thread's operations as hashes of what they are, split at the
/// `load` mark: (up to and with it, after it).
fn played(params: &serde_json::Value, threads: u64) -> Vec<(Vec<u64>, Vec<u64>)> {
    use std::hash::{Hash, Hasher};
    let mut streams =
        ledgerbench_workloads::threads("synth", 9, params.clone(), threads).expect("threads");
    streams
        .iter_mut()
        .map(|src| {
            let (mut before, mut after, mut loaded) = (Vec::new(), Vec::new(), false);
            while let Some(op) = src.next_op().expect("op") {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                format!("{op:?}").hash(&mut h);
                match loaded {
                    false => before.push(h.finish()),
                    true => after.push(h.finish()),
                }
                loaded |= matches!(op, ledgerbench_trace::Op::Mark { label } if label == "load");
            }
            (before, after)
        })
        .collect()
}

/// `initial = only` plays the load and stops; `initial = given` plays
/// exactly what follows the load in a whole run (every choice drawn
/// alike), with no load and no `load` mark: a run given a copy of the
/// loaded stores does what the run that loaded them would have.
#[test]
fn a_given_state_plays_what_follows_a_load_and_a_load_alone_stops_there() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (name, m, threads) in [("plain", model(), 1), ("roles", cosmos(), 3)] {
        let path = dir.path().join(format!("{name}.toml"));
        std::fs::write(&path, ledgerbench_model::write(&m)).expect("write");
        let params = |initial: &str| {
            serde_json::json!({
                "workload": path.display().to_string(),
                "periods": 3,
                "operations": 3000,
                "initial": initial,
            })
        };
        let whole = played(&params("play"), threads);
        let only = played(&params("only"), threads);
        let given = played(&params("given"), threads);
        for t in 0..threads as usize {
            assert!(!whole[t].0.is_empty(), "{name} thread {t}: no load");
            assert!(
                !whole[t].1.is_empty(),
                "{name} thread {t}: nothing after it"
            );
            assert_eq!(
                only[t],
                (whole[t].0.clone(), Vec::new()),
                "{name} thread {t}"
            );
            // Given: no mark is seen, so all of it lands before one.
            assert_eq!(
                given[t],
                (whole[t].1.clone(), Vec::new()),
                "{name} thread {t}"
            );
        }
    }
    let wrong = serde_json::json!({"workload": "preset:cosmos", "initial": "later"});
    let e = ledgerbench_workloads::threads("synth", 9, wrong, 5)
        .err()
        .expect("refused");
    assert!(e.to_string().contains("later"), "{e}");
}
