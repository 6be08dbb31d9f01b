//! Which events are due when: each once, with the kubelet's wording.

use k8s_openapi::api::core::v1::{Container, PodSpec};

use super::*;
use crate::node::runtime::Termination;

fn pod(policy: Option<&str>) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("ns".into()),
            uid: Some("u1".into()),
            resource_version: Some("42".into()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            init_containers: Some(vec![Container {
                name: "setup".into(),
                image: Some("busybox:1.36".into()),
                image_pull_policy: Some("IfNotPresent".into()),
                ..Container::default()
            }]),
            containers: vec![Container {
                name: "main".into(),
                image: Some("nginx".into()),
                image_pull_policy: policy.map(str::to_owned),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

fn container(name: &str, image: &str, id: &str, state: ContainerRunState) -> ContainerObservation {
    ContainerObservation {
        name: name.into(),
        image: image.into(),
        image_id: String::new(),
        container_id: id.into(),
        restart_count: 0,
        state,
        last_termination: None,
    }
}

fn waiting(reason: &str) -> ContainerRunState {
    ContainerRunState::Waiting {
        reason: reason.into(),
        message: None,
    }
}

fn running() -> ContainerRunState {
    ContainerRunState::Running {
        started_at: Timestamp::UNIX_EPOCH,
        ready: false,
    }
}

fn terminated(id: &str, code: i32, reason: &str) -> Termination {
    Termination {
        exit_code: code,
        reason: reason.into(),
        started_at: Timestamp::UNIX_EPOCH,
        finished_at: Timestamp::UNIX_EPOCH,
        container_id: id.into(),
    }
}

fn summary(events: &[PodEvent]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            format!(
                "{} {} {} [{}]",
                e.kind,
                e.reason,
                e.message,
                e.field_path.as_deref().unwrap_or_default()
            )
        })
        .collect()
}

#[test]
fn scheduled_names_the_pod_and_node() {
    let e = scheduled(&pod(None), "kubeplug-node-0");
    assert_eq!(
        summary(&[e]),
        ["Normal Scheduled Successfully assigned ns/web to kubeplug-node-0 []"]
    );
}

#[test]
fn a_pod_lifecycle_posts_each_event_once() {
    let p = pod(Some("Always"));
    let mut memory = KubeletEvents::default();
    let obs = |init: ContainerObservation, app: ContainerObservation| PodObservation {
        init_containers: vec![init],
        containers: vec![app],
    };

    // Creating: nothing yet.
    let first = obs(
        container(
            "setup",
            "busybox:1.36",
            "p://i0",
            waiting("PodInitializing"),
        ),
        container("main", "nginx", "p://a0", waiting("PodInitializing")),
    );
    assert!(memory.due(&p, &first, false).is_empty());

    // The init container ran and finished between two looks.
    let init_done = ContainerRunState::Terminated(terminated("p://i0", 0, "Completed"));
    let second = obs(
        container("setup", "busybox:1.36", "p://i0", init_done.clone()),
        container("main", "nginx", "p://a0", running()),
    );
    assert_eq!(
        summary(&memory.due(&p, &second, false)),
        [
            "Normal Pulled Container image \"busybox:1.36\" already present on machine [spec.initContainers{setup}]",
            "Normal Created Created container setup [spec.initContainers{setup}]",
            "Normal Started Started container setup [spec.initContainers{setup}]",
            "Normal Pulling Pulling image \"nginx\" [spec.containers{main}]",
            "Normal Pulled Successfully pulled image \"nginx\" in 0s [spec.containers{main}]",
            "Normal Created Created container main [spec.containers{main}]",
            "Normal Started Started container main [spec.containers{main}]",
        ]
    );
    assert!(memory.due(&p, &second, false).is_empty(), "nothing twice");

    // It crashed and backs off, then runs again.
    let mut backing_off = container("main", "nginx", "p://a1", waiting("CrashLoopBackOff"));
    backing_off.restart_count = 1;
    backing_off.last_termination = Some(terminated("p://a0", 1, "Error"));
    let third = obs(
        container("setup", "busybox:1.36", "p://i0", init_done.clone()),
        backing_off.clone(),
    );
    assert_eq!(
        summary(&memory.due(&p, &third, false)),
        [
            "Warning BackOff Back-off restarting failed container main in pod web_ns(u1) [spec.containers{main}]"
        ]
    );
    assert!(memory.due(&p, &third, false).is_empty());
    let mut again = backing_off;
    again.state = running();
    let fourth = obs(
        container("setup", "busybox:1.36", "p://i0", init_done.clone()),
        again,
    );
    let restarted = summary(&memory.due(&p, &fourth, false));
    assert_eq!(restarted.len(), 4, "{restarted:?}");
    assert!(restarted[3].starts_with("Normal Started Started container main"));

    // Deleted: the running container is stopped, once.
    assert_eq!(
        summary(&memory.due(&p, &fourth, true)),
        ["Normal Killing Stopping container main [spec.containers{main}]"]
    );
    assert!(memory.due(&p, &fourth, true).is_empty());
}

#[test]
fn each_failed_pull_and_each_back_off_is_announced_once() {
    let p = pod(None);
    let image = "registry.invalid/web:2";
    let pulling = |reason: &str| {
        let message = if reason == "ErrImagePull" {
            crate::node::pull::pull_error(image)
        } else {
            crate::node::pull::back_off_message(image)
        };
        let state = ContainerRunState::Waiting {
            reason: reason.into(),
            message: Some(message),
        };
        PodObservation {
            init_containers: vec![container(
                "setup",
                "busybox:1.36",
                "p://i0",
                ContainerRunState::Terminated(terminated("p://i0", 0, "Completed")),
            )],
            containers: vec![container("main", image, "", state)],
        }
    };
    let mut memory = KubeletEvents::default();
    let first = summary(&memory.due(&p, &pulling("ErrImagePull"), false));
    let main: Vec<&String> = first.iter().filter(|e| e.contains("{main}")).collect();
    assert_eq!(
        main,
        [
            "Normal Pulling Pulling image \"registry.invalid/web:2\" [spec.containers{main}]",
            &format!(
                "Warning Failed Failed to pull image \"registry.invalid/web:2\": {} [spec.containers{{main}}]",
                crate::node::pull::pull_error(image)
            ),
            "Warning Failed Error: ErrImagePull [spec.containers{main}]",
        ]
    );
    assert!(
        memory.due(&p, &pulling("ErrImagePull"), false).is_empty(),
        "nothing twice"
    );
    assert_eq!(
        summary(&memory.due(&p, &pulling("ImagePullBackOff"), false)),
        [
            "Normal BackOff Back-off pulling image \"registry.invalid/web:2\" [spec.containers{main}]",
            "Warning Failed Error: ImagePullBackOff [spec.containers{main}]",
        ]
    );
    // The next attempt pulls again.
    assert_eq!(memory.due(&p, &pulling("ErrImagePull"), false).len(), 3);
}

#[test]
fn a_program_that_cannot_start_is_not_reported_started() {
    let p = pod(Some("IfNotPresent"));
    let mut memory = KubeletEvents::default();
    let obs = PodObservation {
        init_containers: vec![],
        containers: vec![container(
            "main",
            "nginx",
            "p://a0",
            ContainerRunState::Terminated(terminated("p://a0", 128, "StartError")),
        )],
    };
    assert!(memory.due(&p, &obs, false).is_empty());
}

#[test]
fn pull_policy_defaults_like_the_api_server() {
    assert!(pulls_always(None, "nginx"));
    assert!(pulls_always(None, "nginx:latest"));
    assert!(pulls_always(None, "registry:5000/team/app"));
    assert!(!pulls_always(None, "registry:5000/team/app:1.2"));
    assert!(!pulls_always(None, "nginx@sha256:abc"));
    let never = Container {
        image_pull_policy: Some("Never".into()),
        ..Container::default()
    };
    assert!(!pulls_always(Some(&never), "nginx"));
}

#[test]
fn event_objects_address_the_pod_and_its_container() {
    let p = pod(None);
    let event = PodEvent {
        kind: "Normal",
        reason: "Started",
        message: "Started container main".into(),
        field_path: Some("spec.containers{main}".into()),
    };
    let at = Timestamp::from_second(1_700_000_000).unwrap_or(Timestamp::UNIX_EPOCH);
    let object = event_object(&p, &event, "kubelet", "kubeplug-node-0", at);
    let json = serde_json::to_value(&object).unwrap_or_default();
    assert_eq!(
        json["metadata"]["name"],
        format!("web.{:x}", at.as_nanosecond())
    );
    assert_eq!(json["metadata"]["namespace"], "ns");
    assert_eq!(json["involvedObject"]["kind"], "Pod");
    assert_eq!(json["involvedObject"]["uid"], "u1");
    assert_eq!(json["involvedObject"]["fieldPath"], "spec.containers{main}");
    assert_eq!(json["source"]["component"], "kubelet");
    assert_eq!(json["source"]["host"], "kubeplug-node-0");
    assert_eq!(json["type"], "Normal");
    assert_eq!(json["count"], 1);
    let scheduler = event_object(&p, &scheduled(&p, "n0"), "default-scheduler", "n0", at);
    let json = serde_json::to_value(&scheduler).unwrap_or_default();
    assert_eq!(json["source"]["component"], "default-scheduler");
    assert!(json["source"].get("host").is_none());
}
