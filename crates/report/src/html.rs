//! The report as one self-contained HTML file: the same markdown the
//! report writes, turned into HTML with every chart inline, a little CSS,
//! and a little JavaScript to sort tables and to show one store, one memory
//! limit or one engine at a time. Nothing is fetched from the network.
//!
//! The markdown is ledgerbench's own (headings, paragraphs, lists, tables,
//! chart images, `code`, **bold** and links), so a small converter for that
//! subset does, rather than a markdown crate.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::svg::escape;

const STYLE: &str = "body{font-family:DejaVu Sans,Liberation Sans,Arial,Helvetica,sans-serif;margin:0;color:#222}\
main{padding:0 24px 48px;max-width:1400px}\
nav{position:sticky;top:0;background:#f4f6f8;border-bottom:1px solid #ccd;padding:8px 24px;z-index:1;font-size:14px}\
nav label{margin-right:18px}\
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}\
th,td{border:1px solid #ccd;padding:3px 7px;vertical-align:top}\
th{background:#eef1f4;cursor:pointer;user-select:none}\
th.sorted-asc::after{content:' \\25B2'}th.sorted-desc::after{content:' \\25BC'}\
td.num{text-align:right;font-variant-numeric:tabular-nums}\
code{background:#f1f1f1;padding:0 3px}\
figure{margin:12px 0}figure svg{max-width:100%;height:auto}\
#answer{border-left:4px solid #0072b2;padding-left:12px}";

/// The script: sortable tables, filters by store, memory limit and text.
const SCRIPT: &str = r#"
(function () {
  const $ = (q, el) => Array.from((el || document).querySelectorAll(q));
  const num = (s) => { const v = parseFloat(s.replace(/[^0-9.eE+-]/g, '')); return isNaN(v) ? null : v; };
  $('table').forEach((table) => {
    $('thead th', table).forEach((th, col) => {
      th.addEventListener('click', () => {
        const asc = !th.classList.contains('sorted-asc');
        $('thead th', table).forEach((h) => h.classList.remove('sorted-asc', 'sorted-desc'));
        th.classList.add(asc ? 'sorted-asc' : 'sorted-desc');
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        rows.sort((a, b) => {
          const x = a.cells[col] ? a.cells[col].textContent : '';
          const y = b.cells[col] ? b.cells[col].textContent : '';
          const nx = num(x), ny = num(y);
          const c = nx !== null && ny !== null ? nx - ny : x.localeCompare(y);
          return asc ? c : -c;
        });
        rows.forEach((r) => body.appendChild(r));
      });
    });
  });
  const limits = new Set();
  $('tbody tr').forEach((tr) => {
    const m = (tr.cells[0] ? tr.cells[0].textContent : '').match(/@([0-9]+[KMGT]iB)/);
    if (m) limits.add(m[1]);
  });
  const limitSel = document.getElementById('f-limit');
  Array.from(limits).sort((a, b) => num(a) - num(b)).forEach((l) => {
    const o = document.createElement('option'); o.value = l; o.textContent = l; limitSel.appendChild(o);
  });
  const apply = () => {
    const store = document.getElementById('f-store').value;
    const limit = limitSel.value;
    const text = document.getElementById('f-text').value.trim().toLowerCase();
    $('[data-store]').forEach((el) => { el.hidden = store !== '' && el.dataset.store !== store; });
    $('tbody tr').forEach((tr) => {
      const run = tr.cells[0] ? tr.cells[0].textContent : '';
      const cells = Array.from(tr.cells).map((c) => c.textContent.trim().replace(/`/g, ''));
      const otherStore = store !== '' && cells.some((c) => ['ledgers', 'txdata', 'txindex'].includes(c) && c !== store);
      const runLimit = run.match(/@([0-9]+[KMGT]iB)/);
      const wrongLimit = limit !== '' && runLimit && runLimit[1] !== limit;
      const noText = text !== '' && !tr.textContent.toLowerCase().includes(text);
      tr.hidden = otherStore || wrongLimit || noText;
    });
  };
  $('nav select, nav input').forEach((el) => el.addEventListener('input', apply));
  apply();
  document.body.dataset.ready = '1';
})();
"#;

/// The stores a heading or chart title may be about, for the store filter.
const STORES: &[&str] = &["ledgers", "txdata", "txindex"];

fn store_of(title: &str) -> Option<&'static str> {
    let words: Vec<&str> = title
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    let found: Vec<&'static str> = STORES
        .iter()
        .copied()
        .filter(|s| words.contains(s))
        .collect();
    (found.len() == 1).then(|| found[0])
}

/// Inline markdown: `code`, **bold**, [text](link); the rest escaped.
fn inline(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('`')
            && let Some(end) = r.find('`')
        {
            let _ = write!(out, "<code>{}</code>", escape(&r[..end]));
            rest = &r[end + 1..];
        } else if let Some(r) = rest.strip_prefix("**")
            && let Some(end) = r.find("**")
        {
            let _ = write!(out, "<strong>{}</strong>", inline(&r[..end]));
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('[')
            && let Some(mid) = r.find("](")
            && let Some(end) = r[mid..].find(')')
        {
            let (text, href) = (&r[..mid], &r[mid + 2..mid + end]);
            let _ = write!(out, "<a href=\"{}\">{}</a>", escape(href), inline(text));
            rest = &r[mid + end + 1..];
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push_str(&escape(&c.to_string()));
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// Cells of a markdown table row (`| a | b \| c |`).
fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    let mut out: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter().map(|s| s.trim().to_string()).collect()
}

fn table(out: &mut String, lines: &[&str]) {
    let right: Vec<bool> = lines
        .get(1)
        .map(|r| cells(r).iter().map(|c| c.ends_with(':')).collect())
        .unwrap_or_default();
    out.push_str("<table>\n<thead><tr>");
    for h in cells(lines[0]) {
        let _ = write!(out, "<th>{}</th>", inline(&h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in lines.iter().skip(2) {
        out.push_str("<tr>");
        for (i, c) in cells(row).iter().enumerate() {
            let class = if right.get(i).copied().unwrap_or(false) {
                " class=\"num\""
            } else {
                ""
            };
            let _ = write!(out, "<td{class}>{}</td>", inline(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

/// The report's markdown as a self-contained HTML page; `svgs` holds each
/// chart the markdown links (by its relative path), drawn inline.
///
/// Long because it is one pass over the markdown's lines, turning headings, tables and chart links into HTML as they come; the open section spans the pass.
pub fn page(md: &str, svgs: &BTreeMap<String, String>) -> String {
    let mut body = String::new();
    let lines: Vec<&str> = md.lines().collect();
    let mut i = 0;
    let mut open_section = false;
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim_start();
        if let Some((level, text)) = heading(t) {
            if level >= 2 {
                if open_section {
                    body.push_str("</section>\n");
                }
                let store =
                    store_of(text).map_or(String::new(), |s| format!(" data-store=\"{s}\""));
                let id = if text == "The answer" {
                    " id=\"answer\""
                } else {
                    ""
                };
                let _ = writeln!(body, "<section{store}{id}>");
                open_section = true;
            }
            let _ = writeln!(body, "<h{level}>{}</h{level}>", inline(text));
            i += 1;
        } else if t.starts_with('|') {
            let start = i;
            while i < lines.len() && lines[i].trim_start().starts_with('|') {
                i += 1;
            }
            table(&mut body, &lines[start..i]);
        } else if let Some(img) = t.strip_prefix("![") {
            let (title, rel) = img
                .split_once("](")
                .map_or((img, ""), |(a, b)| (a, b.trim_end_matches(')')));
            let store = store_of(title).map_or(String::new(), |s| format!(" data-store=\"{s}\""));
            let svg = svgs.get(rel).map_or_else(
                || format!("<p>(chart {} not found)</p>", escape(rel)),
                |s| s.clone(),
            );
            let _ = writeln!(
                body,
                "<figure{store} title=\"{}\">\n{svg}</figure>",
                escape(title)
            );
            i += 1;
        } else if t.starts_with("- ")
            || t.split_once(". ")
                .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
        {
            let ordered = !t.starts_with("- ");
            body.push_str(if ordered { "<ol>\n" } else { "<ul>\n" });
            while i < lines.len() {
                let l = lines[i].trim_start();
                let item = if ordered {
                    l.split_once(". ")
                        .filter(|(n, _)| n.parse::<u32>().is_ok())
                        .map(|(_, r)| r)
                } else {
                    l.strip_prefix("- ")
                };
                let Some(item) = item else { break };
                let _ = writeln!(body, "<li>{}</li>", inline(item));
                i += 1;
            }
            body.push_str(if ordered { "</ol>\n" } else { "</ul>\n" });
        } else if t.is_empty() {
            i += 1;
        } else {
            let start = i;
            while i < lines.len() {
                let l = lines[i].trim_start();
                if l.is_empty()
                    || l.starts_with('|')
                    || l.starts_with('#')
                    || l.starts_with("![")
                    || l.starts_with("- ")
                {
                    break;
                }
                i += 1;
            }
            let text: Vec<&str> = lines[start..i].iter().map(|l| l.trim()).collect();
            let _ = writeln!(body, "<p>{}</p>", inline(&text.join(" ")));
        }
    }
    if open_section {
        body.push_str("</section>\n");
    }
    let stores: String = STORES
        .iter()
        .map(|s| format!("<option value=\"{s}\">{s}</option>"))
        .collect();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>ledgerbench report</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <nav><label>store <select id=\"f-store\"><option value=\"\">all</option>{stores}</select></label>\
         <label>memory limit <select id=\"f-limit\"><option value=\"\">all</option></select></label>\
         <label>runs containing <input id=\"f-text\" placeholder=\"engine, config\" size=\"24\"></label>\
         <span>click a column heading to sort</span></nav>\n<main>\n{body}</main>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )
}

fn heading(line: &str) -> Option<(usize, &str)> {
    let level = line.chars().take_while(|c| *c == '#').count();
    (1..=4)
        .contains(&level)
        .then(|| line[level..].strip_prefix(' '))
        .flatten()
        .map(|t| (level, t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_subset_becomes_html_with_charts_inline() {
        let md = "# ledgerbench report\n\n## The answer\n\nFrom **3** runs, `process`.\n\n| store | recommended |\n|---|---:|\n| `txdata` | a \\| b |\n\n### txindex\n\n![Batch cost: txindex](charts/01-x.svg)\n\n- one\n- two\n";
        let mut svgs = BTreeMap::new();
        svgs.insert(
            "charts/01-x.svg".to_string(),
            "<svg><text>series@256MiB</text></svg>\n".to_string(),
        );
        let h = page(md, &svgs);
        assert!(h.contains("<section id=\"answer\">"), "{h}");
        assert!(h.contains("<strong>3</strong>") && h.contains("<code>process</code>"));
        assert!(h.contains("<td class=\"num\">a | b</td>"), "{h}");
        assert!(h.contains("<section data-store=\"txindex\">"));
        assert!(h.contains("<figure data-store=\"txindex\"") && h.contains("series@256MiB"));
        assert!(h.contains("<li>two</li>"));
        // Nothing is fetched: no external script, style or image.
        assert!(!h.contains("src=") && !h.contains("<link"), "{h}");
        assert!(h.contains("document.body.dataset.ready"));
    }
}
