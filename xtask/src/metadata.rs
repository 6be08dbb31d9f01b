//! The plugins' distribution metadata, from one place: each plugin package's
//! Cargo.toml (`description`, `homepage`, `license`, the workspace `version`, and a
//! `[package.metadata.krew]` table with `short-description` and optional `caveats`),
//! read through `cargo metadata`. A package with that table is a plugin.

use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value;

/// The project name used in archive names.
pub const PROJECT: &str = "kubeplug";

/// One plugin, as krew sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    /// The krew plugin name (`run-pod`); `kubectl run-pod` runs it.
    pub name: String,
    /// The binary (= package) name (`kubectl-run_pod`).
    pub bin: String,
    pub short_description: String,
    pub description: String,
    pub caveats: Option<String>,
    pub homepage: String,
}

/// What the workspace says about the release.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// `0.1.0` (krew wants `v0.1.0`).
    pub version: String,
    pub repository: String,
    pub plugins: Vec<Plugin>,
}

impl Workspace {
    /// `v0.1.0`.
    pub fn tag(&self) -> String {
        format!("v{}", self.version)
    }

    /// The archive file name for a target triple.
    pub fn archive_name(&self, triple: &str, extension: &str) -> String {
        format!("{PROJECT}-{}-{triple}.{extension}", self.tag())
    }

    /// The default download location: the GitHub release of this version.
    pub fn default_base_url(&self) -> String {
        format!(
            "{}/releases/download/{}",
            self.repository.trim_end_matches('/'),
            self.tag()
        )
    }
}

/// Reads the workspace through `cargo metadata`.
pub fn load() -> anyhow::Result<Workspace> {
    let out = Command::new(env!("CARGO"))
        .current_dir(crate::paths::project_root())
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .context("cannot run `cargo metadata`")?;
    if !out.status.success() {
        bail!(
            "`cargo metadata` failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let metadata: Value = serde_json::from_slice(&out.stdout).context("parsing cargo metadata")?;
    parse(&metadata)
}

/// Extracts the plugins from `cargo metadata` output (kept apart for tests).
pub fn parse(metadata: &Value) -> anyhow::Result<Workspace> {
    let packages = metadata["packages"]
        .as_array()
        .context("cargo metadata has no packages")?;
    let mut plugins = Vec::new();
    let mut version: Option<String> = None;
    let mut repository = String::new();
    for package in packages {
        let Some(krew) = package["metadata"].get("krew") else {
            continue;
        };
        let bin = str_field(package, "name")?;
        let field = |key: &str| krew.get(key).and_then(Value::as_str).map(str::to_string);
        let name = field("name").unwrap_or_else(|| plugin_name(&bin));
        let this_version = str_field(package, "version")?;
        match &version {
            Some(v) if *v != this_version => {
                bail!(
                    "plugins have different versions ({v} and {this_version}); they are released together"
                )
            }
            _ => version = Some(this_version),
        }
        if let Some(repo) = package["repository"].as_str() {
            repository = repo.to_string();
        }
        plugins.push(Plugin {
            short_description: field("short-description").with_context(|| {
                format!("{bin}: [package.metadata.krew] needs short-description")
            })?,
            description: str_field(package, "description")?,
            caveats: field("caveats"),
            homepage: package["homepage"].as_str().unwrap_or_default().to_string(),
            name,
            bin,
        });
    }
    if plugins.is_empty() {
        bail!("no package has a [package.metadata.krew] table");
    }
    plugins.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(Workspace {
        version: version.unwrap_or_default(),
        repository,
        plugins,
    })
}

fn str_field(package: &Value, key: &str) -> anyhow::Result<String> {
    package[key]
        .as_str()
        .map(str::to_string)
        .with_context(|| format!("package {} has no {key}", package["name"]))
}

/// `kubectl-run_pod` → `run-pod` (kubectl maps `-` in a command word to `_`).
pub fn plugin_name(bin: &str) -> String {
    bin.strip_prefix("kubectl-")
        .unwrap_or(bin)
        .replace('_', "-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(plugin_name("kubectl-rolling_update"), "rolling-update");
        assert_eq!(
            krew::install::link_name("rolling-update"),
            "kubectl-rolling_update"
        );
    }

    #[test]
    fn plugins_are_the_packages_with_a_krew_table() {
        let metadata = serde_json::json!({"packages": [
            {"name": "shared", "version": "0.1.0", "metadata": null},
            {"name": "kubectl-run_pod", "version": "0.1.0", "description": "Runs.",
             "homepage": "https://h", "repository": "https://github.com/o/r",
             "metadata": {"krew": {"short-description": "Run a pod"}}},
        ]});
        let ws = parse(&metadata).unwrap();
        assert_eq!(ws.plugins.len(), 1);
        assert_eq!(ws.plugins[0].name, "run-pod");
        assert_eq!(ws.tag(), "v0.1.0");
        assert_eq!(
            ws.default_base_url(),
            "https://github.com/o/r/releases/download/v0.1.0"
        );
    }

    #[test]
    fn a_missing_short_description_is_an_error() {
        let metadata = serde_json::json!({"packages": [
            {"name": "kubectl-x", "version": "0.1.0", "description": "X.",
             "metadata": {"krew": {}}},
        ]});
        let err = parse(&metadata).unwrap_err().to_string();
        assert!(err.contains("short-description"), "{err}");
    }
}
