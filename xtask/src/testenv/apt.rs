//! Debian packages through apt: which of a list are missing (one `dpkg-query` for all,
//! so a machine that has them pays a few milliseconds), and installing those, as root.

use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};

use crate::run::{output, run as sh};

// apt must never wait forever on a mirror that does not answer; and it waits (up to
// five minutes) for the dpkg lock instead of failing at once, since `cargo xtask test`
// builds the releases beside the lints, whose Python tools may install a package too,
// and testenv's own threads may install at the same time.
pub(crate) const APT_OPTS: [&str; 6] = [
    "-o",
    "Acquire::http::Timeout=60",
    "-o",
    "Acquire::Retries=3",
    "-o",
    "DPkg::Lock::Timeout=300",
];

/// The packages of `packages` that are not installed.
pub(super) fn missing<'a>(packages: &[&'a str]) -> Vec<&'a str> {
    // One query for the whole list; a package dpkg has never heard of is reported on
    // stderr and left out of stdout, so it counts as missing too.
    // (It exits 1 then, so its status says nothing about the others.)
    let listed = Command::new("dpkg-query")
        .args(["-W", "-f=${Package} ${Status}\\n"])
        .args(packages)
        .stderr(Stdio::null())
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap_or_default();
    let installed: Vec<&str> = listed
        .lines()
        .filter(|l| l.ends_with(" install ok installed"))
        .filter_map(|l| l.split_whitespace().next())
        // `pkg:arch` for a package of another architecture.
        .map(|p| p.split(':').next().unwrap_or(p))
        .collect();
    packages
        .iter()
        .copied()
        .filter(|p| !installed.contains(p))
        .collect()
}

/// Held around every apt-get that takes a lock, by every thread of this process.
/// `DPkg::Lock::Timeout` waits for dpkg's lock only: `apt-get update` fails at once
/// (exit 100, "Could not get lock /var/lib/apt/lists/lock") while another update
/// runs, as two of testenv's threads did on a fresh machine.
static APT: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `f` holding [`APT`].
pub(crate) fn exclusive<T>(f: impl FnOnce() -> T) -> T {
    // A thread that panicked holding it left apt as apt leaves itself: go on.
    let _held = APT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    f()
}

/// `apt-get update`, then installs `packages` (nothing when empty).
pub(super) fn install(packages: &[&str]) -> anyhow::Result<()> {
    exclusive(|| update_and_install(packages))
}

fn update_and_install(packages: &[&str]) -> anyhow::Result<()> {
    let mut update = vec!["apt-get"];
    update.extend(APT_OPTS);
    update.push("update");
    sh(&mut as_root(&update)?)
        .context("apt-get update failed (is the Debian mirror reachable?)")?;
    if packages.is_empty() {
        return Ok(());
    }
    let mut install = vec!["apt-get"];
    install.extend(APT_OPTS);
    install.extend(["install", "-y", "--no-install-recommends"]);
    install.extend(packages);
    sh(as_root(&install)?.env("DEBIAN_FRONTEND", "noninteractive"))
}

/// Runs a command as root: directly when we are root, else through `sudo -n`.
pub(crate) fn as_root(args: &[&str]) -> anyhow::Result<Command> {
    let root = output("id", &["-u"]).is_some_and(|uid| uid.trim() == "0");
    if root {
        let mut cmd = Command::new(args[0]);
        cmd.args(&args[1..]);
        return Ok(cmd);
    }
    if which::which("sudo").is_ok()
        && Command::new("sudo")
            .args(["-n", "true"])
            .status()
            .is_ok_and(|s| s.success())
    {
        let mut cmd = Command::new("sudo");
        cmd.arg("-n").args(args);
        return Ok(cmd);
    }
    bail!(
        "`{}` needs root; run as root, give passwordless sudo, or run it yourself",
        args.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_package_dpkg_does_not_know_is_missing() {
        let missing = missing(&["kubeplug-no-such-package", "dpkg"]);
        // dpkg is on every Debian machine; elsewhere dpkg-query cannot run at all.
        if which::which("dpkg-query").is_ok() {
            assert_eq!(missing, ["kubeplug-no-such-package"]);
        } else {
            assert_eq!(missing, ["kubeplug-no-such-package", "dpkg"]);
        }
    }
}
