//! Unified diffs and atomic in-place writes.

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
}
