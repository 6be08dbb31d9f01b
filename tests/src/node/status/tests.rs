//! Unit tests of pod status as a pure function of the pod, the runtime and the time.

use super::*;
use crate::node::runtime::{RestartPolicy, Runtime};
use crate::node::simulated::SimulatedRuntime;
use k8s_openapi::api::core::v1::{Container, PodReadinessGate, PodSpec};
use std::collections::BTreeMap;
use std::time::Duration;

fn t0() -> Timestamp {
    "2026-01-01T00:00:00Z"
        .parse()
        .unwrap_or(Timestamp::UNIX_EPOCH)
}

fn at(ms: u64) -> Timestamp {
    t0().checked_add(Duration::from_millis(ms))
        .unwrap_or(Timestamp::MAX)
}

fn placement() -> Placement {
    Placement {
        host_ip: "127.0.0.1".into(),
        pod_ip: "127.0.0.7".into(),
        start_time: t0(),
    }
}

fn pod(annotations: &[(&str, &str)], restart: &str) -> Pod {
    let mut pod = Pod {
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "app".into(),
                image: Some("nginx:1.19".into()),
                ..Container::default()
            }],
            restart_policy: Some(restart.into()),
            ..PodSpec::default()
        }),
        ..Pod::default()
    };
    pod.metadata.name = Some("web".into());
    pod.metadata.namespace = Some("ns".into());
    pod.metadata.uid = Some("u1".into());
    let map: BTreeMap<String, String> = annotations
        .iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect();
    pod.metadata.annotations = Some(map);
    pod
}

/// Runs the simulated runtime and the status function together, feeding
/// each status back as `previous` the way the worker does.
struct Harness {
    pod: Pod,
    runtime: Box<dyn crate::node::PodRuntime>,
    last: Option<PodStatus>,
}

impl Harness {
    fn new(pod: Pod) -> Self {
        let runtime = SimulatedRuntime::new(Duration::from_millis(200))
            .start_pod(&pod, t0())
            .unwrap_or_else(|e| panic!("{e}"));
        Self {
            pod,
            runtime,
            last: None,
        }
    }

    fn status_at(&mut self, ms: u64) -> PodStatus {
        let obs = self.runtime.observe(at(ms));
        let status = pod_status(&self.pod, &placement(), &obs, self.last.as_ref(), at(ms));
        self.last = Some(status.clone());
        status
    }
}

fn condition<'a>(status: &'a PodStatus, type_: &str) -> &'a PodCondition {
    status
        .conditions
        .as_deref()
        .and_then(|cs| cs.iter().find(|c| c.type_ == type_))
        .unwrap_or_else(|| panic!("no {type_} condition in {status:?}"))
}

fn cond(status: &PodStatus, type_: &str) -> (String, Option<Timestamp>) {
    let c = condition(status, type_);
    (
        c.status.clone(),
        c.last_transition_time.as_ref().map(|t| t.0),
    )
}

#[test]
fn running_then_ready_with_transition_times() {
    let mut h = Harness::new(pod(&[], "Always"));
    let s = h.status_at(0);
    assert_eq!(s.phase.as_deref(), Some("Running"));
    assert_eq!(s.host_ip.as_deref(), Some("127.0.0.1"));
    assert_eq!(s.pod_ip.as_deref(), Some("127.0.0.7"));
    assert_eq!(
        s.pod_ips.as_ref().map(|ips| ips[0].ip.as_str()),
        Some("127.0.0.7")
    );
    assert_eq!(s.start_time, Some(Time(t0())));
    assert_eq!(cond(&s, "PodScheduled"), ("True".into(), Some(t0())));
    assert_eq!(cond(&s, "Initialized"), ("True".into(), Some(t0())));
    assert_eq!(cond(&s, "ContainersReady"), ("False".into(), Some(t0())));
    assert_eq!(cond(&s, "Ready").0, "False");
    assert_eq!(
        condition(&s, "Ready").reason.as_deref(),
        Some("ContainersNotReady")
    );
    assert_eq!(
        condition(&s, "Ready").message.as_deref(),
        Some("containers with unready status: [app]")
    );
    let cs = &s.container_statuses.as_deref().unwrap_or_default()[0];
    assert_eq!((cs.name.as_str(), cs.image.as_str()), ("app", "nginx:1.19"));
    assert!(cs.image_id.starts_with("sim://nginx:1.19@sha256:"));
    assert!(
        cs.container_id
            .as_deref()
            .is_some_and(|id| id.starts_with("sim://"))
    );
    assert_eq!((cs.ready, cs.started), (false, Some(true)));
    assert_eq!(cs.restart_count, 0);
    assert_eq!(
        cs.state
            .as_ref()
            .and_then(|s| s.running.as_ref())
            .and_then(|r| r.started_at.clone()),
        Some(Time(t0()))
    );
    assert_eq!(cs.last_state, Some(ContainerState::default()));
    assert!(s.init_container_statuses.is_none());

    // Nothing changes before the delay: the worker would not patch.
    assert_eq!(h.status_at(150), s);

    let s = h.status_at(200);
    assert_eq!(cond(&s, "ContainersReady"), ("True".into(), Some(at(200))));
    assert_eq!(cond(&s, "Ready"), ("True".into(), Some(at(200))));
    assert_eq!(condition(&s, "Ready").reason, None);
    assert_eq!(
        cond(&s, "Initialized"),
        ("True".into(), Some(t0())),
        "unchanged keeps its time"
    );
    assert!(s.container_statuses.as_deref().unwrap_or_default()[0].ready);
    assert_eq!(h.status_at(60_000), s);
}

#[test]
fn never_ready_stays_running_and_unready() {
    let mut h = Harness::new(pod(&[(crate::node::NEVER_READY, "true")], "Always"));
    let s = h.status_at(600_000);
    assert_eq!(s.phase.as_deref(), Some("Running"));
    assert_eq!(cond(&s, "Ready").0, "False");
}

#[test]
fn exit_code_with_never_fails_the_pod() {
    let mut h = Harness::new(pod(
        &[
            (crate::node::EXIT_CODE, "3"),
            (crate::node::EXIT_AFTER_MS, "500"),
        ],
        "Never",
    ));
    assert_eq!(h.status_at(400).phase.as_deref(), Some("Running"));
    let s = h.status_at(500);
    assert_eq!(s.phase.as_deref(), Some("Failed"));
    let cs = &s.container_statuses.as_deref().unwrap_or_default()[0];
    let terminated = cs.state.as_ref().and_then(|s| s.terminated.as_ref());
    assert_eq!(terminated.map(|t| t.exit_code), Some(3));
    assert_eq!(terminated.and_then(|t| t.reason.as_deref()), Some("Error"));
    assert_eq!(
        terminated.and_then(|t| t.finished_at.clone()),
        Some(Time(at(500)))
    );
    assert_eq!((cs.ready, cs.started), (false, Some(false)));
    assert_eq!(cond(&s, "Ready"), ("False".into(), Some(at(500))));
}

#[test]
fn exit_zero_with_never_or_on_failure_succeeds() {
    for policy in ["Never", "OnFailure"] {
        let mut h = Harness::new(pod(&[(crate::node::EXIT_AFTER_MS, "300")], policy));
        let s = h.status_at(300);
        assert_eq!(s.phase.as_deref(), Some("Succeeded"), "{policy}");
        let cs = &s.container_statuses.as_deref().unwrap_or_default()[0];
        let terminated = cs.state.as_ref().and_then(|s| s.terminated.as_ref());
        assert_eq!(
            terminated.and_then(|t| t.reason.as_deref()),
            Some("Completed")
        );
        assert_eq!(
            condition(&s, "Ready").reason.as_deref(),
            Some("PodCompleted")
        );
        assert_eq!(
            condition(&s, "ContainersReady").reason.as_deref(),
            Some("PodCompleted")
        );
    }
}

#[test]
fn restarts_are_counted_with_last_state() {
    let mut h = Harness::new(pod(
        &[
            (crate::node::EXIT_CODE, "1"),
            (crate::node::EXIT_AFTER_MS, "300"),
        ],
        "Always",
    ));
    // run 0: 0..300, back-off 200ms, run 1: 500..800, back-off 400ms, run 2: 1200..
    let s = h.status_at(400);
    assert_eq!(s.phase.as_deref(), Some("Running"));
    let cs = &s.container_statuses.as_deref().unwrap_or_default()[0];
    assert_eq!(
        cs.state
            .as_ref()
            .and_then(|s| s.waiting.as_ref())
            .and_then(|w| w.reason.as_deref()),
        Some("CrashLoopBackOff")
    );
    assert_eq!(cs.restart_count, 0);
    let s = h.status_at(1300);
    let cs = &s.container_statuses.as_deref().unwrap_or_default()[0];
    assert_eq!(cs.restart_count, 2);
    let last = cs.last_state.as_ref().and_then(|s| s.terminated.as_ref());
    assert_eq!(last.map(|t| t.exit_code), Some(1));
    assert_eq!(last.and_then(|t| t.started_at.clone()), Some(Time(at(500))));
    assert_eq!(
        last.and_then(|t| t.finished_at.clone()),
        Some(Time(at(800)))
    );
    assert!(cs.state.as_ref().is_some_and(|s| s.running.is_some()));
}

#[test]
fn keeps_foreign_conditions_and_scheduled_time_and_honours_readiness_gates() {
    let mut p = pod(&[], "Always");
    if let Some(spec) = p.spec.as_mut() {
        spec.readiness_gates = Some(vec![PodReadinessGate {
            condition_type: "example.com/lb".into(),
        }]);
    }
    let scheduled = PodCondition {
        type_: "PodScheduled".into(),
        status: "True".into(),
        last_transition_time: Some(Time(at(0))),
        ..PodCondition::default()
    };
    p.status = Some(PodStatus {
        conditions: Some(vec![scheduled.clone()]),
        ..PodStatus::default()
    });
    let mut h = Harness::new(p);
    let s = h.status_at(1000);
    assert_eq!(condition(&s, "PodScheduled"), &scheduled);
    assert_eq!(cond(&s, "ContainersReady").0, "True");
    assert_eq!(cond(&s, "Ready").0, "False");
    assert_eq!(
        condition(&s, "Ready").reason.as_deref(),
        Some("ReadinessGatesNotReady")
    );
    assert_eq!(
        condition(&s, "Ready").message.as_deref(),
        Some("corresponding condition of pod readiness gate \"example.com/lb\" does not exist.")
    );

    // Someone sets the gate's condition: it is kept, and the pod is Ready.
    let gate = PodCondition {
        type_: "example.com/lb".into(),
        status: "True".into(),
        ..PodCondition::default()
    };
    if let Some(status) = h.pod.status.as_mut() {
        status.conditions = Some(vec![scheduled, gate.clone()]);
    }
    let s = h.status_at(2000);
    assert_eq!(condition(&s, "example.com/lb"), &gate);
    assert_eq!(cond(&s, "Ready"), ("True".into(), Some(at(2000))));
}

#[test]
fn deletion_reports_terminated_containers() {
    let mut h = Harness::new(pod(&[], "Always"));
    h.status_at(1000);
    h.runtime.stop(at(5000), Duration::from_secs(30));
    let s = h.status_at(5000);
    let cs = &s.container_statuses.as_deref().unwrap_or_default()[0];
    let terminated = cs.state.as_ref().and_then(|s| s.terminated.as_ref());
    assert_eq!(terminated.map(|t| t.exit_code), Some(0));
    assert_eq!(
        terminated.and_then(|t| t.finished_at.clone()),
        Some(Time(at(5000)))
    );
    // The 1.20 kubelet keeps an Always pod Running while it is torn down.
    assert_eq!(s.phase.as_deref(), Some("Running"));
    assert_eq!(cond(&s, "Ready"), ("False".into(), Some(at(5000))));
}

#[test]
fn phase_rules() {
    use crate::node::runtime::{
        ContainerObservation, ContainerRunState, PodObservation, Termination,
    };
    let term = |code| {
        ContainerRunState::Terminated(Termination {
            exit_code: code,
            reason: Termination::reason_for(code).into(),
            started_at: t0(),
            finished_at: t0(),
            container_id: String::new(),
        })
    };
    let c = |state: ContainerRunState| ContainerObservation {
        name: "c".into(),
        image: String::new(),
        image_id: String::new(),
        container_id: String::new(),
        restart_count: 0,
        state,
        last_termination: None,
    };
    let obs =
        |init: Vec<ContainerObservation>, containers: Vec<ContainerObservation>| PodObservation {
            init_containers: init,
            containers,
        };
    let waiting = ContainerRunState::Waiting {
        reason: "ContainerCreating".into(),
        message: None,
    };
    let running = ContainerRunState::Running {
        started_at: t0(),
        ready: false,
    };
    use RestartPolicy::*;
    assert_eq!(
        pod_phase(Always, &obs(vec![], vec![c(waiting.clone())])),
        "Pending"
    );
    assert_eq!(
        pod_phase(Always, &obs(vec![c(running.clone())], vec![c(waiting)])),
        "Pending"
    );
    assert_eq!(pod_phase(Never, &obs(vec![c(term(1))], vec![])), "Failed");
    assert_eq!(
        pod_phase(
            Always,
            &obs(vec![c(term(0))], vec![c(running.clone()), c(term(1))])
        ),
        "Running"
    );
    assert_eq!(pod_phase(Always, &obs(vec![], vec![c(term(0))])), "Running");
    assert_eq!(
        pod_phase(OnFailure, &obs(vec![], vec![c(term(0)), c(term(0))])),
        "Succeeded"
    );
    assert_eq!(
        pod_phase(OnFailure, &obs(vec![], vec![c(term(0)), c(term(2))])),
        "Running"
    );
    assert_eq!(
        pod_phase(Never, &obs(vec![], vec![c(term(0)), c(term(2))])),
        "Failed"
    );
    assert_eq!(
        pod_phase(Never, &obs(vec![], vec![c(term(0))])),
        "Succeeded"
    );
    assert_eq!(pod_phase(Never, &obs(vec![], vec![])), "Pending");
}

#[test]
fn serializes_as_the_api_expects() {
    let mut h = Harness::new(pod(&[], "Always"));
    let json = serde_json::to_value(h.status_at(250)).unwrap_or_default();
    assert_eq!(json["phase"], "Running");
    assert_eq!(json["podIPs"], serde_json::json!([{ "ip": "127.0.0.7" }]));
    assert_eq!(json["startTime"], "2026-01-01T00:00:00Z");
    assert_eq!(
        json["containerStatuses"][0]["lastState"],
        serde_json::json!({})
    );
    assert_eq!(
        json["containerStatuses"][0]["state"]["running"]["startedAt"],
        "2026-01-01T00:00:00Z"
    );
}
