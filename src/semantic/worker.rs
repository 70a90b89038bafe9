//! libclang in a worker process. Clang can crash, abort or run for minutes on hostile input
//! (deep nesting overflows its parser's stack), and in-process that would take the whole run
//! down. The command line therefore parses in a child process (its own executable, started
//! with `ACC2OMP_LIBCLANG_WORKER` set), one per worker thread, reused from file to file: a
//! worker that dies or overruns its time costs that file its libclang facts, and the next
//! file gets a new worker.
//!
//! Protocol: length-prefixed frames on the child's stdin/stdout, encoded with `wire`.
//!
//! No worker outlives the run (see `children`): each is killed and waited for when its
//! file's parse runs out of time, when its thread ends, and when the run ends.

use super::children::{self, Shared};
use super::clang::{self, Parsed};
use super::load::{self, Library};
use super::wire::{Reader, Writer};
use std::cell::RefCell;
use std::io::{BufReader, Read, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use super::load::{WORKER_ENV, is_worker};

/// Frames larger than this are refused (a parse of the largest sources is far smaller).
const MAX_FRAME: u64 = 1 << 32;

/// How long one file's parse may take (`ACC2OMP_CLANG_TIMEOUT`, seconds; default 120).
fn timeout() -> Duration {
    children::limit_from_env("ACC2OMP_CLANG_TIMEOUT", 120)
}

fn read_frame(r: &mut impl Read) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 8];
    r.read_exact(&mut len)?;
    let len = u64::from_le_bytes(len);
    if len > MAX_FRAME {
        return Err(std::io::Error::other("frame too large"));
    }
    let mut buf = vec![0u8; len as usize];
    r.read_exact(&mut buf)?;
    Ok(buf)
}

fn write_frame(w: &mut impl Write, buf: &[u8]) -> std::io::Result<()> {
    w.write_all(&(buf.len() as u64).to_le_bytes())?;
    w.write_all(buf)?;
    w.flush()
}

/// When this process was started as a worker: serve parse requests until stdin closes, and
/// return the exit status.
pub fn serve_if_requested() -> Option<i32> {
    if !is_worker() {
        return None;
    }
    let mut input = BufReader::new(std::io::stdin().lock());
    let mut output = std::io::stdout().lock();
    loop {
        let Ok(request) = read_frame(&mut input) else {
            return Some(0);
        };
        let mut r = Reader::new(&request);
        let fields = (|| Some((r.str()?, r.str()?, r.list(|r| r.str())?)))();
        let reply = match fields {
            None => Err("malformed request".to_string()),
            Some((name, src, args)) => {
                load::with_index(|_, index| clang::parse_for_encoding(index, &name, &src, &args))
                    .and_then(|r| r)
            }
        };
        let mut w = Writer::default();
        match reply {
            Ok(p) => {
                w.uint(0);
                p.encode(&mut w);
            }
            Err(e) => {
                w.uint(1);
                w.str(&e);
            }
        }
        if write_frame(&mut output, &w.buf).is_err() {
            return Some(1);
        }
    }
}

struct Worker {
    child: Shared,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        children::end(&self.child);
    }
}

fn spawn(lib: &Library) -> Result<Worker, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find acc2omp itself: {e}"))?;
    let mut cmd = Command::new(exe);
    cmd.env(WORKER_ENV, "1")
        .env("LIBCLANG_PATH", &lib.path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        // Clang's crash reports would interleave with our diagnostics.
        .stderr(Stdio::null());
    let child =
        children::spawn(&mut cmd).map_err(|e| format!("cannot start the libclang worker: {e}"))?;
    let pipes = {
        let mut c = child.lock().unwrap_or_else(|p| p.into_inner());
        (c.stdin.take(), c.stdout.take())
    };
    let (Some(stdin), Some(stdout)) = pipes else {
        children::end(&child);
        return Err("cannot talk to the libclang worker".into());
    };
    Ok(Worker {
        child,
        stdin,
        stdout: BufReader::new(stdout),
    })
}

impl Worker {
    /// The worker's reply, or why the worker is gone (it is not reused then).
    fn request(&mut self, frame: &[u8], limit: Duration) -> Result<Vec<u8>, String> {
        let (done, wait) = mpsc::channel::<()>();
        let child = self.child.clone();
        let watchdog = std::thread::spawn(move || {
            let expired = matches!(
                wait.recv_timeout(limit),
                Err(mpsc::RecvTimeoutError::Timeout)
            );
            if expired && let Ok(mut c) = child.lock() {
                children::kill(&mut c);
            }
            expired
        });
        let reply = write_frame(&mut self.stdin, frame).and_then(|_| read_frame(&mut self.stdout));
        let _ = done.send(());
        let expired = watchdog.join().unwrap_or(false);
        if expired {
            return Err(format!(
                "it took longer than {} s (ACC2OMP_CLANG_TIMEOUT)",
                limit.as_secs()
            ));
        }
        reply.map_err(|_| self.death())
    }

    fn death(&self) -> String {
        let status = self.child.lock().ok().and_then(|mut c| c.wait().ok());
        #[cfg(unix)]
        if let Some(sig) = status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s)) {
            return format!("it crashed: signal {sig}");
        }
        match status {
            Some(s) => format!("the libclang worker stopped ({s})"),
            None => "the libclang worker stopped".into(),
        }
    }
}

thread_local! {
    static WORKER: RefCell<Option<Worker>> = const { RefCell::new(None) };
}

/// Parse `src` as the file `name` in this thread's worker process.
pub fn parse(lib: &Library, name: &str, src: &str, args: &[String]) -> Result<Parsed, String> {
    let mut w = Writer::default();
    w.str(name);
    w.str(src);
    w.list(args, |w, a| w.str(a));
    WORKER.with(|slot| {
        let mut slot = slot.borrow_mut();
        let worker = match slot.take() {
            Some(w) => w,
            None => spawn(lib)?,
        };
        let mut worker = worker;
        let reply = worker.request(&w.buf, timeout())?;
        *slot = Some(worker);
        let mut r = Reader::new(&reply);
        match r.uint() {
            Some(0) => Parsed::decode(&mut r)
                .filter(|_| r.at_end())
                .ok_or_else(|| "the libclang worker's reply is malformed".to_string()),
            Some(1) => Err(r.str().unwrap_or_default()),
            _ => Err("the libclang worker's reply is malformed".into()),
        }
    })
}
