//! Pod Security admission: in a namespace labelled
//! `pod-security.kubernetes.io/warn=restricted` and `…/enforce=baseline`, the server
//! warns about a pod that breaks `restricted` and refuses one that breaks `baseline`.
//! run-pod and create-file print both beside the cluster's kubectl, byte for byte,
//! and rolling-update passes the warning on for the pods of the RC it creates. A 1.20
//! server has no such admission: there the labels change nothing.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Namespace, ReplicationController};
use kube::Api;
use kube::api::{Patch, PatchParams, PostParams};
use localcluster::steering::Readiness;
use tests::harness::{Release, cluster};

use crate::rolling_update::{NEW_IMAGE, OLD_IMAGE, rc};

/// The namespace labels, as an administrator sets them.
async fn label(ns: &str) {
    let namespaces: Api<Namespace> = Api::all(cluster().client().await);
    let labels: BTreeMap<&str, &str> = [
        ("pod-security.kubernetes.io/warn", "restricted"),
        ("pod-security.kubernetes.io/enforce", "baseline"),
    ]
    .into();
    namespaces
        .patch(
            ns,
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({ "metadata": { "labels": labels } })),
        )
        .await
        .expect("label namespace");
}

/// `restricted`'s warning for a plain pod whose only container is `container`.
fn restricted_warning(container: &str) -> String {
    format!(
        "Warning: would violate PodSecurity \"restricted:latest\": allowPrivilegeEscalation != false (container \"{container}\" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container \"{container}\" must set securityContext.capabilities.drop=[\"ALL\"]), runAsNonRoot != true (pod or container \"{container}\" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container \"{container}\" must set securityContext.seccompProfile.type to \"RuntimeDefault\" or \"Localhost\")\n"
    )
}

#[tokio::test]
async fn run_pod_and_create_file_show_pod_security_as_kubectl() {
    let ns = cluster().namespace("pod-security").await;
    label(ns.as_str()).await;
    let enforced = cluster().release == Release::Current;

    // run-pod beside kubectl run: a pod that only breaks `restricted` is created with
    // the warning; one on the host network is refused.
    let run = |command: &str, name: &str, extra: &[&str]| {
        cluster()
            .kubectl()
            .args([command, "-n", ns.as_str(), name, "--image=nginx"])
            .args(extra)
            .run()
    };
    let (ours, theirs) = (run("run-pod", "w-ours", &[]), run("run", "w-theirs", &[]));
    ours.success();
    theirs.success();
    assert_eq!(ours.stdout, "pod/w-ours created\n");
    assert_eq!(ours.stderr, theirs.stderr.replace("w-theirs", "w-ours"));
    if enforced {
        assert_eq!(ours.stderr, restricted_warning("w-ours"));
    } else {
        assert_eq!(ours.stderr, "");
    }
    let host = ["--overrides={\"spec\":{\"hostNetwork\":true}}"];
    let (ours, theirs) = (
        run("run-pod", "host-ours", &host),
        run("run", "host-theirs", &host),
    );
    if enforced {
        ours.code(1);
        theirs.code(1);
        assert_eq!(ours.stdout, "");
        assert_eq!(
            ours.stderr,
            theirs.stderr.replace("host-theirs", "host-ours"),
            "run-pod beside kubectl run"
        );
        assert_eq!(
            ours.stderr,
            "Error from server (Forbidden): pods \"host-ours\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true)\n"
        );
    } else {
        ours.success();
        theirs.success();
    }

    // create-file beside kubectl create -f: one file, one pod of each kind.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = |prefix: &str| {
        let path = dir.path().join(format!("{prefix}.yaml"));
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {prefix}-plain\nspec:\n  containers:\n  - name: c\n    image: nginx\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: {prefix}-host\nspec:\n  hostNetwork: true\n  containers:\n  - name: c\n    image: nginx\n"
            ),
        )
        .expect("write");
        path
    };
    let create = |command: &str, prefix: &str| {
        let path = file(prefix);
        cluster()
            .kubectl()
            .current_dir(dir.path())
            .args([command, "-n", ns.as_str(), "-f"])
            .arg(path.file_name().expect("file name"))
            .run()
    };
    let (ours, theirs) = (create("create-file", "ours"), create("create", "theirs"));
    assert_eq!(ours.code, theirs.code);
    assert_eq!(ours.stdout, theirs.stdout.replace("theirs", "ours"));
    assert_eq!(ours.stderr, theirs.stderr.replace("theirs", "ours"));
    if enforced {
        ours.code(1);
        assert_eq!(ours.stdout, "pod/ours-plain created\n");
        assert!(
            ours.stderr.starts_with(&restricted_warning("c")),
            "{}",
            ours.stderr
        );
        assert!(
            ours.stderr.contains("Error from server (Forbidden): error when creating \"ours.yaml\": pods \"ours-host\" is forbidden: violates PodSecurity \"baseline:latest\": host namespaces (hostNetwork=true)\n"),
            "{}",
            ours.stderr
        );
    } else {
        ours.success();
    }
}

/// rolling-update's new RC carries a pod template the server warns about: the warning
/// reaches stderr as the server words it, and the update completes.
#[tokio::test]
async fn rolling_update_passes_the_pod_security_warning_on() {
    let ns = cluster().namespace("pod-security-ru").await;
    label(ns.as_str()).await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster().client().await, ns.as_str());
    rcs.create(
        &PostParams::default(),
        &rc(
            "web",
            "web",
            &[],
            &[("web", OLD_IMAGE)],
            1,
            Readiness::Started,
        ),
    )
    .await
    .expect("create rc");
    tests::harness::wait_for_ready_replicas(&rcs, "web", 1, Duration::from_secs(60)).await;
    let out = cluster()
        .kubectl()
        .args([
            "rolling-update",
            "-n",
            ns.as_str(),
            "web",
            "--image",
            NEW_IMAGE,
            "--update-period=1s",
        ])
        .run();
    out.success();
    let warned = out
        .stderr
        .contains("Warning: would violate PodSecurity \"restricted:latest\"");
    assert_eq!(
        warned,
        cluster().release == Release::Current,
        "{}",
        out.stderr
    );
}
