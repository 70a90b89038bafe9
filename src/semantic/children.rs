//! The child processes of the run (libclang workers, `llvm-config`): none may outlive it.
//! Re-parented, a child's CPU and memory would escape every timer of the job that ran
//! acc2omp (a CI step, a pre-commit hook). Each is registered while it runs; [`stop_all`]
//! kills and waits for those still running when the run ends, normally or by a signal, and
//! the kernel kills one whose parent dies without that (SIGKILL: `PR_SET_PDEATHSIG`).

use std::process::{Child, Command};
use std::sync::{Arc, Mutex};

/// A registered child, shared with the registry.
pub type Shared = Arc<Mutex<Child>>;

/// The children alive, and whether the run is ending (none starts then).
static CHILDREN: Mutex<(Vec<Shared>, bool)> = Mutex::new((Vec::new(), false));

/// Start `cmd` as a registered child; it dies with this process.
pub fn spawn(cmd: &mut Command) -> std::io::Result<Shared> {
    use std::os::unix::process::CommandExt;
    let mut all = CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
    if all.1 {
        return Err(std::io::Error::other("the run is ending"));
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
    {
        let mut c = child.lock().unwrap_or_else(|p| p.into_inner());
        let _ = c.kill();
        let _ = c.wait();
    }
    let mut all = CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
    all.0.retain(|c| !Arc::ptr_eq(c, child));
}

/// Wait for `child` to end by itself; it leaves the registry.
pub fn wait(child: &Shared) -> std::io::Result<std::process::ExitStatus> {
    let status = child.lock().unwrap_or_else(|p| p.into_inner()).wait();
    let mut all = CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
    all.0.retain(|c| !Arc::ptr_eq(c, child));
    status
}

/// Kill every child and wait for it; none starts afterwards.
pub fn stop_all() {
    let alive = {
        let mut all = CHILDREN.lock().unwrap_or_else(|p| p.into_inner());
        all.1 = true;
        std::mem::take(&mut all.0)
    };
    for c in &alive {
        let mut c = c.lock().unwrap_or_else(|p| p.into_inner());
        let _ = c.kill();
        let _ = c.wait();
    }
}
