//! One file a run reads, whoever gives it: what kind of file it is (for messages), opened
//! without blocking and read only when regular, up to a limit (`FileTooLarge` above it), and
//! the stamp a later write checks.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// What kind of file `t` is, for messages.
pub fn kind(t: &std::fs::FileType) -> &'static str {
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

/// What a file was when it was read: a later write checks it is still so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime: (i64, i64),
}

impl Stamp {
    pub fn of(m: &std::fs::Metadata) -> Self {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime: (m.mtime(), m.mtime_nsec()),
        }
    }
}

/// Open a regular file for reading without blocking on a FIFO or device.
pub fn open_regular(path: &Path) -> std::io::Result<(std::fs::File, std::fs::Metadata)> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let m = f.metadata()?;
    if !m.is_file() {
        return Err(std::io::Error::other(format!(
            "{}, not a regular file",
            kind(&m.file_type())
        )));
    }
    Ok((f, m))
}

/// A regular file's bytes and stamp, refused (`FileTooLarge`) above `limit` bytes: checked
/// before reading and again while reading (a file that grows meanwhile).
pub fn read(path: &Path, limit: u64) -> std::io::Result<(Vec<u8>, Stamp)> {
    let (f, m) = open_regular(path)?;
    if m.len() > limit {
        return Err(too_large(m.len(), limit));
    }
    let mut bytes = Vec::with_capacity(m.len() as usize);
    f.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64, limit));
    }
    Ok((bytes, Stamp::of(&m)))
}

/// Limit on the files a repository gives besides its sources: configurations, rules files,
/// response files and ignore files (a configuration is a few KiB).
pub const SETTINGS_LIMIT: u64 = 16 << 20;
/// Limit on a compilation database (one of 100,000 entries is about 50 MiB).
pub const DATABASE_LIMIT: u64 = 1 << 30;

/// A file a repository gives besides its sources, as text: a regular file (a FIFO or a
/// device is refused, never opened in a way that blocks) of at most `limit` bytes.
pub fn read_text(path: &Path, limit: u64) -> std::io::Result<String> {
    let (bytes, _) = read(path, limit)?;
    String::from_utf8(bytes).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "stream did not contain valid UTF-8",
        )
    })
}

fn too_large(size: u64, limit: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::FileTooLarge,
        format!(
            "{}, more than the {} limit",
            size_text(size),
            size_text(limit)
        ),
    )
}

/// `512 bytes`, `3.2 MiB`, `1 GiB`.
pub fn size_text(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} bytes");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    let shown = format!("{v:.1}");
    let shown = shown.strip_suffix(".0").unwrap_or(&shown);
    format!("{shown} {}", UNITS[unit])
}
