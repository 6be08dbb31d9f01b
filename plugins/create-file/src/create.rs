//! Creating what the Builder produced: kubectl's `RunCreate` visitor function, with
//! ordering and concurrency.
//!
//! - Namespaces and CustomResourceDefinitions are created first (together, bounded),
//!   then the CRDs are awaited until Established, then everything else is created with
//!   at most `--concurrency` requests in flight — fewer while the server throttles
//!   ([`crate::limit`]).
//! - A create the server applied but answered with a `5xx` is retried by the client
//!   (`apiclient::retry`) and then meets `AlreadyExists`; a create whose answer was
//!   lost (the server died under it) is sent again on a new connection. Either way an
//!   `AlreadyExists` is resolved by reading the object back: provably the one sent
//!   ([`crate::resolve`]), it is reported as created: every object is created exactly
//!   once and reported once.
//! - An object whose kind changes the admission of later ones (a LimitRange, a
//!   ServiceAccount, a Role… see [`crate::order`]) is an order barrier: it is created
//!   alone, after everything before it and before anything after it, so the result is
//!   kubectl's one-at-a-time result.
//! - Results are printed in input order as soon as every earlier object is done, so
//!   output is deterministic whatever order the server answers in. Creates run at
//!   most a window ahead of that output ([`window`]), so memory stays bounded when
//!   an early object is slow.
//! - Every failure (from the Builder or the server) is reported at the end with its
//!   source; objects that could be created are created; the exit code is then 1.
//! - Once stdout or stderr is found closed (`| head -1`), no create is sent; those in
//!   flight are awaited, and [`report_closed`] names on stderr what was created but
//!   not printed: nothing sent is left unreported, as the point where kubectl dies of
//!   SIGPIPE leaves it.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use apiclient::retry::{Throttled, track_with};
use cli::SilentExit;
use cli::flags::{ChangeCauseRecorder, DryRunStrategy};
use cli::printers::{Error as PrintError, Printer};
use futures::StreamExt;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::wait::await_condition;
use resources::rest::Helper;
use resources::{Info, Validation, Visited};
use serde_json::Value;

use crate::limit::Limiter;
use crate::order;
use crate::report::{Failure, write_failures};
use crate::resolve;
use crate::writers::Writers;

/// How often, and how long apart, a create for a CRD made in this run is retried while
/// the server still answers 404 (it serves the new resource shortly after Established).
const NEW_CRD_RETRIES: u32 = 20;
const NEW_CRD_RETRY_DELAY: Duration = Duration::from_millis(250);

/// The least a client dry run writes at once (its objects are printed as fast as
/// they are read: one write each would be a hand-over to the blocking pool each).
const BATCH: usize = 64 << 10;

/// What the create step needs of the command's options: a small value rather than
/// `CreateFileOptions` itself, so that `options` calls `create` (and `edit`) and
/// nothing calls back.
#[derive(Clone, Copy)]
pub struct CreateStep<'a> {
    /// `None` only for a client dry run without a usable kubeconfig.
    pub client: Option<&'a kube::Client>,
    pub dry_run: DryRunStrategy,
    pub field_manager: &'a str,
    /// `--validate`: the `fieldValidation` directive every create carries.
    pub validation: Validation,
    /// `-o`: how each created (or dry-run) object is printed.
    pub printer: &'a dyn Printer,
    /// `--save-config`.
    pub save_config: bool,
    /// `--record`.
    pub recorder: Option<&'a ChangeCauseRecorder>,
    /// `--concurrency`: the ceiling of creates in flight.
    pub concurrency: usize,
    /// How long a CRD of the input may take to become established.
    pub crd_timeout: Duration,
    /// `--wait`: keep a reference to each created object for the wait.
    pub wait: bool,
    /// stdout and stderr: every line of the command is written through them.
    pub out: &'a Writers,
}

/// Prints finished results in input order and keeps failures for the end. Results
/// of the first pass (Namespaces and CRDs) are held until the second pass reaches
/// them; the second pass hands its results over in order (`order::run_ordered`).
struct Output<'a> {
    pending: BTreeMap<usize, Result<Value, Failure>>,
    /// Rendered and not yet written.
    text: Vec<u8>,
    next: usize,
    failures: Vec<Failure>,
    step: CreateStep<'a>,
    /// With `--wait`: the created objects to wait for ([`kept_for_wait`]), and how
    /// many were created.
    created: Vec<Value>,
    total: usize,
    /// The names of the objects rendered into `text`, and of those created but never
    /// printed because stdout was found closed: reported on stderr at the end
    /// ([`report_closed`]).
    rendered: Vec<String>,
    unprinted: Vec<String>,
}

impl Output<'_> {
    /// Records `result` and prints what is now finished.
    async fn set(&mut self, index: usize, result: Result<Value, Failure>) -> anyhow::Result<()> {
        self.pending.insert(index, result);
        self.flush(0).await
    }

    /// Records `results` and prints what is now finished, in one write.
    async fn set_all(
        &mut self,
        results: impl IntoIterator<Item = (usize, Result<Value, Failure>)>,
    ) -> anyhow::Result<()> {
        self.pending.extend(results);
        self.flush(0).await
    }

    /// Records `result` of a client dry run, where nothing waits for the server:
    /// printed in writes of at least [`BATCH`] bytes (and by [`finish`]).
    async fn set_batched(
        &mut self,
        index: usize,
        result: Result<Value, Failure>,
    ) -> anyhow::Result<()> {
        self.pending.insert(index, result);
        self.flush(BATCH).await
    }

    /// Prints the finished prefix once `at_least` bytes of it are rendered: rendered
    /// here, written to stdout off the async workers ([`Writers::write_stdout`]).
    /// Once stdout is found closed nothing more is written to it: what was rendered
    /// is kept as unprinted.
    async fn flush(&mut self, at_least: usize) -> anyhow::Result<()> {
        use apiclient::output::Stream;
        let rendered = self.render_prefix();
        if apiclient::output::is_stream_closed(Stream::Stdout) {
            self.unprinted.append(&mut self.rendered);
            self.text.clear();
            return rendered;
        }
        if !self.text.is_empty() && (self.text.len() >= at_least || rendered.is_err()) {
            match self
                .step
                .out
                .write_stdout(std::mem::take(&mut self.text))
                .await
            {
                Ok(()) => self.rendered.clear(),
                Err(e) if apiclient::output::is_closed(&e) => {
                    self.unprinted.append(&mut self.rendered);
                }
                Err(e) => return Err(e.into()),
            }
        }
        rendered
    }

    /// Renders the finished prefix into `text`, keeping its failures.
    fn render_prefix(&mut self) -> anyhow::Result<()> {
        while let Some(result) = self.pending.remove(&self.next) {
            match result {
                Ok(obj) => {
                    if self.step.wait {
                        self.total += 1;
                        self.created.extend(kept_for_wait(&obj));
                    }
                    let printed = self.step.printer.print(&obj, &mut self.text);
                    if printed.is_ok() {
                        self.rendered.push(cli::printers::qualified_name(&obj));
                    }
                    if let Err(err) = printed {
                        // A template that fails on one object is reported with the
                        // other failures, as kubectl's continue-on-error visitor does;
                        // any other printer error still ends the run (after what was
                        // rendered before it is written).
                        match err.get_ref().and_then(|e| e.downcast_ref::<PrintError>()) {
                            Some(print_error) => {
                                self.failures.push(Failure::Other(print_error.to_string()));
                            }
                            None => return Err(err.into()),
                        }
                    }
                }
                Err(failure) => self.failures.push(failure),
            }
            self.next += 1;
        }
        Ok(())
    }
}

/// What `--wait` needs of a created object: its kind, name and pod selector, not
/// the object (the output window lets objects go once printed); `None` for kinds with
/// nothing to wait for.
fn kept_for_wait(object: &Value) -> Option<Value> {
    let api_version = object["apiVersion"].as_str()?;
    let group = api_version.split_once('/').map_or("", |(g, _)| g);
    let rule = objectstatus::readiness::Rule::of(group, object["kind"].as_str()?);
    if rule == objectstatus::readiness::Rule::Nothing {
        return None;
    }
    let spec = &object["spec"];
    Some(serde_json::json!({
        "apiVersion": api_version,
        "kind": object["kind"],
        "metadata": {"name": object["metadata"]["name"], "namespace": object["metadata"]["namespace"]},
        "spec": {
            "selector": spec["selector"],
            "template": {"metadata": {"labels": spec["template"]["metadata"]["labels"]}},
        },
    }))
}

fn warn(step: &CreateStep<'_>, info: &Info) {
    for warning in &info.warnings {
        step.out
            .eprintln(format_args!("Warning: {}: {warning}", info.origin));
    }
}

/// What to do with one entry of the second pass.
enum Job {
    /// Already handled (a Namespace or CRD of the first pass).
    Skip,
    /// Report this result at this position.
    Done(Result<Value, Failure>),
    /// Create this object (boxed: an `Info` is large next to the other variants);
    /// `alone`: as an order barrier (it names an object created earlier in the run).
    Create { info: Box<Info>, alone: bool },
}

/// Creates every object of `visited` (or prints it, for a client dry run) and reports
/// the failures at the end.
pub async fn create_all(step: &CreateStep<'_>, visited: Visited) -> anyhow::Result<ExitCode> {
    let created = create_entries(step, visited).await?;
    if apiclient::output::closed().is_some() {
        return report_closed(step, &created);
    }
    if !created.seen {
        anyhow::bail!("no objects passed to create");
    }
    report(step, &created.failures)
}

/// The end of a run whose stdout or stderr was found closed: no create was sent
/// after that, and every one already sent was awaited. Says on stderr (while it is
/// open) what stdout did not show: the objects created but not printed, then the
/// failures as [`report`] prints them. A dry run created nothing, and says nothing
/// more than kubectl would. `cli::finish` then ends the command as kubectl ends on a
/// closed pipe.
pub fn report_closed(step: &CreateStep<'_>, created: &Created) -> anyhow::Result<ExitCode> {
    let mut err = step.out.stderr();
    if let Some(stream) = apiclient::output::closed()
        && step.dry_run == DryRunStrategy::None
    {
        let closed = apiclient::output::Closed(stream);
        let _ = if created.unprinted.is_empty() {
            writeln!(err, "error: {closed}; no more objects are created")
        } else {
            writeln!(
                err,
                "error: {closed}; no more objects are created; created but not printed:"
            )
        };
        for name in &created.unprinted {
            let _ = writeln!(err, "{name} created");
        }
    }
    let _ = write_failures(&created.failures, &mut *err);
    Err(SilentExit(1).into())
}

/// Exit 0 without failures; otherwise prints them (kubectl's `CheckErr` format) and
/// exits 1.
pub fn report(step: &CreateStep<'_>, failures: &[Failure]) -> anyhow::Result<ExitCode> {
    if failures.is_empty() {
        return Ok(ExitCode::SUCCESS);
    }
    // A failed write is the closed stderr `cli::finish` ends on.
    let _ = write_failures(failures, &mut *step.out.stderr());
    Err(SilentExit(1).into())
}

/// What [`create_entries`] did: whether the input held any entry at all, and what
/// failed, in input order (the successes are already printed).
pub struct Created {
    pub seen: bool,
    pub failures: Vec<Failure>,
    /// With `--wait`: the created objects there is something to wait for, and how
    /// many objects were created in all.
    pub objects: Vec<Value>,
    pub total: usize,
    /// Created, but not printed: stdout was closed ([`report_closed`]).
    pub unprinted: Vec<String>,
}

/// Creates every object of `visited` (or prints it, for a client dry run), printing
/// each result in input order; failures are returned, not printed.
pub async fn create_entries(step: &CreateStep<'_>, visited: Visited) -> anyhow::Result<Created> {
    let mut output = Output {
        pending: BTreeMap::new(),
        text: Vec::new(),
        next: 0,
        failures: Vec::new(),
        step: *step,
        created: Vec::new(),
        total: 0,
        rendered: Vec::new(),
        unprinted: Vec::new(),
    };
    let client = match (step.client, step.dry_run) {
        (Some(client), DryRunStrategy::None | DryRunStrategy::Server) => client,
        _ => return print_client_dry_run(step, visited, output).await,
    };
    let limiter = Limiter::new(step.concurrency);
    let Some(groups) = create_first(step, client, &limiter, &visited, &mut output).await? else {
        return finish(output, false).await;
    };
    create_rest(step, client, &limiter, &groups, &visited, &mut output).await?;
    finish(output, true).await
}

/// A client dry run: nothing is sent; objects print in input order.
async fn print_client_dry_run(
    step: &CreateStep<'_>,
    visited: Visited,
    mut output: Output<'_>,
) -> anyhow::Result<Created> {
    let mut seen = false;
    for (index, entry) in visited.entries().enumerate() {
        seen = true;
        if apiclient::output::closed().is_some() {
            break;
        }
        let result = match entry {
            Ok(mut info) => {
                warn(step, &info);
                save_config_if(step, &mut info.object).map(|()| info.object)
            }
            Err(err) => Err(Failure::from_resource(&err)),
        };
        output.set_batched(index, result).await?;
    }
    finish(output, seen).await
}

/// The first pass: the input's Namespaces and CRDs, created before anything else, then
/// its new CRDs awaited until Established. Returns the groups those CRDs serve (their
/// instances' creates are retried while the server does not serve them yet), or `None`
/// for an input without any entry.
async fn create_first(
    step: &CreateStep<'_>,
    client: &kube::Client,
    limiter: &Limiter,
    visited: &Visited,
    output: &mut Output<'_>,
) -> anyhow::Result<Option<BTreeSet<String>>> {
    let mut first = Vec::new();
    let mut seen = false;
    for (index, entry) in visited.entries().enumerate() {
        seen = true;
        if let Some(mut info) = entry.ok().filter(Info::is_namespace_or_crd) {
            warn(step, &info);
            if let Err(failure) = save_config_if(step, &mut info.object) {
                output.pending.insert(index, Err(failure));
                continue;
            }
            first.push((index, info));
        }
    }
    if !seen {
        return Ok(None);
    }
    let created_crds = create_batch(
        step,
        client,
        limiter,
        first.iter().map(|(i, info)| (*i, info)),
        &BTreeSet::new(),
        output,
    )
    .await?;
    if step.dry_run != DryRunStrategy::None || apiclient::output::closed().is_some() {
        return Ok(Some(BTreeSet::new()));
    }
    let crds: Vec<&Info> = first
        .iter()
        .map(|(_, i)| i)
        .filter(|i| i.gvk.kind == "CustomResourceDefinition")
        .collect();
    // What the first pass held is dropped on return, not kept while the rest is
    // created: an input may hold thousands of Namespaces.
    Ok(Some(
        wait_established(step, client, &crds, &created_crds, output).await,
    ))
}

/// The second pass: everything else, decoded again lazily so that only the objects in
/// flight (and the answers held for the output, within the window) are in memory.
/// An object named like an earlier one of this run goes alone, after everything
/// before it, so that the first in input order wins (as with kubectl's one-by-one
/// creates) whatever order the server answers in.
async fn create_rest(
    step: &CreateStep<'_>,
    client: &kube::Client,
    limiter: &Limiter,
    groups: &BTreeSet<String>,
    visited: &Visited,
    output: &mut Output<'_>,
) -> anyhow::Result<()> {
    let mut seen_keys = HashSet::new();
    // Nothing more is sent once an output is found closed: the jobs are taken lazily.
    let open = |_: &(usize, _)| apiclient::output::closed().is_none();
    let jobs = visited
        .entries()
        .enumerate()
        .take_while(open)
        .map(|(index, entry)| {
            let job = match entry {
                Err(err) => Job::Done(Err(Failure::from_resource(&err))),
                Ok(info) if info.is_namespace_or_crd() => Job::Skip,
                Ok(mut info) => {
                    let again = !info.name().is_empty() && !seen_keys.insert(object_key(&info));
                    warn(step, &info);
                    match save_config_if(step, &mut info.object) {
                        Ok(()) => Job::Create {
                            info: Box::new(info),
                            alone: again,
                        },
                        Err(failure) => Job::Done(Err(failure)),
                    }
                }
            };
            (index, job)
        });
    let run = |index: usize, job: Job| async move {
        let result = match job {
            Job::Skip => None,
            Job::Done(result) => Some(result),
            // A barrier held back while an output was found closed is not sent.
            Job::Create { .. } if apiclient::output::closed().is_some() => None,
            Job::Create { info, .. } => {
                Some(create_one(step, client, limiter, &info, groups).await)
            }
        };
        (index, result)
    };
    // Up to `--concurrency` creates in flight, except around an order barrier
    // (`crate::order`): it waits for everything before it and goes alone. Results
    // come back in input order, at most a window ahead of the output.
    order::run_ordered(
        jobs,
        step.concurrency,
        window(step.concurrency),
        |(_, job)| {
            matches!(job, Job::Create { info, alone }
                if *alone || order::is_barrier(&info.gvk.group, &info.gvk.kind))
        },
        |(index, job)| run(index, job),
        |(_, result)| match result {
            Some(Ok(answer)) => approx_heap_bytes(answer),
            _ => 0,
        },
        // One write for the batch of results that became printable together.
        async |batch: Vec<(usize, Option<Result<Value, Failure>>)>| {
            output
                .set_all(
                    batch
                        .into_iter()
                        .filter_map(|(index, result)| Some((index, result?))),
                )
                .await
        },
    )
    .await
}

/// How far creates may run ahead of the output, for `--concurrency` creates in flight.
///
/// - 16 creates per slot: while the earliest create takes up to 16 times as long as
///   the others, the rest of the input keeps flowing at full concurrency (a pause of
///   one Retry-After round or a slow webhook for one object costs nothing); beyond
///   that the run waits for it instead of holding every later answer. 512 answers
///   by default, a few MB for manifests of a few KB.
/// - 16 MiB of held answers at most (as estimated by [`approx_heap_bytes`]), for
///   large objects: 512 ConfigMaps of 1 MiB must not be held at once.
///
/// The objects in flight are outside the window (`--concurrency` bounds them).
fn window(concurrency: usize) -> order::Window {
    order::Window {
        jobs: concurrency.saturating_mul(16),
        weight: 16 << 20,
    }
}

/// Roughly what `value` takes on the heap: its strings and a node's size for every
/// value and map entry. Hand-written: a weight for the window, not an exact count,
/// and far cheaper than serializing the answer to measure it.
fn approx_heap_bytes(value: &Value) -> usize {
    const NODE: usize = std::mem::size_of::<Value>();
    NODE + match value {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(approx_heap_bytes).sum(),
        Value::Object(map) => map
            .iter()
            .map(|(key, value)| NODE + key.len() + approx_heap_bytes(value))
            .sum(),
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

/// What makes two objects the same object on the server, hashed: one is kept per
/// object of the input, so 8 bytes each rather than the names. A collision (about
/// one in 10^10 for 20,000 objects) only sends an object alone, never twice.
fn object_key(info: &Info) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let resource = info
        .mapping
        .as_ref()
        .map_or(info.gvk.kind.as_str(), |m| m.resource.as_str());
    // Fixed keys: the same input gives the same schedule on every run.
    let mut hasher = std::hash::DefaultHasher::new();
    (
        &info.gvk.group,
        resource,
        info.namespace().unwrap_or_default(),
        info.name(),
    )
        .hash(&mut hasher);
    hasher.finish()
}

async fn finish(mut output: Output<'_>, seen: bool) -> anyhow::Result<Created> {
    output.flush(0).await?;
    if apiclient::output::closed().is_some() {
        // Results held behind an entry that was never sent (a first-pass Namespace
        // after the point where the run stopped) are reported all the same.
        for result in std::mem::take(&mut output.pending).into_values() {
            match result {
                Ok(object) => output
                    .unprinted
                    .push(cli::printers::qualified_name(&object)),
                Err(failure) => output.failures.push(failure),
            }
        }
    }
    Ok(Created {
        seen,
        failures: output.failures,
        objects: output.created,
        total: output.total,
        unprinted: output.unprinted,
    })
}

/// Creates `batch` with bounded concurrency and records each result. Returns the
/// names of the CRDs created (for the Established wait).
async fn create_batch<'a>(
    step: &CreateStep<'_>,
    client: &kube::Client,
    limiter: &Limiter,
    batch: impl Iterator<Item = (usize, &'a Info)>,
    new_crd_groups: &BTreeSet<String>,
    output: &mut Output<'_>,
) -> anyhow::Result<BTreeSet<String>> {
    let mut created_crds = BTreeSet::new();
    let open = |_: &(usize, &Info)| apiclient::output::closed().is_none();
    let mut results = futures::stream::iter(batch.take_while(open))
        .map(|(index, info)| async move {
            (
                index,
                info,
                create_one(step, client, limiter, info, new_crd_groups).await,
            )
        })
        .buffer_unordered(step.concurrency);
    while let Some((index, info, result)) = results.next().await {
        if result.is_ok() && info.gvk.kind == "CustomResourceDefinition" {
            created_crds.insert(info.name().to_string());
        }
        output.set(index, result).await?;
    }
    Ok(created_crds)
}

/// One create, with its three ways of going on after a failed attempt, each a
/// function below: a `429` while competing is sent again under the smaller limit
/// ([`requeue_throttled`]); a lost answer is sent again by name and an
/// `AlreadyExists` then resolved ([`LostAnswers`]); a `404` for a CRD created in this
/// run is retried until the server serves it ([`NewCrdRetries`]). Anything else is
/// the create's result.
async fn create_one(
    step: &CreateStep<'_>,
    client: &kube::Client,
    limiter: &Limiter,
    info: &Info,
    new_crd_groups: &BTreeSet<String>,
) -> Result<Value, Failure> {
    let helper = helper_for(step, client, info)?;
    let mut lost = LostAnswers::new();
    let mut new_crd = NewCrdRetries::default();
    loop {
        let sent = send_under_limit(limiter, &helper, info).await;
        let err = match lost
            .resolve(step, &helper, info, sent.result, &sent.attempts)
            .await
        {
            Ok(object) => return Ok(object),
            Err(err) => err,
        };
        if requeue_throttled(&err, sent.competing, limiter, info) {
            continue;
        }
        if new_crd.retry(&err, info, new_crd_groups).await {
            continue;
        }
        lost.resend_after(err, info).await?;
    }
}

/// One attempt of a create, as [`send_under_limit`] sent it.
struct Attempt {
    result: Result<Value, kube::Error>,
    attempts: apiclient::retry::Attempts,
    /// Whether other creates could be in flight beside it (limit above one).
    competing: bool,
}

/// Sends the create once, holding a slot of the AIMD limit ([`crate::limit`]) and
/// telling it whether the server throttled the request.
async fn send_under_limit(limiter: &Limiter, helper: &Helper, info: &Info) -> Attempt {
    let slot = limiter.acquire().await;
    // Shared with other creates in flight: a 429 comes back at once (no waiting for
    // Retry-After in the client) and the create is sent again by `requeue_throttled`,
    // under the limit the 429 just halved. Alone, the client's retries wait as
    // kubectl's do.
    let competing = limiter.limit() > 1;
    let throttled = if competing {
        Throttled::Return
    } else {
        Throttled::Retry
    };
    let (result, attempts) =
        track_with(helper.create(info.namespace(), &info.object), throttled).await;
    let throttled = attempts.throttled()
        || matches!(&result, Err(kube::Error::Api(status)) if status.code == 429);
    limiter.release(slot, throttled);
    if throttled {
        tracing::debug!(
            limit = limiter.limit(),
            "throttled: fewer creates in flight"
        );
    }
    Attempt {
        result,
        attempts,
        competing,
    }
}

/// The requeue: whether `err` is a `429` to a create that competed with others for
/// the server, to be sent again under the smaller limit (the limiter shrank when its
/// slot came back). A 429 is never applied, so this cannot create twice. Alone (limit
/// 1, kubectl's one create at a time) the client's ten retries ran, and their answer
/// stands, as it does for kubectl.
fn requeue_throttled(err: &kube::Error, competing: bool, limiter: &Limiter, info: &Info) -> bool {
    let throttled = matches!(err, kube::Error::Api(status) if status.code == 429);
    if throttled && competing {
        tracing::debug!(
            name = info.name(),
            limit = limiter.limit(),
            "throttled while competing: sent again under the smaller limit"
        );
    }
    throttled && competing
}

/// The new-CRD retry: the server serves a CRD's resource shortly after the CRD is
/// Established, and answers `404` for its kind until then.
#[derive(Default)]
struct NewCrdRetries {
    done: u32,
}

impl NewCrdRetries {
    /// Whether `err` is that `404` for a kind whose CRD this run created (its group in
    /// `new_crd_groups`), within [`NEW_CRD_RETRIES`]; if so, waits before the retry.
    async fn retry(
        &mut self,
        err: &kube::Error,
        info: &Info,
        new_crd_groups: &BTreeSet<String>,
    ) -> bool {
        let not_served_yet = matches!(err, kube::Error::Api(status) if status.code == 404)
            && new_crd_groups.contains(&info.gvk.group);
        if !not_served_yet || self.done >= NEW_CRD_RETRIES {
            return false;
        }
        self.done += 1;
        tokio::time::sleep(NEW_CRD_RETRY_DELAY).await;
        true
    }
}

/// The lost-answer recovery of one create ([`crate::resolve`]): when it was first
/// sent, and how often it was sent again after its answer was lost.
struct LostAnswers {
    first_sent: std::time::SystemTime,
    resent: usize,
}

impl LostAnswers {
    fn new() -> Self {
        Self {
            first_sent: std::time::SystemTime::now(),
            resent: 0,
        }
    }

    /// The attempt's result, with an `AlreadyExists` resolved when an earlier attempt
    /// of this create may have been applied: its answer was lost, or the server
    /// answered 5xx and the client's retry sent it again. The object counts as this
    /// create's only when provably the one sent. A dry run stores nothing, and an
    /// object without a name (generateName) cannot be told from another.
    async fn resolve(
        &self,
        step: &CreateStep<'_>,
        helper: &Helper,
        info: &Info,
        result: Result<Value, kube::Error>,
        attempts: &apiclient::retry::Attempts,
    ) -> Result<Value, kube::Error> {
        match result {
            Err(kube::Error::Api(status))
                if status.reason == "AlreadyExists"
                    && (attempts.server_failed() || self.resent > 0)
                    && step.dry_run == DryRunStrategy::None
                    && !info.name().is_empty() =>
            {
                resolve_already_exists(step, helper, info, self.first_sent, status).await
            }
            other => other,
        }
    }

    /// What follows a failed attempt that neither the requeue nor the new-CRD retry
    /// took: `Ok` once it is time to send the create again, because its answer was
    /// lost (the connection broke, the server died: the create may have been applied
    /// or not); otherwise the create's failure. Named, it is sent again, once per wait
    /// of `RESEND_WAITS`: the server keeps one object of a name, and an AlreadyExists
    /// is resolved by [`Self::resolve`]. A request cut by the bound is not: the
    /// user's limit was reached.
    async fn resend_after(&mut self, err: kube::Error, info: &Info) -> Result<(), Failure> {
        if !answer_lost(&err) {
            return Err(Failure::creating(&info.origin, err));
        }
        if info.name().is_empty() {
            return Err(unknown(Failure::creating(&info.origin, err), info));
        }
        let Some(wait) = resolve::RESEND_WAITS.get(self.resent) else {
            return Err(Failure::creating(&info.origin, err));
        };
        self.resent += 1;
        tracing::debug!(
            name = info.name(),
            "the answer to this create was lost ({}); sending it again (resend {})",
            apiclient::go_net::request_error(&err)
                .unwrap_or_else(|| apiclient::go_net::error_chain(&err)),
            self.resent
        );
        tokio::time::sleep(*wait).await;
        Ok(())
    }
}

/// The REST helper that creates `info` as the step asks (dry run, field manager,
/// validation).
fn helper_for(
    step: &CreateStep<'_>,
    client: &kube::Client,
    info: &Info,
) -> Result<Helper, Failure> {
    // The Builder maps every object it returns; a missing mapping cannot happen here.
    let Some(mapping) = info.mapping.clone() else {
        return Err(Failure::creating(
            &info.origin,
            kube::Error::Discovery(kube::error::DiscoveryError::MissingResource(
                info.gvk.kind.clone(),
            )),
        ));
    };
    Ok(Helper::new(client.clone(), mapping)
        .dry_run(step.dry_run)
        .with_field_manager(step.field_manager)
        .with_field_validation(step.validation))
}

/// An `AlreadyExists` after an earlier attempt of this create that may have been
/// applied: the object read back is this create's when provably the one sent
/// ([`resolve::is_ours`]); otherwise, or unreadable, the server's `AlreadyExists`
/// stands, as kubectl reports it.
async fn resolve_already_exists(
    step: &CreateStep<'_>,
    helper: &Helper,
    info: &Info,
    first_sent: std::time::SystemTime,
    status: Box<kube::core::Status>,
) -> Result<Value, kube::Error> {
    let sent = resolve::Sent {
        object: &info.object,
        field_manager: step.field_manager,
        at: first_sent,
    };
    match helper.get(info.namespace(), info.name()).await {
        Ok(live) => match resolve::is_ours(&sent, &live) {
            Ok(()) => {
                tracing::debug!(
                    name = info.name(),
                    "AlreadyExists after an earlier attempt: created by that attempt"
                );
                Ok(live)
            }
            Err(why) => {
                tracing::debug!(
                    name = info.name(),
                    "AlreadyExists after an earlier attempt, not provably this create's object: {why}"
                );
                Err(kube::Error::Api(status))
            }
        },
        Err(_) => Err(kube::Error::Api(status)),
    }
}

/// Whether a create failed without an answer from the server (not cut by the bound).
fn answer_lost(err: &kube::Error) -> bool {
    apiclient::go_net::is_transport(err) && !apiclient::bound::is_timeout(err)
}

/// `failure` (a `generateName` create whose answer was lost) with its outcome said
/// to be unknown.
fn unknown(failure: Failure, info: &Info) -> Failure {
    let generate_name = info.object["metadata"]["generateName"]
        .as_str()
        .unwrap_or_default();
    match failure {
        Failure::Other(message) => Failure::Other(resolve::unknown_outcome(
            &message,
            &info.gvk.kind,
            generate_name,
        )),
        other => other,
    }
}

/// Waits (up to `--timeout` in all) for the CRDs created in this run to be Established.
/// Returns the groups of those that are; a CRD that is not becomes an error.
async fn wait_established(
    step: &CreateStep<'_>,
    client: &kube::Client,
    crds: &[&Info],
    created: &BTreeSet<String>,
    output: &mut Output<'_>,
) -> BTreeSet<String> {
    // Watched as dynamic objects, read for their conditions only: the typed
    // `CustomResourceDefinition` (kube's `is_crd_established`) linked the decoders of
    // the CRD and its whole JSONSchemaProps tree into create-file (binary size).
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        "customresourcedefinitions",
    );
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let deadline = tokio::time::Instant::now() + step.crd_timeout;
    let mut groups = BTreeSet::new();
    let by_name: HashMap<&str, &&Info> = crds.iter().map(|i| (i.name(), i)).collect();
    for name in created {
        let waited =
            tokio::time::timeout_at(deadline, await_condition(api.clone(), name, is_established))
                .await;
        let group = by_name
            .get(name.as_str())
            .and_then(|i| i.object["spec"]["group"].as_str())
            .unwrap_or_default();
        match waited {
            Ok(Ok(_)) => {
                groups.insert(group.to_string());
            }
            Ok(Err(e)) => output.failures.push(Failure::Other(format!(
                "error waiting for CustomResourceDefinition {name:?} to become Established: {e}"
            ))),
            Err(_) => output.failures.push(Failure::Other(format!(
                "timed out after {:?} waiting for CustomResourceDefinition {name:?} to become Established",
                step.crd_timeout
            ))),
        }
    }
    groups
}

/// kube's `is_crd_established` on the object's JSON: an `Established` condition that
/// is `True`.
fn is_established(crd: Option<&DynamicObject>) -> bool {
    crd.and_then(|crd| crd.data["status"]["conditions"].as_array())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
}

/// `--save-config`, then `--record`: kubectl's order, so the saved configuration
/// does not hold the change cause.
fn save_config_if(step: &CreateStep<'_>, object: &mut Value) -> Result<(), Failure> {
    if step.save_config {
        // kubectl create annotates unstructured objects (see cli::flags::save_config).
        cli::flags::save_config(object, cli::flags::Held::Unstructured)
            .map_err(|e| Failure::Other(format!("error when saving the configuration: {e}")))?;
    }
    if let Some(recorder) = step.recorder {
        recorder.record(object);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
