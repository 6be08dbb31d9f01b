//! Measuring one command: through the launcher (see [`super::launcher`] for why a
//! separate tiny program), which the bench compiles once per benchmark run.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Context;

/// How a run ended, and what it cost.
#[derive(Debug, Clone)]
pub struct Run {
    pub exit: Exit,
    pub wall: Duration,
    pub user: Duration,
    pub sys: Duration,
    pub max_rss_kib: u64,
    /// The start of stderr (for error messages).
    pub stderr: String,
}

pub use super::launcher::{Exit, Raw};

impl Exit {
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
        }
    }
}

/// Compiles the launcher into `dir` with the toolchain's `rustc` (std only: about a
/// second) and returns its path.
pub fn build_launcher(dir: &Path) -> anyhow::Result<PathBuf> {
    let source = dir.join("launcher.rs");
    std::fs::write(&source, include_str!("launcher.rs"))?;
    let binary = dir.join("launcher");
    // The rustc next to the cargo that built the bench (rustup's proxies live side by side).
    let rustc = Path::new(env!("CARGO")).with_file_name("rustc");
    let rustc = if rustc.is_file() {
        rustc
    } else {
        PathBuf::from("rustc")
    };
    let out = Command::new(&rustc)
        .args([
            "--edition",
            "2024",
            "-C",
            "opt-level=2",
            "-C",
            "panic=abort",
            "-o",
        ])
        .arg(&binary)
        .arg(&source)
        .output()
        .with_context(|| format!("cannot run {}", rustc.display()))?;
    if !out.status.success() {
        anyhow::bail!(
            "cannot compile the benchmark launcher: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(binary)
}

/// Runs `cmd` through the launcher with stdout and stderr into files in `scratch`, and
/// measures it. A run that outlives `timeout` is killed.
pub fn run(
    launcher: &Path,
    cmd: &Command,
    scratch: &Path,
    timeout: Duration,
) -> anyhow::Result<Run> {
    let stdout = scratch.join("stdout");
    let stderr = scratch.join("stderr");
    let mut wrapped = Command::new(launcher);
    wrapped
        .arg(timeout.as_millis().to_string())
        .arg(&stdout)
        .arg(&stderr)
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(v) => wrapped.env(key, v),
            None => wrapped.env_remove(key),
        };
    }
    let program = cmd.get_program().to_string_lossy().into_owned();
    let out = wrapped
        .output()
        .with_context(|| format!("cannot start the launcher for {program}"))?;
    let line = String::from_utf8_lossy(&out.stdout);
    let raw = parse_report(line.trim())
        .with_context(|| format!("the launcher for {program} failed ({})", out.status))?;
    let mut text = String::new();
    File::open(&stderr)?
        .take(4096)
        .read_to_string(&mut text)
        .ok();
    if raw.timed_out {
        text = format!("timed out after {timeout:?} and was killed\n{text}");
    }
    Ok(Run {
        exit: raw.exit,
        wall: raw.wall,
        user: raw.user,
        sys: raw.sys,
        max_rss_kib: raw.max_rss_kib,
        stderr: text,
    })
}

/// Reads the launcher's line.
pub fn parse_report(line: &str) -> Option<Raw> {
    let f: Vec<&str> = line.split(' ').collect();
    let [kind, value, wall, user, sys, rss, timed_out] = f.as_slice() else {
        return None;
    };
    let value: i32 = value.parse().ok()?;
    let nanos = |s: &str| s.parse::<u64>().ok().map(Duration::from_nanos);
    Some(Raw {
        exit: match *kind {
            "code" => Exit::Code(value),
            "signal" => Exit::Signal(value),
            _ => return None,
        },
        wall: nanos(wall)?,
        user: nanos(user)?,
        sys: nanos(sys)?,
        max_rss_kib: rss.parse().ok()?,
        timed_out: *timed_out == "1",
    })
}

/// The first line of stderr that says something, for one-line reports.
pub fn first_line(stderr: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("(no message)")
        .chars()
        .take(160)
        .collect()
}

/// Whether a failed run says the feature is not there yet: the plugin's own
/// "not implemented", or a command-line parser that does not know the case's flags
/// or arguments (a plugin whose flags are not written yet). Judged from the real
/// output of the real command, never from a list of what is done.
pub fn looks_unimplemented(exit: Exit, stderr: &str) -> bool {
    let text = stderr.to_ascii_lowercase();
    text.contains("not implemented")
        || (exit == Exit::Code(2)
            && (text.contains("unexpected argument") || text.contains("unrecognized")))
}

#[cfg(test)]
mod tests {
    use super::super::launcher::{format_report, run_direct};
    use super::*;
    use std::time::Instant;

    #[test]
    fn measures_a_real_child() {
        let dir = tempfile::tempdir().unwrap();
        let err = dir.path().join("err");
        let run = run_direct(
            Command::new("sh").args(["-c", "echo oops >&2; exit 3"]),
            &dir.path().join("out"),
            &err,
            Duration::from_secs(30),
        )
        .unwrap();
        assert_eq!(run.exit, Exit::Code(3));
        assert_eq!(std::fs::read_to_string(err).unwrap(), "oops\n");
        assert!(run.max_rss_kib > 0);
        assert!(run.wall > Duration::ZERO);
        assert!(!run.timed_out);
        assert_eq!(parse_report(&format_report(&run)), Some(run));
    }

    #[test]
    fn a_run_past_its_timeout_is_killed() {
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let run = run_direct(
            Command::new("sleep").arg("30"),
            &dir.path().join("out"),
            &dir.path().join("err"),
            Duration::from_millis(200),
        )
        .unwrap();
        assert_eq!(run.exit, Exit::Signal(9)); // SIGKILL
        assert!(run.timed_out);
        let line = format_report(&run);
        assert!(line.starts_with("signal 9 "), "{line}");
        assert_eq!(parse_report(&line), Some(run));
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn malformed_launcher_lines_are_rejected() {
        assert_eq!(parse_report(""), None);
        assert_eq!(parse_report("code 0 1 2 3"), None);
        assert_eq!(parse_report("exited 0 1 2 3 4 0"), None);
        assert_eq!(parse_report("code x 1 2 3 4 0"), None);
    }

    /// The launcher compiles on its own, and its floor is small (that is its point).
    #[test]
    fn the_launcher_builds_standalone_and_measures_through_itself() {
        let dir = tempfile::tempdir().unwrap();
        let launcher = build_launcher(dir.path()).unwrap();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 4"])
            .env("KUBEPLUG_X", "1");
        let run = run(&launcher, &cmd, dir.path(), Duration::from_secs(30)).unwrap();
        assert_eq!(run.exit, Exit::Code(4));
        assert_eq!(run.stderr, "err\n");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("stdout")).unwrap(),
            "out\n"
        );
        assert!(
            run.max_rss_kib > 0 && run.max_rss_kib < 6 * 1024,
            "{} KiB",
            run.max_rss_kib
        );
    }

    #[test]
    fn unimplemented_is_recognised_from_messages() {
        assert!(looks_unimplemented(
            Exit::Code(1),
            "error: kubectl run-pod is not implemented yet\n"
        ));
        assert!(looks_unimplemented(
            Exit::Code(2),
            "error: unexpected argument '--image' found\n"
        ));
        assert!(!looks_unimplemented(
            Exit::Code(1),
            "error: unexpected argument '--image' found\n"
        ));
        assert!(!looks_unimplemented(
            Exit::Code(1),
            "Error from server (Forbidden): pods is forbidden\n"
        ));
    }

    #[test]
    fn first_line_skips_blank_lines() {
        assert_eq!(first_line("\n  \nerror: x\nmore"), "error: x");
        assert_eq!(first_line(""), "(no message)");
    }
}
