//! Unit tests of the simulated runtime: scripted containers over time (ready delays,
//! exits, restart policies).

use super::*;
use crate::node::steering::Exit;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn script(restart: RestartPolicy) -> ContainerScript {
    ContainerScript {
        ready_after: ms(200),
        never_ready: false,
        exit: None,
        ignore_sigterm: false,
        restart,
        backoff: RestartBackoff {
            initial: ms(100),
            max: ms(400),
        },
    }
}

fn exiting(restart: RestartPolicy, code: i32, after: u64) -> ContainerScript {
    ContainerScript {
        exit: Some(Exit {
            code,
            after: ms(after),
        }),
        ..script(restart)
    }
}

fn running(started: u64, ready: bool) -> SimState {
    SimState::Running {
        started: ms(started),
        ready,
    }
}

fn term(run: u32, exit_code: i32, started: u64, finished: u64) -> SimTermination {
    SimTermination {
        run,
        exit_code,
        started: ms(started),
        finished: ms(finished),
    }
}

#[test]
fn becomes_ready_after_the_delay_and_then_nothing_changes() {
    let s = script(RestartPolicy::Always);
    let before = simulate(&s, None, ms(199));
    assert_eq!(before.state, running(0, false));
    assert_eq!(before.next_change, Some(ms(200)));
    let after = simulate(&s, None, ms(200));
    assert_eq!(after.state, running(0, true));
    assert_eq!(after.next_change, None);
    assert_eq!((after.restart_count, after.last), (0, None));
}

#[test]
fn never_ready_runs_forever() {
    let s = ContainerScript {
        never_ready: true,
        ..script(RestartPolicy::Always)
    };
    let t = simulate(&s, None, ms(3_600_000));
    assert_eq!(t.state, running(0, false));
    assert_eq!(t.next_change, None);
}

#[test]
fn exit_with_never_terminates_for_good() {
    let s = exiting(RestartPolicy::Never, 3, 500);
    let t = simulate(&s, None, ms(300));
    assert_eq!(t.state, running(0, true));
    assert_eq!(t.next_change, Some(ms(500)));
    let t = simulate(&s, None, ms(500));
    assert_eq!(t.state, SimState::Terminated(term(0, 3, 0, 500)));
    assert_eq!((t.restart_count, t.next_change), (0, None));
}

#[test]
fn exit_before_ready_never_becomes_ready() {
    let s = exiting(RestartPolicy::Never, 0, 100);
    let t = simulate(&s, None, ms(50));
    assert_eq!(t.state, running(0, false));
    assert_eq!(
        t.next_change,
        Some(ms(100)),
        "the exit, not the unreachable readiness"
    );
}

#[test]
fn on_failure_restarts_failures_with_doubling_backoff() {
    let s = exiting(RestartPolicy::OnFailure, 1, 100);
    // run 0: 0..100, back-off 100, run 1: 200..300, back-off 200, run 2: 500..600,
    // back-off 400, run 3: 1000..1100, back-off 400 (capped), run 4: 1500..
    let t = simulate(&s, None, ms(150));
    assert_eq!(t.state, SimState::BackOff { delay: ms(100) });
    assert_eq!(t.last, Some(term(0, 1, 0, 100)));
    assert_eq!((t.restart_count, t.next_change), (0, Some(ms(200))));

    let t = simulate(&s, None, ms(250));
    assert_eq!(t.state, running(200, false));
    assert_eq!(t.last, Some(term(0, 1, 0, 100)));
    assert_eq!((t.restart_count, t.next_change), (1, Some(ms(300))));

    let t = simulate(&s, None, ms(1200));
    assert_eq!(t.state, SimState::BackOff { delay: ms(400) });
    assert_eq!(t.last, Some(term(3, 1, 1000, 1100)));
    assert_eq!((t.restart_count, t.next_change), (3, Some(ms(1500))));

    let t = simulate(&s, None, ms(1500));
    assert_eq!(t.state, running(1500, false));
    assert_eq!(t.restart_count, 4);
}

#[test]
fn on_failure_does_not_restart_success() {
    let t = simulate(&exiting(RestartPolicy::OnFailure, 0, 100), None, ms(10_000));
    assert_eq!(t.state, SimState::Terminated(term(0, 0, 0, 100)));
    assert_eq!((t.restart_count, t.last), (0, None));
}

#[test]
fn always_restarts_success_too() {
    let t = simulate(&exiting(RestartPolicy::Always, 0, 100), None, ms(250));
    assert_eq!(t.state, running(200, false));
    assert_eq!(t.restart_count, 1);
    assert_eq!(t.last, Some(term(0, 0, 0, 100)));
}

#[test]
fn zero_length_runs_still_advance() {
    let s = ContainerScript {
        backoff: RestartBackoff {
            initial: Duration::ZERO,
            max: Duration::ZERO,
        },
        ..exiting(RestartPolicy::Always, 1, 0)
    };
    let t = simulate(&s, None, ms(1000));
    // 10ms floor per cycle.
    assert_eq!(t.restart_count, 100);
}

#[test]
fn stop_terminates_with_zero_at_sigterm() {
    let s = script(RestartPolicy::Always);
    let stop = Some(StopRequest {
        at: ms(1000),
        kill_at: ms(31_000),
    });
    let t = simulate(&s, stop, ms(1000));
    assert_eq!(t.state, SimState::Terminated(term(0, 0, 0, 1000)));
    assert_eq!(t.next_change, None);
}

#[test]
fn ignore_sigterm_runs_until_sigkill() {
    let s = ContainerScript {
        ignore_sigterm: true,
        ..script(RestartPolicy::Always)
    };
    let stop = Some(StopRequest {
        at: ms(1000),
        kill_at: ms(3000),
    });
    let t = simulate(&s, stop, ms(2000));
    assert_eq!(t.state, running(0, true));
    assert_eq!(t.next_change, Some(ms(3000)));
    let t = simulate(&s, stop, ms(3000));
    assert_eq!(
        t.state,
        SimState::Terminated(term(0, SIGKILL_EXIT_CODE, 0, 3000))
    );
}

#[test]
fn natural_exit_during_grace_is_not_restarted() {
    let s = ContainerScript {
        ignore_sigterm: true,
        ..exiting(RestartPolicy::Always, 2, 1500)
    };
    let stop = Some(StopRequest {
        at: ms(1000),
        kill_at: ms(3000),
    });
    let t = simulate(&s, stop, ms(5000));
    assert_eq!(t.state, SimState::Terminated(term(0, 2, 0, 1500)));
    assert_eq!(t.restart_count, 0);
}

#[test]
fn stop_during_backoff_cancels_the_restart() {
    let s = exiting(RestartPolicy::Always, 1, 100);
    let stop = Some(StopRequest {
        at: ms(150),
        kill_at: ms(150),
    });
    let t = simulate(&s, stop, ms(10_000));
    assert_eq!(t.state, SimState::Terminated(term(0, 1, 0, 100)));
    assert_eq!((t.restart_count, t.last, t.next_change), (0, None, None));
}

#[test]
fn backoff_doubles_and_caps() {
    let b = RestartBackoff {
        initial: ms(200),
        max: ms(5000),
    };
    let delays: Vec<_> = (0..7).map(|n| b.delay(n).as_millis()).collect();
    assert_eq!(delays, [200, 400, 800, 1600, 3200, 5000, 5000]);
    assert_eq!(b.delay(u32::MAX), ms(5000));
}

#[test]
fn restart_policy_parsing_and_rules() {
    assert_eq!(RestartPolicy::from_spec(None), RestartPolicy::Always);
    assert_eq!(
        RestartPolicy::from_spec(Some("Never")),
        RestartPolicy::Never
    );
    assert_eq!(
        RestartPolicy::from_spec(Some("OnFailure")),
        RestartPolicy::OnFailure
    );
    assert_eq!(
        RestartPolicy::from_spec(Some("bogus")),
        RestartPolicy::Always
    );
    assert!(RestartPolicy::Always.restarts(0));
    assert!(RestartPolicy::OnFailure.restarts(1) && !RestartPolicy::OnFailure.restarts(0));
    assert!(!RestartPolicy::Never.restarts(1));
}

#[test]
fn ids_are_stable_and_distinct() {
    let a = container_id("uid", "app", 0);
    assert_eq!(a, container_id("uid", "app", 0));
    assert_ne!(a, container_id("uid", "app", 1));
    assert_ne!(a, container_id("uid", "side", 0));
    assert!(a.starts_with("sim://"));
    assert_eq!(a.len(), "sim://".len() + 64);
    assert!(image_id("nginx:1.19").starts_with("sim://nginx:1.19@sha256:"));
}

#[test]
fn go_durations() {
    assert_eq!(go_duration(ms(200)), "200ms");
    assert_eq!(go_duration(ms(1600)), "1.6s");
    assert_eq!(go_duration(ms(1250)), "1.25s");
    assert_eq!(go_duration(ms(5000)), "5s");
}

mod runtime {
    use super::*;
    use k8s_openapi::api::core::v1::PodSpec;
    use std::collections::BTreeMap;

    fn pod(annotations: &[(&str, &str)], restart: &str) -> Pod {
        let mut pod = Pod {
            spec: Some(PodSpec {
                containers: vec![
                    Container {
                        name: "app".into(),
                        image: Some("nginx".into()),
                        ..Container::default()
                    },
                    Container {
                        name: "side".into(),
                        image: Some("busybox".into()),
                        ..Container::default()
                    },
                ],
                init_containers: Some(vec![Container {
                    name: "init".into(),
                    ..Container::default()
                }]),
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

    fn t0() -> Timestamp {
        "2026-01-01T00:00:00Z"
            .parse()
            .unwrap_or(Timestamp::UNIX_EPOCH)
    }

    fn at(millis: u64) -> Timestamp {
        t0().checked_add(ms(millis)).unwrap_or(Timestamp::MAX)
    }

    #[test]
    fn observes_every_container_with_the_pod_steering() {
        let rt = SimulatedRuntime::new(ms(200));
        let p = pod(
            &[
                (crate::node::EXIT_CODE, "4"),
                (crate::node::EXIT_AFTER_MS, "300"),
            ],
            "OnFailure",
        );
        let mut sim = rt.start_pod(&p, t0()).unwrap_or_else(|e| panic!("{e}"));
        let obs = sim.observe(at(250));
        assert_eq!(obs.init_containers.len(), 1);
        assert!(
            matches!(&obs.init_containers[0].state, ContainerRunState::Terminated(t) if t.exit_code == 0)
        );
        let names: Vec<_> = obs.containers.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["app", "side"]);
        assert_eq!(
            obs.containers[0].state,
            ContainerRunState::Running {
                started_at: t0(),
                ready: true
            }
        );
        assert_eq!(obs.containers[1].image, "busybox");
        assert!(!obs.all_stopped());

        let obs = sim.observe(at(350));
        let app = &obs.containers[0];
        assert_eq!(
            app.state,
            ContainerRunState::Waiting {
                reason: "CrashLoopBackOff".into(),
                message: Some(
                    "back-off 200ms restarting failed container=app pod=web_ns(u1)".into()
                ),
            }
        );
        let last = app.last_termination.as_ref();
        assert_eq!(
            last.map(|t| (t.exit_code, t.reason.as_str())),
            Some((4, "Error"))
        );
        assert_eq!(last.map(|t| t.finished_at), Some(at(300)));
        assert_eq!(
            last.map(|t| t.container_id.clone()),
            Some(container_id("u1", "app", 0))
        );
        assert!(obs.all_stopped());

        let obs = sim.observe(at(600));
        assert_eq!(obs.containers[0].restart_count, 1);
        assert_eq!(obs.containers[0].container_id, container_id("u1", "app", 1));
    }

    #[test]
    fn stop_keeps_the_earliest_kill_deadline() {
        let rt = SimulatedRuntime::new(ms(0));
        let p = pod(&[(crate::node::IGNORE_SIGTERM, "true")], "Always");
        let mut sim = rt.start_pod(&p, t0()).unwrap_or_else(|e| panic!("{e}"));
        sim.stop(at(1000), Duration::from_secs(30));
        sim.stop(at(2000), Duration::from_secs(1));
        sim.stop(at(2500), Duration::from_secs(60));
        assert!(!sim.observe(at(2999)).all_stopped());
        let obs = sim.observe(at(3000));
        assert!(obs.all_stopped());
        assert!(matches!(
            &obs.containers[0].state,
            ContainerRunState::Terminated(t) if t.exit_code == SIGKILL_EXIT_CODE && t.finished_at == at(3000)
        ));
    }

    #[tokio::test]
    async fn changed_fires_at_the_next_transition() {
        let rt = SimulatedRuntime::new(ms(150));
        let mut sim = rt
            .start_pod(&pod(&[], "Always"), t0())
            .unwrap_or_else(|e| panic!("{e}"));
        sim.observe(at(100));
        let start = tokio::time::Instant::now();
        let woke = tokio::time::timeout(Duration::from_secs(5), sim.changed()).await;
        assert!(woke.is_ok());
        assert!(
            start.elapsed() >= ms(45),
            "woke after {:?}",
            start.elapsed()
        );
        // Ready: nothing left to wait for.
        sim.observe(at(150));
        let idle = tokio::time::timeout(ms(200), sim.changed()).await;
        assert!(idle.is_err());
    }

    #[tokio::test]
    async fn absurd_delays_do_not_panic() {
        let rt = SimulatedRuntime::new(ms(0));
        let huge = u64::MAX.to_string();
        let p = pod(
            &[
                (crate::node::READY_AFTER_MS, huge.as_str()),
                (crate::node::EXIT_AFTER_MS, huge.as_str()),
                (crate::node::EXIT_CODE, "-2147483648"),
            ],
            "Always",
        );
        let mut sim = rt.start_pod(&p, t0()).unwrap_or_else(|e| panic!("{e}"));
        let obs = sim.observe(Timestamp::MAX);
        assert!(matches!(
            obs.containers[0].state,
            ContainerRunState::Running { ready: false, .. }
        ));
        sim.stop(Timestamp::MAX, Duration::MAX);
        sim.observe(Timestamp::MAX);
        let idle = tokio::time::timeout(ms(50), sim.changed()).await;
        assert!(idle.is_err());
        // And a pod observed before it started (clock skew).
        let mut sim = rt
            .start_pod(&p, Timestamp::MAX)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!sim.observe(t0()).all_stopped());
    }
}
