//! Diagnostics in the style of rustc: `FILE:LINE:COL: error: MESSAGE`, the source line, a caret
//! under the column and an optional hint. Every front end reports through these.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub col: usize,
    pub message: String,
    /// The whole source line the error is on (without the newline).
    pub source_line: String,
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn new(source: &str, line: usize, col: usize, message: impl Into<String>) -> Diagnostic {
        let source_line = source
            .lines()
            .nth(line.saturating_sub(1))
            .unwrap_or("")
            .to_string();
        Diagnostic {
            line,
            col,
            message: message.into(),
            source_line,
            hint: None,
        }
    }

    /// A diagnostic at a byte offset into `source`.
    pub fn at_offset(source: &str, offset: usize, message: impl Into<String>) -> Diagnostic {
        let offset = offset.min(source.len());
        let before = &source[..floor_char_boundary(source, offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        Diagnostic::new(source, line, col, message)
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    /// Renders the diagnostic for a named file, rustc style.
    pub fn render(&self, file: &str) -> String {
        let mut out = format!(
            "{file}:{}:{}: error: {}\n",
            self.line, self.col, self.message
        );
        let gutter = self.line.to_string().len();
        out.push_str(&format!("{:gutter$} |\n", ""));
        out.push_str(&format!("{} | {}\n", self.line, self.source_line));
        let pad: String = self
            .source_line
            .chars()
            .take(self.col.saturating_sub(1))
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        out.push_str(&format!("{:gutter$} | {pad}^\n", ""));
        if let Some(hint) = &self.hint {
            out.push_str(&format!("{:gutter$} = hint: {hint}\n", ""));
        }
        out
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// All diagnostics of one failed assembly, in source order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsmErrors(pub Vec<Diagnostic>);

impl AsmErrors {
    pub fn render(&self, file: &str) -> String {
        let mut out: String = self.0.iter().map(|d| d.render(file)).collect();
        let n = self.0.len();
        out.push_str(&format!(
            "error: could not assemble {file}: {n} error{}\n",
            if n == 1 { "" } else { "s" }
        ));
        out
    }
}

impl fmt::Display for AsmErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render("<input>"))
    }
}

impl std::error::Error for AsmErrors {}

/// Names from `candidates` closest to `word` by edit distance, for "did you mean" hints.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let word = word.to_ascii_uppercase();
    let mut scored: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|c| (edit_distance(&word, &c.to_ascii_uppercase()), c))
        .collect();
    scored.sort();
    let best = scored.first().map_or(usize::MAX, |s| s.0);
    let limit = (word.len() / 2).max(2);
    scored
        .into_iter()
        .filter(|(d, _)| *d <= limit && *d <= best + 1)
        .take(3)
        .map(|(_, c)| c)
        .collect()
}

/// Levenshtein distance between `a` and `b` (by characters, case as given).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_caret_under_column() {
        let src = ".kernel k\n    IADX R1, R2, R3\n";
        let d =
            Diagnostic::at_offset(src, 14, "unknown opcode `IADX`").with_hint("did you mean IADD?");
        assert_eq!((d.line, d.col), (2, 5));
        assert_eq!(
            d.render("k.sasm"),
            "k.sasm:2:5: error: unknown opcode `IADX`\n  |\n2 |     IADX R1, R2, R3\n  |     ^\n  = hint: did you mean IADD?\n"
        );
    }

    #[test]
    fn nearest_names() {
        let names = ["IADD", "ISUB", "IMAD", "FADD", "EXIT"];
        assert_eq!(nearest("IADX", names)[0], "IADD");
        assert!(nearest("QQQQQQQQ", names).is_empty());
    }
}
