//! Kubernetes 1.20.2 from Debian's source package.
//!
//! No package registry ships kube-apiserver 1.20, but Debian's source package `kubernetes`
//! (bookworm: 1.20.5+really1.20.2) holds the complete 1.20.2 tree with `vendor/`, and
//! Debian ships Go 1.19 and etcd 3.4. The build, once, on two cores takes about ten
//! minutes:
//! 1. a `deb-src` entry for bookworm; `apt-get source --download-only kubernetes`;
//! 2. `golang-go etcd-server rsync dpkg-dev golang-github-modern-go-reflect2-dev`;
//! 3. replace `vendor/github.com/modern-go/reflect2` (1.0.1) with Debian's 1.0.2:
//!    1.0.1 is broken under Go ≥ 1.18 and the apiserver built with it segfaults
//!    ("fault in map iteration") when it JSON-encodes some responses;
//! 4. `make WHAT="cmd/kube-apiserver cmd/kube-controller-manager"`, and the node's
//!    `cmd/kube-scheduler cmd/kubelet cmd/kube-proxy`, with Debian's Go first on
//!    `PATH` (a newer Go may come first on the machine; 1.20.2 needs 1.19) (the Makefile runs
//!    the code generators a plain `go build` would miss); a failed attempt leaves
//!    empty generator binaries in `_output`, so it is removed before the one retry.
//!
//! The binaries land in the user cache, keyed by version, outside the repository.
//! Every step is skipped when its result is already there, and only the programs
//! missing are made: a cache built before the node was holds the control plane, and
//! then only the node's programs are built (the source tree, deleted after each build,
//! is fetched again for them).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use localcluster::Release;

use super::Wanted;
use super::apt::{self, APT_OPTS, as_root};
use crate::run::{run as sh, run_logged};

const APT_PACKAGES: [&str; 5] = [
    "golang-go",
    "etcd-server",
    "rsync",
    "dpkg-dev",
    "golang-github-modern-go-reflect2-dev",
];
/// Where `golang-go` puts its `go` (a link to the release Debian ships, 1.19 on bookworm).
const DEBIAN_GO_BIN: &str = "/usr/lib/go/bin";
const DEB_SRC_FILE: &str = "/etc/apt/sources.list.d/kubeplug-deb-src.sources";
const REFLECT2_SRC: &str = "/usr/share/gocode/src/github.com/modern-go/reflect2";

/// The control plane's programs (etcd is Debian's own).
pub(super) const CONTROL_PLANE: [&str; 2] = ["kube-apiserver", "kube-controller-manager"];
/// The node's: its kubelet and kube-proxy, and the scheduler, which binds pods to it
/// (the project's first builds had none).
pub(super) const NODE: [&str; 3] = ["kube-scheduler", "kubelet", "kube-proxy"];

pub(super) fn build(wanted: Wanted) -> anyhow::Result<()> {
    let release = Release::V1_20;
    let programs = programs(wanted);
    if programs.is_empty() {
        return Ok(());
    }
    let cache = release.cache_dir();
    let work = cache.join("build");
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let log = cache.join("build.log");
    eprintln!(
        "testenv: building {} of Kubernetes {release} from Debian's source package (once; ~10 minutes)",
        programs.join(" ")
    );
    eprintln!(
        "testenv: step 1/4: Debian packages {}",
        APT_PACKAGES.join(" ")
    );
    install_packages()?;

    eprintln!("testenv: step 2/4: source package");
    let src = fetch_source(&work, &log)?;

    eprintln!("testenv: step 3/4: vendor reflect2 1.0.2 (1.0.1 crashes under Go >= 1.18)");
    replace_reflect2(&src)?;

    eprintln!(
        "testenv: step 4/4: make {} (log: {})",
        programs.join(" "),
        log.display()
    );
    let what: Vec<String> = programs.iter().map(|p| format!("cmd/{p}")).collect();
    let make = || {
        let mut cmd = Command::new("make");
        cmd.current_dir(&src)
            .arg(format!("WHAT={}", what.join(" ")));
        pin_debian_go(&mut cmd)?;
        run_logged(&mut cmd, &log)
    };
    if let Err(first) = make() {
        eprintln!("testenv: build failed, retrying once from a clean _output: {first:#}");
        let _ = std::fs::remove_dir_all(src.join("_output"));
        make().context("building Kubernetes from source failed twice")?;
    }

    let built = src.join("_output").join("bin");
    let bin = release.bin_dir();
    std::fs::create_dir_all(&bin)?;
    for name in programs {
        let from = built.join(name);
        let to = bin.join(name);
        // Copy to a temporary name first so an interrupted copy is never mistaken for a binary.
        let tmp = bin.join(format!(".{name}.tmp"));
        std::fs::copy(&from, &tmp).with_context(|| format!("cannot copy {}", from.display()))?;
        std::fs::rename(&tmp, &to)?;
    }
    // The source tree is over a gigabyte once built; the binaries are all we need.
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// The programs `wanted` names.
fn programs(wanted: Wanted) -> Vec<&'static str> {
    wanted
        .control_plane
        .then_some(CONTROL_PLANE.as_slice())
        .into_iter()
        .chain(wanted.node.then_some(NODE.as_slice()))
        .flatten()
        .copied()
        .collect()
}

/// Kubernetes 1.20.2 builds with Debian bookworm's Go 1.19 and not with a current Go
/// (its Makefile and vendored code predate Go 1.21's toolchain rules), yet a machine may
/// put a newer Go first on `PATH` (`/usr/local/go/bin`). So the build runs with the Go
/// that `golang-go` installed, whatever comes first on `PATH`, and never switches
/// toolchains on its own.
fn pin_debian_go(cmd: &mut Command) -> anyhow::Result<()> {
    let debian_go = Path::new(DEBIAN_GO_BIN);
    if !debian_go.join("go").is_file() {
        bail!(
            "{} is missing; install golang-go (Debian's Go builds Kubernetes {})",
            debian_go.join("go").display(),
            Release::V1_20
        );
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::iter::once(debian_go.to_path_buf()).chain(std::env::split_paths(&path));
    cmd.env("PATH", std::env::join_paths(dirs)?)
        .env("GOTOOLCHAIN", "local")
        .env_remove("GOROOT");
    Ok(())
}

fn install_packages() -> anyhow::Result<()> {
    let missing = apt::missing(&APT_PACKAGES);
    let need_src = !has_deb_src()?;
    if need_src {
        // deb822 format, the default on Debian 12+. Bookworm's source package is the one
        // this build is known to work with, whatever the machine's own release.
        let entry = "Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n";
        let tmp = std::env::temp_dir().join("kubeplug-deb-src.sources");
        std::fs::write(&tmp, entry)?;
        sh(&mut as_root(&[
            "install",
            "-m",
            "0644",
            &tmp.to_string_lossy(),
            DEB_SRC_FILE,
        ])?)?;
    }
    if missing.is_empty() && !need_src {
        eprintln!("testenv: packages already installed");
        return Ok(());
    }
    apt::install(&missing)
}

/// Whether apt already knows a bookworm `deb-src` (ours or the machine's own).
fn has_deb_src() -> anyhow::Result<bool> {
    if Path::new(DEB_SRC_FILE).is_file() {
        return Ok(true);
    }
    let mut files = vec![PathBuf::from("/etc/apt/sources.list")];
    if let Ok(dir) = std::fs::read_dir("/etc/apt/sources.list.d") {
        files.extend(dir.filter_map(|e| e.ok()).map(|e| e.path()));
    }
    Ok(files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .any(|text| {
            text.lines().any(|l| {
                let l = l.trim();
                (l.starts_with("deb-src ") && l.contains(" bookworm ")) || l == "Types: deb-src"
            }) && text.contains("bookworm")
        }))
}

/// Downloads and unpacks the source package; returns the unpacked tree.
fn fetch_source(work: &Path, log: &Path) -> anyhow::Result<PathBuf> {
    let src = work.join("src");
    if src.join("Makefile").is_file() && src.join(".kubeplug-unpacked").is_file() {
        eprintln!("testenv: source tree already unpacked at {}", src.display());
        return Ok(src);
    }
    let dsc = find_dsc(work);
    if dsc.is_none() {
        let mut cmd = Command::new("apt-get");
        cmd.current_dir(work).args(APT_OPTS).args([
            "source",
            "--download-only",
            "kubernetes/bookworm",
        ]);
        run_logged(&mut cmd, log)
            .context("downloading Debian's kubernetes source package failed")?;
    }
    let dsc = find_dsc(work).context("apt-get source left no kubernetes_*.dsc behind")?;
    let _ = std::fs::remove_dir_all(&src);
    let mut cmd = Command::new("dpkg-source");
    cmd.current_dir(work).arg("-x").arg(&dsc).arg("src");
    run_logged(&mut cmd, log)?;
    std::fs::write(src.join(".kubeplug-unpacked"), "")?;
    Ok(src)
}

fn find_dsc(dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("kubernetes_") && n.ends_with(".dsc"))
        })
}

fn replace_reflect2(src: &Path) -> anyhow::Result<()> {
    let from = Path::new(REFLECT2_SRC);
    if !from.join("reflect2.go").is_file() {
        bail!(
            "{} is missing; install golang-github-modern-go-reflect2-dev",
            from.display()
        );
    }
    let to = src.join("vendor/github.com/modern-go/reflect2");
    let _ = std::fs::remove_dir_all(&to);
    std::fs::create_dir_all(&to)?;
    for entry in std::fs::read_dir(from)? {
        let path = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        // Sources only: the tests would pull test-only imports into the vendor tree.
        if path.is_file() && !name.ends_with("_test.go") {
            std::fs::copy(&path, to.join(name))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_with_its_control_plane_makes_only_its_node() {
        let node_only = Wanted {
            control_plane: false,
            node: true,
        };
        assert_eq!(
            programs(node_only),
            ["kube-scheduler", "kubelet", "kube-proxy"]
        );
        let everything = Wanted {
            control_plane: true,
            node: true,
        };
        assert_eq!(programs(everything).len(), 5);
    }
}
