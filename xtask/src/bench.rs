//! `cargo xtask bench`: builds the `bench` package (bench/, a program of its own with
//! its own dependencies) and runs it in this process's place with the task's arguments,
//! so its output, exit code and Ctrl-C are the bench's own.

use std::os::unix::process::CommandExt;
use std::process::Command;

use anyhow::{Context, bail};

use crate::flags;
use crate::paths;

pub fn run(flags: &flags::Bench) -> anyhow::Result<()> {
    // Not echoed as other builds are: `--help` and `--list` print only what they did
    // when the bench was a module of xtask (cargo's `--quiet` still shows errors).
    let status = Command::new(env!("CARGO"))
        .current_dir(paths::project_root())
        .args(["build", "--quiet", "-p", "bench"])
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        bail!("`cargo build -p bench` failed ({status})");
    }
    let bench = paths::target_dir().join("debug").join("bench");
    // `exec` returns only when it failed.
    let error = Command::new(&bench).args(&flags.args).exec();
    Err(anyhow::Error::new(error).context(format!("cannot run {}", bench.display())))
}
