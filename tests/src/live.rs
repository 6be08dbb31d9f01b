//! A plugin run a test acts on while it runs: its stdout and stderr collected line by
//! line as they come, a wait for a given line (woken by each new line, bounded, and
//! failing at once when the stream ended without it), signals, and an end that reads
//! both pipes to their end before it returns, so nothing the plugin wrote is missed.

use std::path::Path;
use std::time::Duration;

use tokio::io::AsyncBufReadExt as _;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// One of the run's output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// The lines of one stream so far, and whether it ended.
#[derive(Default)]
struct Collected {
    lines: Vec<String>,
    /// When each line was read.
    times: Vec<std::time::Instant>,
    closed: bool,
}

/// A live plugin run (see the module).
pub struct Live {
    child: tokio::process::Child,
    stdout: watch::Sender<Collected>,
    stderr: watch::Sender<Collected>,
    readers: Vec<JoinHandle<()>>,
}

impl Live {
    /// Starts `plugin` as [`crate::harness::spawn_plugin`] does.
    pub fn spawn(
        plugin_dir: &Path,
        plugin: &str,
        kubeconfig: &Path,
        args: impl IntoIterator<Item = impl AsRef<std::ffi::OsStr>>,
    ) -> Live {
        Self::started(crate::harness::spawn_plugin(
            plugin_dir, plugin, kubeconfig, args,
        ))
    }

    /// Starts `command` (its program, arguments and environment set) as
    /// [`crate::harness::spawn_plugin`] starts a plugin: stdin closed, stdout and stderr
    /// read line by line, killed when dropped.
    pub fn command(mut command: tokio::process::Command) -> Live {
        let child = command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {:?}: {e}", command.as_std().get_program()));
        Self::started(child)
    }

    /// Starts `cmd` (a plugin or the release's kubectl, as the harness sets them up) as
    /// [`Live::command`] does, so that a test can act in the middle of its run.
    pub fn cmd(cmd: crate::harness::Cmd) -> Live {
        Self::command(tokio::process::Command::from(cmd.into_command()))
    }

    fn started(mut child: tokio::process::Child) -> Live {
        let (stdout, stderr) = (watch::Sender::default(), watch::Sender::default());
        let readers = vec![
            collect(child.stdout.take().expect("piped stdout"), stdout.clone()),
            collect(child.stderr.take().expect("piped stderr"), stderr.clone()),
        ];
        Live {
            child,
            stdout,
            stderr,
            readers,
        }
    }

    fn stream(&self, stream: Stream) -> &watch::Sender<Collected> {
        match stream {
            Stream::Stdout => &self.stdout,
            Stream::Stderr => &self.stderr,
        }
    }

    /// Waits up to `within` for a line of `stream` that satisfies `want` (`what`
    /// names it in the failure) and returns it; fails the test when the time is up or
    /// the stream ended without one.
    pub async fn line(
        &self,
        stream: Stream,
        within: Duration,
        what: &str,
        want: impl Fn(&str) -> bool,
    ) -> String {
        let mut seen = self.stream(stream).subscribe();
        let found = tokio::time::timeout(within, async {
            loop {
                {
                    let collected = seen.borrow_and_update();
                    if let Some(line) = collected.lines.iter().find(|l| want(l)) {
                        return Some(line.clone());
                    }
                    if collected.closed {
                        return None;
                    }
                }
                if seen.changed().await.is_err() {
                    return None;
                }
            }
        })
        .await;
        match found {
            Ok(Some(line)) => line,
            Ok(None) => panic!("the output ended without {what}\n{}", self.transcript()),
            Err(_) => panic!("no {what} within {within:?}\n{}", self.transcript()),
        }
    }

    /// Waits up to 60 s for a stdout line that starts with `prefix`.
    pub async fn until(&self, prefix: &str) -> String {
        self.line(Stream::Stdout, Duration::from_secs(60), prefix, |l| {
            l.starts_with(prefix)
        })
        .await
    }

    /// Sends `sig` to the plugin.
    pub fn signal(&self, sig: i32) {
        let pid = self.child.id().expect("the plugin still runs");
        assert!(
            localcluster::controlplane::signal(pid, sig),
            "signal {sig} to {pid}"
        );
    }

    /// The lines of `stream` so far.
    pub fn lines(&self, stream: Stream) -> Vec<String> {
        self.stream(stream).borrow().lines.clone()
    }

    /// When each line of `stream` so far was read (for the gaps in a run's output).
    pub fn times(&self, stream: Stream) -> Vec<std::time::Instant> {
        self.stream(stream).borrow().times.clone()
    }

    /// The lines of `stream` so far, joined by line breaks.
    pub fn text(&self, stream: Stream) -> String {
        self.stream(stream).borrow().lines.join("\n")
    }

    /// Both streams so far, for failure messages.
    pub fn transcript(&self) -> String {
        format!(
            "stdout:\n{}\nstderr:\n{}",
            self.text(Stream::Stdout),
            self.text(Stream::Stderr)
        )
    }

    /// Waits for the plugin to exit and for both pipes to be read to their end, at
    /// most `bound` (then fails the test: a hang is a bug); returns the exit code.
    pub async fn end(&mut self, bound: Duration) -> Option<i32> {
        let readers = std::mem::take(&mut self.readers);
        let ended = tokio::time::timeout(bound, async {
            let status = self.child.wait().await;
            for reader in readers {
                reader.await.expect("reading the plugin's output");
            }
            status
        })
        .await;
        match ended {
            Ok(status) => status.expect("wait for the plugin").code(),
            Err(_) => panic!(
                "the plugin did not end within {bound:?}\n{}",
                self.transcript()
            ),
        }
    }

    /// [`Live::finish`] for a long run that reports its progress as it goes (a
    /// rolling update's `Scaling …` lines): fails the test only when the run printed
    /// nothing on either stream for `quiet`, which is a hang, not a slow machine. A
    /// bound on the whole run would fail a run that was moving, just slowly (30
    /// replicas on a real node at a load of 60 took longer than 300 s).
    pub async fn finish_unless_quiet(
        mut self,
        quiet: Duration,
    ) -> (Option<i32>, Vec<String>, String) {
        let mut stdout = self.stdout.subscribe();
        let mut stderr = self.stderr.subscribe();
        loop {
            let printed = async {
                tokio::select! {
                    _ = stdout.changed() => {}
                    _ = stderr.changed() => {}
                }
            };
            tokio::select! {
                _ = self.child.wait() => break,
                moved = tokio::time::timeout(quiet, printed) => {
                    if moved.is_err() {
                        panic!(
                            "the plugin printed nothing for {quiet:?} and did not end\n{}",
                            self.transcript()
                        );
                    }
                }
            }
        }
        self.finish(quiet).await
    }

    /// [`Live::end`], then the exit code, stdout's lines and stderr's text.
    pub async fn finish(mut self, bound: Duration) -> (Option<i32>, Vec<String>, String) {
        let code = self.end(bound).await;
        let stderr = self
            .lines(Stream::Stderr)
            .iter()
            .map(|l| format!("{l}\n"))
            .collect();
        (code, self.lines(Stream::Stdout), stderr)
    }
}

/// Reads `pipe` line by line into `into` until it ends.
fn collect(
    pipe: impl tokio::io::AsyncRead + Unpin + Send + 'static,
    into: watch::Sender<Collected>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(pipe).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            into.send_modify(|c| {
                c.lines.push(line);
                c.times.push(std::time::Instant::now());
            });
        }
        into.send_modify(|c| c.closed = true);
    })
}
