//! `--wait`: after the creates, wait until every created object is ready by its
//! kind's rules (`objectstatus::readiness`), saying on stderr why it is not yet, once
//! per cause (`objectstatus::waiting`), and ending early when a cause cannot fix itself.
//!
//! Requests: one watch per kind and namespace of the created objects (not one per
//! object: 500 Deployments in one namespace are one watch), one on the pods of each
//! namespace with workloads, one on the EndpointSlices of each namespace with
//! Services, one list of StorageClasses when there are claims, and a list of the
//! namespace's Warning events at most every [`EVENTS_EVERY`] while an object whose
//! controller only reports by events (StatefulSet, DaemonSet, Job, claim, Service) waits.
//! Events are a refinement: a user who may not list them (a service account in a
//! pod) still gets the causes the objects and their pods carry.
//!
//! Exit codes: 0 all ready; 1 a create failed (nothing is waited for then: the run
//! has failed already) or a cause that cannot fix itself; [`TIMEOUT_EXIT`] when
//! `--timeout` runs out; 130/143 on SIGINT/SIGTERM. Nothing is deleted.

mod progress;
mod watches;

use std::collections::{BTreeMap, HashMap};
use std::process::ExitCode;
use std::time::Duration;

use cli::{SilentExit, Stopped};
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::core::Selector;
use objectstatus::objects::{self, EndpointSlice, Event, Pod, StorageClass};
use objectstatus::readiness::{self, PullFailures, Related, Rule, State};
use objectstatus::waiting::{Cause, Reported};
use resources::{RestMapper, Visited};
use serde_json::Value;
use tokio::time::Instant;

use crate::create::{CreateStep, create_entries, report, report_closed};
use crate::writers::Writers;
use progress::Progress;
use watches::{Change, Watches};

/// The exit code when `--timeout` runs out: GNU `timeout`'s, which CI scripts already
/// tell from a failure (1).
pub const TIMEOUT_EXIT: u8 = 124;

/// How often the causes are looked at, though no watch event came.
const LOOK_EVERY: Duration = Duration::from_secs(1);
/// The least time between two lists of a namespace's Warning events.
const EVENTS_EVERY: Duration = Duration::from_secs(5);
/// The most a list of events may take.
const EVENTS_BOUND: Duration = Duration::from_secs(3);

/// A created object, as much as the wait needs of it.
#[derive(Debug, Clone)]
pub struct CreatedRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    /// The workload's pod selector, read from the created object.
    selector: Option<Selector>,
}

impl CreatedRef {
    /// The reference to a created object (what `create` kept of it).
    fn of(object: &Value) -> Option<Self> {
        let api_version = object["apiVersion"].as_str()?.to_string();
        let kind = object["kind"].as_str()?.to_string();
        let rule = Rule::of(group_of(&api_version), &kind);
        Some(CreatedRef {
            selector: readiness::pod_selector(rule, object),
            namespace: object["metadata"]["namespace"].as_str().map(str::to_string),
            name: object["metadata"]["name"].as_str()?.to_string(),
            api_version,
            kind,
        })
    }

    fn rule(&self) -> Rule {
        Rule::of(group_of(&self.api_version), &self.kind)
    }

    fn display(&self) -> String {
        readiness::display_name(group_of(&self.api_version), &self.kind, &self.name)
    }
}

fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(g, _)| g)
}

/// Creates the objects of `visited`, as without `--wait`, then waits for them until
/// `deadline`.
pub async fn create_and_wait(
    step: &CreateStep<'_>,
    visited: Visited,
    mapper: &mut RestMapper,
    deadline: Instant,
    timeout: Duration,
) -> anyhow::Result<ExitCode> {
    let created = create_entries(step, visited).await?;
    if apiclient::output::closed().is_some() {
        return report_closed(step, &created);
    }
    if !created.seen {
        anyhow::bail!("no objects passed to create");
    }
    if !created.failures.is_empty() {
        return report(step, &created.failures);
    }
    let client = step
        .client
        .ok_or_else(|| anyhow::anyhow!("--wait needs a server"))?;
    let total = created.total;
    let interrupt = cli::interrupt::Interrupt::install(STAY_HINT.into());
    let objects = created.objects.iter().filter_map(CreatedRef::of).collect();
    let mut wait = Wait::new(objects, total, step.out);
    let watches = Watches::start(client, mapper, &wait.targets).await?;
    wait.run(client, watches, deadline, timeout, &interrupt)
        .await
}

/// What a signal or a failure leaves: the objects, created.
const STAY_HINT: &str = "The created objects stay; nothing was deleted.";

/// One object waited for.
struct Target {
    object: CreatedRef,
    rule: Rule,
    /// The object as the watch last saw it.
    seen: Option<Value>,
    state: State,
}

/// The wait's state: the targets and what the watches hold about them.
struct Wait<'a> {
    /// Where the wait's lines go (stderr).
    out: &'a Writers,
    targets: Vec<Target>,
    /// Objects created with nothing to wait for (ready at once).
    done_at_once: usize,
    pods: BTreeMap<(String, String), Pod>,
    slices: BTreeMap<(String, String), EndpointSlice>,
    storage_classes: Option<Vec<StorageClass>>,
    /// Warning events by the uid of the object they are about.
    events: HashMap<String, Vec<Event>>,
    events_allowed: bool,
    events_listed_at: HashMap<String, Instant>,
    pulls: PullFailures,
    /// What was printed, per target: `waiting`'s keys name a container, not the
    /// workload (its pods come and go), so two workloads keep apart.
    reported: HashMap<usize, Reported>,
    last_causes: Vec<Cause>,
    progress: Progress<'a>,
}

impl<'a> Wait<'a> {
    fn new(objects: Vec<CreatedRef>, total: usize, out: &'a Writers) -> Self {
        let targets: Vec<Target> = objects
            .into_iter()
            .map(|object| Target {
                rule: object.rule(),
                object,
                seen: None,
                state: State::Waiting("not yet seen".into()),
            })
            .collect();
        Wait {
            done_at_once: total - targets.len(),
            out,
            progress: Progress::new(total, out),
            targets,
            pods: BTreeMap::new(),
            slices: BTreeMap::new(),
            storage_classes: None,
            events: HashMap::new(),
            events_allowed: true,
            events_listed_at: HashMap::new(),
            pulls: PullFailures::default(),
            reported: HashMap::new(),
            last_causes: Vec::new(),
        }
    }

    async fn run(
        &mut self,
        client: &kube::Client,
        mut watches: Watches,
        deadline: Instant,
        timeout: Duration,
        interrupt: &cli::interrupt::Interrupt,
    ) -> anyhow::Result<ExitCode> {
        let started = Instant::now();
        if self
            .targets
            .iter()
            .any(|t| t.rule == Rule::PersistentVolumeClaim)
        {
            self.storage_classes = watches::storage_classes(client).await;
        }
        self.evaluate();
        let mut next_look = Instant::now() + LOOK_EVERY;
        loop {
            if let Some(code) = self.verdict(started)? {
                return Ok(code);
            }
            tokio::select! {
                change = watches.next() => match change? {
                    Some(change) => self.apply(change),
                    None => anyhow::bail!("the watches ended"),
                },
                () = tokio::time::sleep_until(next_look) => {
                    next_look = Instant::now() + LOOK_EVERY;
                    self.list_events(client).await;
                    if let Some(why) = self.look() {
                        return self.fail(&why);
                    }
                }
                () = tokio::time::sleep_until(deadline) => return self.timed_out(timeout),
                stopped = interrupt.fired() => {
                    self.progress.finish();
                    return Err(Stopped {
                        message: format!("error: {stopped}"),
                        hint: STAY_HINT.into(),
                        exit_code: cli::interrupt::exit_code(stopped.signal),
                    }
                    .into());
                }
            }
        }
    }

    /// Ready (exit 0) or failed by its own status (exit 1), or `None` to go on.
    fn verdict(&mut self, started: Instant) -> anyhow::Result<Option<ExitCode>> {
        let failed = self.targets.iter().find_map(|t| match &t.state {
            State::Failed(why) => Some(format!("{}: {why}", t.object.display())),
            _ => None,
        });
        if let Some(why) = failed {
            return self.fail(&why).map(Some);
        }
        let ready = self.ready_count();
        let waiting = self.targets.iter().find_map(|t| match &t.state {
            State::Waiting(what) => Some((t.object.display(), what.clone())),
            _ => None,
        });
        match waiting {
            Some((name, what)) => {
                self.progress.update(ready, &name, &what);
                Ok(None)
            }
            None => {
                self.progress.finish();
                self.out.eprintln(format_args!(
                    "{ready}/{} ready in {}",
                    self.progress.total(),
                    progress::go_duration(started.elapsed())
                ));
                Ok(Some(ExitCode::SUCCESS))
            }
        }
    }

    fn ready_count(&self) -> usize {
        self.done_at_once
            + self
                .targets
                .iter()
                .filter(|t| t.state == State::Ready)
                .count()
    }

    /// Records a watch's change and re-evaluates what it touched.
    fn apply(&mut self, change: Change) {
        match change {
            Change::Object { target, object } => {
                self.targets[target].seen = object;
                if self.targets[target].rule == Rule::Pod
                    && let Some(pod) = self.targets[target]
                        .seen
                        .as_ref()
                        .and_then(|v| objects::from_value::<Pod>(v).ok())
                {
                    self.pulls.observe(&pod);
                }
                self.evaluate_one(target);
            }
            Change::Pod {
                namespace,
                name,
                pod,
            } => {
                let key = (namespace, name);
                match pod {
                    Some(pod) => {
                        self.pulls.observe(&pod);
                        self.pods.insert(key, *pod);
                    }
                    None => {
                        self.pods.remove(&key);
                    }
                }
            }
            Change::Slice {
                namespace,
                name,
                slice,
            } => {
                let key = (namespace, name);
                match slice {
                    Some(slice) => self.slices.insert(key, *slice),
                    None => self.slices.remove(&key),
                };
                self.evaluate();
            }
        }
    }

    fn evaluate(&mut self) {
        for i in 0..self.targets.len() {
            self.evaluate_one(i);
        }
    }

    fn evaluate_one(&mut self, i: usize) {
        let target = &self.targets[i];
        let state = match &target.seen {
            None => State::Waiting("not yet seen".into()),
            Some(object) => {
                let namespace = target.object.namespace.clone().unwrap_or_default();
                let slices: Vec<_> = self
                    .slices
                    .iter()
                    .filter(|((ns, _), s)| {
                        *ns == namespace
                            && s.metadata
                                .labels
                                .as_ref()
                                .and_then(|l| l.get(readiness::SERVICE_NAME_LABEL))
                                == Some(&target.object.name)
                    })
                    .map(|(_, s)| s.clone())
                    .collect();
                let related = Related {
                    endpoint_slices: &slices,
                    storage_classes: self.storage_classes.as_deref(),
                };
                readiness::state(target.rule, object, &related)
            }
        };
        self.targets[i].state = state;
    }

    /// The pods of a target: its own pod, or those its selector picks.
    fn pods_of(&self, target: &Target) -> Vec<Pod> {
        if target.rule == Rule::Pod {
            return target
                .seen
                .as_ref()
                .and_then(|v| objects::from_value(v).ok())
                .into_iter()
                .collect();
        }
        let Some(selector) = &target.object.selector else {
            return Vec::new();
        };
        let namespace = target.object.namespace.clone().unwrap_or_default();
        self.pods
            .range((namespace.clone(), String::new())..)
            .take_while(|((ns, _), _)| *ns == namespace)
            .filter(|(_, p)| readiness::selects(selector, p))
            .map(|(_, p)| p.clone())
            .collect()
    }

    /// Prints the causes not printed yet; returns why the wait cannot succeed, if a
    /// cause cannot fix itself.
    fn look(&mut self) -> Option<String> {
        let mut all = Vec::new();
        let mut doomed = None;
        for (i, target) in self
            .targets
            .iter()
            .enumerate()
            .filter(|(_, t)| matches!(t.state, State::Waiting(_)))
        {
            let Some(object) = &target.seen else {
                continue;
            };
            let pods = self.pods_of(target);
            let pods: Vec<&Pod> = pods.iter().collect();
            let uid = object["metadata"]["uid"].as_str().unwrap_or_default();
            let events: Vec<&Event> = self.events.get(uid).into_iter().flatten().collect();
            let causes = readiness::causes(
                target.rule,
                object,
                &pods,
                &events,
                self.storage_classes.as_deref(),
            );
            if doomed.is_none() {
                let name = target.object.display();
                doomed = readiness::doom(&causes, &pods, &self.pulls).map(|why| {
                    // A cause of the object itself already starts with its name.
                    if why.starts_with(&format!("{name} ")) {
                        why
                    } else {
                        format!("{name}: {why}")
                    }
                });
            }
            for cause in self.reported.entry(i).or_default().fresh(&causes) {
                // A cause that cannot fix itself ends the wait: its error says it.
                if !cause.permanent {
                    self.progress.line(&cause.line());
                }
            }
            all.extend(causes);
        }
        if !all.is_empty() {
            self.last_causes = all;
        }
        doomed
    }

    /// Lists the Warning events of the namespaces where an object that reports only
    /// by events waits, at most every [`EVENTS_EVERY`] each.
    async fn list_events(&mut self, client: &kube::Client) {
        if !self.events_allowed {
            return;
        }
        let mut namespaces: Vec<String> = self
            .targets
            .iter()
            .filter(|t| matches!(t.state, State::Waiting(_)))
            .filter(|t| {
                matches!(
                    t.rule,
                    Rule::StatefulSet
                        | Rule::DaemonSet
                        | Rule::Job
                        | Rule::PersistentVolumeClaim
                        | Rule::Service
                )
            })
            .filter_map(|t| t.object.namespace.clone())
            .collect();
        namespaces.sort();
        namespaces.dedup();
        let now = Instant::now();
        for ns in namespaces {
            if self
                .events_listed_at
                .get(&ns)
                .is_some_and(|at| now < *at + EVENTS_EVERY)
            {
                continue;
            }
            self.events_listed_at.insert(ns.clone(), now);
            let events = ApiResource::erase::<k8s_openapi::api::core::v1::Event>(&());
            let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &events);
            let params = ListParams::default().fields("type=Warning").limit(500);
            match tokio::time::timeout(EVENTS_BOUND, api.list(&params)).await {
                Ok(Ok(list)) => match watches::read_all::<Event>(&list.items) {
                    Ok(items) => {
                        for event in items {
                            let uid = event.involved_object.uid.clone().unwrap_or_default();
                            let events = self.events.entry(uid).or_default();
                            events.retain(|e| e.metadata.name != event.metadata.name);
                            events.push(event);
                        }
                    }
                    Err(e) => tracing::debug!("events of {ns} not listed: {e}"),
                },
                Ok(Err(kube::Error::Api(s))) if s.code == 403 => {
                    // The objects' own conditions still say most of it.
                    tracing::debug!("events not listed, not asked again: {}", s.message);
                    self.events_allowed = false;
                }
                Ok(Err(e)) => tracing::debug!("events of {ns} not listed: {e}"),
                Err(_) => tracing::debug!("events of {ns}: no answer in time"),
            }
        }
    }

    /// Ends the wait with `why` and exit 1.
    fn fail(&mut self, why: &str) -> anyhow::Result<ExitCode> {
        self.progress.finish();
        self.out.eprintln(format_args!("error: {why}"));
        self.summary();
        Err(SilentExit(1).into())
    }

    /// Ends the wait at `--timeout` with what waits and the last cause.
    fn timed_out(&mut self, timeout: Duration) -> anyhow::Result<ExitCode> {
        self.progress.finish();
        let waiting = self
            .targets
            .iter()
            .filter(|t| t.state != State::Ready)
            .count();
        self.out.eprintln(format_args!(
            "error: timed out after {} waiting for {waiting} of {} objects",
            progress::go_duration(timeout),
            self.progress.total()
        ));
        if let Some(cause) = self.last_causes.last() {
            self.out
                .eprintln(format_args!("last cause: {} {}", cause.object, cause.text));
        }
        self.summary();
        Err(SilentExit(TIMEOUT_EXIT).into())
    }

    /// The objects not ready, one line each (at most [`progress::SUMMARY_LINES`]).
    fn summary(&self) {
        let not_ready: Vec<String> = self
            .targets
            .iter()
            .filter_map(|t| match &t.state {
                State::Ready => None,
                State::Waiting(what) | State::Failed(what) => {
                    Some(format!("{}: {what}", t.object.display()))
                }
            })
            .collect();
        progress::summary(
            self.out,
            self.ready_count(),
            self.progress.total(),
            &not_ready,
        );
    }
}
