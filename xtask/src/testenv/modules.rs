//! The current Kubernetes release from its published Go modules.
//!
//! `xtask/testenv/kubernetes` is a module of ours whose go.mod requires
//! `k8s.io/kubernetes` at the pinned release and replaces each of its staging modules
//! (`k8s.io/api`, `k8s.io/client-go`, …: `./staging/…` in upstream's go.mod, which a
//! dependency cannot use) with the published `v0.MINOR.PATCH`; its go.sum fixes every
//! checksum. The release's own commands (the control plane's, and the node's kubelet
//! and kube-proxy) are built with it as the main module, with
//! `-trimpath -s -w` and the version variables of upstream's `hack/lib/version.sh`
//! (without `gitMajor`/`gitMinor`, `/version` reports v0.0.0 and the server misjudges
//! which deprecated APIs it still serves). Upstream's static linking and build tags
//! are left out: they are about shipping the binaries to other machines, and with the
//! go command's defaults a rebuild (another checkout, `--force`) reuses Go's build
//! cache.
//!
//! `xtask/testenv/etcd` does the same for etcd's server module, at the version the
//! release's go.mod names.
//!
//! The go command downloads modules through the module proxy and checks them against
//! go.sum (`-mod=readonly`: a build never changes the pins). A go.mod that asks for a
//! newer Go than the machine's is met by Go's own toolchain switch (Go ≥ 1.21).

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use localcluster::Release;

use super::Wanted;
use super::progress::{Counted, Display, run_counted};
use crate::run::output;

/// The control plane's commands built from `k8s.io/kubernetes`, by the name each is
/// installed under and its `go build` package path (etcd comes from its own module).
pub(super) const CONTROL_PLANE: [(&str, &str); 4] = [
    ("kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver"),
    (
        "kube-controller-manager",
        "k8s.io/kubernetes/cmd/kube-controller-manager",
    ),
    ("kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler"),
    ("kubectl", "k8s.io/kubernetes/cmd/kubectl"),
];
/// The node's, from the same module: a cache built before the node was holds the
/// control plane, and then only these are built.
pub(super) const NODE: [(&str, &str); 2] = [
    ("kubelet", "k8s.io/kubernetes/cmd/kubelet"),
    ("kube-proxy", "k8s.io/kubernetes/cmd/kube-proxy"),
];

/// Builds what `wanted` names: the control plane (with etcd), the node, or both.
pub(super) fn build(release: Release, wanted: Wanted, display: Display) -> anyhow::Result<()> {
    let commands = commands(wanted);
    if commands.is_empty() {
        return Ok(());
    }
    let go = go_command()?;
    let modules = crate::paths::project_root().join("xtask").join("testenv");
    let cache = release.cache_dir();
    let incoming = cache.join("incoming");
    let _ = std::fs::remove_dir_all(&incoming);
    std::fs::create_dir_all(&incoming)
        .with_context(|| format!("cannot create {}", incoming.display()))?;
    let log = cache.join("build.log");
    let names: Vec<&str> = commands.iter().map(|(name, _)| *name).collect();
    let steps = if wanted.control_plane { 2 } else { 1 };
    eprintln!(
        "testenv: building {} of Kubernetes {release} from its Go modules (once; ~20 minutes on two cores for all; log: {})",
        names.join(" "),
        log.display()
    );
    check_pin(&modules.join("kubernetes"), release)?;

    eprintln!("testenv: step 1/{steps}: {}", names.join(" "));
    let packages: Vec<&str> = commands.iter().map(|(_, package)| *package).collect();
    let kube = GoBuild {
        go: &go,
        module: &modules.join("kubernetes"),
        out: &format!("{}/", incoming.display()),
        ldflags: &format!("-s -w {}", version_ldflags(release)),
        packages: &packages,
        log: &log,
        display,
    };
    kube.run(&format!("Kubernetes {release}"))
        .context("building Kubernetes from its Go modules failed")?;

    let mut installed = names;
    if wanted.control_plane {
        eprintln!("testenv: step 2/2: etcd");
        let etcd = GoBuild {
            go: &go,
            module: &modules.join("etcd"),
            out: &incoming.join("etcd").display().to_string(),
            ldflags: "-s -w",
            packages: &["."],
            log: &log,
            display,
        };
        etcd.run("etcd")
            .context("building etcd from its Go module failed")?;
        installed.push("etcd");
    }

    // Move into place only once everything built, so that a half-built release is
    // never found by `Binaries::locate`.
    let bin = release.bin_dir();
    std::fs::create_dir_all(&bin)?;
    for name in installed {
        std::fs::rename(incoming.join(name), bin.join(name))
            .with_context(|| format!("cannot move {name} into {}", bin.display()))?;
    }
    let _ = std::fs::remove_dir_all(&incoming);
    Ok(())
}

/// The commands of `k8s.io/kubernetes` that `wanted` names.
fn commands(wanted: Wanted) -> Vec<(&'static str, &'static str)> {
    wanted
        .control_plane
        .then_some(CONTROL_PLANE.as_slice())
        .into_iter()
        .chain(wanted.node.then_some(NODE.as_slice()))
        .flatten()
        .copied()
        .collect()
}

/// `go` from `PATH`, new enough to switch toolchains when a go.mod asks for it.
pub(super) fn go_command() -> anyhow::Result<String> {
    let Some(version) = output("go", &["env", "GOVERSION"]) else {
        bail!(
            "the current Kubernetes release is built from its Go modules, and `go` is not on PATH; install Go 1.21 or newer"
        );
    };
    let version = version.trim();
    let minor = version
        .strip_prefix("go1.")
        .and_then(|rest| rest.split(['.', 'r', 'b']).next())
        .and_then(|m| m.parse::<u32>().ok());
    if minor.is_none_or(|m| m < 21) {
        bail!(
            "`go` on PATH is {version}; the current Kubernetes release needs Go 1.21 or newer on PATH (it switches to the toolchain the release's go.mod names by itself)"
        );
    }
    Ok("go".into())
}

/// One `go build` in a wrapper module, with its progress shown.
struct GoBuild<'a> {
    go: &'a str,
    module: &'a Path,
    /// A file, or a directory ending in `/` for one binary per command.
    out: &'a str,
    ldflags: &'a str,
    packages: &'a [&'a str],
    log: &'a Path,
    display: Display,
}

impl GoBuild<'_> {
    /// Lists the packages the build needs (downloading the modules that hold them),
    /// then builds, counting the packages compiled out of that list.
    fn run(&self, name: &str) -> anyhow::Result<()> {
        let mut list = self.go(&["list", "-deps"]);
        list.args(self.packages);
        let listed = run_counted(
            &mut list,
            self.log,
            self.display,
            &Counted {
                label: &format!("{name}: downloading modules"),
                unit: "modules",
                total: None,
            },
            |line| line.starts_with("go: downloading "),
        )?;
        // `unsafe` is the compiler's own: it is never compiled, so never printed.
        let mut pending: HashSet<&str> = listed
            .lines()
            .map(str::trim)
            .filter(|p| !p.is_empty() && *p != "unsafe")
            .collect();
        let total = pending.len() as u64;
        let mut build = self.go(&["build", "-v", "-trimpath", "-o", self.out]);
        build
            .arg(format!("-ldflags={}", self.ldflags))
            .args(self.packages);
        run_counted(
            &mut build,
            self.log,
            self.display,
            &Counted {
                label: &format!("{name}: compiling"),
                unit: "packages",
                total: Some(total),
            },
            |line| pending.remove(line.trim()),
        )?;
        Ok(())
    }

    /// A go command in the wrapper module, with its pins enforced.
    fn go(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(self.go);
        cmd.current_dir(self.module)
            .args(args)
            .arg("-mod=readonly")
            // A go.work of the machine's must not take over our pins.
            .env("GOWORK", "off")
            .env_remove("GOFLAGS");
        cmd
    }
}

/// The wrapper module must pin the release we name: a mismatch would build one
/// version and label it another.
fn check_pin(module: &Path, release: Release) -> anyhow::Result<()> {
    let go_mod = module.join("go.mod");
    let text = std::fs::read_to_string(&go_mod)
        .with_context(|| format!("cannot read {}", go_mod.display()))?;
    let want = format!("k8s.io/kubernetes {}", release.version());
    if !text.lines().any(|l| l.trim() == want) {
        bail!(
            "{} does not require {want}; the release and its pin must change together",
            go_mod.display()
        );
    }
    Ok(())
}

/// `hack/lib/version.sh`'s `-X` flags, for both packages that carry the version.
fn version_ldflags(release: Release) -> String {
    let version = release.version();
    let minor = release.minor().to_string();
    // version.sh sets gitCommit and gitTreeState only from a git checkout, which a
    // module download is not; buildDate keeps component-base's fixed default, so that
    // two builds of one release report the same version.
    let vars = [
        ("gitVersion", version),
        ("gitMajor", "1"),
        ("gitMinor", minor.as_str()),
    ];
    let mut flags = Vec::new();
    for package in [
        "k8s.io/client-go/pkg/version",
        "k8s.io/component-base/version",
    ] {
        for (name, value) in vars {
            flags.push(format!("-X {package}.{name}={value}"));
        }
    }
    flags.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_variables_are_set_in_both_packages() {
        let flags = version_ldflags(Release::Current);
        for package in [
            "k8s.io/client-go/pkg/version",
            "k8s.io/component-base/version",
        ] {
            assert!(flags.contains(&format!("-X {package}.gitVersion=v1.37.2")));
            assert!(flags.contains(&format!("-X {package}.gitMajor=1")));
            assert!(flags.contains(&format!("-X {package}.gitMinor=37")));
        }
    }

    #[test]
    fn a_release_with_its_control_plane_builds_only_its_node() {
        let names = |control_plane, node| -> Vec<&str> {
            commands(Wanted {
                control_plane,
                node,
            })
            .into_iter()
            .map(|(name, _)| name)
            .collect()
        };
        assert_eq!(names(false, true), ["kubelet", "kube-proxy"]);
        assert_eq!(names(true, false).len(), 4);
        assert_eq!(names(true, true).len(), 6);
        assert!(names(false, false).is_empty());
        for (name, package) in commands(Wanted {
            control_plane: true,
            node: true,
        }) {
            assert_eq!(package, format!("k8s.io/kubernetes/cmd/{name}"));
        }
    }

    #[test]
    fn the_wrapper_module_pins_the_current_release() {
        let module = crate::paths::project_root().join("xtask/testenv/kubernetes");
        check_pin(&module, Release::Current).unwrap();
        let err = check_pin(&module, Release::V1_20).unwrap_err().to_string();
        assert!(err.contains("k8s.io/kubernetes v1.20.2"), "{err}");
    }
}
