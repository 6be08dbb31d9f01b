//! krew's manifest validation, re-implemented: `ValidatePlugin` (run by krew whenever
//! it reads a manifest) and the extra checks of `validate-krew-manifest` (what
//! krew-index CI runs). Messages are krew's, with its wrapping (`outer: inner`), so a
//! failure here reads like the failure krew would print.

use std::path::Path;

use crate::{API_VERSION, KIND, PLATFORMS, Platform, Plugin, Selector};

const SHA256_PATTERN: &str = "^[a-f0-9]{64}$";
const NAME_PATTERN: &str = r"^[\w-]+$";

/// Windows device names a plugin may not be called (any letter case).
const WINDOWS_FORBIDDEN: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// krew's `IsSafePluginName`: `^[\w-]+$` (Go's `\w` is ASCII) and no device name.
pub fn is_safe_plugin_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !WINDOWS_FORBIDDEN
            .iter()
            .any(|f| f.eq_ignore_ascii_case(name))
}

fn is_valid_sha256(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// krew's `semver.Parse`: a leading `v`, then a semantic version.
fn parse_version(v: &str) -> Result<(), String> {
    let Some(rest) = v.strip_prefix('v') else {
        return Err(format!("version string {v:?} does not start with 'v'"));
    };
    semver::Version::parse(rest)
        .map(|_| ())
        .map_err(|e| format!("could not parse {v:?} as version: {e}"))
}

/// krew's `ValidatePlugin(name, plugin)`.
pub fn validate_plugin(name: &str, p: &Plugin) -> Result<(), String> {
    if p.api_version != API_VERSION {
        return Err(format!(
            "plugin manifest has apiVersion={:?}, not supported in this version of krew (try updating plugin index or install a newer version of krew)",
            p.api_version
        ));
    }
    if p.kind != KIND {
        return Err(format!(
            "plugin manifest has kind={:?}, but only {KIND:?} is supported",
            p.kind
        ));
    }
    if !is_safe_plugin_name(name) {
        return Err(format!(
            "the plugin name {name:?} is not allowed, must match {NAME_PATTERN:?}"
        ));
    }
    if p.metadata.name != name {
        return Err(format!(
            "plugin should be named {name:?}, not {:?}",
            p.metadata.name
        ));
    }
    if p.spec.short_description.is_empty() {
        return Err("should have a short description".into());
    }
    if p.spec.short_description.contains(['\r', '\n']) {
        return Err("should not have line breaks in short description".into());
    }
    if p.spec.platforms.is_empty() {
        return Err("should have a platform specified".into());
    }
    if p.spec.version.is_empty() {
        return Err("should have a version specified".into());
    }
    parse_version(&p.spec.version).map_err(|e| format!("failed to parse plugin version: {e}"))?;
    for (i, platform) in p.spec.platforms.iter().enumerate() {
        validate_platform(platform).map_err(|e| {
            format!(
                "platform (index {i}, uri {:?}) is badly constructed: {e}",
                platform.uri
            )
        })?;
    }
    Ok(())
}

fn validate_platform(p: &Platform) -> Result<(), String> {
    if p.uri.is_empty() {
        return Err("`uri` has to be set".into());
    }
    if p.sha256.is_empty() {
        return Err("`sha256` sum has to be set".into());
    }
    if !is_valid_sha256(&p.sha256) {
        return Err(format!(
            "`sha256` value {} is not valid, must match pattern {SHA256_PATTERN}",
            p.sha256
        ));
    }
    if p.bin.is_empty() {
        return Err("`bin` has to be set".into());
    }
    if let Some(files) = &p.files {
        if files.is_empty() {
            return Err("`files` is invalid: `files` has to be unspecified or non-empty".into());
        }
        for op in files {
            if op.from.is_empty() {
                return Err("`files` is invalid: `from` field has to be set".into());
            }
            if op.to.is_empty() {
                return Err("`files` is invalid: `to` field has to be set".into());
            }
        }
    }
    validate_selector(p.selector.as_ref()).map_err(|e| format!("invalid platform selector: {e}"))
}

fn validate_selector(selector: Option<&Selector>) -> Result<(), String> {
    let Some(sel) = selector else {
        return Err("nil selector is not supported".into());
    };
    if sel.match_labels.is_none() && sel.match_expressions.as_ref().is_none_or(Vec::is_empty) {
        return Err("empty selector is not supported".into());
    }
    let keys = sel
        .match_labels
        .iter()
        .flat_map(|m| m.keys())
        .chain(sel.match_expressions.iter().flatten().map(|r| &r.key));
    for key in keys {
        if key != "os" && key != "arch" {
            return Err(format!("key {key:?} not supported"));
        }
    }
    if sel.match_labels.as_ref().is_some_and(|m| m.is_empty()) {
        return Err("`matchLabels` specified but empty".into());
    }
    if sel.match_expressions.as_ref().is_some_and(Vec::is_empty) {
        return Err("`matchExpressions` specified but empty".into());
    }
    Ok(())
}

/// What `validate-krew-manifest -skip-install` checks for the file at `path`: the
/// extension, the name from the file name, [`validate_plugin`], every platform
/// selecting a supported os/arch, and no os/arch selected twice.
pub fn validate_manifest_file(path: &Path, p: &Plugin) -> Result<(), String> {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (stem, extension) = match file_name.rfind('.') {
        Some(i) => (&file_name[..i], &file_name[i..]),
        None => (file_name.as_str(), ""),
    };
    if extension != ".yaml" {
        return Err(format!(
            "expected manifest extension \".yaml\" but found {extension:?}"
        ));
    }
    validate_plugin(stem, p).map_err(|e| format!("plugin validation error: {e}"))?;
    for (i, platform) in p.spec.platforms.iter().enumerate() {
        let selector = platform.selector.clone().unwrap_or_default();
        if !PLATFORMS
            .iter()
            .any(|(os, arch)| selector.matches(os, arch))
        {
            return Err(format!(
                "spec.platform[{i}]'s selector ({selector:?}) doesn't match any supported platforms"
            ));
        }
    }
    for (os, arch) in PLATFORMS {
        let matching: Vec<usize> = p
            .spec
            .platforms
            .iter()
            .enumerate()
            .filter(|(_, pl)| pl.selector.as_ref().is_some_and(|s| s.matches(os, arch)))
            .map(|(i, _)| i)
            .collect();
        if matching.len() > 1 {
            return Err(format!(
                "overlapping platform selectors found: multiple spec.platforms (at indexes {matching:?}) have overlapping selectors that select os={os}/arch={arch}"
            ));
        }
    }
    Ok(())
}

/// Reviewers' rules that krew's code does not enforce (validate-krew-manifest warns
/// about line lengths; the 50-character short description is what `krew search`
/// shows and what reviewers ask for).
pub fn lints(p: &Plugin) -> Vec<String> {
    let mut out = Vec::new();
    if p.spec.short_description.chars().count() > 50 {
        out.push(format!(
            "`shortDescription` is longer than 50 characters (`krew search` cuts it): {:?}",
            p.spec.short_description
        ));
    }
    if p.spec.short_description.ends_with('.') {
        out.push("`shortDescription` ends with a full stop".into());
    }
    for (field, text, max) in [
        ("description", &p.spec.description, 80),
        ("shortDescription", &p.spec.short_description, 70),
        ("caveats", &p.spec.caveats, 80),
    ] {
        let long = text
            .lines()
            .any(|l| l.len() > max && l.trim().contains(' '));
        if long {
            out.push(format!("line length in `{field}` exceeds {max} characters"));
        }
    }
    out
}
