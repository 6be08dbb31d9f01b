//! `krew-check` for one manifest: everything krew-index CI would do with it, offline —
//! decoding, [`validate`](crate::validate), then, for every platform, the install krew
//! would perform from the local archive (checksum, archive rules, file moves, `bin`),
//! the license check, and the rules krew leaves to chance: the binary must already be
//! executable in the archive (krew never runs chmod) and be an `.exe` on Windows.

use std::path::Path;

use crate::{PLATFORMS, install, validate};

/// What a passing check found.
#[derive(Debug, Default)]
pub struct Report {
    /// Reviewer-level remarks that do not fail the check.
    pub warnings: Vec<String>,
    /// `os/arch` of every platform installed.
    pub platforms: Vec<String>,
}

/// Checks the manifest `file_name` with contents `text`; `archive(uri)` returns the
/// bytes of the archive a platform's `uri` names, or `None` if it is not at hand.
pub fn check(
    file_name: &str,
    text: &str,
    archive: &dyn Fn(&str) -> Option<Vec<u8>>,
) -> Result<Report, String> {
    let plugin = crate::parse(text).map_err(|e| format!("failed to read plugin file: {e:#}"))?;
    validate::validate_manifest_file(Path::new(file_name), &plugin)?;
    let mut report = Report {
        warnings: validate::lints(&plugin),
        platforms: Vec::new(),
    };
    for (i, platform) in plugin.spec.platforms.iter().enumerate() {
        let fail = |e: String| format!("spec.platforms[{i}] failed to install: {e}");
        let selector = platform.selector.clone().unwrap_or_default();
        let Some((os, arch)) = PLATFORMS
            .iter()
            .find(|(os, arch)| selector.matches(os, arch))
        else {
            return Err(fail("no supported platform matched the selector".into()));
        };
        let bytes = archive(&platform.uri).ok_or_else(|| {
            fail(format!(
                "archive {:?} is not available locally",
                platform.uri
            ))
        })?;
        let root = tempfile::tempdir().map_err(|e| fail(e.to_string()))?;
        let store = root
            .path()
            .join("store")
            .join(&plugin.metadata.name)
            .join(&plugin.spec.version);
        let bin =
            install::install_files(platform, &bytes, &store).map_err(|e| fail(format!("{e:#}")))?;
        if install::find_license(&store).is_none() {
            return Err(fail(
                "no license file (LICENSE, LICENSE.txt, COPYING, …) was extracted; krew-index requires one".into(),
            ));
        }
        if *os == "windows" {
            if !platform.bin.to_ascii_lowercase().ends_with(".exe") {
                return Err(fail(format!(
                    "bin {:?} on windows must be an .exe (krew links only executables there)",
                    platform.bin
                )));
            }
        } else if !install::is_executable(&bin) {
            return Err(fail(format!(
                "bin {:?} is not executable in the archive (krew never runs chmod; kubectl would report \"not executable\")",
                platform.bin
            )));
        }
        report.platforms.push(format!("{os}/{arch}"));
    }
    Ok(report)
}
