//! `cargo xtask`: the project's automation, in Rust so that it runs wherever cargo does.
//!
//! Each task lives in its own module; `flags` declares them all.

mod archive;
// The local cluster (and so the tasks that start one) runs on Linux only: its supervisor
// and real node use Linux process control and namespaces, `cluster down` reads /proc, and the
// bench's launcher declares Linux's wait flags and `rusage` layout by hand. On the other
// release platforms xtask packages (`dist`, `krew-check`, `index`, and `install` on Unix).
#[cfg(target_os = "linux")]
mod bench;
#[cfg(target_os = "linux")]
mod cluster;
mod codegen;
#[cfg(target_os = "linux")]
mod demo;
mod dist;
mod flags;
mod index;
#[cfg(unix)]
mod install;
mod krew_check;
mod krew_manifest;
mod lint;
mod metadata;
mod notices;
mod paths;
mod release;
mod run;
mod size;
mod targets;
mod test;
mod testenv;
mod tidy;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let flags = flags::Xtask::parse();
    let result = match flags.task {
        flags::Task::Testenv(t) => testenv::run(&t),
        #[cfg(target_os = "linux")]
        flags::Task::Cluster(c) => cluster::run(&c),
        flags::Task::Test(t) => test::run(&t),
        flags::Task::Tidy => tidy::run(),
        flags::Task::Codegen(c) => codegen::run(&c),
        #[cfg(target_os = "linux")]
        flags::Task::Demo(d) => demo::run(&d),
        flags::Task::Dist(d) => dist::run(&d),
        flags::Task::Size(s) => size::run(&s),
        flags::Task::KrewCheck(k) => krew_check::run(&k),
        flags::Task::Index(i) => index::run(&i),
        #[cfg(unix)]
        flags::Task::Install(i) => install::run(&i),
        #[cfg(not(unix))]
        flags::Task::Install(_) => Err(anyhow::anyhow!(
            "`cargo xtask install` makes symbolic links, which need Unix; on Windows install with krew"
        )),
        #[cfg(target_os = "linux")]
        flags::Task::Bench(b) => bench::run(&b),
        #[cfg(not(target_os = "linux"))]
        flags::Task::Cluster(_) | flags::Task::Demo(_) | flags::Task::Bench(_) => {
            Err(anyhow::anyhow!(
                "the local cluster runs on Linux only (its real node and supervisor use Linux namespaces and process control)"
            ))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
