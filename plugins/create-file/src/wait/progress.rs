//! The wait's progress on stderr: on a terminal that can redraw, one moving status
//! line (indicatif); otherwise plain lines, one per change, without control
//! characters, so that CI logs read as they were written. stdout (`-o json`,
//! `-o name`…) is the create loop's alone.

use std::io::Write as _;
use std::time::Duration;

use crate::writers::Writers;

use indicatif::{ProgressBar, ProgressStyle};

/// How many objects not ready the final summary names.
pub const SUMMARY_LINES: usize = 10;

/// The status line and the lines printed around it.
pub struct Progress<'a> {
    /// The plain lines' stderr (the status line draws on the terminal itself).
    out: &'a Writers,
    bar: Option<ProgressBar>,
    total: usize,
    last: String,
}

impl<'a> Progress<'a> {
    pub fn new(total: usize, out: &'a Writers) -> Self {
        let bar = cli::status_line::on_stderr(None).inspect(|bar| {
            // The template is a literal; the default style stays if it were rejected.
            if let Ok(style) = ProgressStyle::with_template("{spinner} [{elapsed}] {msg}") {
                bar.set_style(style);
            }
            bar.enable_steady_tick(Duration::from_millis(200));
        });
        Progress {
            out,
            bar,
            total,
            last: String::new(),
        }
    }

    pub fn total(&self) -> usize {
        self.total
    }

    /// `3/5 ready, waiting for deployment.apps/web: 1/3 available`.
    pub fn update(&mut self, ready: usize, name: &str, what: &str) {
        let line = format!("{ready}/{} ready, waiting for {name}: {what}", self.total);
        if line == self.last {
            return;
        }
        match &self.bar {
            Some(bar) => bar.set_message(line.clone()),
            None => self.out.eprintln(&line),
        }
        self.last = line;
    }

    /// A line above the status line (a cause).
    pub fn line(&self, line: &str) {
        let write = || self.out.eprintln(line);
        match &self.bar {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// Removes the status line.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// The final summary of a wait that did not succeed: how many are ready, and the
/// first of those that are not.
pub fn summary(out: &Writers, ready: usize, total: usize, not_ready: &[String]) {
    let mut err = out.stderr();
    let _ = writeln!(err, "{ready}/{total} ready; not ready:");
    for line in not_ready.iter().take(SUMMARY_LINES) {
        let _ = writeln!(err, "  {line}");
    }
    if not_ready.len() > SUMMARY_LINES {
        let _ = writeln!(err, "  … and {} more", not_ready.len() - SUMMARY_LINES);
    }
}

/// A duration as Go prints it, to the second: `5m0s`, `1h0m0s`, `12s` (`--timeout`'s
/// notation); under a minute with a tenth: `2.5s`.
pub fn go_duration(d: Duration) -> String {
    let secs = d.as_secs();
    if secs < 60 {
        let tenths = d.as_millis() / 100;
        return if tenths.is_multiple_of(10) {
            format!("{}s", tenths / 10)
        } else {
            format!("{}.{}s", tenths / 10, tenths % 10)
        };
    }
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    if h > 0 {
        format!("{h}h{m}m{s}s")
    } else {
        format!("{m}m{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_gos_notation() {
        assert_eq!(go_duration(Duration::from_secs(300)), "5m0s");
        assert_eq!(go_duration(Duration::from_secs(3600)), "1h0m0s");
        assert_eq!(go_duration(Duration::from_millis(2_500)), "2.5s");
        assert_eq!(go_duration(Duration::from_secs(12)), "12s");
    }
}
