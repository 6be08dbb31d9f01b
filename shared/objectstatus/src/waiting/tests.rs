//! The causes read from objects as the controllers, the scheduler and the kubelet
//! write them (messages as a 1.37 cluster shows them), and when a line repeats.

use super::*;

fn pod(value: serde_json::Value) -> Pod {
    crate::objects::from_value(&value).expect("pod")
}

fn event(message: &str, last: &str) -> Event {
    crate::objects::from_value(&serde_json::json!({
        "metadata": {"name": "e"},
        "involvedObject": {"kind": "ReplicationController", "name": "web-2"},
        "reason": "FailedCreate",
        "type": "Warning",
        "message": message,
        "lastTimestamp": last,
    }))
    .expect("event")
}

const PSA: &str = "pods \"web-2-x7k2p\" is forbidden: violates PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"web\" must set securityContext.allowPrivilegeEscalation=false)";
const QUOTA: &str = "pods \"web-2-b8vqn\" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=2, limited: pods=2";

#[test]
fn a_controller_that_cannot_create_pods() {
    let conditions = [("ReplicaFailure", "True", Some("FailedCreate"), Some(PSA))];
    let causes = controller_causes("replicationcontroller", "web-2", &conditions, &[]);
    assert_eq!(causes.len(), 1);
    assert_eq!(
        causes[0].line(),
        format!("Waiting: replicationcontroller/web-2 cannot create pods: {PSA}")
    );
    assert!(causes[0].permanent, "Pod Security does not fix itself");

    let quota = [("ReplicaFailure", "True", Some("FailedCreate"), Some(QUOTA))];
    let causes = controller_causes("replicationcontroller", "web-2", &quota, &[]);
    assert!(!causes[0].permanent, "a quota is waited for");

    let healthy = [("ReplicaFailure", "False", None, None)];
    assert!(controller_causes("replicationcontroller", "web-2", &healthy, &[]).is_empty());
}

#[test]
fn the_newest_event_says_what_fails_now() {
    // The condition keeps the first failure; the events follow each attempt.
    let conditions = [("ReplicaFailure", "True", Some("FailedCreate"), Some(QUOTA))];
    let events = [
        event(&format!("Error creating: {QUOTA}"), "2026-11-27T19:00:00Z"),
        event(
            &format!("(combined from similar events): Error creating: {PSA}"),
            "2026-11-27T19:00:05Z",
        ),
    ];
    let causes = controller_causes("replicationcontroller", "web-2", &conditions, &events);
    assert_eq!(causes[0].text, format!("cannot create pods: {PSA}"));
    assert!(causes[0].permanent);
}

#[test]
fn a_line_repeats_only_when_its_cause_changes() {
    let mut reported = Reported::default();
    let attempt = |name: &str| {
        let message = QUOTA.replace("web-2-b8vqn", name);
        let conditions = [(
            "ReplicaFailure",
            "True",
            Some("FailedCreate"),
            Some(message.as_str()),
        )];
        controller_causes("replicationcontroller", "web-2", &conditions, &[])
    };
    assert_eq!(reported.fresh(&attempt("web-2-b8vqn")).len(), 1);
    // Another attempt: another generated name, the same cause.
    assert!(reported.fresh(&attempt("web-2-zzq2x")).is_empty());
    let changed = [("ReplicaFailure", "True", Some("FailedCreate"), Some(PSA))];
    let causes = controller_causes("replicationcontroller", "web-2", &changed, &[]);
    assert_eq!(
        reported.fresh(&causes).len(),
        1,
        "a new cause is a new line"
    );
    assert!(reported.fresh(&causes).is_empty());
}

#[test]
fn generated_names_are_masked_only_where_generated() {
    assert_eq!(
        mask_generated_names("pods \"web-2-x7k2p\" is forbidden", "web-2"),
        "pods \"web-2-*\" is forbidden"
    );
    assert_eq!(
        mask_generated_names("pods \"web-2-X\" is forbidden: \"web-2\"", "web-2"),
        "pods \"web-2-X\" is forbidden: \"web-2\""
    );
}

fn waiting(name: &str, reason: &str, message: &str) -> Pod {
    pod(serde_json::json!({
        "metadata": {"name": name},
        "status": {"phase": "Pending", "containerStatuses": [{
            "name": "web", "image": "registry.invalid/web:2", "imageID": "", "ready": false,
            "restartCount": 0,
            "state": {"waiting": {"reason": reason, "message": message}},
        }]},
    }))
}

const PULL: &str = "rpc error: code = Unknown desc = failed to pull and unpack image \"registry.invalid/web:2\": failed to resolve reference \"registry.invalid/web:2\": failed to do request: Head \"https://registry.invalid/v2/web/manifests/2\": dial tcp: lookup registry.invalid: no such host";

#[test]
fn image_pulls_and_their_back_off_are_one_cause() {
    let mut reported = Reported::default();
    let pulling = [waiting("web-2-a", "ErrImagePull", PULL)];
    let causes = pod_causes(&pulling);
    assert_eq!(
        causes[0].line(),
        format!("Waiting: pod/web-2-a container web: ErrImagePull: {PULL}")
    );
    assert!(
        !causes[0].permanent,
        "an image may be pushed, a registry come back"
    );
    assert_eq!(reported.fresh(&causes).len(), 1);
    let backing_off = [waiting(
        "web-2-a",
        "ImagePullBackOff",
        &format!("Back-off pulling image \"registry.invalid/web:2\": ErrImagePull: {PULL}"),
    )];
    assert!(reported.fresh(&pod_causes(&backing_off)).is_empty());
    // Another pod of the same template, the same problem: no new line.
    let other = [waiting("web-2-b", "ErrImagePull", PULL)];
    assert!(reported.fresh(&pod_causes(&other)).is_empty());

    let invalid = [waiting(
        "web-2-a",
        "InvalidImageName",
        "Failed to apply default image tag \"Web\": couldn't parse image name \"Web\": invalid reference format: repository name must be lowercase",
    )];
    assert!(pod_causes(&invalid)[0].permanent);
}

#[test]
fn a_crash_loop_names_the_last_run_and_ignores_the_growing_delay() {
    let crashing = |delay: &str, code: i32| {
        pod(serde_json::json!({
            "metadata": {"name": "web-2-a"},
            "status": {"phase": "Running", "containerStatuses": [{
                "name": "web", "image": "nginx", "imageID": "", "ready": false, "restartCount": 3,
                "state": {"waiting": {"reason": "CrashLoopBackOff", "message": format!("back-off {delay} restarting failed container=web pod=web-2-a_ns(u1)")}},
                "lastState": {"terminated": {"exitCode": code, "reason": "Error"}},
            }]},
        }))
    };
    let mut reported = Reported::default();
    let first = [crashing("10s", 1)];
    let causes = pod_causes(&first);
    assert_eq!(
        causes[0].line(),
        "Waiting: pod/web-2-a container web: CrashLoopBackOff: back-off 10s restarting failed container=web pod=web-2-a_ns(u1); last run: Error, exit code 1"
    );
    assert_eq!(reported.fresh(&causes).len(), 1);
    assert!(
        reported
            .fresh(&pod_causes(&[crashing("20s", 1)]))
            .is_empty()
    );
    assert_eq!(reported.fresh(&pod_causes(&[crashing("40s", 2)])).len(), 1);
}

#[test]
fn unschedulable_pods_in_the_schedulers_words() {
    let message = "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";
    let p = pod(serde_json::json!({
        "metadata": {"name": "web-2-a"},
        "status": {"phase": "Pending", "conditions": [{
            "type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
        }]},
    }));
    let deleting = pod(serde_json::json!({
        "metadata": {"name": "web-2-0", "deletionTimestamp": "2026-11-27T19:00:00Z"},
        "status": {"phase": "Pending", "conditions": [{
            "type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "x",
        }]},
    }));
    let causes = pod_causes([&deleting, &p]);
    assert_eq!(causes.len(), 1);
    assert_eq!(
        causes[0].line(),
        format!("Waiting: pod/web-2-a cannot be scheduled: {message}")
    );
    let starting = waiting("web-2-a", "ContainerCreating", "");
    assert!(
        pod_causes(&[starting]).is_empty(),
        "a pod starting is no cause"
    );
}

#[test]
fn what_cannot_fix_itself() {
    for message in [
        PSA,
        "Pod \"web-2-x\" is invalid: spec.containers[0].image: Required value",
        "pods \"web-2-x\" is forbidden: maximum cpu usage per Container is 1, but limit is 2",
        "admission webhook \"deny.example.com\" denied the request: no",
    ] {
        assert!(permanent_create_error(message), "{message}");
    }
    for message in [
        QUOTA,
        "pods \"web-2-x\" is forbidden: failed quota: q: must specify limits.cpu for: web",
        "pods \"web-2-x\" is forbidden: error looking up service account ns/default: serviceaccount \"default\" not found",
    ] {
        assert!(!permanent_create_error(message), "{message}");
    }
}
