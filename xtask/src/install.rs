//! `cargo xtask install [--prefix DIR]`: installs the plugins the way krew does —
//! from the archive and manifests `dist` makes for this host, into
//! `DIR/store/<name>/<version>/`, with `DIR/bin/kubectl-<name, - as _>` links and krew
//! receipts (source `detached`, as after `krew install --manifest`, so
//! `kubectl krew uninstall` works) — then adds what krew cannot:
//!
//! - the completion helpers kubectl ≥ 1.26 runs, `DIR/bin/kubectl_complete-<…>`,
//!   relative links to the plugin links (so they survive upgrades);
//! - clap_complete scripts for bash, zsh and fish under `DIR/share/`.
//!
//! The default DIR is krew's root (`$KREW_ROOT`, else `~/.krew`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::flags;
use crate::targets::{self, Target};
use krew::install;

pub fn run(flags: &flags::Install) -> anyhow::Result<()> {
    let prefix = match &flags.prefix {
        Some(p) => p.clone(),
        None => default_prefix()?,
    };
    std::fs::create_dir_all(&prefix)
        .with_context(|| format!("cannot create {}", prefix.display()))?;
    let prefix = prefix.canonicalize()?;
    let host = targets::host_triple()?;
    let target = Target::from_triple(&host)
        .with_context(|| format!("{host}: krew has no platform for this host"))?;
    let dist = crate::dist::dist(&flags::Dist {
        targets: if flags.no_build {
            Vec::new()
        } else {
            vec![host.clone()]
        },
        profile: flags.profile.clone(),
        out: flags.out.clone(),
        no_build: flags.no_build,
        prebuilt: false,
        cargo: None,
        base_url: None,
    })?;
    let mut installed = Vec::new();
    for (name, manifest_path) in &dist.manifests {
        let text = std::fs::read_to_string(manifest_path)?;
        let manifest = krew::parse(&text)?;
        let platform = manifest
            .platform_for(target.os, target.arch)
            .with_context(|| {
                format!("plugin {name:?} does not offer installation for this platform")
            })?;
        let archive_name = platform.uri.rsplit('/').next().unwrap_or_default();
        let archive_path = dist.out.join(archive_name);
        let bytes = std::fs::read(&archive_path)
            .with_context(|| format!("cannot read {}", archive_path.display()))?;
        let done = install::install(&prefix, &manifest, &text, platform, &bytes)?;
        let bin_name = done
            .link
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let helper = completion_helper(&prefix, &bin_name)?;
        scripts(&prefix, &done.link, &bin_name);
        installed.push((name.clone(), done, helper));
    }
    println!("Installed into {}:", prefix.display());
    for (name, done, helper) in &installed {
        println!(
            "  kubectl {name:<16} {} -> {}",
            done.link.display(),
            done.bin.display()
        );
        println!(
            "  {:<24} {} -> {}",
            "(completion)",
            helper.display(),
            done.link.file_name().unwrap_or_default().to_string_lossy()
        );
    }
    let bin = prefix.join("bin");
    let on_path =
        std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d == bin));
    if on_path {
        println!("\n{} is already on your PATH.", bin.display());
    } else {
        println!(
            "\nAdd the plugins to your PATH (e.g. in ~/.bashrc or ~/.zshrc):\n\n  export PATH=\"{}:$PATH\"",
            bin.display()
        );
    }
    println!(
        "\nCompletion through kubectl (1.26+) works once `source <(kubectl completion bash)` (or zsh/fish) is set up.\n\
         Scripts for running the binaries by their own names are in {}.",
        prefix.join("share").display()
    );
    Ok(())
}

fn default_prefix() -> anyhow::Result<PathBuf> {
    if let Some(root) = std::env::var_os("KREW_ROOT").filter(|r| !r.is_empty()) {
        return Ok(PathBuf::from(root));
    }
    let home = std::env::var_os("HOME").context("HOME is not set; pass --prefix")?;
    Ok(PathBuf::from(home).join(".krew"))
}

/// `bin/kubectl_complete-run_pod` → `kubectl-run_pod` (relative, next to it).
#[cfg(unix)]
fn completion_helper(prefix: &Path, bin_name: &str) -> anyhow::Result<PathBuf> {
    let rest = bin_name
        .strip_prefix("kubectl-")
        .with_context(|| format!("{bin_name}: not a kubectl plugin name"))?;
    let helper = prefix.join("bin").join(format!("kubectl_complete-{rest}"));
    match std::fs::symlink_metadata(&helper) {
        Ok(m) if m.file_type().is_symlink() => std::fs::remove_file(&helper)?,
        Ok(_) => bail!(
            "{} exists and is not a link; not replacing it",
            helper.display()
        ),
        Err(_) => {}
    }
    std::os::unix::fs::symlink(bin_name, &helper)
        .with_context(|| format!("cannot create {}", helper.display()))?;
    Ok(helper)
}

/// Writes the clap_complete scripts where the shells' completion loaders look
/// (relative to the prefix). A plugin that cannot print them is reported, not fatal.
fn scripts(prefix: &Path, link: &Path, bin_name: &str) {
    for (shell, rel) in [
        (
            "bash",
            format!("share/bash-completion/completions/{bin_name}"),
        ),
        ("zsh", format!("share/zsh/site-functions/_{bin_name}")),
        (
            "fish",
            format!("share/fish/vendor_completions.d/{bin_name}.fish"),
        ),
    ] {
        let out = Command::new(link).args(["completion", shell]).output();
        match out {
            Ok(out) if out.status.success() && !out.stdout.is_empty() => {
                let path = prefix.join(rel);
                if let Some(parent) = path.parent() {
                    let _ = std::fs::create_dir_all(parent);
                }
                if let Err(e) = std::fs::write(&path, &out.stdout) {
                    eprintln!("install: cannot write {}: {e}", path.display());
                }
            }
            _ => eprintln!("install: {bin_name} cannot print a {shell} completion script; skipped"),
        }
    }
}
