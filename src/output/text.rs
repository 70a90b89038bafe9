//! Diagnostics for people: clang-tidy's line (`path:line:col: severity: message [rule]`)
//! and, like clang, the source line with a caret under the place. Colours are ANSI styles;
//! the stream they are written to strips them when colour is off.

use super::{Entry, RunView};
use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use anstyle::{AnsiColor, Effects, Style};

const BOLD: Style = Style::new().effects(Effects::BOLD);

fn severity_style(severity: &str) -> Style {
    let c = match severity {
        "error" => AnsiColor::BrightRed,
        "warning" => AnsiColor::BrightMagenta,
        _ => AnsiColor::BrightCyan,
    };
    c.on_default().effects(Effects::BOLD)
}

/// The diagnostic line, styled.
pub fn header(e: &Entry) -> String {
    let d = &e.diag;
    let sev = severity_style(d.severity);
    format!(
        "{BOLD}{}:{}:{}:{BOLD:#} {sev}{}:{sev:#} {BOLD}{}{BOLD:#} [{}]",
        d.path, d.line, d.column, d.severity, d.message, d.rule
    )
}

/// A line of bytes as text (bytes that are not UTF-8 become U+FFFD) and, for each byte
/// offset of the line, the offset in that text.
fn lossy_line(bytes: &[u8]) -> (String, Vec<usize>) {
    let mut text = String::with_capacity(bytes.len());
    let mut map = Vec::with_capacity(bytes.len() + 1);
    for chunk in bytes.utf8_chunks() {
        let v = chunk.valid();
        for k in 0..v.len() {
            map.push(text.len() + k);
        }
        text.push_str(v);
        for _ in chunk.invalid() {
            map.push(text.len());
            text.push(char::REPLACEMENT_CHARACTER);
        }
    }
    map.push(text.len());
    (text, map)
}

/// The source line of `e` with a caret under its range (to the end of that line).
pub fn snippet(run: &RunView, e: &Entry) -> Option<String> {
    let f = &run.files[e.file?];
    let range = e.diag.range.clone()?;
    let src = f.source;
    if range.start > src.len() {
        return None;
    }
    let term = f.terminator;
    let start = src[..range.start]
        .iter()
        .rposition(|&b| b == term)
        .map_or(0, |p| p + 1);
    let mut end = src[range.start..]
        .iter()
        .position(|&b| b == term)
        .map_or(src.len(), |p| range.start + p);
    if end > start && src[end - 1] == b'\r' {
        end -= 1;
    }
    let (line, map) = lossy_line(&src[start..end]);
    let from = map[range.start - start];
    let mut to = map[range.end.clamp(range.start, end) - start];
    if to == from {
        // An empty range: a caret under the character there, if any.
        to = line[from..]
            .chars()
            .next()
            .map_or(from, |c| from + c.len_utf8());
    }
    let level = match e.diag.severity {
        "error" => Level::ERROR,
        "warning" => Level::WARNING,
        _ => Level::NOTE,
    };
    let group = Group::with_level(level).element(
        Snippet::source(line.as_str())
            .line_start(e.diag.line)
            .annotation(AnnotationKind::Primary.span(from..to)),
    );
    let renderer = Renderer::styled()
        .error(severity_style("error"))
        .warning(severity_style("warning"))
        .note(severity_style("note"));
    Some(renderer.render(&[group]).to_string())
}

/// Every shown diagnostic, with its source line unless `concise`.
pub fn render(run: &RunView, concise: bool) -> String {
    let mut out = String::new();
    for e in run.shown() {
        out.push_str(&header(e));
        out.push('\n');
        if !concise && let Some(s) = snippet(run, e) {
            out.push_str(&s);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lossy_lines_map_byte_columns() {
        let (t, m) = lossy_line(b"/* caf\xe9 */ x");
        assert_eq!(t, "/* caf\u{fffd} */ x");
        assert_eq!(m[6], 6);
        assert_eq!(m[7], 9);
        assert_eq!(m[11], 13);
        assert_eq!(m.len(), 13);
    }
}
