use super::*;

fn series(name: &str, ys: &[f64]) -> Series {
    Series {
        marked: false,
        name: name.into(),
        points: ys
            .iter()
            .enumerate()
            .map(|(i, y)| (i as f64 + 1.0, *y))
            .collect(),
    }
}

#[test]
fn labels_are_text_in_full_with_every_character() {
    let name = "partitioned/rocksdb-partitioned@512MiB's run";
    let s = line_chart(
        "Batch cost: txdata",
        "batch",
        "seconds",
        &[series(name, &[0.0, 0.5, 1.2])],
    )
    .expect("chart");
    assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
    assert!(
        s.contains("partitioned/rocksdb-partitioned@512MiB&apos;s run</text>"),
        "{s}"
    );
    assert!(s.contains(">Batch cost: txdata</text>"));
    assert!(s.contains(r##"stroke="#0072b2""##));
    assert!(line_chart("t", "x", "y", &[]).is_none());
}

#[test]
fn more_series_than_a_panel_holds_become_panels_of_at_most_eight() {
    let many: Vec<Series> = (0..20)
        .map(|i| {
            series(
                &format!("{}/cfg{i}@256MiB", if i < 12 { "manual" } else { "mdbx" }),
                &[1.0, 2.0],
            )
        })
        .collect();
    let s = line_chart("t", "x", "y", &many).expect("chart");
    // manual: 12 series in two panels (8 + 4), mdbx: 8 in one.
    for panel in [
        ">manual (1 of 2)</text>",
        ">manual (2 of 2)</text>",
        ">mdbx</text>",
    ] {
        assert!(s.contains(panel), "{panel} missing");
    }
    let paths = s.matches("stroke-width=\"1.8\"").count();
    assert_eq!(paths, 20, "every series drawn once");
    // Within a panel, no two series share colour and dash.
    let styles: std::collections::BTreeSet<_> = (0..PER_PANEL).map(style).collect();
    assert_eq!(styles.len(), PER_PANEL);
}

#[test]
fn a_range_over_ten_times_gets_a_log_axis() {
    let s = line_chart(
        "t",
        "x",
        "seconds",
        &[series("a", &[0.5, 20.0]), series("b", &[0.6, 0.7])],
    )
    .expect("chart");
    assert!(s.contains("log scale"), "{s}");
    let s = line_chart("t", "x", "seconds", &[series("a", &[0.5, 2.0])]).expect("chart");
    assert!(!s.contains("log scale"));
    // A throughput series with stalls at 0 stays linear: the dips show.
    let s = line_chart("t", "x", "MiB/s", &[series("a", &[0.0, 50.0, 0.0, 60.0])]).expect("chart");
    assert!(!s.contains("log scale"));
}

#[test]
fn the_same_input_draws_the_same_bytes() {
    let a = line_chart("t", "x", "y", &[series("a", &[1.0, 3.0])]);
    let b = line_chart("t", "x", "y", &[series("a", &[1.0, 3.0])]);
    assert_eq!(a, b);
}

#[test]
fn bars_skip_absent_values_and_name_every_series() {
    assert!(bar_chart("t", "y", &["a".into()], &["s".into()], &[vec![None]]).is_none());
    let b = bar_chart(
        "t",
        "y",
        &["a".into(), "b".into()],
        &["rocksdb-leveled@128MiB".into()],
        &[vec![Some(1.0), Some(3.0)]],
    )
    .expect("bars");
    assert_eq!(
        b.matches("<rect x=").count(),
        2 + 1,
        "two bars and one legend swatch"
    );
    assert!(b.contains(">rocksdb-leveled@128MiB</text>"));
}

#[test]
fn ticks_are_round_and_cover_the_range() {
    let t = ticks(0.0, 2.91, 5);
    assert!(*t.last().expect("ticks") >= 2.91, "{t:?}");
    let t = ticks(0.0, 2.5, 5);
    assert_eq!(t.first(), Some(&0.0));
    assert!(*t.last().expect("ticks") >= 2.5, "{t:?}");
    assert!(t.len() <= 7);
    assert_eq!(fmt_num(2_500_000.0), "2.5M");
    assert_eq!(fmt_num(0.25), "0.25");
    assert_eq!(fmt_num(0.0001), "1e-4", "small ticks are not 0");
    assert_eq!(fmt_num(0.0), "0");
    assert_eq!(log_ticks(0.1, 100.0).first(), Some(&0.1));
    // Found by the fuzzer: a range of 600 decades once asked for billions of ticks.
    assert!(
        log_ticks(1e-300, 1e300).len() <= 12,
        "{:?}",
        log_ticks(1e-300, 1e300).len()
    );
    assert!(
        log_ticks(5e-324, f64::MAX).len() <= 12,
        "a subnormal and the largest value"
    );
    let s = line_chart("t", "x", "y", &[series("a", &[5e-324, 1e300, f64::MAX])]).expect("chart");
    assert!(s.contains("log scale"));
}
