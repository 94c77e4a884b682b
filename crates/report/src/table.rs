//! Markdown tables: one builder for the tables ledgerbench prints at the end of
//! a run and renders in reports, escaping cells so that a label or an error
//! message holding `|` or a line break cannot break a row.

/// A markdown table under construction.
#[derive(Debug, Clone, Default)]
pub struct Table {
    header: Vec<String>,
    right: Vec<bool>,
    rows: Vec<Vec<String>>,
}

/// One cell's text, made safe inside a markdown table row.
pub fn escape(cell: &str) -> String {
    cell.replace('|', "\\|").replace(['\n', '\r'], " ")
}

impl Table {
    /// A table with these columns; a name starting with `>` is a number
    /// column, right-aligned (the `>` is not shown).
    pub fn new(columns: &[&str]) -> Self {
        Self {
            header: columns
                .iter()
                .map(|c| c.strip_prefix('>').unwrap_or(c).to_string())
                .collect(),
            right: columns.iter().map(|c| c.starts_with('>')).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells are empty, extra cells are an error of the caller's.
    pub fn row<I, S>(&mut self, cells: I) -> &mut Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut r: Vec<String> = cells.into_iter().map(|c| escape(c.as_ref())).collect();
        debug_assert!(
            r.len() <= self.header.len(),
            "{} cells for {} columns",
            r.len(),
            self.header.len()
        );
        r.resize(self.header.len(), String::new());
        self.rows.push(r);
        self
    }

    /// The same rows with only the columns at `idx`, in that order: one
    /// wide table told as several narrow ones, split by concern.
    pub fn columns(&self, idx: &[usize]) -> Table {
        let pick = |v: &[String]| {
            idx.iter()
                .map(|&i| v.get(i).cloned().unwrap_or_default())
                .collect()
        };
        Table {
            header: pick(&self.header),
            right: idx
                .iter()
                .map(|&i| self.right.get(i).copied().unwrap_or(false))
                .collect(),
            rows: self.rows.iter().map(|r| pick(r)).collect(),
        }
    }

    /// The rows added so far.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True before the first row.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as markdown, ending with a newline.
    pub fn render(&self) -> String {
        let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        let mut s = line(&self.header.iter().map(|h| escape(h)).collect::<Vec<_>>());
        let rule: Vec<String> = self
            .right
            .iter()
            .map(|r| if *r { "---:".into() } else { "---".into() })
            .collect();
        s.push_str(&format!("|{}|\n", rule.join("|")));
        for r in &self.rows {
            s.push_str(&line(r));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_with_pipes_and_line_breaks_keep_their_row() {
        let mut t = Table::new(&["run", ">n", "error"]);
        t.row(["a|b", "1", "line one\nline two"]).row(["c"]);
        let md = t.render();
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 4, "{md}");
        assert_eq!(lines[1], "|---|---:|---|");
        assert_eq!(lines[2], "| a\\|b | 1 | line one line two |");
        assert_eq!(lines[3], "| c |  |  |");
        // Every row splits into the same number of cells once escapes are honoured.
        for l in &lines {
            assert_eq!(l.replace("\\|", "").matches('|').count(), 4, "{l}");
        }
    }
}
