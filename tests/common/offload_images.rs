//! Clean-up after LLVM's host offloading: its x86_64 plugin (LLVM 19 and 22) writes each
//! device image to `/tmp/tmpfile_XXXXXX`, loads it and never removes it, so every run of a
//! host-offloaded program leaves a 15 kB file in /tmp (thousands per suite).

use std::fs;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// An image is loaded within microseconds of being written: one this old is in use only as a
/// mapping (which outlives the name) or not at all.
const SETTLED: Duration = Duration::from_secs(10);
/// Sweep at most this often per test process.
const EVERY: Duration = Duration::from_secs(5);

/// At exit every run of this process is over: an image a second old is loaded or dead.
const SETTLED_AT_EXIT: Duration = Duration::from_secs(1);

unsafe extern "C" {
    fn atexit(f: extern "C" fn()) -> i32;
}

extern "C" fn at_exit() {
    remove_settled(process_start(), SETTLED_AT_EXIT);
}

/// Remove the images written since this test process started and settled since, skipping
/// files of other users, other names or other contents. Called after each run; cheap when
/// called often. The first call also sweeps once more when the process exits (the images of
/// its last runs).
pub fn sweep() {
    static STATE: Mutex<Option<(SystemTime, Option<Instant>)>> = Mutex::new(None);
    let Ok(mut state) = STATE.lock() else {
        return;
    };
    let (started, last) = state.get_or_insert_with(|| {
        // SAFETY: registers a function without arguments that touches no Rust state that
        // exit tears down (only the file system).
        unsafe { atexit(at_exit) };
        (process_start(), None)
    });
    if last.is_some_and(|l| l.elapsed() < EVERY) {
        return;
    }
    *last = Some(Instant::now());
    let started = *started;
    drop(state);
    remove_settled(started, SETTLED);
}

/// Remove the images in /tmp written at or after `started` and at least `settled` ago.
fn remove_settled(started: SystemTime, settled: Duration) {
    let Ok(entries) = fs::read_dir("/tmp") else {
        return;
    };
    let uid = uid();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(suffix) = name.to_str().and_then(|n| n.strip_prefix("tmpfile_")) else {
            continue;
        };
        if suffix.len() != 6 || !suffix.bytes().all(|b| b.is_ascii_alphanumeric()) {
            continue;
        }
        let Ok(meta) = e.metadata() else { continue };
        let Ok(written) = meta.modified() else {
            continue;
        };
        use std::os::unix::fs::MetadataExt;
        let old_enough = written.elapsed().is_ok_and(|age| age >= settled);
        if !meta.is_file() || Some(meta.uid()) != uid || written < started || !old_enough {
            continue;
        }
        let elf = fs::File::open(e.path()).is_ok_and(|mut f| {
            let mut magic = [0u8; 4];
            std::io::Read::read_exact(&mut f, &mut magic).is_ok() && magic == *b"\x7fELF"
        });
        if elf {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// When this process started (boot time plus its start in clock ticks, 100 a second on
/// Linux), or now.
fn process_start() -> SystemTime {
    let boot = fs::read_to_string("/proc/stat").ok().and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("btime "))
            .and_then(|v| v.trim().parse::<u64>().ok())
    });
    // Field 22 of /proc/self/stat, counted after the command name's closing parenthesis.
    let ticks = fs::read_to_string("/proc/self/stat").ok().and_then(|s| {
        let rest = &s[s.rfind(')')? + 1..];
        rest.split_whitespace().nth(19)?.parse::<u64>().ok()
    });
    match (boot, ticks) {
        (Some(b), Some(t)) => {
            SystemTime::UNIX_EPOCH + Duration::from_secs(b) + Duration::from_millis(t * 10)
        }
        _ => SystemTime::now(),
    }
}

/// This process's user id, from a file it owns.
fn uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self").ok().map(|m| m.uid())
}
