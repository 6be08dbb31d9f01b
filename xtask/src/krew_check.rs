//! `cargo xtask krew-check [DIR]`: checks the manifests `dist` wrote (`DIR/krew/*.yaml`)
//! or an index (`DIR/plugins/*.yaml`) the way krew and krew-index CI would, against the
//! archives in DIR. Fails with krew's reason. (The release-bot templates in `.krew/` are
//! generated files: `cargo xtask codegen --check` checks them.)

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::flags;
use krew::check;

pub fn run(flags: &flags::KrewCheck) -> anyhow::Result<()> {
    let dir = flags.dir.clone().unwrap_or_else(crate::dist::default_out);
    let archives = flags.archives.clone().unwrap_or_else(|| dir.clone());
    let manifests = manifests_in(&dir)?;
    let mut failures = Vec::new();
    for path in &manifests {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let file_name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let archive = |uri: &str| -> Option<Vec<u8>> {
            let base = uri.rsplit('/').next()?;
            std::fs::read(archives.join(base)).ok()
        };
        match check::check(&file_name, &text, &archive) {
            Ok(report) => {
                eprintln!(
                    "krew-check: {}: ok ({})",
                    path.display(),
                    report.platforms.join(", ")
                );
                for warning in report.warnings {
                    eprintln!("krew-check: {}: warning: {warning}", path.display());
                }
            }
            Err(reason) => {
                eprintln!("krew-check: {}: {reason}", path.display());
                failures.push(path.clone());
            }
        }
    }
    if !failures.is_empty() {
        bail!("{} file(s) failed the krew checks", failures.len());
    }
    Ok(())
}

fn manifests_in(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let sub = ["krew", "plugins"]
        .iter()
        .map(|s| dir.join(s))
        .find(|d| d.is_dir())
        .with_context(|| {
            format!(
                "{} has neither krew/ nor plugins/; run `cargo xtask dist` first",
                dir.display()
            )
        })?;
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&sub)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    if paths.is_empty() {
        bail!("no manifests in {}", sub.display());
    }
    Ok(paths)
}
