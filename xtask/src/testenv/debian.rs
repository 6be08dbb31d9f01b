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
//! 4. `make WHAT="cmd/kube-apiserver cmd/kube-controller-manager"` with Debian's Go first on
//!    `PATH` (a newer Go may come first on the machine; 1.20.2 needs 1.19) (the Makefile runs
//!    the code generators a plain `go build` would miss); a failed attempt leaves
//!    empty generator binaries in `_output`, so it is removed before the one retry.
//!
//! The binaries land in the user cache, keyed by version, outside the repository.
//! Every step is skipped when its result is already there.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use localcluster::Release;

use crate::run::{output, run as sh, run_logged};

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
// apt must never wait forever on a mirror that does not answer; and it waits (up to
// five minutes) for the dpkg lock instead of failing at once, since `cargo xtask test`
// builds this release beside the lints, whose Python tools may install a package too.
pub(crate) const APT_OPTS: [&str; 6] = [
    "-o",
    "Acquire::http::Timeout=60",
    "-o",
    "Acquire::Retries=3",
    "-o",
    "DPkg::Lock::Timeout=300",
];

pub(super) fn build() -> anyhow::Result<()> {
    let release = Release::V1_20;
    let cache = release.cache_dir();
    let work = cache.join("build");
    std::fs::create_dir_all(&work).with_context(|| format!("cannot create {}", work.display()))?;
    let log = cache.join("build.log");
    eprintln!(
        "testenv: building Kubernetes {release} from Debian's source package (once; ~10 minutes)"
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
        "testenv: step 4/4: make kube-apiserver kube-controller-manager (log: {})",
        log.display()
    );
    let make = || {
        let mut cmd = Command::new("make");
        cmd.current_dir(&src)
            .arg("WHAT=cmd/kube-apiserver cmd/kube-controller-manager");
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
    for name in ["kube-apiserver", "kube-controller-manager"] {
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

/// Runs a command as root: directly when we are root, else through `sudo -n`.
pub(crate) fn as_root(args: &[&str]) -> anyhow::Result<Command> {
    let root = output("id", &["-u"]).is_some_and(|uid| uid.trim() == "0");
    if root {
        let mut cmd = Command::new(args[0]);
        cmd.args(&args[1..]);
        return Ok(cmd);
    }
    if which_exists("sudo")
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
        "`{}` needs root; run as root, give passwordless sudo, or install the packages yourself: apt-get install {}",
        args.join(" "),
        APT_PACKAGES.join(" ")
    )
}

fn which_exists(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

fn install_packages() -> anyhow::Result<()> {
    let missing: Vec<&str> = APT_PACKAGES
        .iter()
        .copied()
        .filter(|p| {
            !output("dpkg-query", &["-W", "-f=${Status}", p])
                .is_some_and(|s| s.contains("install ok installed"))
        })
        .collect();
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
    let mut update = vec!["apt-get"];
    update.extend(APT_OPTS);
    update.push("update");
    sh(&mut as_root(&update)?)
        .context("apt-get update failed (is the Debian mirror reachable?)")?;
    if !missing.is_empty() {
        let mut install = vec!["apt-get"];
        install.extend(APT_OPTS);
        install.extend(["install", "-y", "--no-install-recommends"]);
        install.extend(&missing);
        sh(as_root(&install)?.env("DEBIAN_FRONTEND", "noninteractive"))?;
    }
    Ok(())
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
