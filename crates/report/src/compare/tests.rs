use super::*;

#[test]
fn glob_matches_stars_anywhere() {
    assert!(glob(
        "*write_amp*",
        "summary.stores.txdata.write_amp_engine"
    ));
    assert!(glob("lmdb/*", "lmdb/summary.wall_secs"));
    assert!(!glob("lmdb/*", "mdbx/summary.wall_secs"));
    assert!(glob("a*c*e", "abcde"));
    assert!(!glob("a*c*e", "abcdef"));
    assert!(glob("exact", "exact"));
}

#[test]
fn bootstrap_separates_shifted_samples_and_not_noise() {
    let base = [1.00, 1.02, 0.98, 1.01, 0.99];
    let slow = [1.30, 1.28, 1.33, 1.31, 1.29];
    let (lo, _) = bootstrap_ratio(&base, &slow).expect("interval");
    assert!(lo > 1.2, "{lo}");
    let same = [1.01, 0.99, 1.00, 1.02, 0.98];
    let (lo, hi) = bootstrap_ratio(&base, &same).expect("interval");
    assert!(lo < 1.0 && hi > 1.0, "{lo} {hi}");
}

/// The committed smoke results with their runs replaced: `differences`
/// reads the typed document, the metric walk reads `json`.
fn loaded(runs: serde_json::Value) -> Loaded {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/results/stellar-smoke/results.json");
    let mut d = crate::doc::load(&root).expect("fixture loads");
    d.json["runs"] = runs;
    d
}

fn verdicts(
    base: serde_json::Value,
    cur: serde_json::Value,
    opts: &Options,
) -> Vec<(String, Verdict)> {
    compare(&[loaded(base)], &[loaded(cur)], opts)
        .expect("comparable")
        .into_iter()
        .map(|r| (r.name, r.verdict))
        .collect()
}

#[test]
fn counters_fail_in_both_directions_and_a_vanished_metric_fails() {
    let run = |wa: f64, dev: Option<f64>| {
        let mut s = serde_json::json!({"write_amp_engine": wa, "entries": 10});
        if let Some(d) = dev {
            s["device_write_bytes"] = d.into();
        }
        serde_json::json!([{"label": "a", "summary": s}])
    };
    let o = Options::default();
    let v = verdicts(run(4.0, Some(1e8)), run(4.0, Some(1e8)), &o);
    assert!(v.iter().all(|x| x.1 == Verdict::Same), "{v:?}");
    let fell = verdicts(run(4.0, Some(1e8)), run(2.0, Some(1e8)), &o);
    assert!(
        fell.contains(&("summary.write_amp_engine".into(), Verdict::Fell)),
        "{fell:?}"
    );
    let zero = verdicts(run(4.0, Some(1e8)), run(0.0, Some(1e8)), &o);
    assert!(
        zero.contains(&("summary.write_amp_engine".into(), Verdict::Fell)),
        "{zero:?}"
    );
    let gone = verdicts(run(4.0, Some(1e8)), run(4.0, None), &o);
    assert!(
        gone.contains(&("summary.device_write_bytes".into(), Verdict::Missing)),
        "{gone:?}"
    );
    // Within the 10% band of device counters: the same.
    let dev = verdicts(run(4.0, Some(1e8)), run(4.0, Some(1.08e8)), &o);
    assert!(dev.iter().all(|x| x.1 == Verdict::Same), "{dev:?}");
    let dev = verdicts(run(4.0, Some(1e8)), run(4.0, Some(1.2e8)), &o);
    assert!(
        dev.contains(&("summary.device_write_bytes".into(), Verdict::Regressed)),
        "{dev:?}"
    );
    // Device bytes within the 256 KiB floor are the same, even from 0.
    let dev = verdicts(run(4.0, Some(0.0)), run(4.0, Some(4096.0)), &o);
    assert!(dev.iter().all(|x| x.1 == Verdict::Same), "{dev:?}");
    // One batch's reads get a wider floor; its writes and the totals do not.
    let batch_read = "batches.batch4.stores.txdata.device_read_bytes";
    assert_eq!(device_floor(batch_read), BATCH_READ_FLOOR_BYTES);
    assert_eq!(
        device_floor("batches.batch4.stores.txdata.device_write_bytes"),
        DEVICE_FLOOR_BYTES
    );
    assert_eq!(
        device_floor("summary.stores.txdata.device_read_bytes"),
        DEVICE_FLOOR_BYTES
    );
    // A class left out by --only is shown, never judged.
    let only = Options {
        only: vec![Class::Exact],
        ..Options::default()
    };
    let v = verdicts(run(4.0, Some(1e8)), run(0.0, None), &only);
    assert!(
        v.iter()
            .all(|x| x.1 != Verdict::Fell && x.1 != Verdict::Missing),
        "{v:?}"
    );
    for r in [&fell, &zero, &gone] {
        let rows: Vec<Row> = r
            .iter()
            .map(|(n, v)| Row {
                run: "a".into(),
                name: n.clone(),
                class: Class::Counter,
                baseline: None,
                current: None,
                ratio: None,
                interval: None,
                spread: None,
                threshold_pct: 2.0,
                runs: (1, 1),
                verdict: *v,
                note: None,
            })
            .collect();
        assert!(failed(&rows));
    }
}

#[test]
fn thresholds_parse_or_say_what_is_wrong() {
    assert_eq!(
        parse_threshold("*p99_us=25").expect("ok"),
        ("*p99_us".into(), 25.0)
    );
    assert_eq!(parse_threshold("x=1.5%").expect("ok").1, 1.5);
    assert!(parse_threshold("x").is_err());
    assert!(parse_threshold("x=-1").is_err());
    assert!(parse_threshold("x=abc").is_err());
}

#[test]
fn a_counter_that_varies_between_repeats_is_judged_by_its_spread() {
    let runs = |was: &[f64]| {
        let r: Vec<_> = was
            .iter()
            .map(|wa| serde_json::json!({"label": "a", "summary": {"write_amp_engine": wa}}))
            .collect();
        serde_json::Value::from(r)
    };
    let o = Options::default();
    let row = |b: &[f64], c: &[f64]| {
        compare(&[loaded(runs(b))], &[loaded(runs(c))], &o)
            .expect("comparable")
            .into_iter()
            .find(|r| r.name == "summary.write_amp_engine")
            .expect("row")
    };
    // Pebble's background compactions: 3.33 and 3.65 from one binary and seed.
    let noisy = [3.33, 3.65, 3.45];
    let r = row(&noisy, &[3.50, 3.38, 3.62]);
    assert_eq!(r.verdict, Verdict::Same, "{r:?}");
    assert_eq!(r.spread, Some((3.33, 3.65)));
    assert!(r.interval.is_some(), "judged by the interval of its runs");
    let r = row(&noisy, &[4.60, 4.71, 4.52]);
    assert_eq!(r.verdict, Verdict::Regressed, "{r:?}");
    // One run on a side: shown with its spread, not judged.
    let r = row(&noisy, &[3.65]);
    assert_eq!(r.verdict, Verdict::NotJudged, "{r:?}");
    let note = r.note.expect("why");
    assert!(note.contains("3.33 to 3.65"), "{note}");
    assert!(note.contains("--repeat 3"), "{note}");
    // Repeats that agree keep the tight threshold.
    let r = row(&[4.0, 4.0, 4.0], &[4.2, 4.2, 4.2]);
    assert_eq!(r.verdict, Verdict::Regressed, "{r:?}");
}
