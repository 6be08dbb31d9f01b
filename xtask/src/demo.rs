//! `cargo xtask demo`: bring up the local cluster, put the plugins on PATH, and run
//! each of them through the real `kubectl`, the way a user would.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::Context;

use crate::flags;

const PLUGINS: [&str; 3] = [
    "kubectl-run_pod",
    "kubectl-create_file",
    "kubectl-rolling_update",
];

pub fn run(flags: &flags::Demo) -> anyhow::Result<()> {
    crate::testenv::run(&flags::Testenv { force: false })?;
    crate::run::run(
        Command::new(env!("CARGO"))
            .current_dir(crate::project_root())
            .args(["build", "--quiet", "--workspace", "--bins"]),
    )?;
    let state_dir = crate::cluster::default_state_dir();
    let state = match crate::cluster::running(&state_dir)? {
        Some(state) => {
            eprintln!("demo: using the running cluster ({})", state.server);
            state
        }
        None => crate::cluster::up(&state_dir, false, 1)?,
    };
    let plugins = plugin_dir()?;
    let path = std::env::join_paths(std::iter::once(plugins.clone()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))?;
    let kubectl = |args: &[&str]| -> anyhow::Result<()> {
        println!("\n$ kubectl {}", args.join(" "));
        let status = Command::new("kubectl")
            .args(args)
            .env("PATH", &path)
            .env("KUBECONFIG", &state.kubeconfig)
            .status()
            .context("cannot run kubectl (is it installed?)")?;
        if !status.success() {
            println!("(exit status {})", status.code().unwrap_or(-1));
        }
        Ok(())
    };

    println!(
        "== the plugins, found by kubectl on PATH ({})",
        plugins.display()
    );
    kubectl(&["plugin", "list"])?;
    println!("\n== the local cluster: a real kube-apiserver with a simulated node");
    kubectl(&["get", "nodes", "-o", "wide"])?;
    for plugin in ["run-pod", "create-file", "rolling-update"] {
        println!("\n== kubectl {plugin}");
        kubectl(&[plugin, "--help"])?;
    }

    if flags.down {
        crate::cluster::down(&state_dir)?;
    } else {
        println!(
            "\nThe cluster keeps running. Try it yourself:\n  export KUBECONFIG={}\n  export PATH={}:$PATH\nStop it with `cargo xtask cluster down`.",
            state.kubeconfig.display(),
            plugins.display()
        );
    }
    Ok(())
}

/// `target/demo-plugins`: links to the three binaries only (target/debug also holds
/// `kubectl-*.d` files that `kubectl plugin list` would warn about).
fn plugin_dir() -> anyhow::Result<PathBuf> {
    let bin = crate::target_dir().join("debug");
    let dir = crate::target_dir().join("demo-plugins");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    for name in PLUGINS {
        link(&bin.join(name), &dir.join(name))?;
    }
    Ok(dir)
}

fn link(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::os::unix::fs::symlink(from, to).with_context(|| format!("cannot link {}", to.display()))
}
