//! The release targets, declared once: the Rust target triples we ship, and the
//! os/arch pair (Go's `GOOS`/`GOARCH` names, which krew uses) each one serves.
//!
//! Linux builds are static (musl) so that they run on any distribution, old glibc
//! and Alpine included — the most common complaint about Rust plugins in krew-index.
//! `cargo xtask dist` builds the host here and every other target whose standard
//! library is installed; `.github/workflows/release.yml` builds each on a runner
//! that has its toolchain.

use std::path::{Path, PathBuf};

/// Archive format krew accepts (it sniffs the content, the extension is for people).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    TarGz,
    Zip,
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::TarGz => "tar.gz",
            Format::Zip => "zip",
        }
    }
}

/// One release target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub triple: String,
    pub os: &'static str,
    pub arch: &'static str,
}

/// The targets a release ships.
pub const RELEASE: [&str; 5] = [
    "x86_64-unknown-linux-musl",
    "aarch64-unknown-linux-musl",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
];

impl Target {
    /// The target for a triple, if it maps to a platform krew knows.
    pub fn from_triple(triple: &str) -> Option<Self> {
        let arch = match triple.split('-').next()? {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            "i686" | "i586" => "386",
            "armv7" | "arm" => "arm",
            "powerpc64le" => "ppc64le",
            _ => return None,
        };
        let os = if triple.contains("-linux-") {
            "linux"
        } else if triple.contains("-apple-darwin") {
            "darwin"
        } else if triple.contains("-windows-") {
            "windows"
        } else {
            return None;
        };
        Some(Self {
            triple: triple.to_string(),
            os,
            arch,
        })
    }

    pub fn format(&self) -> Format {
        if self.os == "windows" {
            Format::Zip
        } else {
            Format::TarGz
        }
    }

    /// `.exe` on Windows.
    pub fn exe_suffix(&self) -> &'static str {
        if self.os == "windows" { ".exe" } else { "" }
    }

    /// Whether this is one of the declared release targets.
    pub fn is_release(&self) -> bool {
        RELEASE.contains(&self.triple.as_str())
    }
}

/// The host's triple, from `rustc -vV`.
pub fn host_triple() -> anyhow::Result<String> {
    rustc_verbose("host").ok_or_else(|| anyhow::anyhow!("`rustc -vV` printed no host triple"))
}

/// One field of `rustc -vV` (`host`, `release`, …); `None` when rustc cannot be run or
/// prints no such field.
pub fn rustc_verbose(field: &str) -> Option<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = crate::run::output(rustc, &["-vV"])?;
    out.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(": "))
        .map(|v| v.trim().to_string())
}

/// Whether the standard library for `triple` is installed (a cross build can start).
pub fn std_installed(triple: &str) -> bool {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    crate::run::output(rustc, &["--print", "sysroot"])
        .map(|sysroot| {
            Path::new(sysroot.trim())
                .join("lib/rustlib")
                .join(triple)
                .join("lib")
                .is_dir()
        })
        .unwrap_or(false)
}

/// Where cargo puts the binaries of `profile` for `triple` (`None` = the host build).
pub fn bin_dir(target_dir: &Path, triple: Option<&str>, profile: &str) -> PathBuf {
    let profile_dir = match profile {
        "dev" | "test" => "debug",
        "release" | "bench" => "release",
        other => other,
    };
    match triple {
        Some(t) => target_dir.join(t).join(profile_dir),
        None => target_dir.join(profile_dir),
    }
}
