//! Standard output or error closed early (`acc2omp rules | head`): the process ends as git
//! and the shell's own tools do, killed by SIGPIPE, quietly. Rust ignores SIGPIPE so that a
//! write to a closed pipe fails instead; the libclang workers' pipes rely on that, so the
//! signal is not restored for the whole run, only raised where standard output is written.

use std::io::{ErrorKind, Write};

/// End the process as SIGPIPE does (the shell reports status 141).
pub fn closed() -> ! {
    // SAFETY: restoring a signal's default action and raising it in this process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    std::process::exit(128 + libc::SIGPIPE)
}

/// Write `bytes` to `w`, a standard stream: a closed pipe ends the process; other failures
/// are returned.
pub fn write(w: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    match w.write_all(bytes).and_then(|_| w.flush()) {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => closed(),
        r => r,
    }
}

/// `r`, the result of writing to a standard stream: a closed pipe ends the process.
pub fn ended(r: std::io::Result<()>) -> std::io::Result<()> {
    match r {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => closed(),
        r => r,
    }
}

/// `println!` and `eprintln!` panic when their stream is a closed pipe: that panic ends the
/// process as [`closed`] does, without a message (which could not be printed anyway).
pub fn quiet_on_closed_streams() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.starts_with("failed printing to std") && message.contains("Broken pipe") {
            closed();
        }
        default(info);
    }));
}
