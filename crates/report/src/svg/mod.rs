//! Self-contained SVG charts, byte-stable for the same inputs.
//!
//! Text is real `<text>` in a common sans-serif font stack, so every
//! character of a label shows (lower case, `@`, `/`, `'`) and a browser or
//! `rsvg-convert` can select and search it. Line charts with more series
//! than one panel keeps apart become small multiples: panels of at most
//! [`PER_PANEL`] series, each series with its own colour and dash, every
//! label in full in a legend below its panel; a y range over 10x gets a
//! log axis. Written by hand rather than with `plotters`: the charts are
//! few and simple, the output must be byte-stable for snapshot tests, and
//! plotters' SVG backend would still need the layout (panels, legends) done
//! here.

use std::fmt::Write;

mod bar;
mod line;

pub use bar::bar_chart;
pub use line::{Series, line_chart, panels};

/// The font stack of every label: present on Linux (DejaVu), macOS and
/// Windows (Arial, Helvetica), and in every browser.
const FONT: &str = "DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif";

/// At most this many series share one panel.
pub const PER_PANEL: usize = 8;

/// Colours of series, in order; picked to stay apart for colour-blind readers.
pub const PALETTE: &[&str] = &[
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#b8a000",
];

/// Dash patterns, so that series stay apart in grey print too.
pub const DASHES: &[&str] = &["", "7 3", "2 2", "9 3 2 3"];

/// The stroke of series `i` of a panel: its colour and dash attributes.
pub fn style(i: usize) -> (&'static str, String) {
    let dash = DASHES[i % DASHES.len()];
    let dash = if dash.is_empty() {
        String::new()
    } else {
        format!(r#" stroke-dasharray="{dash}""#)
    };
    (PALETTE[i % PALETTE.len()], dash)
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

/// Escapes text for XML.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// Draws `text` `size` pixels high with its top at `y`.
pub fn text(out: &mut String, x: f64, y: f64, size: f64, anchor: Anchor, color: &str, s: &str) {
    let anchor = match anchor {
        Anchor::Start => "start",
        Anchor::Middle => "middle",
        Anchor::End => "end",
    };
    // The baseline sits about 0.8 of the size below the top.
    let _ = writeln!(
        out,
        r#"<text x="{x:.1}" y="{:.1}" font-family="{FONT}" font-size="{size:.1}" fill="{color}" text-anchor="{anchor}">{}</text>"#,
        y + size * 0.8,
        escape(s)
    );
}

/// Round tick values covering [lo, hi].
pub(crate) fn ticks(lo: f64, hi: f64, want: usize) -> Vec<f64> {
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

/// Ticks of a log axis over [lo, hi] (both > 0): 1, 2, 5 per decade,
/// thinned to whole decades when the range is wide.
pub(crate) fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    // Exponents kept within what f64 holds both ways: a subnormal low end
    // has a log of -inf, and a cast of that to i32 once wrapped the range.
    let exp = |v: f64| v.log10().clamp(-300.0, 300.0);
    let (a, b) = (exp(lo).floor() as i32, exp(hi).ceil() as i32);
    let steps: &[f64] = if b - a > 3 { &[1.0] } else { &[1.0, 2.0, 5.0] };
    // At most about ten decades labelled, however wide the range (a
    // results file can hold 1e-300 and 1e300; one tick per decade of that
    // was a vector of billions, found by the fuzzer).
    let every = ((b - a) / 10).max(1) as usize;
    let mut out = Vec::new();
    for e in (a..=b).step_by(every) {
        for m in steps {
            let v = m * 10f64.powi(e);
            if v >= lo / 1.0001 && v <= hi * 1.0001 {
                out.push(v);
            }
        }
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
    } else if a > 0.0 && a < 0.01 {
        // Three decimals would print 0 for a log axis' lower decades.
        format!("{v:e}")
    } else {
        trim(v)
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}

/// The opening of a chart of `w` x `h` with its title.
pub(crate) fn frame(w: f64, h: f64, title: &str) -> String {
    let mut s = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}">"#
    );
    s.push('\n');
    let _ = writeln!(s, r#"<rect width="{w:.0}" height="{h:.0}" fill="white"/>"#);
    text(&mut s, w / 2.0, 8.0, 15.0, Anchor::Middle, "#222", title);
    s
}

#[cfg(test)]
mod tests;
