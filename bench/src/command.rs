//! Running the commands around the measured ones: the release build (shown as it
//! runs) and the version and commit probes for the report.

use std::ffi::OsStr;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

/// Prints the command (`$ …`) and runs it with inherited stdio; fails on non-zero exit.
pub fn run(cmd: &mut Command) -> anyhow::Result<()> {
    let line = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(OsStr::to_string_lossy)
        .collect::<Vec<_>>()
        .join(" ");
    eprintln!("$ {line}");
    let status = cmd.status().with_context(|| format!("cannot run {line}"))?;
    if !status.success() {
        bail!("`{line}` failed ({status})");
    }
    Ok(())
}

/// Runs the command and returns its stdout; `None` if it cannot run or fails.
pub fn output(program: impl AsRef<OsStr>, args: &[&str]) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}
