//! The child processes of the run (libclang workers, `llvm-config`, flang): none may outlive
//! it. Re-parented, a child's CPU and memory would escape every timer of the job that ran
//! acc2omp (a CI step, a pre-commit hook). Each is registered while it runs; [`stop_all`]
//! kills and waits for those still running when the run ends, normally or by a signal, and
//! the kernel kills one whose parent dies without that (SIGKILL: `PR_SET_PDEATHSIG`).
//!
//! A tool's command (flang, `llvm-config`: [`run`]) leads its own process group, and a kill
//! reaches the whole group: a command that is a wrapper script (one that starts the tool as
//! its own child instead of `exec`ing it) leaves no grandchild behind holding the output pipe
//! open. The libclang workers (this executable) stay in the run's group.
//!
//! [`run`] runs a command to its end under a time limit and an output bound: the one way
//! the semantic layers run a tool (flang, `llvm-config`).

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// A registered child, shared with the registry.
pub type Shared = Arc<Mutex<Child>>;

/// The children alive, and whether the run is ending (none starts then).
static CHILDREN: Mutex<(Vec<Shared>, bool)> = Mutex::new((Vec::new(), false));

/// Start `cmd` as a registered child; it dies with this process.
pub fn spawn(cmd: &mut Command) -> std::io::Result<Shared> {
    register(cmd, false)
}

/// [`spawn`], the child leading a process group of its own (its id is the group's), which
/// [`kill`] ends as a whole: for a tool's command, which may be a wrapper script.
fn register(cmd: &mut Command, group: bool) -> std::io::Result<Shared> {
    use std::os::unix::process::CommandExt;
    let mut all = CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
    if all.1 {
        return Err(std::io::Error::other("the run is ending"));
    }
    if group {
        cmd.process_group(0);
    }
    let parent = std::process::id() as libc::pid_t;
    // Only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 || libc::getppid() != parent
            {
                return Err(std::io::Error::other("the parent is gone"));
            }
            Ok(())
        });
    }
    let child = Arc::new(Mutex::new(cmd.spawn()?));
    all.0.push(child.clone());
    Ok(child)
}

/// Kill `child` (unless it has ended) and wait for it; it leaves the registry.
pub fn end(child: &Shared) {
    kill(&mut child.lock().unwrap_or_else(|p| p.into_inner()));
    let mut all = CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
    all.0.retain(|c| !Arc::ptr_eq(c, child));
}

/// Kill every child and wait for it; none starts afterwards.
pub fn stop_all() {
    let alive = {
        let mut all = CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
        all.1 = true;
        std::mem::take(&mut all.0)
    };
    for c in &alive {
        kill(&mut c.lock().unwrap_or_else(|p| p.into_inner()));
    }
}

/// Whether `pid`, a child of this process, is not reaped yet (running, or ended and not
/// waited for: its id then still names it and its process group) and whether it has ended.
fn state(pid: u32) -> Option<bool> {
    // SAFETY: waitid with WNOWAIT only reads the child's state into `info`; it reaps nothing.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: `info` was filled by waitid (si_pid is 0 while the child runs).
    (r == 0).then(|| unsafe { info.si_pid() } != 0)
}

/// Kill the process group `pid` leads, if it leads one and is not reaped (until then the
/// group id cannot name another's).
fn kill_group(pid: u32) {
    let id = pid as libc::pid_t;
    // SAFETY: getpgid reads; the signal goes to the group of a child of ours that leads it.
    if state(pid).is_some() && unsafe { libc::getpgid(id) } == id {
        unsafe {
            libc::kill(-id, libc::SIGKILL);
        }
    }
}

/// Kill `c` (and the process group it leads, see [`register`]) and wait for it.
pub fn kill(c: &mut Child) {
    kill_group(c.id());
    let _ = c.kill();
    let _ = c.wait();
}

/// A time limit from the environment variable `var` (whole seconds, above zero), else
/// `default` seconds.
pub fn limit_from_env(var: &str, default: u64) -> Duration {
    let secs = std::env::var(var)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(default);
    Duration::from_secs(secs)
}

/// What a command run by [`run`] did.
#[derive(Debug)]
pub struct Ran {
    /// It exited with success.
    pub success: bool,
    /// Its standard output (at most the bound).
    pub stdout: Vec<u8>,
}

/// Run `cmd` (standard input closed, standard error dropped) for at most `limit`, reading
/// at most `max` bytes of its output. A command that runs past the limit, prints more than
/// `max` bytes or leaves its output open after it ends is killed with its process group,
/// and the answer says why; no call waits much past `limit`.
pub fn run(cmd: &mut Command, limit: Duration, max: u64) -> Result<Ran, String> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let start = Instant::now();
    let child = register(cmd, true).map_err(|e| e.to_string())?;
    let (pid, stdout) = {
        let mut c = child.lock().unwrap_or_else(|p| p.into_inner());
        (c.id(), c.stdout.take())
    };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        if let Some(s) = stdout {
            let _ = s.take(max + 1).read_to_end(&mut out);
        }
        // The pipe closes here: a child still printing then ends.
        let _ = tx.send(out);
    });
    let over = |out: &Vec<u8>| out.len() as u64 > max;
    let mut out: Option<Vec<u8>> = None;
    // Until the child ends: it may run past the limit or print past the bound.
    loop {
        if out.is_none()
            && let Ok(o) = rx.try_recv()
        {
            if over(&o) {
                end(&child);
                return Err(format!("printed more than {max} bytes"));
            }
            out = Some(o);
        }
        if state(pid) != Some(false) {
            break;
        }
        if start.elapsed() >= limit {
            end(&child);
            return Err(format!("ran past {} s", limit.as_secs()));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // Ended (not reaped): what it left in its group goes with it, the pipe then closes.
    let status = {
        let mut c = child.lock().unwrap_or_else(|p| p.into_inner());
        kill_group(pid);
        c.wait()
    };
    {
        let mut all = CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
        all.0.retain(|c| !Arc::ptr_eq(c, &child));
    }
    let out = match out {
        Some(o) => o,
        None => {
            // A process that left the group may still hold the pipe: wait no longer than
            // the limit allows (and a moment for the pipe to close).
            let left = limit.saturating_sub(start.elapsed()) + Duration::from_millis(500);
            rx.recv_timeout(left)
                .map_err(|_| "left its output open after it ended".to_string())?
        }
    };
    if over(&out) {
        return Err(format!("printed more than {max} bytes"));
    }
    let status = status.map_err(|e| e.to_string())?;
    Ok(Ran {
        success: status.success(),
        stdout: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.arg("-c").arg(script);
        c
    }

    /// Whether process `pid` is gone (or a zombie waiting for its new parent).
    fn gone(pid: &str) -> bool {
        (0..200).any(|_| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let dead = stat
                .rsplit_once(") ")
                .is_none_or(|(_, s)| s.starts_with('Z'));
            if !dead {
                std::thread::sleep(Duration::from_millis(10));
            }
            dead
        })
    }

    #[test]
    fn a_command_runs_to_its_end() {
        let ran = run(&mut sh("echo hi"), Duration::from_secs(20), 100).unwrap();
        assert!(ran.success);
        assert_eq!(ran.stdout, b"hi\n");
        let ran = run(&mut sh("echo no; exit 3"), Duration::from_secs(20), 100).unwrap();
        assert!(!ran.success);
        assert!(
            run(
                &mut Command::new("/nonexistent/tool"),
                Duration::from_secs(1),
                1
            )
            .is_err()
        );
    }

    #[test]
    fn a_run_ends_at_its_time_limit() {
        let start = Instant::now();
        let e = run(&mut sh("sleep 30; echo late"), Duration::from_secs(1), 100).unwrap_err();
        assert_eq!(e, "ran past 1 s");
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn output_past_the_bound_ends_the_run() {
        let start = Instant::now();
        let e = run(&mut sh("yes"), Duration::from_secs(60), 1000).unwrap_err();
        assert_eq!(e, "printed more than 1000 bytes");
        // One that goes on after its pipe is gone is killed too.
        let e = run(
            &mut sh("trap '' PIPE; while :; do echo x 2>/dev/null; done"),
            Duration::from_secs(60),
            1000,
        )
        .unwrap_err();
        assert_eq!(e, "printed more than 1000 bytes");
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{:?}",
            start.elapsed()
        );
        // Exactly the bound is fine.
        let ran = run(&mut sh("printf 12345"), Duration::from_secs(20), 5).unwrap();
        assert_eq!(ran.stdout, b"12345");
    }

    /// A wrapper that starts its tool as a child (no `exec`): the child holds the output pipe.
    #[test]
    fn a_wrappers_child_ends_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let child = format!("sleep 30 & echo $! > '{}'", pid_file.display());
        let wrapper = |rest: &str, limit: u64| {
            let start = Instant::now();
            let script = format!("{child}; {rest}");
            let r = run(&mut sh(&script), Duration::from_secs(limit), 100);
            assert!(
                start.elapsed() < Duration::from_secs(10),
                "{:?}",
                start.elapsed()
            );
            let pid = std::fs::read_to_string(&pid_file).unwrap();
            assert!(gone(pid.trim()), "the wrapper's child outlived the run");
            r
        };
        // Past the limit: the wrapper and its sleeping child are killed together.
        assert_eq!(wrapper("wait", 1).unwrap_err(), "ran past 1 s");
        // Ended, with a child left behind that holds the pipe: the run ends too.
        let ran = wrapper("echo ok", 20).unwrap();
        assert!(ran.success);
        assert_eq!(ran.stdout, b"ok\n");
    }

    #[test]
    fn limits_from_the_environment() {
        assert_eq!(
            limit_from_env("ACC2OMP_TEST_UNSET_LIMIT", 7),
            Duration::from_secs(7)
        );
    }
}
