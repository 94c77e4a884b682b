//! Self-contained SVG charts. Text is drawn as strokes from a built-in
//! vector font, not `<text>`, so a chart renders the same everywhere: in a
//! browser, on GitHub, in an image viewer without fonts installed.

use std::fmt::Write;

/// Stroke glyphs on a 4 x 6 grid (y down): polylines of `x,y` points,
/// separated by `|`. Lower case is drawn as upper case.
fn glyph(c: char) -> &'static str {
    match c.to_ascii_uppercase() {
        '0' => "0,0 4,0 4,6 0,6 0,0|0,6 4,0",
        '1' => "1,1 2,0 2,6|1,6 3,6",
        '2' => "0,0 4,0 4,3 0,3 0,6 4,6",
        '3' => "0,0 4,0 4,6 0,6|1,3 4,3",
        '4' => "0,0 0,3 4,3|4,0 4,6",
        '5' | 'S' => "4,0 0,0 0,3 4,3 4,6 0,6",
        '6' => "4,0 0,0 0,6 4,6 4,3 0,3",
        '7' => "0,0 4,0 2,6",
        '8' => "0,0 4,0 4,6 0,6 0,0|0,3 4,3",
        '9' => "4,3 0,3 0,0 4,0 4,6 0,6",
        'A' => "0,6 0,2 2,0 4,2 4,6|0,3 4,3",
        'B' => "0,0 3,0 4,1 4,2 3,3 0,3|3,3 4,4 4,5 3,6 0,6 0,0",
        'C' => "4,0 0,0 0,6 4,6",
        'D' => "0,0 3,0 4,1 4,5 3,6 0,6 0,0",
        'E' => "4,0 0,0 0,6 4,6|0,3 3,3",
        'F' => "4,0 0,0 0,6|0,3 3,3",
        'G' => "4,0 0,0 0,6 4,6 4,3 2,3",
        'H' => "0,0 0,6|4,0 4,6|0,3 4,3",
        'I' => "1,0 3,0|2,0 2,6|1,6 3,6",
        'J' => "4,0 4,6 0,6 0,4",
        'K' => "0,0 0,6|4,0 0,3 4,6",
        'L' => "0,0 0,6 4,6",
        'M' => "0,6 0,0 2,3 4,0 4,6",
        'N' => "0,6 0,0 4,6 4,0",
        'O' => "0,0 4,0 4,6 0,6 0,0",
        'P' => "0,6 0,0 4,0 4,3 0,3",
        'Q' => "0,0 4,0 4,6 0,6 0,0|2,4 4,6",
        'R' => "0,6 0,0 4,0 4,3 0,3 4,6",
        'T' => "0,0 4,0|2,0 2,6",
        'U' | 'µ' => "0,0 0,6 4,6 4,0",
        'V' => "0,0 2,6 4,0",
        'W' => "0,0 1,6 2,3 3,6 4,0",
        'X' => "0,0 4,6|4,0 0,6",
        'Y' => "0,0 2,3 4,0|2,3 2,6",
        'Z' => "0,0 4,0 0,6 4,6",
        '.' => "2,5.5 2,6",
        ',' => "2,5 1.5,7",
        '-' => "1,3 3,3",
        '_' => "0,6 4,6",
        '/' => "4,0 0,6",
        '(' => "3,0 1,2 1,4 3,6",
        ')' => "1,0 3,2 3,4 1,6",
        '[' => "3,0 1,0 1,6 3,6",
        ']' => "1,0 3,0 3,6 1,6",
        ':' => "2,1.5 2,2|2,4 2,4.5",
        '%' => "0,6 4,0|0,0 1,0 1,1 0,1 0,0|3,5 4,5 4,6 3,6 3,5",
        '+' => "2,1 2,5|0,3 4,3",
        '=' => "0,2 4,2|0,4 4,4",
        '>' => "0,0 4,3 0,6",
        '<' => "4,0 0,3 4,6",
        '|' => "2,0 2,6",
        '*' => "0,1 4,5|4,1 0,5|2,0 2,6",
        '#' => "1,0 1,6|3,0 3,6|0,2 4,2|0,4 4,4",
        ' ' => "",
        _ => "0,1 1,0 3,0 4,1 4,2 2,3 2,4|2,5.5 2,6",
    }
}

/// Where a text's anchor sits.
#[derive(Clone, Copy)]
pub enum Anchor {
    /// Text starts at x.
    Start,
    /// Text is centred on x.
    Middle,
    /// Text ends at x.
    End,
}

/// Width of `text` drawn `size` pixels high.
pub fn text_width(text: &str, size: f64) -> f64 {
    let n = text.chars().count() as f64;
    (n * 6.0 - 2.0).max(0.0) * size / 6.0
}

/// Draws `text` with its baseline's top-left determined by `anchor`; `y` is the top.
pub fn text(out: &mut String, x: f64, y: f64, size: f64, anchor: Anchor, color: &str, s: &str) {
    let scale = size / 6.0;
    let x0 = match anchor {
        Anchor::Start => x,
        Anchor::Middle => x - text_width(s, size) / 2.0,
        Anchor::End => x - text_width(s, size),
    };
    let mut d = String::new();
    for (i, c) in s.chars().enumerate() {
        let ox = x0 + i as f64 * 6.0 * scale;
        for stroke in glyph(c).split('|').filter(|p| !p.is_empty()) {
            for (j, pt) in stroke.split(' ').enumerate() {
                let Some((px, py)) = pt.split_once(',') else {
                    continue;
                };
                let (px, py): (f64, f64) = (px.parse().unwrap_or(0.0), py.parse().unwrap_or(0.0));
                let _ = write!(
                    d,
                    "{}{:.1},{:.1} ",
                    if j == 0 { "M" } else { "L" },
                    ox + px * scale,
                    y + py * scale
                );
            }
        }
    }
    if !d.is_empty() {
        let _ = write!(
            out,
            r#"<path d="{}" fill="none" stroke="{color}" stroke-width="{:.2}" stroke-linecap="round" stroke-linejoin="round"/>"#,
            d.trim_end(),
            (size / 9.0).max(0.8)
        );
        out.push('\n');
    }
}

/// Colours of series, in order; picked to stay apart for colour-blind readers.
pub const PALETTE: &[&str] = &[
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442",
];

/// A named series of points.
pub struct Series {
    /// Legend name.
    pub name: String,
    /// (x, y) points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// Round tick values covering [lo, hi].
fn ticks(lo: f64, hi: f64, want: usize) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / want.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= want as f64)
        .unwrap_or(10.0 * mag);
    let mut v = (lo / step).floor() * step;
    let mut out = Vec::new();
    // Up to the first tick at or past `hi`, so the axis covers every point.
    loop {
        out.push(v);
        if v >= hi - step * 1e-9 || out.len() > 4 * want + 2 {
            break;
        }
        v += step;
    }
    out
}

/// A tick label: short, without trailing zeros.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{}G", trim(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if a >= 1e4 {
        format!("{}K", trim(v / 1e3))
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

const W: f64 = 760.0;
const H: f64 = 360.0;
const LEFT: f64 = 70.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;
const LEGEND: f64 = 190.0;

fn frame(title: &str) -> String {
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}">"#
    );
    s.push('\n');
    let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
    text(&mut s, W / 2.0, 10.0, 12.0, Anchor::Middle, "#222", title);
    s
}

struct Axes {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Axes {
    fn px(&self, x: f64) -> f64 {
        LEFT + (x - self.x0) / (self.x1 - self.x0).max(f64::MIN_POSITIVE) * (W - LEFT - LEGEND)
    }
    fn py(&self, y: f64) -> f64 {
        H - BOTTOM - (y - self.y0) / (self.y1 - self.y0).max(f64::MIN_POSITIVE) * (H - TOP - BOTTOM)
    }
}

fn y_axis(s: &mut String, a: &Axes, ylabel: &str, yt: &[f64]) {
    for &t in yt {
        let y = a.py(t);
        let _ = writeln!(
            s,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/>"##,
            W - LEGEND
        );
        text(
            s,
            LEFT - 6.0,
            y - 4.0,
            8.0,
            Anchor::End,
            "#444",
            &fmt_num(t),
        );
    }
    // The y label sits above the axis, horizontal, so it needs no rotation.
    text(s, 8.0, TOP - 16.0, 9.0, Anchor::Start, "#444", ylabel);
}

fn legend(s: &mut String, names: &[&str]) {
    for (i, n) in names.iter().enumerate() {
        let y = TOP + i as f64 * 16.0;
        let c = PALETTE[i % PALETTE.len()];
        let _ = writeln!(
            s,
            r#"<rect x="{:.1}" y="{y:.1}" width="10" height="10" fill="{c}"/>"#,
            W - LEGEND + 14.0
        );
        text(s, W - LEGEND + 30.0, y + 1.0, 8.0, Anchor::Start, "#222", n);
    }
}

/// A line chart of several series against a shared x axis; `None` when
/// there is nothing to draw.
pub fn line_chart(title: &str, xlabel: &str, ylabel: &str, series: &[Series]) -> Option<String> {
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y1) = (f64::MAX, f64::MIN, 0.0f64);
    let mut any = false;
    for &(x, y) in pts {
        if x.is_finite() && y.is_finite() {
            any = true;
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
    }
    if !any {
        return None;
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    let yt = ticks(0.0, if y1 > 0.0 { y1 } else { 1.0 }, 5);
    let a = Axes {
        x0,
        x1,
        y0: 0.0,
        y1: *yt.last().unwrap_or(&1.0),
    };
    let mut s = frame(title);
    y_axis(&mut s, &a, ylabel, &yt);
    for t in ticks(x0, x1, 8)
        .into_iter()
        .filter(|t| *t >= x0 && *t <= x1)
    {
        let x = a.px(t);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#888"/>"##,
            H - BOTTOM,
            H - BOTTOM + 4.0
        );
        text(
            &mut s,
            x,
            H - BOTTOM + 8.0,
            8.0,
            Anchor::Middle,
            "#444",
            &fmt_num(t),
        );
    }
    text(
        &mut s,
        LEFT + (W - LEFT - LEGEND) / 2.0,
        H - 22.0,
        9.0,
        Anchor::Middle,
        "#444",
        xlabel,
    );
    for (i, ser) in series.iter().enumerate() {
        let c = PALETTE[i % PALETTE.len()];
        let mut d = String::new();
        for (j, &(x, y)) in ser
            .points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .enumerate()
        {
            let _ = write!(
                d,
                "{}{:.1},{:.1} ",
                if j == 0 { "M" } else { "L" },
                a.px(x),
                a.py(y)
            );
        }
        let _ = writeln!(
            s,
            r#"<path d="{}" fill="none" stroke="{c}" stroke-width="1.6"/>"#,
            d.trim_end()
        );
    }
    axis_lines(&mut s);
    legend(
        &mut s,
        &series.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(),
    );
    s.push_str("</svg>\n");
    Some(s)
}

fn axis_lines(s: &mut String) {
    let _ = writeln!(
        s,
        r##"<path d="M{LEFT},{TOP} L{LEFT},{:.1} L{:.1},{:.1}" fill="none" stroke="#444"/>"##,
        H - BOTTOM,
        W - LEGEND,
        H - BOTTOM
    );
}

/// A grouped bar chart: one group per category, one bar per series in each;
/// `values[series][category]`, `None` where a value is absent (drawn as no bar).
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
    let a = Axes {
        x0: 0.0,
        x1: categories.len().max(1) as f64,
        y0: 0.0,
        y1: *yt.last().unwrap_or(&1.0),
    };
    let mut s = frame(title);
    y_axis(&mut s, &a, ylabel, &yt);
    let group = a.px(1.0) - a.px(0.0);
    let bar = group * 0.8 / series_names.len().max(1) as f64;
    for (ci, cat) in categories.iter().enumerate() {
        let gx = a.px(ci as f64) + group * 0.1;
        for (si, vals) in values.iter().enumerate() {
            let Some(v) = vals.get(ci).copied().flatten().filter(|v| v.is_finite()) else {
                continue;
            };
            let c = PALETTE[si % PALETTE.len()];
            let (y, base) = (a.py(v), a.py(0.0));
            let _ = writeln!(
                s,
                r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{c}"/>"#,
                gx + si as f64 * bar,
                bar * 0.92,
                (base - y).max(0.0)
            );
        }
        // Long category names shrink to fit their group.
        let size = (group * 0.95 / (cat.chars().count() as f64 * 1.0).max(1.0)).clamp(4.0, 8.0);
        text(
            &mut s,
            a.px(ci as f64 + 0.5),
            H - BOTTOM + 8.0,
            size,
            Anchor::Middle,
            "#444",
            cat,
        );
    }
    axis_lines(&mut s);
    legend(
        &mut s,
        &series_names.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    s.push_str("</svg>\n");
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_need_no_fonts_and_skip_empty_data() {
        let s = line_chart(
            "Compaction per batch",
            "batch",
            "seconds",
            &[Series {
                name: "rocksdb-leveled".into(),
                points: vec![(1.0, 0.0), (2.0, 0.5), (3.0, 1.2)],
            }],
        )
        .expect("chart");
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(!s.contains("<text"), "text must be strokes");
        assert!(s.contains("stroke=\"#0072b2\""));
        assert!(line_chart("t", "x", "y", &[]).is_none());
        assert!(bar_chart("t", "y", &["a".into()], &["s".into()], &[vec![None]]).is_none());
        let b = bar_chart(
            "t",
            "y",
            &["a".into(), "b".into()],
            &["s".into()],
            &[vec![Some(1.0), Some(3.0)]],
        )
        .expect("bars");
        assert_eq!(
            b.matches("<rect x=").count(),
            2 + 1,
            "two bars and one legend swatch"
        );
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
    }
}
