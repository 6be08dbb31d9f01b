//! Everything the command writes to stdout: the classic progress lines, the
//! terminal-only progress bar, the dry-run summary and the final object.
//!
//! The printers of `-o` are a local minimum (json, yaml, name): the shared
//! printers module is being written on another branch; this file is the one place
//! to switch over once it lands.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use k8s_openapi::api::core::v1::ReplicationController;
use serde::Serialize;

use crate::updater::{Progress, Report};

/// `-o`: the output formats this command supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Json,
    Yaml,
    Name,
}

/// The formats `-o` accepts, for the error message.
pub const ALLOWED_FORMATS: &str = "json,name,yaml";

impl OutputFormat {
    /// Parses `-o`; `None` for the default (the name printer with an operation).
    pub fn parse(value: &str) -> Result<Option<Self>, String> {
        match value {
            "" => Ok(None),
            "json" => Ok(Some(OutputFormat::Json)),
            "yaml" => Ok(Some(OutputFormat::Yaml)),
            "name" => Ok(Some(OutputFormat::Name)),
            other => Err(format!(
                "unable to match a printer suitable for the output format \"{other}\", allowed formats are: {ALLOWED_FORMATS}"
            )),
        }
    }
}

/// Renders one RC: with no format, kubectl's name printer with an operation
/// (`replicationcontroller/foo rolling updated`); otherwise the chosen format.
/// The result always ends with a newline.
pub fn render(
    rc: &ReplicationController,
    format: Option<OutputFormat>,
    operation: &str,
) -> anyhow::Result<String> {
    let name = rc.metadata.name.as_deref().unwrap_or_default();
    Ok(match format {
        None => format!("replicationcontroller/{name} {operation}\n"),
        Some(OutputFormat::Name) => format!("replicationcontroller/{name}\n"),
        Some(OutputFormat::Json) => {
            // kubectl indents JSON by four spaces.
            let mut buf = Vec::new();
            let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
            let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
            rc.serialize(&mut ser)?;
            buf.push(b'\n');
            String::from_utf8(buf)?
        }
        Some(OutputFormat::Yaml) => serde_saphyr::to_string(rc)?,
    })
}

/// The `--dry-run` summary: `Rolling from:\n<A>\nTo:\n<B>\n`, where A and B are
/// names without `-o`, and full renderings (each ending in a newline) with it.
pub fn dry_run_summary(
    old: &ReplicationController,
    new: &ReplicationController,
    format: Option<OutputFormat>,
) -> anyhow::Result<String> {
    let (a, b) = match format {
        None => (
            old.metadata.name.clone().unwrap_or_default(),
            new.metadata.name.clone().unwrap_or_default(),
        ),
        Some(_) => (
            render(old, format, "rolling updated (dry run)")?,
            render(new, format, "rolling updated (dry run)")?,
        ),
    };
    Ok(format!("Rolling from:\n{a}\nTo:\n{b}\n"))
}

/// The command's [`Report`]: classic lines on stdout and, when stderr is a
/// terminal, an indicatif bar there. Without a terminal the output is exactly
/// kubectl's lines, so CI logs stay greppable.
pub struct Console {
    bar: Option<ProgressBar>,
}

impl Console {
    /// A console that shows the bar only when stderr is a terminal.
    pub fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(0);
            // The template is a literal; fall back to the default style if it is rejected.
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {bar:30} new {pos}/{len} {msg}",
            ) {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Console { bar }
    }

    /// Prints a line on stdout, keeping the bar intact.
    pub fn println(&self, line: &str) {
        let write = || {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        };
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// Removes the bar (before the final object is printed or an error).
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Default for Console {
    fn default() -> Self {
        Self::new()
    }
}

impl Report for Console {
    fn line(&mut self, line: &str) {
        self.println(line);
    }

    fn progress(&mut self, p: &Progress) {
        if let Some(bar) = &self.bar {
            bar.set_length(p.desired.max(0) as u64);
            bar.set_position(p.new_replicas.max(0) as u64);
            bar.set_message(format!("old {}  ready {}", p.old_replicas, p.new_ready));
        }
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::api::ObjectMeta;

    fn rc(name: &str) -> ReplicationController {
        ReplicationController {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn formats() {
        assert_eq!(OutputFormat::parse("").unwrap(), None);
        assert_eq!(
            OutputFormat::parse("yaml").unwrap(),
            Some(OutputFormat::Yaml)
        );
        assert_eq!(
            OutputFormat::parse("wide").unwrap_err(),
            "unable to match a printer suitable for the output format \"wide\", allowed formats are: json,name,yaml"
        );
    }

    #[test]
    fn renders_like_kubectl() {
        assert_eq!(
            render(&rc("foo"), None, "rolling updated").unwrap(),
            "replicationcontroller/foo rolling updated\n"
        );
        assert_eq!(
            render(&rc("foo-v2"), None, "rolling updated to \"foo-v2\"").unwrap(),
            "replicationcontroller/foo-v2 rolling updated to \"foo-v2\"\n"
        );
        assert_eq!(
            render(&rc("foo"), Some(OutputFormat::Name), "x").unwrap(),
            "replicationcontroller/foo\n"
        );
        let json = render(&rc("foo"), Some(OutputFormat::Json), "x").unwrap();
        assert_eq!(
            json,
            "{\n    \"apiVersion\": \"v1\",\n    \"kind\": \"ReplicationController\",\n    \"metadata\": {\n        \"name\": \"foo\"\n    }\n}\n"
        );
        let yaml = render(&rc("foo"), Some(OutputFormat::Yaml), "x").unwrap();
        assert!(
            yaml.contains("kind: ReplicationController") && yaml.ends_with('\n'),
            "{yaml}"
        );
    }

    #[test]
    fn dry_run_summaries() {
        assert_eq!(
            dry_run_summary(&rc("foo"), &rc("foo-abc"), None).unwrap(),
            "Rolling from:\nfoo\nTo:\nfoo-abc\n"
        );
        assert_eq!(
            dry_run_summary(&rc("foo"), &rc("bar"), Some(OutputFormat::Name)).unwrap(),
            "Rolling from:\nreplicationcontroller/foo\n\nTo:\nreplicationcontroller/bar\n\n"
        );
    }
}
