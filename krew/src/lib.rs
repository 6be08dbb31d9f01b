//! krew's side of a plugin's distribution, ported so that a release is checked as
//! krew and krew-index CI would check it, offline: the plugin manifest's types (krew's
//! `pkg/index/types.go`) and reading one as krew does (unknown fields are ignored).
//! xtask writes our manifests from the workspace's metadata (`xtask/src/krew_manifest.rs`)
//! and checks every one it writes through this crate; its tests are there, with the
//! manifests and archives they build.
//!
//! - [`validate`]: krew's validation rules and krew-index CI's extra checks.
//! - [`archive`]: reading an archive as krew's downloader does.
//! - [`install`]: krew's install steps (platform match, checksum, extraction, file
//!   moves, link), used both to check archives and by `cargo xtask install`.
//! - [`check`]: everything krew-index CI does with one manifest and its archives.

pub mod archive;
pub mod check;
pub mod install;
pub mod validate;

use std::collections::BTreeMap;

use serde::Deserialize;

/// The only apiVersion krew reads.
pub const API_VERSION: &str = "krew.googlecontainertools.github.com/v1alpha2";
/// The only kind krew reads.
pub const KIND: &str = "Plugin";

/// Every os/arch pair krew knows (`validate-krew-manifest`'s list, as of krew 0.4.5+).
pub const PLATFORMS: [(&str, &str); 11] = [
    ("windows", "386"),
    ("windows", "amd64"),
    ("windows", "arm64"),
    ("linux", "386"),
    ("linux", "amd64"),
    ("linux", "arm"),
    ("linux", "arm64"),
    ("linux", "ppc64le"),
    ("darwin", "386"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
];

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct Plugin {
    pub api_version: String,
    pub kind: String,
    pub metadata: Metadata,
    pub spec: Spec,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Metadata {
    pub name: String,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct Spec {
    pub version: String,
    pub short_description: String,
    pub description: String,
    pub caveats: String,
    pub homepage: String,
    pub platforms: Vec<Platform>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Platform {
    pub uri: String,
    pub sha256: String,
    pub selector: Option<Selector>,
    /// `None` (absent) means krew's default, everything: `[{from: "*", to: "."}]`.
    pub files: Option<Vec<FileOperation>>,
    pub bin: String,
}

/// A `metav1.LabelSelector` over the labels `os` and `arch`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, rename_all = "camelCase")]
pub struct Selector {
    pub match_labels: Option<BTreeMap<String, String>>,
    pub match_expressions: Option<Vec<Requirement>>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Requirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct FileOperation {
    pub from: String,
    pub to: String,
}

/// Parses a manifest. Like krew's non-strict decoding, unknown fields are dropped.
pub fn parse(text: &str) -> anyhow::Result<Plugin> {
    serde_saphyr::from_str(text)
        .map_err(|e| anyhow::anyhow!("failed to decode plugin manifest: {e}"))
}

impl Selector {
    /// Whether the selector selects `{os, arch}`, as `metav1.LabelSelectorAsSelector`
    /// + `Matches` would; a selector that does not convert matches nothing.
    pub fn matches(&self, os: &str, arch: &str) -> bool {
        let label = |key: &str| match key {
            "os" => Some(os),
            "arch" => Some(arch),
            _ => None,
        };
        if let Some(labels) = &self.match_labels
            && !labels.iter().all(|(k, v)| label(k) == Some(v.as_str()))
        {
            return false;
        }
        for req in self.match_expressions.iter().flatten() {
            let value = label(&req.key);
            let ok = match req.operator.as_str() {
                "In" if !req.values.is_empty() => {
                    value.is_some_and(|v| req.values.iter().any(|x| x == v))
                }
                "NotIn" if !req.values.is_empty() => {
                    value.is_none_or(|v| req.values.iter().all(|x| x != v))
                }
                "Exists" if req.values.is_empty() => value.is_some(),
                "DoesNotExist" if req.values.is_empty() => value.is_none(),
                // Invalid requirement: the conversion fails, nothing matches.
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        true
    }
}

// `cargo xtask install` (Unix only: it makes links) is the one user.
#[cfg(unix)]
impl Plugin {
    /// The first platform whose selector matches, as krew picks one at install time.
    pub fn platform_for(&self, os: &str, arch: &str) -> Option<&Platform> {
        self.spec
            .platforms
            .iter()
            .find(|p| p.selector.as_ref().is_some_and(|s| s.matches(os, arch)))
    }
}
