//! Everything the command writes to stdout: the classic progress lines, the
//! terminal-only progress bar, the dry-run summary and the final object.
//!
//! The `-o` printers are the shared ones (`cli::printers`); this module only
//! composes them into 1.17's dry-run summary.

use std::io::Write;
use std::time::Duration;

use crate::model::ReplicationController;
use cli::flags::{DryRunStrategy, PrintFlags};
use cli::printers::Printer;
use indicatif::{ProgressBar, ProgressStyle};

use crate::updater::{Progress, Report};

/// Renders one RC with `printer`; the result ends with a newline.
pub fn render(rc: &ReplicationController, printer: &dyn Printer) -> anyhow::Result<String> {
    let value = resources::typed::to_value_as_text(rc)?;
    let mut out = Vec::new();
    printer.print(&value, &mut out)?;
    Ok(String::from_utf8(out)?)
}

/// The `--dry-run` summary: `Rolling from:\n<A>\nTo:\n<B>\n`, where A and B are
/// names without `-o`, and renderings by one printer (each ending in a newline,
/// and for YAML the second preceded by `---`, as kubectl's printer did) with it.
pub fn dry_run_summary(
    old: &ReplicationController,
    new: &ReplicationController,
    print: &PrintFlags,
) -> anyhow::Result<String> {
    let (a, b) = if print.format().is_none() {
        (
            old.metadata.name.clone().unwrap_or_default(),
            new.metadata.name.clone().unwrap_or_default(),
        )
    } else {
        // kubectl 1.17 printed its typed ReplicationControllers: Go's field order.
        // kubectl 1.17's structs: a zero creationTimestamp is `null`, not left out.
        let printer = print.to_typed_printer(
            "rolling updated",
            DryRunStrategy::Client,
            cli::printers::gojson::Structs::BeforeOmitzero,
        )?;
        (
            render(old, printer.as_ref())?,
            render(new, printer.as_ref())?,
        )
    };
    Ok(format!("Rolling from:\n{a}\nTo:\n{b}\n"))
}

/// The command's [`Report`]: classic lines on stdout and, when stderr is a
/// terminal, an indicatif bar there. Without a terminal the output is exactly
/// kubectl's lines, so CI logs stay greppable.
pub struct Console {
    /// The command's stdout (the skeleton's `Context::stdout`), shared with the bar's
    /// redraws through `print(&self)`.
    out: std::sync::Mutex<Box<dyn Write + Send>>,
    bar: Option<ProgressBar>,
    /// Whether the bar shows counts yet: until the first [`Progress`] the total is
    /// unknown, and indicatif draws a bar of length 0 as full.
    counting: bool,
}

/// The bar's look before the counts are known, and after.
const WAITING_TEMPLATE: &str = "{spinner} [{elapsed_precise}] {msg}";
const COUNTING_TEMPLATE: &str = "{spinner} [{elapsed_precise}] {bar:30} new {pos}/{len} {msg}";

fn set_template(bar: &ProgressBar, template: &str) {
    // The templates are literals; keep the current style if one were rejected.
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
}

impl Console {
    /// A console that shows the bar only when stderr is a terminal that can redraw
    /// it (not `TERM=dumb`). The bar has no colour, so `NO_COLOR` leaves it.
    pub fn new(out: Box<dyn Write + Send>) -> Self {
        let bar = cli::status_line::on_stderr(Some(0)).inspect(|bar| {
            set_template(bar, WAITING_TEMPLATE);
            bar.set_message("starting");
            bar.enable_steady_tick(Duration::from_millis(200));
        });
        Console {
            out: std::sync::Mutex::new(out),
            bar,
            counting: false,
        }
    }

    /// Prints a line on stdout, keeping the bar intact.
    pub fn println(&self, line: &str) {
        self.print(&format!("{line}\n"));
    }

    /// Prints text on stdout, keeping the bar intact.
    ///
    /// Write errors are ignored on purpose: once stdout is closed (`… | head -1`,
    /// a CI log collector gone), the update runs to its end rather than stopping
    /// between two steps; what it would have printed is lost, the cluster state is
    /// not. The writer records the closed pipe, so `cli::finish` then ends the run
    /// killed by SIGPIPE as kubectl is, never 0 (an error still said on stderr).
    /// (`print!` panicked there, and the release build's `panic = "abort"` killed the
    /// update mid-way.)
    pub fn print(&self, text: &str) {
        let write = || {
            // A poisoned lock only means an earlier write panicked; the writer is fine.
            let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        };
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// Where the stall watch's `Waiting:` lines go: stderr, around the bar.
    pub fn stderr_sink(&self) -> crate::cluster::Sink {
        let bar = self.bar.clone();
        std::sync::Arc::new(move |line: &str| {
            let write = || {
                let _ = writeln!(std::io::stderr(), "{line}");
            };
            match &bar {
                Some(bar) => bar.suspend(write),
                None => write(),
            }
        })
    }

    /// Removes the bar (before the final object is printed or an error).
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Report for Console {
    fn line(&mut self, line: &str) {
        self.println(line);
    }

    fn progress(&mut self, p: &Progress) {
        if let Some(bar) = &self.bar {
            // Counts first, in one update so no frame mixes old and new ones; then
            // the style that shows them, then the message, which draws.
            bar.update(|state| {
                state.set_len(p.desired.max(0) as u64);
                state.set_pos(p.new_replicas.max(0) as u64);
            });
            if !self.counting {
                set_template(bar, COUNTING_TEMPLATE);
                self.counting = true;
            }
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

    fn print(output: Option<&str>) -> PrintFlags {
        PrintFlags {
            output: output.map(str::to_string),
            ..PrintFlags::default()
        }
    }

    #[test]
    fn renders_like_kubectl() {
        let op = |o: &str| print(None).to_printer(o, DryRunStrategy::None).unwrap();
        assert_eq!(
            render(&rc("foo"), op("rolling updated").as_ref()).unwrap(),
            "replicationcontroller/foo rolling updated\n"
        );
        assert_eq!(
            render(&rc("foo-v2"), op("rolling updated to \"foo-v2\"").as_ref()).unwrap(),
            "replicationcontroller/foo-v2 rolling updated to \"foo-v2\"\n"
        );
        // kubectl 1.17 held the controllers typed: Go's field order and zero values.
        let json = print(Some("json"))
            .to_typed_printer(
                "x",
                DryRunStrategy::None,
                cli::printers::gojson::Structs::BeforeOmitzero,
            )
            .unwrap();
        assert_eq!(
            render(&rc("foo"), json.as_ref()).unwrap(),
            "{\n    \"kind\": \"ReplicationController\",\n    \"apiVersion\": \"v1\",\n    \"metadata\": {\n        \"name\": \"foo\",\n        \"creationTimestamp\": null\n    },\n    \"spec\": {},\n    \"status\": {\n        \"replicas\": 0\n    }\n}\n"
        );
    }

    #[test]
    fn dry_run_summaries() {
        assert_eq!(
            dry_run_summary(&rc("foo"), &rc("foo-abc"), &print(None)).unwrap(),
            "Rolling from:\nfoo\nTo:\nfoo-abc\n"
        );
        assert_eq!(
            dry_run_summary(&rc("foo"), &rc("bar"), &print(Some("name"))).unwrap(),
            "Rolling from:\nreplicationcontroller/foo\n\nTo:\nreplicationcontroller/bar\n\n"
        );
        // One YAML printer for both objects: the second is preceded by `---`.
        let yaml = dry_run_summary(&rc("foo"), &rc("bar"), &print(Some("yaml"))).unwrap();
        assert!(
            yaml.starts_with("Rolling from:\napiVersion: v1\n"),
            "{yaml}"
        );
        assert!(yaml.contains("\n\nTo:\n---\napiVersion: v1\n"), "{yaml}");
        // Typed, as 1.17 held them: Go's zero values are written.
        assert!(yaml.contains("  name: bar\n"), "{yaml}");
        assert!(yaml.ends_with("status:\n  replicas: 0\n\n"), "{yaml}");
    }
}
