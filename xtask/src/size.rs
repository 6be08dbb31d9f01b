//! `cargo xtask size`: the release binaries against their size budget.
//!
//! The budget: every plugin binary at most 5 MiB, stripped, as built by the
//! release profile (fat LTO, `codegen-units = 1`, `panic = "abort"`, `strip = true`)
//! for Linux with glibc, the build `cargo xtask install` makes and the one measured
//! here; 6 MiB for the other release targets ([`budget`]).
//! The check builds the binaries the way `cargo xtask dist` does (`--locked`, the
//! release build of [`crate::release`], `--target` when given) unless `--bin-dir` names them, prints each
//! size against the budget and fails when one is over. `dist` prints the same lines
//! while packing a release build, and refuses to pack one that is over, so every
//! release runner checks its own target.

use std::path::Path;

use anyhow::{Context, bail};

use crate::flags;

/// Every plugin binary of a glibc Linux build, stripped, at most this many bytes.
pub const BUDGET: u64 = 5 * 1024 * 1024;

/// The budget of the other release targets.
///
/// Why more: a static musl binary carries musl's C library and is linked by GNU ld,
/// which has no identical code folding, and macOS's and Windows' linkers cannot be run
/// here to measure. Measured on 2026-12-07 (`cargo xtask size --target
/// x86_64-unknown-linux-musl`, the release workflow's own build): 5.17–5.42 MB, 0.24
/// MB more than the glibc build at most. The 5 MiB budget holds where it is measured.
pub const OTHER_TARGETS_BUDGET: u64 = 6 * 1024 * 1024;

/// The budget of a binary for `triple`.
pub fn budget(triple: &str) -> u64 {
    if triple.ends_with("-linux-gnu") {
        BUDGET
    } else {
        OTHER_TARGETS_BUDGET
    }
}

pub fn run(flags: &flags::Size) -> anyhow::Result<()> {
    let ws = crate::metadata::load()?;
    let bins: Vec<String> = ws.plugins.iter().map(|p| p.bin.clone()).collect();
    let triple = match &flags.target {
        Some(t) => t.clone(),
        None => crate::targets::host_triple()?,
    };
    let dir = match &flags.bin_dir {
        Some(dir) => dir.clone(),
        None => {
            let names: Vec<&str> = bins.iter().map(String::as_str).collect();
            let cross = flags.target.is_some();
            for mut cmd in crate::release::build_commands(None, &names, &triple, cross, "release") {
                crate::run::run(&mut cmd)?;
            }
            crate::targets::bin_dir(
                &crate::paths::target_dir(),
                flags.target.as_deref(),
                "release",
            )
        }
    };
    let limit = budget(&triple);
    let windows = flags
        .target
        .as_deref()
        .is_some_and(|t| t.contains("windows"))
        || (flags.target.is_none() && cfg!(windows));
    let suffix = if windows { ".exe" } else { "" };
    let mut over = Vec::new();
    for bin in &bins {
        let name = format!("{bin}{suffix}");
        let bytes = size_of(&dir.join(&name))?;
        println!("{}", line(&name, bytes, limit));
        if bytes > limit {
            over.push(name);
        }
    }
    if !over.is_empty() {
        bail!("over the {} budget: {}", human(limit), over.join(", "));
    }
    Ok(())
}

/// A size in MiB with two decimals, as the budget lines and `dist` print sizes.
pub fn human(bytes: u64) -> String {
    format!("{:.2} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn size_of(path: &Path) -> anyhow::Result<u64> {
    Ok(std::fs::metadata(path)
        .with_context(|| format!("cannot read {}", path.display()))?
        .len())
}

/// `kubectl-run_pod   8.02 MiB  (budget 6.00 MiB: 2.02 MiB over)`.
pub fn line(name: &str, bytes: u64, budget: u64) -> String {
    let verdict = if bytes <= budget {
        format!("{} under", human(budget - bytes))
    } else {
        format!("{} over", human(bytes - budget))
    };
    format!(
        "{name:<32} {:>10}  (budget {}: {verdict})",
        human(bytes),
        human(budget)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_line_says_how_far_from_the_budget() {
        let line_over = line("kubectl-run_pod", BUDGET + 1024 * 1024, BUDGET);
        assert!(line_over.contains("1.00 MiB over"), "{line_over}");
        let line_under = line("kubectl-run_pod", BUDGET - 512 * 1024, BUDGET);
        assert!(line_under.contains("0.50 MiB under"), "{line_under}");
        assert!(line("x", BUDGET, BUDGET).contains("under"));
        assert!(line("x", BUDGET, BUDGET).contains("budget 5.00 MiB"));
    }

    #[test]
    fn glibc_builds_have_the_5_mib_budget_the_others_6() {
        assert_eq!(budget("x86_64-unknown-linux-gnu"), 5 * 1024 * 1024);
        assert_eq!(budget("aarch64-unknown-linux-gnu"), 5 * 1024 * 1024);
        for other in [
            "x86_64-unknown-linux-musl",
            "aarch64-apple-darwin",
            "x86_64-pc-windows-msvc",
        ] {
            assert_eq!(budget(other), 6 * 1024 * 1024, "{other}");
        }
    }
}
