#!/usr/bin/env python3
"""The house rules that a reader can check and a reviewer forgets.

    scripts/rules.py            checks the tracked Rust sources; exit 1 on a breach

- no source file over 500 lines;
- no non-test function over 80 lines unless its doc says why, with a line
  starting "Long because";
- no `Result<_, String>` outside ALLOWED_STRING_ERRORS (errors are types
  that say what went wrong; a String cannot be matched on).

Test and benchmark code is exempt from the function and error rules:
files under a `tests/` directory or `benches/`, `tests.rs` modules and
`#[cfg(test)]` modules. The scan is lexical (comments, strings and char
literals skipped, braces counted), which is enough for rustfmt-formatted
code; before the tree, it checks itself on made-up sources, so a scan
that stopped seeing functions fails instead of passing everything.
"""

import re
import subprocess
import sys
from pathlib import Path

MAX_FILE_LINES = 500
MAX_FN_LINES = 80
REASON = "Long because"
# Files whose `Result<_, String>` is deliberate, each with why.
ALLOWED_STRING_ERRORS = {
    # A frame's private cursor: each message becomes a typed trace error
    # that names the frame's offset.
    "crates/trace/src/reader.rs",
    # The Go library's loader: its reason is kept once (a OnceLock) and
    # cloned into every Go open's typed error.
    "crates/gokv/src/golib.rs",
}

FN_RE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+\"C\"\s+)?fn\s+(\w+)")
STRING_ERR_RE = re.compile(r"Result<[^;{}]*?,\s*String\s*>")


def blank_literals(text):
    """`text` with comments, strings and char literals replaced by spaces
    (newlines kept), so braces and `fn` are only the code's."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif re.match(r'(?:b?r)(#*)"', text[i:i + 40]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'(?:b?r)(#*)"', text[i:])
            end = '"' + m.group(1)
            j = text.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"' or (c == "b" and text.startswith('b"', i) and (i == 0 or not text[i - 1].isalnum())):
            j = i + (2 if c == "b" else 1)
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            # A char literal ('x', '\n', '\u{..}', b'x'); else a lifetime.
            m = re.match(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'", text[i:])
            if m:
                out.append(" " * m.end())
                i += m.end()
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def test_ranges(code_lines):
    """Line ranges (0-based, inclusive) of `#[cfg(test)]` items."""
    ranges = []
    for i, line in enumerate(code_lines):
        if line.strip() == "#[cfg(test)]":
            end = block_end(code_lines, i + 1)
            if end is not None:
                ranges.append((i, end))
    return ranges


def block_end(code_lines, start):
    """The line where the item starting at `start` closes its braces, or the
    line of a `;` that ends it first (a `mod tests;`)."""
    depth, opened = 0, False
    for j in range(start, len(code_lines)):
        for ch in code_lines[j]:
            if ch == "{":
                depth, opened = depth + 1, True
            elif ch == "}":
                depth -= 1
                if opened and depth == 0:
                    return j
            elif ch == ";" and not opened:
                return j
    return None


def doc_above(lines, i):
    """The doc comment and attributes just above line `i`."""
    doc = []
    j = i - 1
    while j >= 0 and (lines[j].strip().startswith("///") or lines[j].strip().startswith("#[")):
        doc.append(lines[j].strip())
        j -= 1
    return " ".join(reversed(doc))


def is_test_file(path):
    return "/tests/" in f"/{path}" or path.endswith("/tests.rs") or path.startswith("benches/")


def check(path, text):
    """The breaches of `path`."""
    found = []
    lines = text.split("\n")
    count = len(lines) - (1 if text.endswith("\n") else 0)
    if count > MAX_FILE_LINES:
        found.append(f"{path}: {count} lines (most {MAX_FILE_LINES}): split it by concern")
    if is_test_file(path):
        return found
    code = blank_literals(text).split("\n")
    tests = test_ranges(code)
    in_test = lambda i: any(a <= i <= b for a, b in tests)
    for i, line in enumerate(code):
        m = FN_RE.match(line)
        if not m or in_test(i):
            continue
        end = block_end(code, i)
        if end is None or code[end].rstrip().endswith(";") and "{" not in "".join(code[i:end + 1]):
            continue  # a declaration without a body (a trait's)
        length = end - i + 1
        if length > MAX_FN_LINES and REASON not in doc_above(lines, i):
            found.append(
                f"{path}:{i + 1}: fn {m.group(1)} is {length} lines (most {MAX_FN_LINES}): "
                f"split it by step, or say why in its doc (a line starting \"{REASON}\")"
            )
    if path not in ALLOWED_STRING_ERRORS:
        for i, line in enumerate(code):
            if STRING_ERR_RE.search(line) and not in_test(i):
                found.append(
                    f"{path}:{i + 1}: Result<_, String>: give the error a type "
                    f"(or add the file to ALLOWED_STRING_ERRORS in scripts/rules.py, with why)"
                )
    return found


def self_check():
    """Breaches the scan must see, and the same code kept by the rules."""
    body = "    let x = 1;\n" * MAX_FN_LINES
    long_fn = f"pub fn long() {{\n    let s = \"}}{{\";\n{body}}}\n"
    reasoned = f"/// {REASON} a table.\n" + long_fn
    in_test = "#[cfg(test)]\nmod tests {\n" + long_fn + "}\n"
    string_err = "fn f() -> Result<(), String> {\n    Ok(())\n}\n"
    must = {
        "crates/x/src/a.rs": (long_fn, True),
        "crates/x/src/b.rs": (reasoned, False),
        "crates/x/src/c.rs": (in_test, False),
        "crates/x/tests/d.rs": (long_fn, False),
        "crates/x/src/e.rs": (string_err, True),
        "crates/x/src/f.rs": ("\n" * (MAX_FILE_LINES + 1), True),
    }
    for path, (text, breach) in must.items():
        if bool(check(path, text)) != breach:
            return f"{path}: expected {'a breach' if breach else 'none'}, got {check(path, text)}"
    return None


def main():
    broken = self_check()
    if broken:
        print(f"rules: the checker itself is broken: {broken}", file=sys.stderr)
        return 2
    root = Path(__file__).resolve().parent.parent
    files = subprocess.run(
        ["git", "ls-files", "*.rs"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split()
    found = []
    for f in files:
        found += check(f, (root / f).read_text())
    for line in found:
        print(f"rules: {line}", file=sys.stderr)
    if found:
        print(f"rules: {len(found)} breaches of the house rules (CONTRIBUTING: docs/src/contributing.md)", file=sys.stderr)
        return 1
    print(f"rules: {len(files)} Rust files keep the house rules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
