//! Line charts: one panel when the series fit, else small multiples that
//! share their axes, so panels compare at a glance.

use std::fmt::Write;

use super::{Anchor, PER_PANEL, fmt_num, frame, log_ticks, style, text, ticks};

/// A named series of points.
pub struct Series {
    /// Legend name.
    pub name: String,
    /// (x, y) points, in x order.
    pub points: Vec<(f64, f64)>,
    /// Each point drawn as a dot: figures quoted from elsewhere (a
    /// report's few measurements), which are points, not a trend.
    pub marked: bool,
}

const PANEL_W: f64 = 560.0;
const PLOT_H: f64 = 220.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 18.0;
/// Above the plot: the panel's subtitle and the y label.
const HEAD: f64 = 40.0;
/// Below the plot: x ticks and the x label.
const FOOT: f64 = 40.0;
const LEGEND_ROW: f64 = 15.0;
const TITLE: f64 = 34.0;

/// The group a series falls in when one panel cannot hold them all: its
/// results folder (`folder/run`), else its config (`config@limit`).
fn group_of(name: &str) -> &str {
    if let Some((folder, _)) = name.rsplit_once('/') {
        return folder;
    }
    name.split_once('@').map_or(name, |(config, _)| config)
}

/// A line chart of `series` against a shared x axis: one panel when they
/// are at most [`PER_PANEL`], else small multiples grouped by results
/// folder or config. `None` when there is nothing to draw.
pub fn line_chart(title: &str, xlabel: &str, ylabel: &str, series: &[Series]) -> Option<String> {
    if series.len() <= PER_PANEL {
        return panels(
            title,
            xlabel,
            ylabel,
            &[(String::new(), series.iter().collect())],
        );
    }
    let mut groups: Vec<(String, Vec<&Series>)> = Vec::new();
    for s in series {
        let g = group_of(&s.name).to_string();
        match groups.iter_mut().find(|(k, _)| *k == g) {
            Some((_, v)) => v.push(s),
            None => groups.push((g, vec![s])),
        }
    }
    let mut split = Vec::new();
    for (g, v) in groups {
        let chunks = pack(v);
        let parts = chunks.len();
        for (i, chunk) in chunks.into_iter().enumerate() {
            let name = if parts > 1 {
                format!("{g} ({} of {parts})", i + 1)
            } else {
                g.clone()
            };
            split.push((name, chunk));
        }
    }
    panels(title, xlabel, ylabel, &split)
}

/// Panels of at most [`PER_PANEL`] series from one group, keeping the runs
/// of one config (`config@limit`) in one panel where they fit.
fn pack(v: Vec<&Series>) -> Vec<Vec<&Series>> {
    let config = |s: &Series| {
        s.name
            .split_once('@')
            .map_or(s.name.clone(), |(c, _)| c.to_string())
    };
    let mut runs: Vec<Vec<&Series>> = Vec::new();
    for s in v {
        match runs.last_mut() {
            Some(r) if config(r[0]) == config(s) => r.push(s),
            _ => runs.push(vec![s]),
        }
    }
    let mut out: Vec<Vec<&Series>> = Vec::new();
    for r in runs {
        for piece in r.chunks(PER_PANEL) {
            match out.last_mut() {
                Some(p) if p.len() + piece.len() <= PER_PANEL => p.extend_from_slice(piece),
                _ => out.push(piece.to_vec()),
            }
        }
    }
    out
}

/// The axes every panel shares.
struct Scale {
    x0: f64,
    x1: f64,
    /// y range, in log10 units on a log axis.
    y0: f64,
    y1: f64,
    log: bool,
    xt: Vec<f64>,
    yt: Vec<f64>,
}

impl Scale {
    fn of(groups: &[(String, Vec<&Series>)]) -> Option<Self> {
        let pts = || {
            groups
                .iter()
                .flat_map(|(_, v)| v.iter().flat_map(|s| s.points.iter()))
                .filter(|(x, y)| x.is_finite() && y.is_finite())
        };
        let (x0, x1) = pts().fold(None, |r: Option<(f64, f64)>, &(x, _)| {
            Some(r.map_or((x, x), |(a, b)| (a.min(x), b.max(x))))
        })?;
        let x1 = if x1 <= x0 { x0 + 1.0 } else { x1 };
        let ymax = pts().map(|p| p.1).fold(0.0f64, f64::max);
        let ymin = pts().map(|p| p.1).fold(f64::MAX, f64::min);
        // Over 10x from the smallest value to the largest: a log axis, or
        // the small series would be a flat line on the floor. Not where a
        // value is 0 (a stall in a throughput series): a log axis has no 0,
        // and the dips are the point of such a chart.
        let log = ymin > 0.0 && ymin < f64::MAX && ymax / ymin > 10.0;
        let ymin_pos = ymin;
        let (y0, y1, yt) = if log {
            // Whole decades, within what f64 holds (a decade past 1e308
            // is inf, one below 1e-308 underflows to 0).
            let lo = 10f64.powf(ymin_pos.log10().floor().max(-300.0));
            let hi = 10f64.powf(ymax.log10().ceil().min(300.0));
            (lo.log10(), hi.log10(), log_ticks(lo, hi))
        } else {
            let yt = ticks(0.0, if ymax > 0.0 { ymax } else { 1.0 }, 5);
            (0.0, *yt.last().unwrap_or(&1.0), yt)
        };
        let xt = ticks(x0, x1, 6)
            .into_iter()
            .filter(|t| *t >= x0 && *t <= x1)
            .collect();
        Some(Self {
            x0,
            x1,
            y0,
            y1,
            log,
            xt,
            yt,
        })
    }

    fn px(&self, ox: f64, x: f64) -> f64 {
        ox + LEFT + (x - self.x0) / (self.x1 - self.x0) * (PANEL_W - LEFT - RIGHT)
    }

    /// y on the panel whose plot starts at `oy`; on a log axis values at or
    /// below 0 sit on the floor.
    fn py(&self, oy: f64, y: f64) -> f64 {
        let v = if self.log {
            if y > 0.0 {
                y.log10().max(self.y0)
            } else {
                self.y0
            }
        } else {
            y
        };
        oy + HEAD + PLOT_H - (v - self.y0) / (self.y1 - self.y0).max(f64::MIN_POSITIVE) * PLOT_H
    }
}

/// Small multiples: one panel per group (name, series), a grid of two
/// columns, shared axes, each panel's legend below it with full labels.
/// `None` when there is nothing to draw.
pub fn panels(
    title: &str,
    xlabel: &str,
    ylabel: &str,
    groups: &[(String, Vec<&Series>)],
) -> Option<String> {
    let scale = Scale::of(groups)?;
    let cols = if groups.len() > 1 { 2 } else { 1 };
    let panel_h = |n: usize| HEAD + PLOT_H + FOOT + n as f64 * LEGEND_ROW + 12.0;
    let rows: Vec<f64> = groups
        .chunks(cols)
        .map(|row| {
            row.iter()
                .map(|(_, v)| panel_h(v.len()))
                .fold(0.0, f64::max)
        })
        .collect();
    let (w, h) = (PANEL_W * cols as f64, TITLE + rows.iter().sum::<f64>());
    let mut s = frame(w, h, title);
    let ylabel = if scale.log {
        format!("{ylabel} (log scale)")
    } else {
        ylabel.to_string()
    };
    let mut oy = TITLE;
    for (r, row) in groups.chunks(cols).enumerate() {
        for (c, (name, series)) in row.iter().enumerate() {
            let at = (c as f64 * PANEL_W, oy);
            panel(&mut s, &scale, at, (xlabel, &ylabel), name, series);
        }
        oy += rows[r];
    }
    s.push_str("</svg>\n");
    Some(s)
}

/// One panel with its top-left at `(ox, oy)`, axis labels `(x, y)`.
///
/// Long because it draws one panel in order (frame, ticks, lines, legend), all from the same scale and geometry.
fn panel(
    s: &mut String,
    a: &Scale,
    (ox, oy): (f64, f64),
    (xlabel, ylabel): (&str, &str),
    name: &str,
    series: &[&Series],
) {
    let (plot_top, plot_bottom) = (oy + HEAD, oy + HEAD + PLOT_H);
    let right = ox + PANEL_W - RIGHT;
    if !name.is_empty() {
        text(s, ox + LEFT, oy + 2.0, 13.0, Anchor::Start, "#222", name);
    }
    text(s, ox + 8.0, oy + 22.0, 11.0, Anchor::Start, "#444", ylabel);
    for &t in &a.yt {
        let y = a.py(oy, t);
        let _ = writeln!(
            s,
            r##"<line x1="{:.1}" y1="{y:.1}" x2="{right:.1}" y2="{y:.1}" stroke="#e4e4e4"/>"##,
            ox + LEFT
        );
        text(
            s,
            ox + LEFT - 6.0,
            y - 6.0,
            11.0,
            Anchor::End,
            "#444",
            &fmt_num(t),
        );
    }
    for &t in &a.xt {
        let x = a.px(ox, t);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.1}" y1="{plot_bottom:.1}" x2="{x:.1}" y2="{:.1}" stroke="#888"/>"##,
            plot_bottom + 4.0
        );
        text(
            s,
            x,
            plot_bottom + 6.0,
            11.0,
            Anchor::Middle,
            "#444",
            &fmt_num(t),
        );
    }
    text(
        s,
        ox + LEFT + (PANEL_W - LEFT - RIGHT) / 2.0,
        plot_bottom + 22.0,
        11.0,
        Anchor::Middle,
        "#444",
        xlabel,
    );
    for (i, ser) in series.iter().enumerate() {
        let (color, dash) = style(i);
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
                a.px(ox, x),
                a.py(oy, y)
            );
        }
        let _ = writeln!(
            s,
            r#"<path d="{}" fill="none" stroke="{color}" stroke-width="1.8"{dash}/>"#,
            d.trim_end()
        );
        if ser.marked {
            for &(x, y) in ser
                .points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
            {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}"/>"#,
                    a.px(ox, x),
                    a.py(oy, y)
                );
            }
        }
    }
    let _ = writeln!(
        s,
        r##"<path d="M{:.1},{plot_top:.1} L{:.1},{plot_bottom:.1} L{right:.1},{plot_bottom:.1}" fill="none" stroke="#444"/>"##,
        ox + LEFT,
        ox + LEFT
    );
    // The legend below the plot: one row per series, its line sample in
    // the series' colour and dash, the label in full.
    for (i, ser) in series.iter().enumerate() {
        let y = plot_bottom + FOOT + i as f64 * LEGEND_ROW;
        let (color, dash) = style(i);
        let _ = writeln!(
            s,
            r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{color}" stroke-width="2.2"{dash}/>"#,
            ox + LEFT,
            y + 6.0,
            ox + LEFT + 28.0,
            y + 6.0
        );
        text(
            s,
            ox + LEFT + 36.0,
            y,
            11.0,
            Anchor::Start,
            "#222",
            &ser.name,
        );
    }
}
