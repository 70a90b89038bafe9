//! Unified diffs, clang-tidy fix files and atomic in-place writes.

use similar::TextDiff;
use std::io::Write;
use std::path::Path;

/// A unified diff with `a/` and `b/` prefixes that `git apply` accepts.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    let diff = TextDiff::from_lines(old, new);
    let mut out = diff.unified_diff();
    out.context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"));
    out.to_string()
}

/// One replacement of the original bytes `offset..offset + length`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    pub offset: usize,
    pub length: usize,
    pub text: String,
}

/// The replacements that turn `old` into `new`, one per changed run of lines.
pub fn replacements(old: &str, new: &str) -> Vec<Replacement> {
    let diff = TextDiff::from_lines(old, new);
    let olds: Vec<&str> = diff.iter_old_slices().collect();
    let news: Vec<&str> = diff.iter_new_slices().collect();
    let offset = |line: usize| olds[..line].iter().map(|l| l.len()).sum::<usize>();
    diff.ops()
        .iter()
        .filter(|op| op.tag() != similar::DiffTag::Equal)
        .map(|op| {
            let (o, n) = (op.old_range(), op.new_range());
            Replacement {
                offset: offset(o.start),
                length: olds[o].iter().map(|l| l.len()).sum(),
                text: news[n].concat(),
            }
        })
        .collect()
}

/// clang-tidy's `--export-fixes` YAML, which `clang-apply-replacements` applies: one
/// diagnostic per changed file (`files`: path, original, translation).
pub fn fixes_yaml(files: &[(String, &str, &str)]) -> String {
    // YAML's double-quoted scalars accept JSON string syntax.
    let q = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    let mut y = String::from("---\nMainSourceFile:  ''\nDiagnostics:\n");
    for (path, old, new) in files {
        y.push_str("  - DiagnosticName:  acc2omp-migrate\n    DiagnosticMessage:\n");
        y.push_str("      Message:         'OpenACC migrated to OpenMP'\n");
        y.push_str(&format!(
            "      FilePath:        {}\n      FileOffset:      0\n",
            q(path)
        ));
        y.push_str("      Replacements:\n");
        for r in replacements(old, new) {
            y.push_str(&format!(
                "        - FilePath:        {}\n          Offset:          {}\n          Length:          {}\n          ReplacementText: {}\n",
                q(path),
                r.offset,
                r.length,
                q(&r.text)
            ));
        }
        y.push_str("    Level:           Warning\n");
    }
    y.push_str("...\n");
    y
}

/// Replace `path` with `text`: a temporary file in the same directory, then a rename, so
/// the file is never half-written. Permissions are kept.
pub fn write_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let perms = std::fs::metadata(path)?.permissions();
    let mut tmp = tempfile::Builder::new()
        .prefix(".acc2omp-")
        .tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.as_file().set_permissions(perms)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_has_git_headers_and_no_newline_marker() {
        let d = unified_diff("x.c", "a\nb", "a\nc");
        assert!(d.starts_with("--- a/x.c\n+++ b/x.c\n@@"), "{d}");
        assert!(d.contains("\\ No newline at end of file"), "{d}");
    }

    #[test]
    fn atomic_write_keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.c");
        std::fs::write(&p, "old").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomic(&p, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(
            std::fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn replacements_rebuild_the_new_text() {
        let old = "a\r\n#pragma acc parallel\r\nb\nc";
        let new = "a\r\n#pragma omp target\r\nb\nc!";
        let mut out = old.to_string();
        for r in replacements(old, new).iter().rev() {
            out.replace_range(r.offset..r.offset + r.length, &r.text);
        }
        assert_eq!(out, new);
        let y = fixes_yaml(&[("/p/x \"q\".c".into(), old, new)]);
        assert!(y.contains("FilePath:        \"/p/x \\\"q\\\".c\""), "{y}");
        assert!(
            y.contains("ReplacementText: \"#pragma omp target\\r\\n\""),
            "{y}"
        );
        assert!(y.ends_with("...\n"));
    }
}
