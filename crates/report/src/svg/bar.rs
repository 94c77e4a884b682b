//! Grouped bar charts, with the legend below the bars in full.

use std::fmt::Write;

use super::{Anchor, PALETTE, fmt_num, frame, text, ticks};

const W: f64 = 900.0;
const PLOT_H: f64 = 260.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 56.0;
const ROW: f64 = 15.0;

/// A grouped bar chart: one group per category, one bar per series in each;
/// `values[series][category]`, `None` where a value is absent (drawn as no
/// bar). `None` when there is nothing to draw.
pub fn bar_chart(
    title: &str,
    ylabel: &str,
    categories: &[String],
    series_names: &[String],
    values: &[Vec<Option<f64>>],
) -> Option<String> {
    let max = values
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))?;
    let yt = ticks(0.0, if max > 0.0 { max } else { 1.0 }, 5);
    let top = *yt.last().unwrap_or(&1.0);
    let bottom = TOP + PLOT_H;
    // Category names under their groups, one line each; the legend below.
    let names_h = 24.0;
    let h = bottom + names_h + series_names.len() as f64 * ROW + 16.0;
    let mut s = frame(W, h, title);
    let py = |v: f64| bottom - v / top * PLOT_H;
    text(&mut s, 8.0, TOP - 22.0, 11.0, Anchor::Start, "#444", ylabel);
    for &t in &yt {
        let y = py(t);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e4e4e4"/>"##,
            W - RIGHT
        );
        text(
            &mut s,
            LEFT - 6.0,
            y - 6.0,
            11.0,
            Anchor::End,
            "#444",
            &fmt_num(t),
        );
    }
    let group = (W - LEFT - RIGHT) / categories.len().max(1) as f64;
    let bar = group * 0.8 / series_names.len().max(1) as f64;
    for (ci, cat) in categories.iter().enumerate() {
        let gx = LEFT + ci as f64 * group + group * 0.1;
        for (si, vals) in values.iter().enumerate() {
            let Some(v) = vals.get(ci).copied().flatten().filter(|v| v.is_finite()) else {
                continue;
            };
            let c = PALETTE[si % PALETTE.len()];
            let y = py(v);
            let _ = writeln!(
                s,
                r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{c}"/>"#,
                gx + si as f64 * bar,
                bar * 0.92,
                (bottom - y).max(0.0)
            );
        }
        // Long category names shrink to fit their group.
        let size = (group / (cat.chars().count() as f64 * 0.6).max(1.0)).clamp(7.0, 11.0);
        text(
            &mut s,
            LEFT + (ci as f64 + 0.5) * group,
            bottom + 6.0,
            size,
            Anchor::Middle,
            "#444",
            cat,
        );
    }
    let _ = writeln!(
        s,
        r##"<path d="M{LEFT},{TOP} L{LEFT},{bottom:.1} L{:.1},{bottom:.1}" fill="none" stroke="#444"/>"##,
        W - RIGHT
    );
    for (i, n) in series_names.iter().enumerate() {
        let y = bottom + names_h + i as f64 * ROW;
        let c = PALETTE[i % PALETTE.len()];
        let _ = writeln!(
            s,
            r#"<rect x="{LEFT}" y="{:.1}" width="12" height="10" fill="{c}"/>"#,
            y + 1.0
        );
        text(&mut s, LEFT + 20.0, y, 11.0, Anchor::Start, "#222", n);
    }
    s.push_str("</svg>\n");
    Some(s)
}
