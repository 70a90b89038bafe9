//! Rewriting files in place, as safely as a version-control tool does.
//!
//! A file is replaced by a rename of a complete temporary file written in its directory, so
//! it is never seen half-written. Before the rename the file must still be exactly what was
//! read (same inode, size, modification time and bytes), or the write is refused: an edit
//! made during the run is never overwritten. The new file keeps the old one's permissions,
//! owner and group, and extended attributes (ACLs, SELinux labels); when the owner or group
//! cannot be kept (only root may give a file away) the file becomes the writer's and loses
//! its setuid/setgid bits, with a warning. A file with several hard links is refused (a
//! rename would split them). Temporary files are named `.NAME.acc2omp-PID-N.tmp`: hidden
//! and not C sources, so walks and diffs never take them; they are removed when the run is
//! interrupted by SIGINT, SIGTERM, SIGHUP or SIGQUIT, and a later `--write` run removes the
//! ones a killed run (SIGKILL, power loss) left in a directory it writes to.

use crate::rules::{RuleId, id};
use crate::walk::{Stamp, open_regular};
use std::collections::HashSet;
use std::ffi::{CString, OsStr, OsString};
use std::io::{Read, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Temporary files being written, removed if a signal ends the run.
static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static COUNTER: AtomicUsize = AtomicUsize::new(0);

const TEMP_INFIX: &str = ".acc2omp-";
const TEMP_SUFFIX: &str = ".tmp";

/// Why a file was not written; it is left as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// `lost-update`, `hard-link` or `io-error`.
    pub rule: RuleId,
    pub message: String,
}

impl Refused {
    fn io(what: &str, e: std::io::Error) -> Self {
        Refused {
            rule: id::IO_ERROR,
            message: format!("cannot write file: {what}: {e}"),
        }
    }
}

/// A completed write, and what of the old file could not be kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Written {
    /// Set when the owner or group could not be kept: says what changed.
    pub owner_changed: Option<String>,
}

/// One `--write` run: removes stale temporary files once per directory it writes to.
#[derive(Default)]
pub struct Writer {
    cleaned: HashSet<PathBuf>,
}

impl Writer {
    /// Replace the regular file `path` (symbolic links already resolved), which was read as
    /// `expected` with `stamp`, by `new`. Returns the stale temporary files removed first.
    pub fn replace(
        &mut self,
        path: &Path,
        stamp: &Stamp,
        expected: &[u8],
        new: &[u8],
    ) -> (Result<Written, Refused>, Vec<PathBuf>) {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let removed = if self.cleaned.insert(dir.clone()) {
            remove_stale_temps(&dir)
        } else {
            Vec::new()
        };
        (replace(path, &dir, stamp, expected, new), removed)
    }
}

fn replace(
    path: &Path,
    dir: &Path,
    stamp: &Stamp,
    expected: &[u8],
    new: &[u8],
) -> Result<Written, Refused> {
    let (mut old, meta) = open_regular(path).map_err(|e| Refused::io("cannot open it", e))?;
    if meta.nlink() > 1 {
        return Err(Refused {
            rule: id::HARD_LINK,
            message: format!(
                "file has {} hard links, which a rewrite would split; it is left unchanged (apply the --diff output to one of the names, or break the links first)",
                meta.nlink()
            ),
        });
    }
    unchanged(&mut old, &meta, stamp, expected)?;
    let name = path.file_name().unwrap_or(OsStr::new("file"));
    let temp = dir.join(temp_name(name));
    register(&temp);
    let result = write_temp(&temp, &old, &meta, new).and_then(|written| {
        hold_for_tests(&temp);
        // The last look before the rename: nothing may have changed since the run read it.
        let now = open_regular(path).map_err(|e| Refused::io("cannot open it", e))?;
        let (mut again, m) = now;
        unchanged(&mut again, &m, stamp, expected)?;
        let _guard = TEMPS.lock().unwrap_or_else(|p| p.into_inner());
        std::fs::rename(&temp, path).map_err(|e| Refused::io("cannot rename", e))?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(written)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    unregister(&temp);
    result
}

/// With `ACC2OMP_TEST_HOLD_WRITES=DIR` (for the tests of interrupted and raced writes), a
/// write stops after its temporary file is complete: it writes the temporary file's path to
/// `DIR/held` and goes on when `DIR/release` exists (or after 30 s).
fn hold_for_tests(temp: &Path) {
    let Some(dir) = std::env::var_os("ACC2OMP_TEST_HOLD_WRITES").map(PathBuf::from) else {
        return;
    };
    let _ = std::fs::write(dir.join("held"), temp.as_os_str().as_bytes());
    for _ in 0..3000 {
        if dir.join("release").exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Refuse when the file is not what was read.
fn unchanged(
    f: &mut std::fs::File,
    meta: &std::fs::Metadata,
    stamp: &Stamp,
    expected: &[u8],
) -> Result<(), Refused> {
    let lost = || Refused {
        rule: id::LOST_UPDATE,
        message: "file changed since acc2omp read it; it is left as it is now (run acc2omp again)"
            .into(),
    };
    if Stamp::of(meta) != *stamp {
        return Err(lost());
    }
    let mut now = Vec::with_capacity(expected.len());
    f.read_to_end(&mut now)
        .map_err(|e| Refused::io("cannot read it again", e))?;
    if now != expected {
        return Err(lost());
    }
    Ok(())
}

/// `.NAME.acc2omp-PID-N.tmp`.
fn temp_name(name: &OsStr) -> OsString {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut s = b".".to_vec();
    s.extend_from_slice(name.as_bytes());
    s.extend_from_slice(format!("{TEMP_INFIX}{}-{n}{TEMP_SUFFIX}", std::process::id()).as_bytes());
    OsString::from_vec(s)
}

/// The process id in a temporary file name of ours.
fn temp_pid(name: &OsStr) -> Option<u32> {
    let rest = name
        .as_bytes()
        .strip_prefix(b".")?
        .strip_suffix(TEMP_SUFFIX.as_bytes())?;
    let infix = TEMP_INFIX.as_bytes();
    let at = rest.windows(infix.len()).rposition(|w| w == infix)?;
    let tail = std::str::from_utf8(&rest[at + infix.len()..]).ok()?;
    let (pid, n) = tail.split_once('-')?;
    n.parse::<u64>().ok()?;
    pid.parse().ok()
}

fn register(temp: &Path) {
    TEMPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(temp.to_path_buf());
}

fn unregister(temp: &Path) {
    TEMPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|t| t != temp);
}

/// Write `new` to the new file `temp` with the metadata of `old`.
fn write_temp(
    temp: &Path,
    old: &std::fs::File,
    meta: &std::fs::Metadata,
    new: &[u8],
) -> Result<Written, Refused> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(temp)
        .map_err(|e| Refused::io("cannot create a temporary file", e))?;
    f.write_all(new)
        .map_err(|e| Refused::io("cannot write the temporary file", e))?;
    let fd = f.as_raw_fd();
    let mut written = Written::default();
    let mut mode = meta.mode() & 0o7777;
    let (uid, gid) = (meta.uid(), meta.gid());
    let (my_uid, my_gid) = {
        let m = f.metadata().map_err(|e| Refused::io("cannot stat", e))?;
        (m.uid(), m.gid())
    };
    if (uid, gid) != (my_uid, my_gid) && unsafe { libc::fchown(fd, uid, gid) } != 0 {
        // Not root: keep at least the group when the writer belongs to it.
        let group_kept = gid == my_gid || unsafe { libc::fchown(fd, u32::MAX, gid) } == 0;
        let (now_uid, now_gid) = (my_uid, if group_kept { gid } else { my_gid });
        if (now_uid, now_gid) != (uid, gid) {
            // A setuid/setgid program must not change hands with its bits.
            mode &= !(libc::S_ISUID | libc::S_ISGID);
            written.owner_changed = Some(format!(
                "owner {uid}:{gid} could not be kept (only root can give a file away): the file now belongs to {now_uid}:{now_gid}{}",
                if meta.mode() & 0o6000 != 0 {
                    ", without its setuid/setgid bits"
                } else {
                    ""
                }
            ));
        }
    }
    // The temporary file may have inherited attributes the old file lacks (the directory's
    // default ACL becomes its access ACL): remove them before the mode is set, since an
    // access ACL would take the group bits as its mask.
    let theirs = xattr_names(old.as_raw_fd())?;
    remove_other_xattrs(fd, &theirs)?;
    f.set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(|e| Refused::io("cannot set permissions", e))?;
    copy_xattrs(old.as_raw_fd(), fd, &theirs)?;
    f.sync_all()
        .map_err(|e| Refused::io("cannot flush the temporary file", e))?;
    Ok(written)
}

/// The names of the extended attributes of `fd`; none on a file system without them.
/// Without CAP_SYS_ADMIN the kernel does not list `trusted.*`: they cannot be kept.
fn xattr_names(fd: i32) -> Result<Vec<Vec<u8>>, Refused> {
    match xattr_list(fd) {
        Ok(list) => Ok(list
            .split(|&b| b == 0)
            .filter(|n| !n.is_empty())
            .map(<[u8]>::to_vec)
            .collect()),
        Err(e) if e.raw_os_error() == Some(libc::ENOTSUP) => Ok(Vec::new()),
        Err(e) => Err(Refused::io("cannot list extended attributes", e)),
    }
}

/// Remove from `fd` every extended attribute not named in `keep`: the new file's
/// attributes are exactly the old one's. One that cannot be removed refuses the write.
fn remove_other_xattrs(fd: i32, keep: &[Vec<u8>]) -> Result<(), Refused> {
    for name in xattr_names(fd)? {
        if keep.contains(&name) {
            continue;
        }
        let shown = String::from_utf8_lossy(&name).into_owned();
        let Ok(c) = CString::new(name) else { continue };
        if unsafe { libc::fremovexattr(fd, c.as_ptr()) } != 0 {
            let e = std::io::Error::last_os_error();
            // SELinux never lets a label be removed: the one its policy gave the new file
            // stays when the old file (created before labelling) had none.
            let label = c.as_bytes() == b"security.selinux";
            if e.raw_os_error() != Some(libc::ENODATA) && !label {
                return Err(Refused::io(
                    &format!(
                        "cannot remove extended attribute {shown} (inherited from the directory)"
                    ),
                    e,
                ));
            }
        }
    }
    Ok(())
}

/// Copy the extended attributes `names` of `from` (`user.*`, `security.selinux`, POSIX
/// ACLs, …); any that cannot be copied refuses the write.
fn copy_xattrs(from: i32, to: i32, names: &[Vec<u8>]) -> Result<(), Refused> {
    for name in names {
        let shown = String::from_utf8_lossy(name).into_owned();
        let Ok(c) = CString::new(name.as_slice()) else {
            continue;
        };
        let value = xattr_get(from, &c)
            .map_err(|e| Refused::io(&format!("cannot read extended attribute {shown}"), e))?;
        let r = unsafe { libc::fsetxattr(to, c.as_ptr(), value.as_ptr().cast(), value.len(), 0) };
        if r != 0 {
            let e = std::io::Error::last_os_error();
            return Err(Refused::io(
                &format!("cannot keep extended attribute {shown}"),
                e,
            ));
        }
    }
    Ok(())
}

/// Call `f(buffer, size)` as the xattr calls want: size first, then the data.
fn xattr_buffer(f: impl Fn(*mut libc::c_void, usize) -> isize) -> std::io::Result<Vec<u8>> {
    loop {
        let n = f(std::ptr::null_mut(), 0);
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let mut buf = vec![0u8; n as usize];
        let got = f(buf.as_mut_ptr().cast(), buf.len());
        if got >= 0 {
            buf.truncate(got as usize);
            return Ok(buf);
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::ERANGE) {
            return Err(e);
        }
    }
}

fn xattr_list(fd: i32) -> std::io::Result<Vec<u8>> {
    xattr_buffer(|p, n| unsafe { libc::flistxattr(fd, p.cast(), n) })
}

fn xattr_get(fd: i32, name: &CString) -> std::io::Result<Vec<u8>> {
    xattr_buffer(|p, n| unsafe { libc::fgetxattr(fd, name.as_ptr(), p, n) })
}

/// Remove our temporary files in `dir` whose process is gone.
fn remove_stale_temps(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let Some(pid) = temp_pid(&e.file_name()) else {
            continue;
        };
        let alive = pid == me
            || i32::try_from(pid).is_ok_and(|p| {
                let r = unsafe { libc::kill(p, 0) };
                r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
            });
        if !alive
            && e.file_type().is_ok_and(|t| t.is_file())
            && std::fs::remove_file(e.path()).is_ok()
        {
            removed.push(e.path());
        }
    }
    removed
}

/// Remove the temporary files of writes in progress when SIGINT, SIGTERM, SIGHUP or SIGQUIT
/// arrives, then end as that signal would.
pub fn clean_up_on_signals() -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP, SIGQUIT])?;
    std::thread::Builder::new()
        .name("acc2omp-signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                // Holding the lock: no rename is under way, none starts.
                let temps = TEMPS.lock().unwrap_or_else(|p| p.into_inner());
                for t in temps.iter() {
                    let _ = std::fs::remove_file(t);
                }
                let _ = signal_hook::low_level::emulate_default_handler(sig);
                std::process::exit(128 + sig);
            }
        })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(text: &str) -> (tempfile::TempDir, PathBuf, Stamp, Vec<u8>) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f.c");
        std::fs::write(&p, text).unwrap();
        let (bytes, stamp) = crate::walk::read(&p).unwrap();
        (d, p, stamp, bytes)
    }

    #[test]
    fn keeps_permissions_and_leaves_no_temp() {
        let (d, p, _, _) = setup("old");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        let (bytes, stamp) = crate::walk::read(&p).unwrap();
        let (r, _) = Writer::default().replace(&p, &stamp, &bytes, b"new");
        assert_eq!(r, Ok(Written::default()));
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o7777, 0o640);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn refuses_a_file_changed_since_it_was_read() {
        let (d, p, stamp, bytes) = setup("old");
        // Same size, new bytes (the modification time may not even move).
        std::fs::write(&p, "new").unwrap();
        let (r, _) = Writer::default().replace(&p, &stamp, &bytes, b"ours");
        assert_eq!(r.unwrap_err().rule, id::LOST_UPDATE);
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn refuses_hard_links() {
        let (d, p, _, _) = setup("old");
        std::fs::hard_link(&p, d.path().join("g.c")).unwrap();
        let (bytes, stamp) = crate::walk::read(&p).unwrap();
        let (r, _) = Writer::default().replace(&p, &stamp, &bytes, b"new");
        let e = r.unwrap_err();
        assert_eq!(e.rule, id::HARD_LINK);
        assert!(e.message.contains("2 hard links"), "{}", e.message);
        assert_eq!(std::fs::read(d.path().join("g.c")).unwrap(), b"old");
    }

    #[test]
    fn keeps_extended_attributes() {
        let (_d, p, _, _) = setup("old");
        let c = CString::new(p.as_os_str().as_bytes()).unwrap();
        let name = CString::new("user.acc2omp-test").unwrap();
        let set = unsafe { libc::setxattr(c.as_ptr(), name.as_ptr(), b"v1".as_ptr().cast(), 2, 0) };
        if set != 0 {
            // tmpfs without user xattrs: nothing to test here, the write must still work.
            eprintln!(
                "user xattrs unsupported here: {}",
                std::io::Error::last_os_error()
            );
            return;
        }
        let (bytes, stamp) = crate::walk::read(&p).unwrap();
        let (r, _) = Writer::default().replace(&p, &stamp, &bytes, b"new");
        r.unwrap();
        let f = std::fs::File::open(&p).unwrap();
        assert_eq!(xattr_get(f.as_raw_fd(), &name).unwrap(), b"v1");
    }

    #[test]
    fn stale_temps_of_dead_processes_are_removed() {
        let (d, p, stamp, bytes) = setup("old");
        // A pid that cannot be alive (above the kernel's maximum).
        let stale = d.path().join(".f.c.acc2omp-2147483647-0.tmp");
        let live = d
            .path()
            .join(format!(".f.c.acc2omp-{}-99.tmp", std::process::id()));
        let other = d.path().join(".f.c.acc2omp-x.tmp");
        for f in [&stale, &live, &other] {
            std::fs::write(f, "t").unwrap();
        }
        let (r, removed) = Writer::default().replace(&p, &stamp, &bytes, b"new");
        r.unwrap();
        assert_eq!(removed, std::slice::from_ref(&stale));
        assert!(!stale.exists() && live.exists() && other.exists());
    }

    #[test]
    fn temp_names_are_recognised() {
        let n = temp_name(OsStr::new("a b.c"));
        assert_eq!(temp_pid(&n), Some(std::process::id()));
        assert!(!crate::walk::is_source(Path::new(&n)));
        assert_eq!(temp_pid(OsStr::new(".x.acc2omp-12-3.tmp")), Some(12));
        assert_eq!(temp_pid(OsStr::new("x.acc2omp-12.tmp")), None);
        assert_eq!(
            temp_pid(OsStr::from_bytes(b".\xe9.acc2omp-7-1.tmp")),
            Some(7)
        );
    }
}
