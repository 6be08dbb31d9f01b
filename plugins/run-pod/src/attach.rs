//! `--attach` / `-i` / `-t` / `--rm`: kubectl run's attach flow.
//!
//! 1. find the pod (the created Pod, or the first pod of a created workload);
//! 2. wait until it is Running **and Ready** (`--pod-running-timeout`); if it has
//!    already finished, print its logs instead;
//! 3. attach over kube's WebSocket (`ws` feature), raw terminal with `-t`, resize
//!    forwarding; if attaching fails, warn and print the logs;
//! 4. with `--restart=Never` (or `OnFailure`) and without `--leave-stdin-open`, wait for
//!    the pod to finish and exit with its container's exit code: the attach stream
//!    always reports success (kubernetes#63694), so the pod status is the truth;
//! 5. `--rm` deletes everything the command created, also after an error or Ctrl-C.

use std::io::{IsTerminal as _, Write};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow};
use futures::{SinkExt as _, TryStreamExt as _};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{
    Api, AttachParams, DeleteParams, DynamicObject, ListParams, LogParams, TerminalSize,
};
use kube::runtime::watcher;
use serde_json::Value;

use cli::SilentExit;

use crate::create::Created;

mod stdin;

/// How long output may keep arriving after the attach session reported its end.
const STREAM_DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

/// How `--rm` deletes: `--cascade` only. kubectl 1.32's run sets its delete options'
/// grace period to -1 whatever `--grace-period` and `--force` say (run.go:
/// `deleteOpts.GracePeriod = -1`), so the delete carries no `gracePeriodSeconds` and
/// each object's own grace period applies.
#[derive(Debug, Clone)]
pub struct Deletion {
    /// `--cascade`, parsed (see `options::parse_cascade`).
    pub cascade: kube::api::PropagationPolicy,
}

/// One attached run.
pub struct Session {
    /// The client.
    pub client: kube::Client,
    /// The namespace of the created objects.
    pub namespace: String,
    /// The run object (Pod or workload) as created.
    pub created: Value,
    /// Everything created, for `--rm`.
    pub created_all: Vec<Created>,
    /// `-i`.
    pub stdin: bool,
    /// `-t`.
    pub tty: bool,
    /// `-q`.
    pub quiet: bool,
    /// `--leave-stdin-open`.
    pub leave_stdin_open: bool,
    /// The pod's restart policy: decides whether to wait for an exit code.
    pub restart_policy: String,
    /// `--rm`.
    pub remove: bool,
    /// `--pod-running-timeout`.
    pub timeout: Duration,
    /// The server-side timeout of each watch, below the client's bound
    /// ([`apiclient::bound::Bound::watch_timeout`]).
    pub watch_timeout: u32,
    /// How `--rm` deletes.
    pub deletion: Deletion,
}

/// Why waiting for a pod stopped early.
#[derive(Debug)]
enum Waited {
    /// The condition holds.
    Ready(Pod),
    /// The pod finished before becoming ready (kubectl's `ErrPodCompleted`).
    Completed(Pod),
}

impl Session {
    /// Runs the attach flow and returns the exit code; `--rm` cleanup happens on every
    /// path, including Ctrl-C (exit 130, the shell's convention for SIGINT).
    pub async fn run(self, out: &mut dyn Write, err: &mut dyn Write) -> Result<ExitCode> {
        let result = tokio::select! {
            r = self.attach_and_wait(err) => r,
            _ = tokio::signal::ctrl_c() => Err(anyhow::Error::new(SilentExit(130))),
        };
        if self.remove
            && let Err(e) = self.remove_created(out).await
        {
            // The primary outcome wins; a failed cleanup is reported, not hidden.
            let _ = writeln!(err, "{}", cli::format_error(&e));
        }
        // As in kubectl, the container's failure is reported after the cleanup (its
        // deferred delete runs before CheckErr prints), with the container's exit code.
        match result.map_err(|e| e.downcast::<ContainerExit>()) {
            Err(Ok(exit)) => {
                let _ = err.write_all(exit.report().as_bytes());
                Err(SilentExit(exit.code).into())
            }
            Err(Err(other)) => Err(other),
            Ok(code) => Ok(code),
        }
    }

    async fn attach_and_wait(&self, err: &mut dyn Write) -> Result<ExitCode> {
        let pods: Api<Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        let name = self.attachable_pod(&pods, err).await?;
        // While it waits, the pod's scheduling or waiting reason goes to stderr
        // (issue 31): kubectl says nothing until its timeout.
        let why = Some(&mut *err as &mut dyn Write);
        match wait_for_pod(
            &pods,
            &name,
            self.timeout,
            self.watch_timeout,
            running_and_ready,
            why,
        )
        .await?
        {
            Waited::Completed(pod) => self.print_logs(&pods, &pod).await?,
            Waited::Ready(pod) => {
                if let Err(e) = self.attach(&pods, &pod, err).await {
                    writeln!(
                        err,
                        "warning: couldn't attach to pod/{name}, falling back to streaming logs: {}",
                        plain_message(&e)
                    )?;
                    self.print_logs(&pods, &pod).await?;
                }
            }
        }
        let wait_for_exit =
            !self.leave_stdin_open && matches!(self.restart_policy.as_str(), "Never" | "OnFailure");
        if !wait_for_exit {
            return Ok(ExitCode::SUCCESS);
        }
        // For Never the pod may fail or succeed; for OnFailure only success ends it.
        let finished: fn(&Pod) -> Result<bool, ()> = if self.restart_policy == "OnFailure" {
            |p| Ok(phase(p) == "Succeeded")
        } else {
            |p| Ok(matches!(phase(p), "Succeeded" | "Failed"))
        };
        let pod = match wait_for_pod(
            &pods,
            &name,
            self.timeout,
            self.watch_timeout,
            finished,
            None,
        )
        .await?
        {
            Waited::Ready(pod) | Waited::Completed(pod) => pod,
        };
        exit_code_of(&pod)
    }

    /// The pod to attach to: the created Pod itself, or the first pod matching the
    /// workload's selector (kubectl's `AttachablePodForObject`), waiting for it to appear.
    async fn attachable_pod(&self, pods: &Api<Pod>, err: &mut dyn Write) -> Result<String> {
        if self.created.get("kind").and_then(Value::as_str) == Some("Pod") {
            return self
                .created
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .map(str::to_string)
                .context("the created pod has no name");
        }
        let labels = self
            .created
            .pointer("/spec/selector/matchLabels")
            .or_else(|| self.created.pointer("/spec/template/metadata/labels"))
            .or_else(|| {
                self.created
                    .pointer("/spec/jobTemplate/spec/template/metadata/labels")
            })
            .and_then(Value::as_object)
            .context("cannot attach to this kind of object: it has no pod selector")?;
        let selector = labels
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
            .collect::<Vec<_>>()
            .join(",");
        let started = tokio::time::Instant::now();
        let deadline = started + self.timeout;
        let mut reported = apiclient::waiting::Reported::default();
        let mut looked_at: Option<tokio::time::Instant> = None;
        loop {
            let list = pods.list(&ListParams::default().labels(&selector)).await?;
            if let Some(name) = list
                .items
                .iter()
                .filter_map(|p| p.metadata.name.clone())
                .min()
            {
                return Ok(name);
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                anyhow::bail!("timed out waiting for a pod matching {selector}");
            }
            // No pod after a few seconds: the workload's ReplicaFailure condition says
            // why (issue 31), read at most every 5 s.
            if now >= started + STALL_AFTER
                && looked_at.is_none_or(|at| now >= at + Duration::from_secs(5))
            {
                looked_at = Some(now);
                for line in self.workload_causes(&mut reported).await {
                    writeln!(err, "{line}")?;
                }
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The `Waiting:` lines of the created workload's `ReplicaFailure` condition not
    /// printed yet (Deployments and ReplicationControllers carry one; a failed read
    /// says nothing: it only explains a wait).
    async fn workload_causes(&self, reported: &mut apiclient::waiting::Reported) -> Vec<String> {
        let Some(created) = self.created_all.first() else {
            return Vec::new();
        };
        let name = created
            .object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), &self.namespace, &created.resource);
        let Ok(object) = api.get(name).await else {
            return Vec::new();
        };
        let conditions: Vec<&Value> = object
            .data
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .map(|cs| cs.iter().collect())
            .unwrap_or_default();
        fn text<'a>(c: &'a Value, key: &str) -> Option<&'a str> {
            c.get(key).and_then(Value::as_str)
        }
        let conditions: Vec<apiclient::waiting::Condition<'_>> = conditions
            .into_iter()
            .map(|c| {
                (
                    text(c, "type").unwrap_or_default(),
                    text(c, "status").unwrap_or_default(),
                    text(c, "reason"),
                    text(c, "message"),
                )
            })
            .collect();
        let kind = created.resource.kind.to_ascii_lowercase();
        let kind = if created.resource.group.is_empty() {
            kind
        } else {
            format!("{kind}.{}", created.resource.group)
        };
        let causes = apiclient::waiting::controller_causes(&kind, name, &conditions, &[]);
        reported
            .fresh(&causes)
            .into_iter()
            .map(apiclient::waiting::Cause::line)
            .collect()
    }

    async fn attach(&self, pods: &Api<Pod>, pod: &Pod, err: &mut dyn Write) -> Result<()> {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let container = container_name(pod);
        // kubectl's SetupTTY: a TTY needs stdin, and stdin must be a terminal.
        let stdin_is_terminal = std::io::stdin().is_terminal();
        if self.tty && self.stdin && !stdin_is_terminal && !self.quiet {
            writeln!(
                err,
                "Unable to use a TTY - input is not a terminal or the right kind of file"
            )?;
        }
        let tty = self.tty && self.stdin && stdin_is_terminal;
        let params = AttachParams {
            container: container.clone(),
            stdin: self.stdin,
            stdout: true,
            stderr: !tty,
            tty,
            ..Default::default()
        };
        // kubectl's attach prints it unless quiet, with or without stdin, before it
        // connects (so it also precedes a failed attach's warning).
        if !self.quiet {
            writeln!(
                err,
                "If you don't see a command prompt, try pressing enter."
            )?;
        }
        let mut attached = pods.attach(&name, &params).await?;
        let raw = tty.then(RawMode::enable).transpose()?;
        let mut tasks = Vec::new();
        if let Some(mut remote_out) = attached.stdout() {
            tasks.push(tokio::spawn(async move {
                let _ = tokio::io::copy(&mut remote_out, &mut tokio::io::stdout()).await;
            }));
        }
        if let Some(mut remote_err) = attached.stderr() {
            tasks.push(tokio::spawn(async move {
                let _ = tokio::io::copy(&mut remote_err, &mut tokio::io::stderr()).await;
            }));
        }
        // stdin is read until end of file or the end of the session, whichever comes
        // first (see `stdin`: nothing typed after the session is taken from the shell).
        let mut stdin_stop = None;
        let stdin_task = match attached.stdin() {
            Some(mut remote_in) => {
                let (mut chunks, stop) = stdin::start().context("unable to read stdin")?;
                stdin_stop = Some(stop);
                Some(tokio::spawn(async move {
                    use tokio::io::AsyncWriteExt as _;
                    while let Some(Ok(chunk)) = chunks.recv().await {
                        if remote_in.write_all(&chunk).await.is_err() {
                            return;
                        }
                    }
                    // End of file for the container, as kubectl sends it (v5 protocol's
                    // close-stdin). It must be an explicit shutdown: kube's writer is one
                    // half of an in-memory pipe, and dropping it signals nothing, so a
                    // container reading stdin would wait forever.
                    let _ = remote_in.shutdown().await;
                }))
            }
            None => None,
        };
        let resize_task = if tty {
            attached
                .terminal_size()
                .map(|tx| tokio::spawn(forward_resizes(tx)))
        } else {
            None
        };
        // The session is over when the connection closes, or when the error channel
        // reports the final status (kubectl's streamer stops there too): a server that
        // sends the status but keeps the socket open must not hang the command.
        let status = attached.take_status();
        let joined = match status {
            Some(status) => {
                let join = attached.join();
                tokio::pin!(join);
                tokio::select! {
                    joined = &mut join => joined,
                    _ = status => match tokio::time::timeout(STREAM_DRAIN, &mut join).await {
                        Ok(joined) => joined,
                        Err(_) => Ok(()),
                    },
                }
            }
            None => attached.join().await,
        };
        // The session is over: stop reading the user's terminal before anything else.
        if let Some(mut stop) = stdin_stop {
            stop.stop();
        }
        for task in tasks {
            // Output still in flight is copied; a stream the server never ends is not waited for.
            if tokio::time::timeout(STREAM_DRAIN, task).await.is_err() {
                tracing::debug!("an output stream did not end after the session; leaving it");
            }
        }
        for task in stdin_task.into_iter().chain(resize_task) {
            task.abort();
        }
        // kubectl restores the terminal before its last words (`t.Safe` returns first).
        drop(raw);
        joined.map_err(|e| anyhow!("{e}"))?;
        // kubectl's reattachMessage: stdin on a raw terminal, not quiet, restart Always.
        if tty && !self.quiet && self.restart_policy == "Always" {
            println!(
                "Session ended, resume using 'kubectl attach {name} -c {} -i -t' command when the pod is running",
                container.unwrap_or_default()
            );
        }
        Ok(())
    }

    /// kubectl's `logOpts`: the logs of the (single) container, as they are now.
    async fn print_logs(&self, pods: &Api<Pod>, pod: &Pod) -> Result<()> {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let params = LogParams {
            container: container_name(pod),
            ..Default::default()
        };
        let stream = pods.log_stream(&name, &params).await?;
        let mut reader = tokio_util_compat(stream);
        tokio::io::copy(&mut reader, &mut tokio::io::stdout()).await?;
        Ok(())
    }

    /// Deletes everything this command created, ignoring objects already gone, and
    /// prints `pod "x" deleted` lines unless `-q`.
    async fn remove_created(&self, out: &mut dyn Write) -> Result<()> {
        let params = DeleteParams {
            propagation_policy: Some(self.deletion.cascade.clone()),
            ..Default::default()
        };
        for created in &self.created_all {
            let name = created
                .object
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let api: Api<DynamicObject> =
                Api::namespaced_with(self.client.clone(), &self.namespace, &created.resource);
            match api.delete(name, &params).await {
                Ok(_) => {
                    if !self.quiet {
                        let kind = created.resource.kind.to_ascii_lowercase();
                        let kind = if created.resource.group.is_empty() {
                            kind
                        } else {
                            format!("{kind}.{}", created.resource.group)
                        };
                        writeln!(out, "{kind} \"{name}\" deleted")?;
                    }
                }
                Err(kube::Error::Api(s)) if s.is_not_found() => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}

/// Adapts kube's `futures::AsyncBufRead` log stream to tokio's `AsyncRead`.
fn tokio_util_compat(
    stream: impl futures::AsyncBufRead + Unpin,
) -> impl tokio::io::AsyncRead + Unpin {
    tokio_util_like::Compat(stream)
}

/// A minimal futures→tokio read adapter, written here to avoid pulling in `tokio-util`
/// for one trait impl.
mod tokio_util_like {
    use std::pin::Pin;
    use std::task::{Context, Poll};

    pub struct Compat<R>(pub R);

    impl<R: futures::AsyncRead + Unpin> tokio::io::AsyncRead for Compat<R> {
        fn poll_read(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> Poll<std::io::Result<()>> {
            let unfilled = buf.initialize_unfilled();
            match Pin::new(&mut self.0).poll_read(cx, unfilled) {
                Poll::Ready(Ok(n)) => {
                    buf.advance(n);
                    Poll::Ready(Ok(()))
                }
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                Poll::Pending => Poll::Pending,
            }
        }
    }
}

/// Sends the terminal size now and whenever it changes, as kubectl's resize queue does
/// (an unchanged size is not sent again). The first size is sent one column and one
/// row larger and then as it is, as kubectl does ("so that attach-detach-reattach
/// will result in the screen being redrawn"): a shell with line editing redraws its
/// prompt on the change, so a user attaching to one sees it without pressing Enter.
async fn forward_resizes(mut tx: futures::channel::mpsc::Sender<TerminalSize>) {
    let Some(mut resized) = Resized::listen() else {
        return;
    };
    let mut last = None;
    if let Ok((width, height)) = crossterm::terminal::size() {
        let larger = TerminalSize {
            width: width.saturating_add(1),
            height: height.saturating_add(1),
        };
        if tx.send(larger).await.is_err() {
            return;
        }
    }
    loop {
        if let Ok(size) = crossterm::terminal::size()
            && last != Some(size)
        {
            last = Some(size);
            let (width, height) = size;
            if tx.send(TerminalSize { width, height }).await.is_err() {
                return;
            }
        }
        if !resized.next().await {
            return;
        }
    }
}

/// When to look at the terminal size again: on SIGWINCH on Unix.
#[cfg(unix)]
struct Resized(tokio::signal::unix::Signal);

#[cfg(unix)]
impl Resized {
    fn listen() -> Option<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        signal(SignalKind::window_change()).ok().map(Self)
    }

    /// False once no more signals can arrive.
    async fn next(&mut self) -> bool {
        self.0.recv().await.is_some()
    }
}

/// Windows has no resize signal, and console resize events arrive only to a reader of
/// the console input, which stdin forwarding owns; kubectl polls there
/// (`resizeevents_windows.go`, every 250 ms), and so do we.
#[cfg(not(unix))]
struct Resized(tokio::time::Interval);

#[cfg(not(unix))]
impl Resized {
    fn listen() -> Option<Self> {
        let mut every = tokio::time::interval(Duration::from_millis(250));
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        Some(Self(every))
    }

    async fn next(&mut self) -> bool {
        self.0.tick().await;
        true
    }
}

/// Raw terminal mode for `-t`, restored when dropped (on every return path). crossterm
/// does it with termios on Unix and with the console modes on Windows (its `windows`
/// feature).
struct RawMode;

impl RawMode {
    fn enable() -> Result<Self> {
        crossterm::terminal::enable_raw_mode().context("unable to put the terminal in raw mode")?;
        Ok(RawMode)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// An error as kubectl's `%v` shows it inside a sentence: the server's message for API
/// errors (kube's Display adds the whole Status in Debug form), the chain otherwise.
fn plain_message(e: &anyhow::Error) -> String {
    for cause in e.chain() {
        if let Some(kube::Error::Api(status)) = cause.downcast_ref::<kube::Error>() {
            return status.message.clone();
        }
    }
    format!("{e:#}")
}

fn phase(pod: &Pod) -> &str {
    pod.status
        .as_ref()
        .and_then(|s| s.phase.as_deref())
        .unwrap_or_default()
}

fn container_name(pod: &Pod) -> Option<String> {
    pod.spec
        .as_ref()
        .and_then(|s| s.containers.first())
        .map(|c| c.name.clone())
}

/// kubectl's `podRunningAndReady`: `Err(())` means the pod already completed.
pub fn running_and_ready(pod: &Pod) -> Result<bool, ()> {
    match phase(pod) {
        "Succeeded" | "Failed" => Err(()),
        "Running" => Ok(pod
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))),
        _ => Ok(false),
    }
}

/// Watches pod `name` until `condition` holds (`Ok(true)`) or reports completion
/// (`Err(())`), or `timeout` passes (each watch request asking the server for
/// `watch_timeout`). A deleted pod is kubectl's NotFound error.
/// With `why`, a wait that stalls says why there (see [`Why`]).
async fn wait_for_pod(
    pods: &Api<Pod>,
    name: &str,
    timeout: Duration,
    watch_timeout: u32,
    condition: impl Fn(&Pod) -> Result<bool, ()>,
    mut why: Option<&mut dyn Write>,
) -> Result<Waited> {
    // The server ends each watch before the client's read bound could cut a quiet one.
    let config = watcher::Config::default()
        .fields(&format!("metadata.name={name}"))
        .timeout(watch_timeout);
    let mut events = std::pin::pin!(watcher::watcher(pods.clone(), config));
    let wait = async {
        let mut stall = Why::default();
        loop {
            // A pod that stopped changing gets looked at without waiting for an event.
            let next = tokio::time::timeout_at(stall.next_check(), events.try_next()).await;
            if let Ok(event) = next {
                let Some(event) = event? else {
                    anyhow::bail!("the watch on pod {name} ended unexpectedly")
                };
                let pod = match event {
                    watcher::Event::Apply(pod) | watcher::Event::InitApply(pod) => pod,
                    watcher::Event::Delete(_) => anyhow::bail!("pods \"{name}\" not found"),
                    watcher::Event::Init | watcher::Event::InitDone => continue,
                };
                match condition(&pod) {
                    Ok(true) => return Ok(Waited::Ready(pod)),
                    Ok(false) => {}
                    Err(()) => return Ok(Waited::Completed(pod)),
                }
                stall.observe(pod);
            }
            if let Some(out) = why.as_deref_mut() {
                for line in stall.fresh_lines() {
                    writeln!(out, "{line}")?;
                }
            }
        }
    };
    tokio::time::timeout(timeout, wait)
        .await
        // client-go's wait.ErrWaitTimeout, which kubectl prints as is.
        .map_err(|_| anyhow!("timed out waiting for the condition"))?
}

/// How long a pod may stay as it is before its reasons are shown.
const STALL_AFTER: Duration = Duration::from_secs(3);

/// Why the pod waited for is not running yet (issue 31), from the watch's own
/// events (no request of its own): once the pod's phase and readiness have not
/// changed for [`STALL_AFTER`], its scheduling and waiting reasons, in the server's
/// words (`apiclient::waiting`), each printed once until it changes.
struct Why {
    pod: Option<Pod>,
    state: Option<(String, bool)>,
    moved_at: tokio::time::Instant,
    reported: apiclient::waiting::Reported,
}

impl Default for Why {
    fn default() -> Self {
        Why {
            pod: None,
            state: None,
            moved_at: tokio::time::Instant::now(),
            reported: apiclient::waiting::Reported::default(),
        }
    }
}

impl Why {
    fn observe(&mut self, pod: Pod) {
        let ready = running_and_ready(&pod) == Ok(true);
        let state = Some((phase(&pod).to_string(), ready));
        if state != self.state {
            self.state = state;
            self.moved_at = tokio::time::Instant::now();
        }
        self.pod = Some(pod);
    }

    fn next_check(&self) -> tokio::time::Instant {
        let now = tokio::time::Instant::now();
        let stalled_at = self.moved_at + STALL_AFTER;
        if now < stalled_at {
            stalled_at
        } else {
            // Nothing is sent: looking again costs only the comparison.
            now + Duration::from_secs(1)
        }
    }

    fn fresh_lines(&mut self) -> Vec<String> {
        let Some(pod) = &self.pod else {
            return Vec::new();
        };
        if tokio::time::Instant::now() < self.moved_at + STALL_AFTER {
            return Vec::new();
        }
        let causes = apiclient::waiting::pod_causes([pod]);
        self.reported
            .fresh(&causes)
            .into_iter()
            .map(apiclient::waiting::Cause::line)
            .collect()
    }
}

/// A container that exited non-zero: kubectl prints `MESSAGE` (no `error: `) and exits
/// with the container's code (its `uexec.CodeExitError`).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ContainerExit {
    /// `pod NS/NAME terminated (REASON)\nMESSAGE`.
    pub message: String,
    /// The exit code to use.
    pub code: u8,
}

impl ContainerExit {
    /// What kubectl's `CheckErr` prints for a `uexec.CodeExitError`: the message as
    /// it is, without `error: `, and a newline only when it lacks one (`fatal`).
    pub fn report(&self) -> String {
        if self.message.ends_with('\n') {
            self.message.clone()
        } else {
            format!("{}\n", self.message)
        }
    }
}

/// The command's outcome from the finished pod, as kubectl run reports it.
pub fn exit_code_of(pod: &Pod) -> Result<ExitCode> {
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    match phase(pod) {
        "Succeeded" => Ok(ExitCode::SUCCESS),
        "Failed" => {
            let terminated = pod
                .status
                .as_ref()
                .and_then(|s| s.container_statuses.as_ref())
                .and_then(|cs| cs.first())
                .and_then(|c| c.state.as_ref())
                .and_then(|s| s.terminated.as_ref());
            let Some(t) = terminated.filter(|t| t.exit_code != 0) else {
                anyhow::bail!("pod {ns}/{name} failed with unknown exit code");
            };
            // Exit statuses are 8 bits; Go's os.Exit truncates the same way.
            Err(ContainerExit {
                message: format!(
                    "pod {ns}/{name} terminated ({})\n{}",
                    t.reason.clone().unwrap_or_default(),
                    t.message.clone().unwrap_or_default()
                ),
                code: (t.exit_code & 0xff) as u8,
            }
            .into())
        }
        other => anyhow::bail!("pod {ns}/{name} left in phase {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(value: serde_json::Value) -> Pod {
        serde_json::from_value(value).expect("pod")
    }

    #[test]
    fn running_and_ready_needs_both() {
        let running = pod(serde_json::json!({"status": {"phase": "Running"}}));
        assert_eq!(running_and_ready(&running), Ok(false));
        let ready = pod(
            serde_json::json!({"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}),
        );
        assert_eq!(running_and_ready(&ready), Ok(true));
        let done = pod(serde_json::json!({"status": {"phase": "Succeeded"}}));
        assert_eq!(running_and_ready(&done), Err(()));
        assert_eq!(running_and_ready(&pod(serde_json::json!({}))), Ok(false));
    }

    #[test]
    fn exit_codes_come_from_the_container() {
        let ok = pod(serde_json::json!({"status": {"phase": "Succeeded"}}));
        assert_eq!(exit_code_of(&ok).ok(), Some(ExitCode::SUCCESS));
        let failed = pod(serde_json::json!({
            "metadata": {"name": "x", "namespace": "ns"},
            "status": {"phase": "Failed", "containerStatuses": [{
                "name": "x", "image": "i", "imageID": "", "ready": false, "restartCount": 0,
                "state": {"terminated": {"exitCode": 3, "reason": "Error"}}
            }]}
        }));
        let err = exit_code_of(&failed).expect_err("error");
        let exit = err.downcast_ref::<ContainerExit>().expect("container exit");
        assert_eq!(exit.code, 3);
        assert_eq!(exit.message, "pod ns/x terminated (Error)\n");
        // kubectl 1.32: `pod ns/x terminated (Error)` alone on stderr, exit code 3.
        assert_eq!(exit.report(), "pod ns/x terminated (Error)\n");
        let with_message = ContainerExit {
            message: "pod ns/x terminated (Error)\nout of memory".into(),
            code: 1,
        };
        assert_eq!(
            with_message.report(),
            "pod ns/x terminated (Error)\nout of memory\n"
        );
        let unknown = pod(
            serde_json::json!({"metadata": {"name": "x", "namespace": "ns"}, "status": {"phase": "Failed"}}),
        );
        assert_eq!(
            exit_code_of(&unknown)
                .err()
                .map(|e| e.to_string())
                .as_deref(),
            Some("pod ns/x failed with unknown exit code")
        );
        let pending = pod(
            serde_json::json!({"metadata": {"name": "x", "namespace": "ns"}, "status": {"phase": "Pending"}}),
        );
        assert_eq!(
            exit_code_of(&pending)
                .err()
                .map(|e| e.to_string())
                .as_deref(),
            Some("pod ns/x left in phase Pending")
        );
    }
}
