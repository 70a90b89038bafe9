//! The result cache, as ruff has one: a file's translation is kept on disk and a later run
//! reads it back instead of translating the file again.
//!
//! An entry's key is a hash of everything the translation depends on: the build (version
//! and build id), the libclang used (or why none), the file's settings (the options and
//! tables of its configuration), its compile flags, its path and its bytes. The entry also
//! lists the headers libclang read, with a hash of each one's content, and is used only while
//! they all hash the same. A result whose facts depend on more (a header that was not found,
//! a parse that failed) is not kept.
//!
//! A Fortran file's entry made with flang's symbols lists what flang read the same way (the
//! `.mod` files, transitively; the module sources compiled for it; the files they and the
//! file include), and besides: the paths flang looked at first and found nothing (a `.mod`
//! or include created there later is read instead), each of which must still not exist, and
//! the directories whose sources were searched for a module's, whose digest (which source
//! defines and uses which module) must be the same.
//!
//! Entries are data read from disk, so each is checked before use: its checksum and key, every
//! offset against the file, every rule id; anything else is a miss, never an error. Entries
//! are written to a temporary file and renamed, so concurrent runs see whole entries or
//! none. The cache is bounded: each of its 256 directories keeps its share of the size limit,
//! the least recently used entries removed first.

use crate::diag::Diagnostic;
use crate::engine::FileOutcome;
use crate::facts::{Inputs, Mode};
use crate::fix::{Fix, Replacement};
use crate::rules::{Severity, Tables};
use crate::semantic::wire::{Reader, Writer};
use crate::source::LineIndex;
use std::collections::{BTreeSet, HashMap};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

/// The entries' directory under the cache directory; a new format gets a new one.
const ENTRIES: &str = "migrate-v2";
const MAGIC: &[u8] = b"acc2omp cache 2\n";
/// Default size limit (`ACC2OMP_CACHE_MAX_SIZE` changes it).
const DEFAULT_MAX_SIZE: u64 = 512 << 20;
/// No entry or header larger than this is read.
const MAX_FILE: u64 = 256 << 20;
/// Directories, by the first byte of the key.
const SHARDS: u64 = 256;
/// What an entry's dependency is: a file whose content hashes the same,
const FILE: u64 = 0;
/// a path that does not exist,
const ABSENT: u64 = 1;
/// a directory whose Fortran sources define and use the same modules.
const MODULE_DIR: u64 = 2;

/// The cache directory when neither `--cache-dir` nor `ACC2OMP_CACHE_DIR` names one:
/// `$XDG_CACHE_HOME/acc2omp`, else `~/.cache/acc2omp`.
pub fn default_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let home = || {
        std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .map(|h| h.join(".cache"))
    };
    Some(xdg.or_else(home)?.join("acc2omp"))
}

/// The size limit: `ACC2OMP_CACHE_MAX_SIZE` (bytes, or with a `K`, `M` or `G` suffix).
fn max_size() -> u64 {
    std::env::var("ACC2OMP_CACHE_MAX_SIZE")
        .ok()
        .and_then(|v| parse_size(&v))
        .unwrap_or(DEFAULT_MAX_SIZE)
}

fn parse_size(v: &str) -> Option<u64> {
    let v = v.trim();
    let (digits, unit) = match v.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&v[..i], c.to_ascii_uppercase()),
        _ => (v, 'B'),
    };
    let shift = match unit {
        'K' => 10,
        'M' => 20,
        'G' => 30,
        _ => 0,
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// Remove the entries a cache directory holds (and the directory when nothing else is in
/// it). Returns whether there was anything to remove.
pub fn clean(dir: &Path) -> std::io::Result<bool> {
    let Ok(list) = std::fs::read_dir(dir) else {
        return Ok(false);
    };
    let mut removed = false;
    for e in list.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("migrate-v") && e.file_type().is_ok_and(|t| t.is_dir()) {
            std::fs::remove_dir_all(e.path())?;
            removed = true;
        }
    }
    // The markers this module writes; other files (and the directory) stay when present.
    let mut rest = std::fs::read_dir(dir)?.flatten().map(|e| e.file_name());
    if rest.all(|n| n == ".gitignore" || n == "CACHEDIR.TAG") {
        std::fs::remove_dir_all(dir)?;
        removed = true;
    }
    Ok(removed)
}

/// A hash of one file's inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key([u8; 32]);

impl Key {
    fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// What hashing one header gave: its hash, and whether it was modified after the run
/// started (its content may not be what libclang read).
#[derive(Clone, Copy)]
struct Hashed {
    hash: Option<[u8; 32]>,
    recent: bool,
}

/// The cache of one run.
pub struct Cache {
    /// `<cache directory>/migrate-v1`.
    entries: PathBuf,
    root: PathBuf,
    /// The build and libclang, hashed.
    run: [u8; 32],
    max_size: u64,
    started: SystemTime,
    /// Headers hashed in this run.
    headers: Mutex<HashMap<PathBuf, Hashed>>,
    /// Directories this run wrote to (pruned at the end).
    written: Mutex<BTreeSet<u8>>,
    temp: AtomicUsize,
    pub hits: AtomicUsize,
    pub misses: AtomicUsize,
}

/// Length-prefixed fields, so that no two inputs hash alike by shifting a boundary.
fn field(h: &mut blake3::Hasher, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

impl Cache {
    /// The cache in directory `root` for a run with `libclang` (a description of the library
    /// used, or why none is).
    pub fn new(root: &Path, libclang: &str) -> Cache {
        let mut h = blake3::Hasher::new();
        field(&mut h, MAGIC);
        field(&mut h, env!("CARGO_PKG_VERSION").as_bytes());
        field(&mut h, env!("ACC2OMP_BUILD_ID").as_bytes());
        field(&mut h, libclang.as_bytes());
        Cache {
            entries: root.join(ENTRIES),
            root: root.to_path_buf(),
            run: *h.finalize().as_bytes(),
            max_size: max_size(),
            started: SystemTime::now(),
            headers: Mutex::default(),
            written: Mutex::default(),
            temp: AtomicUsize::new(0),
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.root
    }

    /// The key of the file at `path` (absolute, links resolved) with bytes `bytes`,
    /// translated with settings `settings` (a hash of them) and compile flags `flags`.
    pub fn key(
        &self,
        settings: &[u8; 32],
        flags: &[String],
        found_db: bool,
        path: &Path,
        bytes: &[u8],
    ) -> Key {
        use std::os::unix::ffi::OsStrExt;
        let mut h = blake3::Hasher::new();
        h.update(&self.run);
        h.update(settings);
        h.update(&(flags.len() as u64).to_le_bytes());
        for f in flags {
            field(&mut h, f.as_bytes());
        }
        h.update(&[u8::from(found_db)]);
        field(&mut h, path.as_os_str().as_bytes());
        field(&mut h, bytes);
        Key(*h.finalize().as_bytes())
    }

    fn path_of(&self, key: &Key) -> PathBuf {
        let hex = key.hex();
        self.entries.join(&hex[..2]).join(&hex[2..])
    }

    /// The hash of a header's content (once per run).
    fn header(&self, path: &Path) -> Hashed {
        if let Some(h) = self.headers.lock().ok().and_then(|m| m.get(path).copied()) {
            return h;
        }
        let hashed = match read_regular(path) {
            Some((bytes, modified)) => Hashed {
                hash: Some(*blake3::hash(&bytes).as_bytes()),
                recent: modified.is_none_or(|m| m >= self.started),
            },
            None => Hashed {
                hash: None,
                recent: false,
            },
        };
        if let Ok(mut m) = self.headers.lock() {
            m.insert(path.to_path_buf(), hashed);
        }
        hashed
    }

    /// The translation kept for `key` of the file whose bytes are `input`, if any and valid.
    pub fn get(&self, key: &Key, input: &[u8], tables: &Tables) -> Option<FileOutcome> {
        let path = self.path_of(key);
        let found =
            read_regular(&path).and_then(|(bytes, _)| self.decode(key, input, tables, &bytes));
        match found {
            Some(out) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                // Recently used: pruning removes the oldest first.
                if let Ok(f) = std::fs::File::open(&path) {
                    let _ = f.set_modified(SystemTime::now());
                }
                Some(out)
            }
            None => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    fn decode(
        &self,
        key: &Key,
        input: &[u8],
        tables: &Tables,
        bytes: &[u8],
    ) -> Option<FileOutcome> {
        use std::os::unix::ffi::OsStrExt;
        let body = bytes.strip_prefix(MAGIC)?;
        let (body, sum) = body.split_at_checked(body.len().checked_sub(32)?)?;
        if blake3::hash(body).as_bytes() != sum {
            return None;
        }
        let (stored, body) = body.split_at_checked(32)?;
        if stored != key.0 {
            return None;
        }
        let mut r = Reader::new(body);
        let deps = r.list(|r| {
            let kind = r.uint()?;
            let path = PathBuf::from(std::ffi::OsStr::from_bytes(r.bytes()?));
            let hash: [u8; 32] = r.bytes()?.try_into().ok()?;
            Some((kind, path, hash))
        })?;
        let mut inputs = Inputs::default();
        for (kind, path, hash) in deps {
            let holds = match kind {
                FILE => self.header(&path).hash == Some(hash),
                ABSENT => !path.exists(),
                MODULE_DIR => crate::fortran::flang::module_sources_digest(&path) == hash,
                _ => false,
            };
            if !holds {
                return None;
            }
            match kind {
                FILE => inputs.files.push(path),
                ABSENT => inputs.absent.push(path),
                _ => inputs.module_dirs.push(path),
            }
        }
        let out = decode_outcome(&mut r, input, tables)?;
        r.at_end().then_some(FileOutcome { inputs, ..out })
    }

    /// Keep `out`, the translation of the file whose bytes are `input`, under `key` (unless
    /// it depends on more than the key and its headers).
    pub fn put(&self, key: &Key, input: &[u8], out: &FileOutcome, tables: &Tables) {
        use std::os::unix::ffi::OsStrExt;
        let limit = MAX_FILE.min(self.max_size / SHARDS);
        // An entry holds at least its texts: one that could not be kept is not encoded (a
        // file of 100,000 directives spent 4% of its run on an entry 4x the limit).
        if out.inputs.incomplete || least_size(out) > limit {
            return;
        }
        let mut w = Writer::default();
        w.buf.extend_from_slice(MAGIC);
        w.buf.extend_from_slice(&key.0);
        let inputs = &out.inputs;
        let mut deps = Vec::with_capacity(inputs.files.len() + inputs.absent.len());
        for p in &inputs.files {
            match self.header(p) {
                Hashed {
                    hash: Some(h),
                    recent: false,
                } => deps.push((FILE, p, h)),
                // Unreadable, or changed while the run read it.
                _ => return,
            }
        }
        for p in &inputs.absent {
            // Created while the run looked elsewhere.
            if p.exists() {
                return;
            }
            deps.push((ABSENT, p, [0; 32]));
        }
        for d in &inputs.module_dirs {
            deps.push((
                MODULE_DIR,
                d,
                crate::fortran::flang::module_sources_digest(d),
            ));
        }
        w.list(&deps, |w, (kind, p, h)| {
            w.uint(*kind);
            w.bytes(p.as_os_str().as_bytes());
            w.bytes(h);
        });
        if !encode_outcome(&mut w, input, out, tables) {
            return;
        }
        let sum = *blake3::hash(&w.buf[MAGIC.len()..]).as_bytes();
        w.buf.extend_from_slice(&sum);
        if w.buf.len() as u64 > limit {
            return;
        }
        let _ = self.write(key, &w.buf);
    }

    fn write(&self, key: &Key, bytes: &[u8]) -> std::io::Result<()> {
        if !self.entries.is_dir() {
            std::fs::create_dir_all(&self.root)?;
            // As ruff's: the directory keeps itself out of git and out of backups.
            let marker = |name: &str, text: &str| {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(self.root.join(name));
                if let Ok(mut f) = f {
                    let _ = f.write_all(text.as_bytes());
                }
            };
            marker(".gitignore", "*\n");
            marker(
                "CACHEDIR.TAG",
                "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by acc2omp.\n",
            );
        }
        let path = self.path_of(key);
        let dir = path.parent().unwrap_or(&self.entries);
        std::fs::create_dir_all(dir)?;
        let n = self.temp.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".tmp-{}-{n}", std::process::id()));
        let written = (|| {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&temp)?;
            f.write_all(bytes)?;
            drop(f);
            std::fs::rename(&temp, &path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        if let Ok(mut w) = self.written.lock() {
            w.insert(key.0[0]);
        }
        written
    }

    /// Keep the directories this run wrote to within their share of the size limit: the
    /// least recently used entries go first (down to 80% of the share), and temporary files
    /// an interrupted run left an hour ago or earlier.
    pub fn prune(&self) {
        let share = self.max_size / SHARDS;
        let written = self.written.lock().map(|w| w.clone()).unwrap_or_default();
        let hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
        for shard in written {
            let dir = self.entries.join(format!("{shard:02x}"));
            let Ok(list) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut entries: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
            for e in list.flatten() {
                let Ok(m) = e.metadata() else { continue };
                let modified = m.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                if !m.is_file() {
                    continue;
                }
                if e.file_name().to_string_lossy().starts_with(".tmp-") {
                    if modified < hour_ago {
                        let _ = std::fs::remove_file(e.path());
                    }
                    continue;
                }
                entries.push((modified, m.len(), e.path()));
            }
            let mut total: u64 = entries.iter().map(|e| e.1).sum();
            if total <= share {
                continue;
            }
            entries.sort();
            for (_, len, path) in entries {
                if total <= share / 5 * 4 {
                    break;
                }
                if std::fs::remove_file(&path).is_ok() {
                    total -= len;
                }
            }
        }
    }
}

/// A regular file's bytes (at most `MAX_FILE`) and modification time; None for anything
/// else (a FIFO or device is never opened in a way that blocks).
fn read_regular(path: &Path) -> Option<(Vec<u8>, Option<SystemTime>)> {
    let (f, m) = crate::walk::open_regular(path).ok()?;
    if m.len() > MAX_FILE {
        return None;
    }
    let mut bytes = Vec::with_capacity(m.len() as usize);
    f.take(MAX_FILE + 1).read_to_end(&mut bytes).ok()?;
    (bytes.len() as u64 <= MAX_FILE).then(|| (bytes, m.modified().ok()))
}

/// The replacements of `fixes` applied to `input`, in the order the engine applies them
/// (by offset, those at one offset as listed); None if two overlap or one is out of bounds.
fn apply(input: &[u8], fixes: &[Fix]) -> Option<Vec<u8>> {
    let mut all: Vec<&Replacement> = fixes.iter().flat_map(|f| &f.replacements).collect();
    all.sort_by_key(|r| r.offset);
    let mut out = Vec::with_capacity(input.len());
    let mut at = 0;
    for r in all {
        let end = r.offset.checked_add(r.length)?;
        if r.offset < at || end > input.len() {
            return None;
        }
        out.extend_from_slice(&input[at..r.offset]);
        out.extend_from_slice(&r.text);
        at = end;
    }
    out.extend_from_slice(&input[at..]);
    Some(out)
}

fn severity_code(s: Severity) -> u64 {
    match s {
        Severity::Off => 0,
        Severity::Note => 1,
        Severity::Warning => 2,
        Severity::Error => 3,
    }
}

/// The bytes of the texts an entry of `out` holds: a lower bound of its size.
fn least_size(out: &FileOutcome) -> u64 {
    let fixes = (out.fixes.iter())
        .map(|f| f.message.len() + f.replacements.iter().map(|r| r.text.len()).sum::<usize>());
    let messages = out.diagnostics.iter().map(|d| d.message.len());
    fixes.chain(messages).sum::<usize>() as u64
}

/// Write `out`; false when it could not be read back exactly (a rule id the tables do not
/// know), so that it is not kept.
fn encode_outcome(w: &mut Writer, input: &[u8], out: &FileOutcome, tables: &Tables) -> bool {
    if out
        .diagnostics
        .iter()
        .any(|d| tables.rule_id(d.rule.as_str()).is_none())
    {
        return false;
    }
    w.usize(out.sites);
    w.usize(out.fell_back);
    w.bool(out.offload_routines);
    match &out.semantic {
        None => w.uint(0),
        Some(Mode::Clang { version, openacc }) => {
            w.uint(1);
            w.str(version);
            w.bool(*openacc);
        }
        Some(Mode::Syntactic { reason }) => {
            w.uint(2);
            w.str(reason);
        }
        Some(Mode::Flang { version }) => {
            w.uint(3);
            w.str(version);
        }
    }
    w.list(&out.diagnostics, |w, d| {
        w.usize(d.offset);
        w.opt(d.end);
        w.str(d.rule.as_str());
        w.uint(severity_code(d.severity));
        w.str(&d.message);
    });
    w.list(&out.fixes, |w, f| {
        w.usize(f.offset);
        w.range(&f.span);
        w.str(&f.message);
        w.list(&f.replacements, |w, r| {
            w.usize(r.offset);
            w.usize(r.length);
            w.bytes(&r.text);
        });
    });
    // The output is the fixes applied to the input; kept whole only where it is not.
    let verbatim = apply(input, &out.fixes).is_none_or(|o| o != out.output);
    w.bool(verbatim);
    if verbatim {
        w.bytes(&out.output);
    }
    true
}

fn decode_outcome(r: &mut Reader, input: &[u8], tables: &Tables) -> Option<FileOutcome> {
    let len = input.len();
    // As `crate::encoding` reads the file: CR ends lines only where no LF does.
    let terminator = if !input.contains(&b'\n') && input.contains(&b'\r') {
        b'\r'
    } else {
        b'\n'
    };
    let sites = r.usize()?;
    let fell_back = r.usize()?;
    let offload_routines = r.bool()?;
    let semantic = match r.uint()? {
        0 => None,
        1 => Some(Mode::Clang {
            version: r.str()?,
            openacc: r.bool()?,
        }),
        2 => Some(Mode::Syntactic { reason: r.str()? }),
        3 => Some(Mode::Flang { version: r.str()? }),
        _ => return None,
    };
    let diagnostics = r.list(|r| {
        let offset = r.usize()?;
        let end = r.opt()?;
        let rule = tables.rule_id(&r.str()?)?;
        let severity = match r.uint()? {
            0 => Severity::Off,
            1 => Severity::Note,
            2 => Severity::Warning,
            3 => Severity::Error,
            _ => return None,
        };
        let message = r.str()?;
        (offset <= len && end.is_none_or(|e| offset <= e && e <= len)).then_some(Diagnostic {
            offset,
            end,
            rule,
            severity,
            message,
        })
    })?;
    let fixes = r.list(|r| {
        let offset = r.usize()?;
        let span = r.range()?;
        let message = r.str()?;
        let replacements = r.list(|r| {
            Some(Replacement {
                offset: r.usize()?,
                length: r.usize()?,
                text: r.bytes()?.to_vec(),
            })
        })?;
        (offset <= len && span.start <= span.end && span.end <= len).then_some(Fix {
            offset,
            span,
            message,
            replacements,
        })
    })?;
    // Checks the replacements' bounds and order whether or not the output is kept whole.
    let applied = apply(input, &fixes)?;
    let output = if r.bool()? {
        r.bytes()?.to_vec()
    } else {
        applied
    };
    Some(FileOutcome {
        output,
        diagnostics,
        sites,
        index: LineIndex::of_bytes(input, terminator),
        semantic,
        fixes,
        fell_back,
        offload_routines,
        inputs: Inputs::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pruning_keeps_each_directory_within_its_share_newest_first() {
        let d = tempfile::tempdir().unwrap();
        let mut c = Cache::new(d.path(), "none");
        c.max_size = SHARDS * 1000;
        let base = SystemTime::now() - std::time::Duration::from_secs(1000);
        let mut paths = Vec::new();
        for k in 0..20u8 {
            let mut key = [0u8; 32];
            key[1] = k;
            let key = Key(key);
            c.write(&key, &[k; 200]).unwrap();
            let p = c.path_of(&key);
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(base + std::time::Duration::from_secs(u64::from(k)))
                .unwrap();
            paths.push(p);
        }
        // A temporary file an interrupted run left long ago.
        let stale = paths[0].with_file_name(".tmp-1-1");
        std::fs::write(&stale, b"x").unwrap();
        let f = std::fs::File::options().write(true).open(&stale).unwrap();
        f.set_modified(base - std::time::Duration::from_secs(7200))
            .unwrap();
        c.prune();
        let kept: Vec<bool> = paths.iter().map(|p| p.exists()).collect();
        // 80% of the 1000-byte share: the four newest entries.
        assert_eq!(kept.iter().filter(|k| **k).count(), 4, "{kept:?}");
        assert!(kept[16..].iter().all(|k| *k), "{kept:?}");
        assert!(!stale.exists());
        assert_eq!(
            std::fs::read_to_string(d.path().join(".gitignore")).unwrap(),
            "*\n"
        );
    }

    #[test]
    fn results_larger_than_an_entry_may_be_are_not_encoded() {
        // Fixes, and notes (`present` -> `present-unchecked`): both count in the bound.
        let one = "#pragma acc parallel loop copy(a[0:n])\nfor (int i = 0; i < n; i++) a[i] += 1;\n\
                   #pragma acc parallel loop present(a[0:n])\nfor (int i = 0; i < n; i++) a[i] = 0;\n";
        let input = format!("void f(int n, double *a) {{\n{}}}\n", one.repeat(20));
        let opts = crate::Options::default();
        let sem = crate::semantic::SemanticConfig::syntactic();
        let out = crate::engine::migrate_bytes(input.as_bytes(), None, &opts, &sem).unwrap();
        let tables = Tables::builtin();
        let mut w = Writer::default();
        assert!(encode_outcome(&mut w, input.as_bytes(), &out, &tables));
        assert_eq!(out.diagnostics.len(), 20, "{:?}", out.diagnostics);
        let least = least_size(&out);
        assert!(least > 1000 && least <= w.buf.len() as u64, "{least}");
        let d = tempfile::tempdir().unwrap();
        let mut c = Cache::new(d.path(), "none");
        let key = Key([7; 32]);
        // Room for the entry: kept and read back.
        c.max_size = SHARDS * (w.buf.len() as u64 + 1000);
        c.put(&key, input.as_bytes(), &out, &tables);
        let back = c.get(&key, input.as_bytes(), &tables).expect("kept");
        assert_eq!(back.output, out.output);
        // Less room than its texts: not kept.
        std::fs::remove_file(c.path_of(&key)).unwrap();
        c.max_size = SHARDS * (least - 1);
        c.put(&key, input.as_bytes(), &out, &tables);
        assert!(!c.path_of(&key).exists());
    }

    #[test]
    fn sizes_read_with_units() {
        for (v, n) in [
            ("100", Some(100)),
            ("2K", Some(2048)),
            ("3m", Some(3 << 20)),
        ] {
            assert_eq!(parse_size(v), n, "{v}");
        }
        assert_eq!(parse_size(" 1G "), Some(1 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("99999999999999G"), None);
    }
}
