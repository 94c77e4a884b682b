//! Just enough markdown for the docs test: fenced blocks, links outside
//! code, heading anchors, and the shell words of a command line.

use std::path::{Path, PathBuf};

/// A fenced code block.
pub struct Block {
    /// The info string's words: the language first, then markers such as
    /// `run` and `norun`.
    pub info: Vec<String>,
    /// Line number of the opening fence, 1-based.
    pub line: usize,
    /// The block's text.
    pub text: String,
}

impl Block {
    /// Whether the info string carries `word`.
    pub fn has(&self, word: &str) -> bool {
        self.info.iter().any(|w| w == word)
    }

    /// A shell block (the only kind whose commands are checked).
    pub fn is_shell(&self) -> bool {
        matches!(
            self.info.first().map(String::as_str),
            Some("sh" | "bash" | "shell" | "console")
        )
    }
}

/// The fenced blocks of a markdown text, and the text outside them.
pub fn split(text: &str) -> (Vec<Block>, String) {
    let mut blocks = Vec::new();
    let mut prose = String::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        let fence = line.trim_start().starts_with("```");
        match (&mut open, fence) {
            (None, true) => {
                let info = line.trim_start().trim_start_matches('`');
                open = Some(Block {
                    info: info
                        .split([' ', ','])
                        .filter(|w| !w.is_empty())
                        .map(str::to_string)
                        .collect(),
                    line: i + 1,
                    text: String::new(),
                });
                prose.push('\n');
            }
            (Some(_), true) => {
                blocks.push(open.take().expect("open block"));
                prose.push('\n');
            }
            (Some(b), false) => {
                b.text.push_str(line);
                b.text.push('\n');
                prose.push('\n');
            }
            (None, false) => {
                prose.push_str(line);
                prose.push('\n');
            }
        }
    }
    (blocks, prose)
}

/// Prose with inline code spans blanked, so a link written inside
/// backticks is not taken for one.
fn without_code_spans(prose: &str) -> String {
    let mut out = String::with_capacity(prose.len());
    let mut in_code = false;
    for c in prose.chars() {
        if c == '`' {
            in_code = !in_code;
            out.push(' ');
        } else if in_code && c != '\n' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// Every inline link target `[text](target)` in `prose`, with its line.
pub fn links(prose: &str) -> Vec<(usize, String)> {
    let mut v = Vec::new();
    for (i, line) in without_code_spans(prose).lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let tail = &rest[at + 2..];
            let Some(end) = tail.find(')') else { break };
            let target = tail[..end].trim();
            if !target.is_empty() && !target.contains(' ') {
                v.push((i + 1, target.to_string()));
            }
            rest = &tail[end..];
        }
    }
    v
}

/// The anchor a heading gets on GitHub and in mdBook: lower case, letters,
/// digits, `-` and `_` kept, spaces made `-`, everything else dropped.
pub fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a markdown file's headings.
pub fn anchors(text: &str) -> Vec<String> {
    let (_, prose) = split(text);
    prose
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

/// A shell line's words, quotes removed (`'a b'` and `"a b"` are one word);
/// `None` when a quote is left open.
pub fn words(line: &str) -> Option<Vec<String>> {
    let mut v = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    v.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if quote.is_some() {
        return None;
    }
    if any || !cur.is_empty() {
        v.push(cur);
    }
    Some(v)
}

/// A block's commands: continuation lines joined, `$ ` prompts and
/// trailing `# comments` removed, blank and comment lines dropped. In a
/// `console` block only the prompted lines are commands.
pub fn commands(block: &Block) -> Vec<String> {
    let console = block.info.first().is_some_and(|l| l == "console");
    let mut out = Vec::new();
    let mut joined = String::new();
    for line in block.text.lines() {
        let line = if console {
            match line.strip_prefix("$ ") {
                Some(l) => l,
                None if !joined.is_empty() => line,
                None => continue,
            }
        } else {
            line
        };
        let code = strip_comment(line).trim_end();
        if let Some(head) = code.strip_suffix('\\') {
            joined.push_str(head);
            joined.push(' ');
            continue;
        }
        joined.push_str(code);
        let cmd = std::mem::take(&mut joined).trim().to_string();
        if !cmd.is_empty() {
            out.push(cmd);
        }
    }
    out
}

/// `line` without a trailing `# comment` (a `#` after whitespace and
/// outside quotes).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '#') if prev_space => return &line[..i],
            _ => {}
        }
        prev_space = c.is_whitespace();
    }
    line
}

/// The `ledgerbench` invocations in a command: each part of a pipeline or
/// `&&` list that starts with `ledgerbench`, as words.
pub fn invocations(cmd: &str) -> Vec<Vec<String>> {
    let mut v = Vec::new();
    for part in cmd
        .split("&&")
        .flat_map(|p| p.split(" | "))
        .flat_map(|p| p.split(';'))
    {
        // A redirect ends the command's own words (`2>&1` is no file).
        let part = part.replace("2>&1", "").replace(">&2", "");
        let part = part.split(['>', '<']).next().unwrap_or("");
        let Some(w) = words(part) else { continue };
        let start = w
            .iter()
            .position(|w| w == "ledgerbench" || w.ends_with("/ledgerbench") && !w.starts_with('-'));
        if let Some(s) = start {
            v.push(w[s + 1..].to_vec());
        }
    }
    v
}

/// Every markdown file the docs test reads, relative to the repository.
pub fn files(root: &Path) -> Vec<PathBuf> {
    let mut v = vec![PathBuf::from("README.md"), PathBuf::from("ARCHITECTURE.md")];
    for dir in ["docs/src", "results", "examples", "fixtures"] {
        // Fixtures are inputs (a report's snapshot lacks its charts): only
        // their READMEs are docs.
        let readme_only = dir == "fixtures";
        for e in walk(&root.join(dir)) {
            let readme = e.file_name().is_some_and(|n| n == "README.md");
            if e.extension().is_some_and(|x| x == "md") && (readme || !readme_only) {
                v.push(e.strip_prefix(root).expect("under root").to_path_buf());
            }
        }
    }
    v.sort();
    v
}

/// Every file under `dir`, depth first.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            v.extend(walk(&p));
        } else {
            v.push(p);
        }
    }
    v
}
