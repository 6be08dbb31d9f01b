//! `--attach` / `-i` / `-t` / `--rm`: kubectl run's attach flow, as kubectl 1.37 has it.
//!
//! 1. find the pod (the created Pod, or the first pod of a created workload);
//! 2. wait until it is Running **and Ready** (`--pod-running-timeout`); if it has
//!    already finished, print its logs instead;
//! 3. attach over kube's WebSocket (`ws` feature) and print the container's log up to
//!    where the attach's own output begins, then that (`replay`: nothing written
//!    before the attach joined is lost, nothing is printed twice),
//!    raw terminal with `-t`, resize forwarding, `--detach-keys` (see `stream`); if
//!    attaching fails, warn and print the logs written since;
//! 4. with `--restart=Never` (or `OnFailure`) and without `--leave-stdin-open`, wait for
//!    the pod to finish and exit with its container's exit code: the attach stream
//!    always reports success (kubernetes#63694), so the pod status is the truth;
//! 5. `--rm` deletes everything the command created, also after an error, SIGINT or
//!    SIGTERM (`cli::interrupt`: bounded, then the signal's exit code; a second signal
//!    exits at once).

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context as _, Result, anyhow};
use futures::TryStreamExt as _;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, LogParams};
use kube::runtime::watcher;
use serde_json::Value;
use tokio_util::compat::FuturesAsyncReadCompatExt as _;

use cli::SilentExit;
use cli::interrupt::Interrupt;

use crate::create::Created;
use pod::Pod;

pub mod detach;
mod pod;
mod replay;
mod resume;
mod stdin;
mod stream;

/// How long `--rm` may take to delete after a signal before the command gives up
/// (each request is bounded as well; this bounds them together).
const CLEANUP_AFTER_SIGNAL: Duration = Duration::from_secs(20);

/// The same bound once stdout or stderr was found closed: shorter, since whoever
/// closed the pipe (`| head`) is not waiting for anything more, and the command must
/// end within seconds of it (deleting is one request per object).
const CLEANUP_AFTER_CLOSED: Duration = Duration::from_secs(8);

/// How `--rm` deletes: `--cascade` only. kubectl's run sets its delete options'
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
    /// `--detach-keys`, as typed (parsed where kubectl parses it: see `stream`).
    pub detach_keys: String,
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
    /// path, including SIGINT and SIGTERM (exit 130 or 143, as a shell reports a
    /// command the signal ended). kubectl leaves the pod behind on a signal; a CI
    /// system that cancels a job with SIGTERM must not leak pods.
    pub async fn run(self, out: &mut dyn Write, err: &mut dyn Write) -> Result<ExitCode> {
        let interrupt = Interrupt::install(self.second_signal_hint());
        let mut signalled = None;
        // A closed stdout or stderr ends the session at once, whatever the container
        // still does: its output has nowhere to go, and `cli::finish` ends the command
        // as kubectl ends (which a container that never ends would otherwise never let
        // happen: the attach only writes when the container does).
        let result = tokio::select! {
            r = self.attach_and_wait(err) => r,
            i = interrupt.fired() => {
                signalled = Some(i.signal);
                Err(anyhow::Error::new(SilentExit(cli::interrupt::exit_code(i.signal))))
            }
            stream = apiclient::output::wait_closed() => Err(anyhow::Error::new(
                apiclient::output::Closed(stream),
            )),
        };
        // The session's future is dropped: the terminal is restored and stdin is no
        // longer read before anything below is printed.
        if self.remove {
            let bound = match (signalled, apiclient::output::closed()) {
                (Some(_), _) => Some(CLEANUP_AFTER_SIGNAL),
                (None, Some(_)) => Some(CLEANUP_AFTER_CLOSED),
                (None, None) => None,
            };
            let removed = match bound {
                None => self.remove_created(out).await,
                Some(bound) => tokio::time::timeout(bound, self.remove_created(out))
                    .await
                    .unwrap_or_else(|_| {
                        Err(anyhow!(
                            "deleting what --rm created took longer than {}s; {}",
                            bound.as_secs(),
                            self.second_signal_hint()
                        ))
                    }),
            };
            // A line not written to a closed stdout is no failed cleanup: the delete
            // was done.
            match removed {
                Err(e) if !apiclient::output::is_closed(e.as_ref()) => {
                    // The primary outcome wins; a failed cleanup is reported, not hidden.
                    let _ = writeln!(err, "{}", cli::format_error(&e));
                }
                _ => {}
            }
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

    /// What a second signal, which ends the command at once, leaves to the user.
    fn second_signal_hint(&self) -> String {
        if !self.remove {
            return "The created objects stay (no --rm).".into();
        }
        let objects: Vec<String> = self
            .created_all
            .iter()
            .map(|c| format!("{}/{}", kind_of(c), name_of(c)))
            .collect();
        format!(
            "Left for --rm to delete: kubectl delete -n {} {}",
            self.namespace,
            objects.join(" ")
        )
    }

    async fn attach_and_wait(&self, err: &mut dyn Write) -> Result<ExitCode> {
        // Logs and the attach by name; the pods themselves read as JSON (`pod`).
        let pods: Api<core::Pod> = Api::namespaced(self.client.clone(), &self.namespace);
        let objects = pod::api(self.client.clone(), &self.namespace);
        let name = self.attachable_pod(&objects, err).await?;
        // While it waits, the pod's scheduling or waiting reason goes to stderr;
        // kubectl says nothing until its timeout.
        let why = Some(&mut *err as &mut dyn Write);
        let fallback = match wait_for_pod(
            &objects,
            &name,
            self.timeout,
            self.watch_timeout,
            running_and_ready,
            why,
        )
        .await?
        {
            Waited::Completed(pod) => {
                self.print_logs(&pods, &pod, FromLog::ALL, false).await?;
                None
            }
            Waited::Ready(pod) => self
                .attach_ready(&pods, &pod, err)
                .await?
                .map(|from| (pod, from)),
        };
        let wait_for_exit =
            !self.leave_stdin_open && matches!(self.restart_policy.as_str(), "Never" | "OnFailure");
        if !wait_for_exit {
            if let Some((pod, from)) = fallback {
                self.print_logs(&pods, &pod, from, false).await?;
            }
            return Ok(ExitCode::SUCCESS);
        }
        // For Never the pod may fail or succeed; for OnFailure only success ends it.
        let finished: fn(&Pod) -> Result<bool, ()> = if self.restart_policy == "OnFailure" {
            |p| Ok(p.phase() == "Succeeded")
        } else {
            |p| Ok(matches!(p.phase(), "Succeeded" | "Failed"))
        };
        let exit = wait_for_pod(
            &objects,
            &name,
            self.timeout,
            self.watch_timeout,
            finished,
            None,
        );
        let waited = match &fallback {
            // Beyond kubectl, whose fallback reads the log once: the command waits for
            // the pod's end anyway, so its log is followed meanwhile, and what the
            // container writes after the attach failed is not lost.
            Some((pod, from)) => {
                while_following(self.print_logs(&pods, pod, *from, true), exit).await
            }
            None => exit.await,
        };
        let pod = match waited? {
            Waited::Ready(pod) | Waited::Completed(pod) => pod,
        };
        exit_code_of(&pod)
    }

    /// kubectl 1.37's `handleAttachPod` for a running pod: the log so far and the
    /// attach, joined without a gap or a repeated line (`stream`, `replay`); if
    /// attaching fails, a warning, and where the log is to be printed from instead.
    async fn attach_ready(
        &self,
        pods: &Api<core::Pod>,
        pod: &Pod,
        err: &mut dyn Write,
    ) -> Result<Option<FromLog>> {
        let name = pod.name();
        let container = pod.container_name();
        let mut pre = replay::PreAttach::new(pods, &name, container.clone());
        let request = stream::Request {
            pod: &name,
            namespace: &self.namespace,
            container,
            stdin: self.stdin,
            tty: self.tty,
            quiet: self.quiet,
            detach_keys: &self.detach_keys,
        };
        let (why, printed, input_open) = match stream::attach(pods, &request, err, &mut pre).await {
            Ok(stream::Outcome::Ended) => return Ok(None),
            Ok(stream::Outcome::Cut {
                why,
                printed,
                input_open,
            }) => (why, printed, input_open),
            Err(e) => {
                if apiclient::output::is_closed(e.as_ref()) {
                    return Err(e);
                }
                writeln!(
                    err,
                    "warning: couldn't attach to pod/{name}, falling back to streaming logs: {}",
                    plain_message(&e)
                )?;
                return Ok(Some(FromLog {
                    since: pre.read_at,
                    printed_through: pre.printed_through,
                }));
            }
        };
        self.after_cut(&request, &why, input_open, err)?;
        tracing::debug!("the attach to pod/{name} was cut ({why}); following its log");
        resume::follow(
            pods,
            &name,
            request.container.clone(),
            &printed,
            pre.printed_through,
        )
        .await?;
        Ok(None)
    }

    /// What a cut attach leaves of the session. Output resumes from the log; input
    /// cannot: with `stdinOnce` (`-i` without `--leave-stdin-open`) the runtime
    /// closes the container's stdin when its attach leaves, so what we had not sent
    /// yet can reach it no more, and the user is told so (the log is still followed
    /// to the container's end and its exit code). With `--leave-stdin-open` the
    /// container's stdin stays open and may wait for input forever: no log follow
    /// would end, so the command ends here, in error, saying how to attach again.
    fn after_cut(
        &self,
        request: &stream::Request<'_>,
        why: &str,
        input_open: bool,
        err: &mut dyn Write,
    ) -> Result<()> {
        let pod = request.pod;
        if self.stdin && self.leave_stdin_open {
            anyhow::bail!(
                "the attach to pod/{pod} was cut ({why}); its stdin stays open (--leave-stdin-open): attach again with 'kubectl attach {pod} -c {} -n {} -i{}'",
                request.container.as_deref().unwrap_or_default(),
                self.namespace,
                if self.tty { " -t" } else { "" }
            );
        }
        if input_open {
            writeln!(
                err,
                "warning: the attach to pod/{pod} was cut ({why}); the container's input ended there: what follows is its log"
            )?;
        }
        Ok(())
    }

    /// The pod to attach to: the created Pod itself, or the first pod matching the
    /// workload's selector (kubectl's `AttachablePodForObject`), waiting for it to appear.
    async fn attachable_pod(
        &self,
        pods: &Api<DynamicObject>,
        err: &mut dyn Write,
    ) -> Result<String> {
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
        let mut reported = objectstatus::waiting::Reported::default();
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
            // why, read at most every 5 s.
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
    async fn workload_causes(&self, reported: &mut objectstatus::waiting::Reported) -> Vec<String> {
        let Some(created) = self.created_all.first() else {
            return Vec::new();
        };
        let name = name_of(created);
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
        let conditions: Vec<objectstatus::waiting::Condition<'_>> = conditions
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
        let causes =
            objectstatus::waiting::controller_causes(&kind_of(created), name, &conditions, &[]);
        reported
            .fresh(&causes)
            .into_iter()
            .map(objectstatus::waiting::Cause::line)
            .collect()
    }

    /// kubectl's `logOpts`: the logs of the (single) container, as they are now (or
    /// those written since `since`).
    /// The log from `since` on, without the lines written up to `printed_through`
    /// (printed before the attach failed: `sinceTime` travels in whole seconds, so
    /// the log from `since` may begin with them).
    async fn print_logs(
        &self,
        pods: &Api<core::Pod>,
        pod: &Pod,
        from: FromLog,
        follow: bool,
    ) -> Result<()> {
        let FromLog {
            since,
            printed_through,
        } = from;
        let name = pod.name();
        let params = LogParams {
            container: pod.container_name(),
            since_time: since,
            timestamps: printed_through.is_some(),
            follow,
            ..Default::default()
        };
        let stream = pods.log_stream(&name, &params).await?;
        let mut out = apiclient::output::async_stdout();
        let Some(printed_through) = printed_through else {
            tokio::io::copy(&mut stream.compat(), &mut out).await?;
            return Ok(());
        };
        let mut lines = tokio::io::BufReader::new(stream.compat());
        let mut line = Vec::new();
        loop {
            line.clear();
            if tokio::io::AsyncBufReadExt::read_until(&mut lines, b'\n', &mut line).await? == 0 {
                tokio::io::AsyncWriteExt::flush(&mut out).await?;
                return Ok(());
            }
            let log = replay::Log::parse(&line);
            if log.written_at(0).is_some_and(|at| at <= printed_through) {
                continue;
            }
            tokio::io::AsyncWriteExt::write_all(&mut out, &log.text).await?;
        }
    }

    /// Deletes everything this command created, ignoring objects already gone, and
    /// prints kubectl 1.37's `pod "x" deleted from NS namespace` lines unless `-q`.
    /// A line that cannot be written (a closed stdout) stops no delete: the first such
    /// error is returned once all are done.
    async fn remove_created(&self, out: &mut dyn Write) -> Result<()> {
        let params = DeleteParams {
            propagation_policy: Some(self.deletion.cascade.clone()),
            ..Default::default()
        };
        let mut unwritten = Ok(());
        for created in &self.created_all {
            let name = name_of(created);
            let api: Api<DynamicObject> =
                Api::namespaced_with(self.client.clone(), &self.namespace, &created.resource);
            match api.delete(name, &params).await {
                Ok(_) => {
                    if !self.quiet && unwritten.is_ok() {
                        // Everything run creates is namespaced.
                        unwritten = writeln!(
                            out,
                            "{} \"{name}\" deleted from {} namespace",
                            kind_of(created),
                            self.namespace
                        );
                    }
                }
                Err(kube::Error::Api(s)) if s.is_not_found() => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(unwritten?)
    }
}

/// kubectl's kind string of a created object: `pod`, `deployment.apps`.
fn kind_of(created: &Created) -> String {
    let kind = created.resource.kind.to_ascii_lowercase();
    if created.resource.group.is_empty() {
        kind
    } else {
        format!("{kind}.{}", created.resource.group)
    }
}

fn name_of(created: &Created) -> &str {
    created
        .object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
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

/// kubectl's `podRunningAndReady`: `Err(())` means the pod already completed.
pub fn running_and_ready(pod: &Pod) -> Result<bool, ()> {
    match pod.phase() {
        "Succeeded" | "Failed" => Err(()),
        "Running" => Ok(pod.ready()),
        _ => Ok(false),
    }
}

/// Watches pod `name` until `condition` holds (`Ok(true)`) or reports completion
/// (`Err(())`), or `timeout` passes (each watch request asking the server for
/// `watch_timeout`). A deleted pod is kubectl's NotFound error.
/// With `why`, a wait that stalls says why there (see [`Why`]).
/// Where a log is printed from: the log replay's second (`since`), leaving out the
/// lines it printed (written up to `printed_through`).
#[derive(Debug, Clone, Copy)]
struct FromLog {
    since: Option<Timestamp>,
    printed_through: Option<Timestamp>,
}

impl FromLog {
    /// The whole log.
    const ALL: FromLog = FromLog {
        since: None,
        printed_through: None,
    };
}

/// How long a followed log may go on once the pod is seen ended: the kubelet ends the
/// stream as the container ends, and the pod's status can come first.
const LOG_DRAIN: Duration = Duration::from_secs(2);

/// Waits for `exit` while `logs` follows the pod's log; a log that fails (a closed
/// stdout) ends the wait with its error. A wait that fails (its timeout) stops the log.
async fn while_following<T>(
    logs: impl std::future::Future<Output = Result<()>>,
    exit: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let mut logs = std::pin::pin!(logs);
    let mut exit = std::pin::pin!(exit);
    let waited = tokio::select! {
        waited = &mut exit => waited,
        printed = &mut logs => {
            printed?;
            return exit.await;
        }
    };
    if waited.is_ok()
        && let Ok(printed) = tokio::time::timeout(LOG_DRAIN, logs).await
    {
        printed?;
    }
    waited
}

async fn wait_for_pod(
    pods: &Api<DynamicObject>,
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
                    watcher::Event::Apply(pod) | watcher::Event::InitApply(pod) => Pod::from(pod),
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

/// Why the pod waited for is not running yet, from the watch's own
/// events (no request of its own): once the pod's phase and readiness have not
/// changed for [`STALL_AFTER`], its scheduling and waiting reasons, in the server's
/// words (`objectstatus::waiting`), each printed once until it changes.
struct Why {
    pod: Option<Pod>,
    state: Option<(String, bool)>,
    moved_at: tokio::time::Instant,
    reported: objectstatus::waiting::Reported,
}

impl Default for Why {
    fn default() -> Self {
        Why {
            pod: None,
            state: None,
            moved_at: tokio::time::Instant::now(),
            reported: objectstatus::waiting::Reported::default(),
        }
    }
}

impl Why {
    fn observe(&mut self, pod: Pod) {
        let ready = running_and_ready(&pod) == Ok(true);
        let state = Some((pod.phase().to_string(), ready));
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
        let Some(view) = pod.status_view() else {
            return Vec::new();
        };
        let causes = objectstatus::waiting::pod_causes([&view]);
        self.reported
            .fresh(&causes)
            .into_iter()
            .map(objectstatus::waiting::Cause::line)
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
    let ns = pod.namespace();
    let name = pod.name();
    match pod.phase() {
        "Succeeded" => Ok(ExitCode::SUCCESS),
        "Failed" => {
            let Some(t) = pod.terminated().filter(|t| t.exit_code != 0) else {
                anyhow::bail!("pod {ns}/{name} failed with unknown exit code");
            };
            // Exit statuses are 8 bits; Go's os.Exit truncates the same way.
            Err(ContainerExit {
                message: format!(
                    "pod {ns}/{name} terminated ({})\n{}",
                    t.reason.unwrap_or_default(),
                    t.message.unwrap_or_default()
                ),
                code: (t.exit_code & 0xff) as u8,
            }
            .into())
        }
        other => anyhow::bail!("pod {ns}/{name} left in phase {other}"),
    }
}

#[cfg(test)]
mod tests;
