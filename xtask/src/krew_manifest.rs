//! Writing our manifests and the matching krew-release-bot templates from the same
//! metadata.
//!
//! Hand-written YAML rather than a serializer: the release-bot template must carry Go
//! template actions (`{{addURIAndSha …}}`) in place of the `uri`/`sha256` lines, which
//! are not YAML values, and both files must have the same layout (the bot's PRs then
//! change only version, uri and sha256). Scalars are written as JSON strings, which
//! are valid YAML double-quoted scalars, so nothing needs YAML escaping rules; every
//! manifest we write is parsed back and validated by `krew-check`.

use std::fmt::Write as _;

use crate::metadata::{Plugin, Workspace};
use crate::targets::Target;

/// Where a platform's archive is.
pub enum Source<'a> {
    /// A real archive: its URL and sha256.
    Archive { uri: String, sha256: &'a str },
    /// krew-release-bot fills the URL in from the tag and computes the sha256.
    Template { uri_template: String },
}

/// One platform entry.
pub struct PlatformEntry<'a> {
    pub target: &'a Target,
    pub source: Source<'a>,
}

fn quote(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// Greedy word wrap at `width` columns (krew-index asks for descriptions wrapped at
/// 80); hand-written because one paragraph does not justify a wrapping crate.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    for (i, paragraph) in text.split("\n\n").enumerate() {
        if i > 0 {
            out.push_str("\n\n");
        }
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && line.len() + 1 + word.len() > width {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        out.push_str(&line);
    }
    out
}

/// A literal block scalar (`|`) indented under a key at `indent`.
fn block(out: &mut String, indent: usize, key: &str, text: &str) {
    let pad = " ".repeat(indent);
    let _ = writeln!(out, "{pad}{key}: |");
    for line in text.trim_end().lines() {
        if line.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{pad}  {line}");
        }
    }
}

/// The caveats of a plugin: its own, then how to enable completion through kubectl.
pub fn caveats(plugin: &Plugin) -> String {
    let helper = format!(
        "kubectl_complete-{}",
        plugin.bin.trim_start_matches("kubectl-")
    );
    let mut text = String::new();
    if let Some(own) = &plugin.caveats {
        text.push_str(own.trim_end());
        text.push_str("\n\n");
    }
    let _ = write!(
        text,
        "{}\n\n  ln -s {} \\\n    \"${{KREW_ROOT:-$HOME/.krew}}/bin/{helper}\"\n",
        wrap(
            &format!(
                "Shell completion of `kubectl {}` (kubectl 1.26 or later) needs a helper \
                 that krew cannot install (krew#812): the plugin itself under the name \
                 {helper}. On Linux and macOS, create it with:",
                plugin.name
            ),
            78
        ),
        plugin.bin,
    );
    text
}

/// The files a platform extracts: the plugin's binary and the license.
fn bin_file(plugin: &Plugin, target: &Target) -> String {
    format!("{}{}", plugin.bin, target.exe_suffix())
}

/// Renders a manifest (or, with template sources, a krew-release-bot template).
pub fn manifest(plugin: &Plugin, version: &str, platforms: &[PlatformEntry<'_>]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "apiVersion: {}", krew::API_VERSION);
    let _ = writeln!(out, "kind: {}", krew::KIND);
    let _ = writeln!(out, "metadata:\n  name: {}", plugin.name);
    let _ = writeln!(out, "spec:\n  version: {version}");
    if !plugin.homepage.is_empty() {
        let _ = writeln!(out, "  homepage: {}", quote(&plugin.homepage));
    }
    let _ = writeln!(
        out,
        "  shortDescription: {}",
        quote(&plugin.short_description)
    );
    block(&mut out, 2, "description", &wrap(&plugin.description, 78));
    block(&mut out, 2, "caveats", &caveats(plugin));
    out.push_str("  platforms:\n");
    for entry in platforms {
        let t = entry.target;
        let _ = writeln!(
            out,
            "  - selector:\n      matchLabels:\n        os: {}\n        arch: {}",
            t.os, t.arch
        );
        match &entry.source {
            Source::Archive { uri, sha256 } => {
                let _ = writeln!(out, "    uri: {}\n    sha256: {}", quote(uri), sha256);
            }
            Source::Template { uri_template } => {
                let _ = writeln!(
                    out,
                    "    {{{{addURIAndSha {} .TagName }}}}",
                    quote(uri_template)
                );
            }
        }
        let bin = bin_file(plugin, t);
        let _ = writeln!(
            out,
            "    files:\n    - from: {}\n      to: \".\"\n    - from: LICENSE\n      to: \".\"\n    - from: THIRD-PARTY-NOTICES\n      to: \".\"\n    bin: {}",
            quote(&bin),
            quote(&bin)
        );
    }
    out
}

/// The krew-release-bot template for a plugin, covering every declared release target.
pub fn release_bot_template(ws: &Workspace, plugin: &Plugin, targets: &[Target]) -> String {
    let entries: Vec<PlatformEntry<'_>> = targets
        .iter()
        .map(|t| PlatformEntry {
            target: t,
            source: Source::Template {
                uri_template: format!(
                    "{}/releases/download/{{{{ .TagName }}}}/{}-{{{{ .TagName }}}}-{}.{}",
                    ws.repository.trim_end_matches('/'),
                    crate::metadata::PROJECT,
                    t.triple,
                    t.format().extension()
                ),
            },
        })
        .collect();
    let mut text = String::from(
        "# krew-release-bot template (rajatjindal/krew-release-bot), generated by\n\
         # `cargo xtask codegen` from the plugin's Cargo.toml: do not edit.\n",
    );
    text.push_str(&manifest(plugin, "{{ .TagName }}", &entries));
    text
}

#[cfg(test)]
mod tests;
