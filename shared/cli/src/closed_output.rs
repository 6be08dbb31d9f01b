//! The end of a command whose stdout or stderr was closed (`… | head -1`): killed by
//! SIGPIPE, as kubectl is.
//!
//! kubectl is a Go program, and Go's runtime lets a write to a closed fd 1 or 2 kill
//! the process with SIGPIPE: a shell reports 141, `pipefail` fails the pipeline, and a
//! parent that waits sees a death by signal, not an exit status. Rust ignores SIGPIPE
//! from the start instead, and that is what lets a plugin finish what it has in flight
//! (create-file's creates already sent, run-pod's `--rm` delete) before it ends: with
//! the default disposition the first failed write would kill it there, as it kills
//! kubectl, leaving the outcome of those requests unknown and the pod behind. Sockets
//! would raise it too on a peer's reset. So the disposition is restored and the signal
//! raised only here, at the very end, once everything else is done and said: the
//! parent then sees exactly what kubectl's parent sees. Exiting 141 instead would look
//! the same to a shell, but not to a parent that tells a signal from an exit status
//! (Rust's `ExitStatus::signal`, Python's negative `returncode`, CI runners).

use std::process::ExitCode;

/// Ends the process by SIGPIPE's default action. Returns only if it could not (then
/// with 141, a shell's number for it), or on a system without the signal.
pub fn end() -> ExitCode {
    let _ = std::io::Write::flush(&mut std::io::stdout());
    #[cfg(unix)]
    {
        let _ = signal_hook::low_level::emulate_default_handler(signal_hook::consts::SIGPIPE);
    }
    ExitCode::from(141)
}
