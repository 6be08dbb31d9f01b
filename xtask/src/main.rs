//! `cargo xtask`: the project's automation, in Rust so that it runs wherever cargo does.
//!
//! Each task lives in its own module; `flags` declares them all.

mod cluster;
mod demo;
mod flags;
mod run;
mod test;
mod testenv;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let flags = flags::Xtask::parse();
    let result = match flags.task {
        flags::Task::Testenv(t) => testenv::run(&t),
        flags::Task::Cluster(c) => cluster::run(&c),
        flags::Task::Test(t) => test::run(&t),
        flags::Task::Demo(d) => demo::run(&d),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (xtask's manifest lives one level below it).
pub fn project_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// The cargo target directory (honours `CARGO_TARGET_DIR`).
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| project_root().join("target"))
}
