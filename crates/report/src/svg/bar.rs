//! Grouped bar charts, drawn across: one row per category with its label
//! in full on the left (run labels are long, and dozens of runs would
//! overlap under vertical bars), the legend below.

use std::fmt::Write;

use super::{Anchor, PALETTE, fmt_num, frame, text, ticks};

const W: f64 = 960.0;
const TOP: f64 = 40.0;
const RIGHT: f64 = 24.0;
const BAR: f64 = 7.0;
const ROW_GAP: f64 = 8.0;
const LEGEND_ROW: f64 = 15.0;
/// Pixels per character of an 11-pixel label, generously.
const CHAR_W: f64 = 6.4;

/// A grouped bar chart: one group per category, one bar per series in each;
/// `values[series][category]`, `None` where a value is absent (drawn as no
/// bar). `None` when there is nothing to draw.
///
/// Long because it draws the chart in order (frame, ticks, bars, labels, legend), all from the same scale and geometry.
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
    let xt = ticks(0.0, if max > 0.0 { max } else { 1.0 }, 6);
    let top = *xt.last().unwrap_or(&1.0);
    let longest = categories
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(1) as f64;
    let left = (longest * CHAR_W + 16.0).clamp(80.0, 480.0);
    let row = series_names.len().max(1) as f64 * BAR + ROW_GAP;
    let plot_h = row * categories.len() as f64;
    let bottom = TOP + 18.0 + plot_h;
    let h = bottom + 40.0 + series_names.len() as f64 * LEGEND_ROW + 10.0;
    let mut s = frame(W, h, title);
    let px = |v: f64| left + v / top * (W - left - RIGHT);
    for &t in &xt {
        let x = px(t);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{bottom:.1}" stroke="#e4e4e4"/>"##,
            TOP + 18.0
        );
        text(
            &mut s,
            x,
            bottom + 6.0,
            11.0,
            Anchor::Middle,
            "#444",
            &fmt_num(t),
        );
    }
    text(
        &mut s,
        left + (W - left - RIGHT) / 2.0,
        bottom + 22.0,
        11.0,
        Anchor::Middle,
        "#444",
        ylabel,
    );
    for (ci, cat) in categories.iter().enumerate() {
        let y0 = TOP + 18.0 + ci as f64 * row + ROW_GAP / 2.0;
        text(
            &mut s,
            left - 8.0,
            y0 + row / 2.0 - ROW_GAP / 2.0 - 7.0,
            11.0,
            Anchor::End,
            "#222",
            cat,
        );
        for (si, vals) in values.iter().enumerate() {
            let Some(v) = vals.get(ci).copied().flatten().filter(|v| v.is_finite()) else {
                continue;
            };
            let c = PALETTE[si % PALETTE.len()];
            let _ = writeln!(
                s,
                r#"<rect x="{left:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{c}"/>"#,
                y0 + si as f64 * BAR,
                (px(v) - left).max(0.0),
                BAR - 1.0
            );
        }
    }
    let _ = writeln!(
        s,
        r##"<path d="M{left:.1},{:.1} L{left:.1},{bottom:.1} L{:.1},{bottom:.1}" fill="none" stroke="#444"/>"##,
        TOP + 18.0,
        W - RIGHT
    );
    for (i, n) in series_names.iter().enumerate() {
        let y = bottom + 40.0 + i as f64 * LEGEND_ROW;
        let c = PALETTE[i % PALETTE.len()];
        let _ = writeln!(
            s,
            r#"<rect x="{left:.1}" y="{:.1}" width="12" height="10" fill="{c}"/>"#,
            y + 1.0
        );
        text(&mut s, left + 20.0, y, 11.0, Anchor::Start, "#222", n);
    }
    s.push_str("</svg>\n");
    Some(s)
}
