//! Running external commands with visible progress and clear failures.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

/// Prints the command (`$ …`) and runs it with inherited stdio; fails on non-zero exit.
pub fn run(cmd: &mut Command) -> anyhow::Result<()> {
    eprintln!("$ {}", command_line(cmd));
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {}", program(cmd)))?;
    if !status.success() {
        bail!("`{}` failed ({status})", command_line(cmd));
    }
    Ok(())
}

/// Runs the command with stdout and stderr appended to `log`; on failure, the error
/// carries the log's last lines.
pub fn run_logged(cmd: &mut Command, log: &Path) -> anyhow::Result<()> {
    eprintln!("$ {}  (log: {})", command_line(cmd), log.display());
    let out = std::fs::File::options()
        .create(true)
        .append(true)
        .open(log)?;
    let err = out.try_clone()?;
    let status = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .with_context(|| format!("cannot run {}", program(cmd)))?;
    if !status.success() {
        return Err(failed_with_log(cmd, status, log));
    }
    Ok(())
}

/// A failed command's error, with the last lines of the log its output went to.
pub(crate) fn failed_with_log(
    cmd: &Command,
    status: std::process::ExitStatus,
    log: &Path,
) -> anyhow::Error {
    anyhow::anyhow!(
        "`{}` failed ({status}); last lines of {}:\n{}",
        command_line(cmd),
        log.display(),
        localcluster::process::tail(log, 25)
    )
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

fn program(cmd: &Command) -> String {
    cmd.get_program().to_string_lossy().into_owned()
}

/// The command as one line: its program and arguments.
pub(crate) fn command_line(cmd: &Command) -> String {
    let mut s = program(cmd);
    for arg in cmd.get_args() {
        s.push(' ');
        s.push_str(&arg.to_string_lossy());
    }
    s
}

/// `cargo` in `root`, without the package variables `cargo run` gave xtask: build
/// scripts (ring's) watch `CARGO_MANIFEST_DIR`, so with them every build from here and
/// the next from a shell rebuilt ring and all above it (kube, the workspace).
pub fn cargo(root: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.current_dir(root);
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if name.starts_with("CARGO_PKG_")
            || [
                "CARGO_MANIFEST_DIR",
                "CARGO_MANIFEST_PATH",
                "CARGO_CRATE_NAME",
                "CARGO_BIN_NAME",
                "CARGO_PRIMARY_PACKAGE",
            ]
            .contains(&name.as_ref())
        {
            cmd.env_remove(name.as_ref());
        }
    }
    cmd
}
