//! `THIRD-PARTY-NOTICES`: what the plugin binaries of one target contain besides
//! kubeplug's own code, with the licence texts those licences ask to be reproduced.
//!
//! The crates come from `cargo metadata` for that target (normal dependencies of the
//! plugins, what is linked; build tools and test dependencies are not shipped), the
//! texts from each crate's published sources in cargo's registry cache (its `LICENSE*`,
//! `LICENCE*`, `COPYING*`, `NOTICE*` files, or its `license-file`). Identical texts are
//! written once, followed by the crates they cover. The Go template port's notice
//! (`shared/gotext/src/gotemplate/LICENSE-GO`) comes first.
//!
//! Written here rather than with cargo-about: that would be another tool to compile on
//! every machine, for what is a walk over `cargo metadata` and a few file reads.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde::Deserialize;

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<Package>,
    resolve: Resolve,
    workspace_members: Vec<String>,
}

#[derive(Deserialize)]
struct Package {
    id: String,
    name: String,
    version: String,
    license: Option<String>,
    license_file: Option<PathBuf>,
    repository: Option<String>,
    manifest_path: PathBuf,
}

#[derive(Deserialize)]
struct Resolve {
    nodes: Vec<Node>,
}

#[derive(Deserialize)]
struct Node {
    id: String,
    deps: Vec<Dep>,
}

#[derive(Deserialize)]
struct Dep {
    pkg: String,
    dep_kinds: Vec<DepKind>,
}

#[derive(Deserialize)]
struct DepKind {
    kind: Option<String>,
}

/// The notices for the binaries of `plugins` (package names) built for `triple`.
pub fn third_party(plugins: &[&str], triple: &str) -> anyhow::Result<String> {
    let out = Command::new(env!("CARGO"))
        .current_dir(crate::paths::project_root())
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--filter-platform",
            triple,
        ])
        .output()
        .context("cannot run cargo metadata")?;
    if !out.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let metadata: Metadata = serde_json::from_slice(&out.stdout)?;
    let shipped = linked_packages(&metadata, plugins)?;
    let go = std::fs::read_to_string(
        crate::paths::project_root().join("shared/gotext/src/gotemplate/LICENSE-GO"),
    )
    .context("the Go notice of the template port")?;
    Ok(render(triple, &go, &shipped))
}

/// The third-party packages linked into the plugins: reachable through normal
/// dependencies (not build or dev ones), workspace members left out, sorted.
fn linked_packages<'a>(
    metadata: &'a Metadata,
    plugins: &[&str],
) -> anyhow::Result<Vec<&'a Package>> {
    let nodes: BTreeMap<&str, &Node> = metadata
        .resolve
        .nodes
        .iter()
        .map(|n| (n.id.as_str(), n))
        .collect();
    let packages: BTreeMap<&str, &Package> = metadata
        .packages
        .iter()
        .map(|p| (p.id.as_str(), p))
        .collect();
    let mut stack: Vec<&str> = Vec::new();
    for plugin in plugins {
        let package = metadata
            .packages
            .iter()
            .find(|p| p.name == *plugin)
            .with_context(|| format!("no package {plugin} in cargo metadata"))?;
        stack.push(&package.id);
    }
    let mut seen = BTreeSet::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id) {
            continue;
        }
        let Some(node) = nodes.get(id) else { continue };
        for dep in &node.deps {
            if dep.dep_kinds.iter().any(|k| k.kind.is_none()) {
                stack.push(&dep.pkg);
            }
        }
    }
    let mut shipped: Vec<&Package> = seen
        .into_iter()
        .filter(|id| !metadata.workspace_members.iter().any(|m| m == id))
        .filter_map(|id| packages.get(id).copied())
        .collect();
    shipped.sort_by(|a, b| (&a.name, &a.version).cmp(&(&b.name, &b.version)));
    Ok(shipped)
}

/// The licence and notice files a package ships, by file name, sorted.
fn licence_files(package: &Package) -> Vec<(String, String)> {
    let Some(dir) = package.manifest_path.parent() else {
        return Vec::new();
    };
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut add = |path: &Path| {
        if let (Some(name), Ok(text)) = (path.file_name(), std::fs::read_to_string(path)) {
            files.insert(name.to_string_lossy().into_owned(), text);
        }
    };
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().to_ascii_lowercase();
            let is_notice = ["license", "licence", "copying", "notice", "copyright"]
                .iter()
                .any(|p| name.starts_with(p));
            if is_notice && entry.path().is_file() {
                add(&entry.path());
            }
        }
    }
    if let Some(file) = &package.license_file {
        add(&dir.join(file));
    }
    files.into_iter().collect()
}

fn render(triple: &str, go: &str, shipped: &[&Package]) -> String {
    let mut out = format!(
        "Third-party notices for the kubeplug plugins ({triple})\n\n\
         kubeplug's own code is under the Apache License 2.0 (LICENSE). The binaries\n\
         also contain the software below, under the licences given.\n\n\
         ======================================================================\n\
         Go text/template (ported in shared/gotext/src/gotemplate), BSD-3-Clause\n\
         ======================================================================\n\n{go}\n"
    );
    out.push_str(&format!(
        "======================================================================\n\
         Rust crates ({})\n\
         ======================================================================\n\n",
        shipped.len()
    ));
    // Identical texts (the same MIT or Apache file in many crates) once each.
    let mut texts: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for package in shipped {
        let id = format!("{} {}", package.name, package.version);
        out.push_str(&format!(
            "{id} — {}{}\n",
            package
                .license
                .as_deref()
                .unwrap_or("(no licence declared)"),
            package
                .repository
                .as_deref()
                .map(|r| format!(" — {r}"))
                .unwrap_or_default()
        ));
        let files = licence_files(package);
        if files.is_empty() {
            out.push_str("    (the published crate has no licence file; its licence is the SPDX text of the expression above)\n");
        }
        for (name, text) in files {
            texts
                .entry(text)
                .or_default()
                .push(format!("{id} ({name})"));
        }
    }
    for (text, users) in texts {
        out.push_str("\n----------------------------------------------------------------------\n");
        out.push_str(&format!("Used by: {}\n\n", users.join(", ")));
        out.push_str(text.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plugins_notices_name_their_crates_and_carry_their_texts() {
        let plugins = [
            "kubectl-run_pod",
            "kubectl-create_file",
            "kubectl-rolling_update",
        ];
        let text = third_party(&plugins, "x86_64-unknown-linux-musl").expect("notices");
        // The Go port's notice, and linked crates with their licence files.
        assert!(text.contains("Copyright 2009 The Go Authors."));
        for krate in ["kube-client 5.0.0", "tokio ", "rustls ", "ring "] {
            assert!(text.contains(krate), "{krate} missing");
        }
        assert!(text.contains("Permission is hereby granted, free of charge"));
        assert!(text.contains("Apache License"));
        // Not linked: build tools, test-only crates, the workspace itself.
        for absent in ["\ncc ", "\ntrycmd ", "\nshared 0.1.0", "\nrcgen "] {
            assert!(!text.contains(absent), "{absent:?} listed");
        }
        // Windows-only crates only in the Windows notices.
        assert!(!text.contains("\nwindows-sys "));
        let windows = third_party(&plugins, "x86_64-pc-windows-msvc").expect("notices");
        assert!(windows.contains("\nwindows-sys "));
    }
}
