//! GitHub Actions workflow commands: one `::error`, `::warning` or `::notice` line per
//! diagnostic, which the pull request shows on the line it names.

use super::RunView;

/// A workflow command's message: `%`, CR and LF escaped.
fn data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value: as data, and `:` and `,` too.
fn property(s: &str) -> String {
    data(s).replace(':', "%3A").replace(',', "%2C")
}

pub fn render(run: &RunView) -> String {
    let mut out = String::new();
    for e in run.shown() {
        let d = &e.diag;
        let command = match d.severity {
            "error" => "error",
            "warning" => "warning",
            _ => "notice",
        };
        out.push_str(&format!(
            "::{command} title={},file={},line={},col={},endLine={},endColumn={}::{}\n",
            property(&format!("acc2omp {}", d.rule)),
            property(&d.path),
            d.line,
            d.column,
            d.end.0.max(d.line),
            if d.end.0 > d.line {
                d.end.1
            } else {
                d.end.1.max(d.column)
            },
            data(&format!("{} [{}]", d.message, d.rule))
        ));
    }
    out
}

/// `--statistics`: a notice per rule, with its count.
pub fn render_statistics(run: &RunView) -> String {
    let mut out = String::new();
    for (rule, severity, count) in run.statistics() {
        let summary = run
            .tables
            .diagnostic(rule)
            .map_or("", |r| r.summary.as_str());
        out.push_str(&format!(
            "::notice title={}::{}\n",
            property(&format!("acc2omp {rule}")),
            data(&format!("{count} {severity}(s) [{rule}]: {summary}"))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        assert_eq!(data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(property("a:b,c%"), "a%3Ab%2Cc%25");
    }
}
