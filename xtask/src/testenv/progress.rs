//! Progress through a long go command: the Go build of the current release takes about
//! eleven minutes on two cores, and one static line for that long looks like a hang.
//!
//! What is counted comes from the go command itself: `go list -deps` names every package
//! a build needs (the total), and `go build -v` prints each package's import path as it
//! compiles it (one step; a package Go's build cache already holds is not printed, so a
//! partly warm cache ends below the total). While `go list` downloads modules, its
//! `go: downloading …` lines are counted, without a total.
//!
//! On a terminal that is the build's alone, the count is one moving line (indicatif);
//! otherwise (a pipe, a CI log, or other builds printing beside it) a plain line every
//! 30 seconds.

use std::io::{BufRead as _, BufReader, IsTerminal as _, Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use indicatif::{ProgressBar, ProgressStyle};

/// How often a plain progress line is printed.
const LINE_EVERY: Duration = Duration::from_secs(30);

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Display {
    /// One line redrawn in place.
    Bar,
    /// A line every [`LINE_EVERY`].
    Lines,
}

impl Display {
    /// `Bar` when stderr is a terminal and `alone` (nothing else prints beside the
    /// build: a redrawn line and another writer's output garble each other).
    pub fn for_stderr(alone: bool) -> Self {
        if alone && std::io::stderr().is_terminal() {
            Display::Bar
        } else {
            Display::Lines
        }
    }
}

/// What a counted run shows: `label` (e.g. "Kubernetes v1.37.2: compiling") and the
/// counted `unit` ("packages"), out of `total` when known.
pub struct Counted<'a> {
    pub label: &'a str,
    pub unit: &'a str,
    pub total: Option<u64>,
}

/// Runs `cmd` with its stderr appended to `log` line by line, counting the lines
/// `counts` accepts and showing the count; returns its stdout. On failure, the error
/// carries the log's last lines.
pub fn run_counted(
    cmd: &mut Command,
    log: &Path,
    display: Display,
    what: &Counted<'_>,
    mut counts: impl FnMut(&str) -> bool,
) -> anyhow::Result<String> {
    eprintln!(
        "$ {}  (log: {})",
        crate::run::command_line(cmd),
        log.display()
    );
    let mut log_file = std::fs::File::options()
        .create(true)
        .append(true)
        .open(log)
        .with_context(|| format!("cannot open {}", log.display()))?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {}", crate::run::command_line(cmd)))?;
    let mut stdout = child.stdout.take().context("the command's stdout")?;
    // Read beside stderr: a full stdout pipe would stop the command.
    let stdout = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).map(|_| text)
    });
    let progress = Progress::start(display, what);
    let stderr = child.stderr.take().context("the command's stderr")?;
    for line in BufReader::new(stderr).lines() {
        let line = line.context("reading the command's output")?;
        writeln!(log_file, "{line}")?;
        if counts(&line) {
            progress.inc();
        }
    }
    let status = child.wait()?;
    progress.finish(what);
    let stdout = stdout
        .join()
        .map_err(|_| anyhow::anyhow!("reading the command's stdout panicked"))??;
    if !status.success() {
        return Err(crate::run::failed_with_log(cmd, status, log));
    }
    Ok(stdout)
}

/// The count being shown, as a bar or by a thread printing lines.
struct Progress {
    count: Arc<AtomicU64>,
    started: Instant,
    bar: Option<ProgressBar>,
    /// Dropping the sender stops the line printer.
    lines: Option<(mpsc::Sender<()>, std::thread::JoinHandle<()>)>,
}

impl Progress {
    fn start(display: Display, what: &Counted<'_>) -> Self {
        let count = Arc::new(AtomicU64::new(0));
        let started = Instant::now();
        match display {
            Display::Bar => Self {
                count,
                started,
                bar: Some(bar(what)),
                lines: None,
            },
            Display::Lines => {
                let (stop, stopped) = mpsc::channel::<()>();
                let shown = Arc::clone(&count);
                let line = format!("testenv: {}", what.label);
                let (unit, total) = (what.unit.to_string(), what.total);
                let printer = std::thread::spawn(move || {
                    while let Err(mpsc::RecvTimeoutError::Timeout) =
                        stopped.recv_timeout(LINE_EVERY)
                    {
                        let n = shown.load(Ordering::Relaxed);
                        eprintln!(
                            "{line}: {} {unit}, {}",
                            of(n, total),
                            super::minutes(started.elapsed())
                        );
                    }
                });
                Self {
                    count,
                    started,
                    bar: None,
                    lines: Some((stop, printer)),
                }
            }
        }
    }

    fn inc(&self) {
        self.count.fetch_add(1, Ordering::Relaxed);
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    fn finish(self, what: &Counted<'_>) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
        if let Some((stop, printer)) = self.lines {
            drop(stop);
            let _ = printer.join();
        }
        eprintln!(
            "testenv: {}: {} {} in {}",
            what.label,
            of(self.count.load(Ordering::Relaxed), what.total),
            what.unit,
            super::minutes(self.started.elapsed())
        );
    }
}

/// `n/total`, or `n` without a total.
fn of(n: u64, total: Option<u64>) -> String {
    match total {
        Some(total) => format!("{n}/{total}"),
        None => n.to_string(),
    }
}

/// The moving line with a total, and without one.
const BAR_TEMPLATE: &str =
    "{spinner} testenv: {msg} [{elapsed_precise}] [{bar:30}] {pos}/{len} {prefix}";
const SPINNER_TEMPLATE: &str = "{spinner} testenv: {msg} [{elapsed_precise}] {pos} {prefix}";

fn bar(what: &Counted<'_>) -> ProgressBar {
    let (bar, template) = match what.total {
        Some(total) => (ProgressBar::new(total), BAR_TEMPLATE),
        None => (ProgressBar::new_spinner(), SPINNER_TEMPLATE),
    };
    // The templates are constants (checked by a test below); on an error the default
    // style still moves.
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.label.to_string());
    bar.set_prefix(what.unit.to_string());
    // Ticks keep the elapsed time moving through steps that print nothing (linking
    // kube-apiserver takes a minute).
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_accepted_stderr_lines_logs_them_and_returns_stdout() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("build.log");
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            "echo listed; echo 'go: downloading a v1' >&2; echo noise >&2; echo 'go: downloading b v2' >&2",
        ]);
        let what = Counted {
            label: "test: downloading modules",
            unit: "modules",
            total: None,
        };
        let out = run_counted(&mut cmd, &log, Display::Lines, &what, |l| {
            l.starts_with("go: downloading ")
        })
        .unwrap();
        assert_eq!(out, "listed\n");
        let logged = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            logged,
            "go: downloading a v1\nnoise\ngo: downloading b v2\n"
        );
    }

    #[test]
    fn a_failed_command_reports_its_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("build.log");
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo 'cannot find package' >&2; exit 1"]);
        let what = Counted {
            label: "test",
            unit: "packages",
            total: Some(3),
        };
        let err = run_counted(&mut cmd, &log, Display::Lines, &what, |_| true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot find package"), "{err}");
    }

    #[test]
    fn both_templates_are_valid() {
        for template in [BAR_TEMPLATE, SPINNER_TEMPLATE] {
            assert!(ProgressStyle::with_template(template).is_ok(), "{template}");
        }
    }
}
