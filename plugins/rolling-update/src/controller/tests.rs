//! Tests of the pure RC rules against kubectl 1.17's behaviour.

use super::*;
use crate::model::Container;
use crate::model::replication_controller::{PodSpec, PodTemplateSpec, ReplicationControllerSpec};
use kube::api::ObjectMeta;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn rc(name: &str, selector: &[(&str, &str)], images: &[(&str, &str)]) -> ReplicationController {
    ReplicationController {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            uid: Some("uid-1".into()),
            resource_version: Some("42".into()),
            ..Default::default()
        },
        spec: Some(ReplicationControllerSpec {
            replicas: Some(3),
            selector: Some(labels(selector)),
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(selector)),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: images
                        .iter()
                        .map(|(n, i)| Container {
                            name: n.to_string(),
                            image: Some(i.to_string()),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: None,
        ..Default::default()
    }
}

fn cfg(new_name: &str, image: &str, container: &str) -> NewControllerConfig {
    NewControllerConfig {
        new_name: new_name.into(),
        image: image.into(),
        container: container.into(),
        pull_policy: String::new(),
        deployment_key: "dk".into(),
    }
}

#[test]
fn next_rc_for_image_single_container() {
    let old = rc("foo", &[("app", "foo")], &[("web", "nginx:1")]);
    let new = new_controller_from_current(&old, &cfg("", "nginx:2", "")).unwrap();
    let hash = selector(&new)["dk"].clone();
    assert_eq!(hash.len(), 32);
    assert_eq!(name(&new), format!("foo-{hash}"));
    assert_eq!(selector(&new), labels(&[("app", "foo"), ("dk", &hash)]));
    let template = new.spec.as_ref().unwrap().template.as_ref().unwrap();
    assert_eq!(
        template.metadata.as_ref().unwrap().labels.as_ref().unwrap()["dk"],
        hash
    );
    let c = &template.spec.as_ref().unwrap().containers[0];
    assert_eq!(c.image.as_deref(), Some("nginx:2"));
    assert_eq!(c.image_pull_policy, None);
    assert_eq!(new.metadata.resource_version, None);
    assert_eq!(new.metadata.uid, None);
    assert_eq!(replicas(&new), 3, "replicas stay the old RC's");
    // The hash covers the image change: a different image, a different hash.
    let other = new_controller_from_current(&old, &cfg("", "nginx:3", "")).unwrap();
    assert_ne!(selector(&other)["dk"], hash);
}

#[test]
fn next_rc_keeps_given_name_and_sets_pull_policy() {
    let old = rc("foo", &[("app", "foo")], &[("web", "nginx:1")]);
    let mut c = cfg("foo-v2", "nginx:1", "");
    c.pull_policy = "Always".into();
    let new = new_controller_from_current(&old, &c).unwrap();
    assert_eq!(name(&new), "foo-v2");
    let container = &new.spec.unwrap().template.unwrap().spec.unwrap().containers[0];
    assert_eq!(container.image_pull_policy.as_deref(), Some("Always"));
}

#[test]
fn next_rc_multi_container_rules() {
    let old = rc(
        "foo",
        &[("dk", "old")],
        &[("container1", "image1"), ("container2", "image2")],
    );
    assert_eq!(
        new_controller_from_current(&old, &cfg("", "newimage", "")).unwrap_err(),
        ControllerError::MultiContainer
    );
    assert_eq!(
        new_controller_from_current(&old, &cfg("", "newimage", "nope"))
            .unwrap_err()
            .to_string(),
        "container nope not found in pod"
    );
    let new = new_controller_from_current(&old, &cfg("", "newimage", "container2")).unwrap();
    let containers = new.spec.unwrap().template.unwrap().spec.unwrap().containers;
    assert_eq!(containers[0].image.as_deref(), Some("image1"));
    assert_eq!(containers[1].image.as_deref(), Some("newimage"));
    // The deployment key value is overwritten, not appended.
    let old = rc("foo", &[("dk", "old")], &[("c", "i")]);
    let new = new_controller_from_current(&old, &cfg("", "j", "")).unwrap();
    assert_ne!(selector(&new)["dk"], "old");
}

#[test]
fn no_containers_is_an_error() {
    let old = rc("foo", &[("a", "b")], &[]);
    let err = new_controller_from_current(&old, &cfg("", "x", "")).unwrap_err();
    assert!(
        err.to_string().starts_with("pod has no containers! ({"),
        "{err}"
    );
}

#[test]
fn current_image_respects_container() {
    let old = rc("foo", &[("a", "b")], &[("one", "i1"), ("two", "i2")]);
    assert_eq!(current_image(&old, ""), Some("i1"));
    assert_eq!(current_image(&old, "two"), Some("i2"));
    assert_eq!(current_image(&old, "missing"), Some("i1"));
}

#[test]
fn marking_the_old_rc() {
    let mut old = rc("foo", &[("app", "foo")], &[("c", "i")]);
    assert!(needs_deployment_key(&old, "deployment"));
    let value = original_deployment_value(&old);
    assert!(value.ends_with("-orig") && value.len() == 37, "{value}");
    set_next_controller(&mut old, "foo-next");
    add_template_label(&mut old, "deployment", &value);
    add_selector_label(&mut old, "deployment", &value);
    assert!(!needs_deployment_key(&old, "deployment"));
    assert_eq!(
        annotation(&old, NEXT_CONTROLLER_ANNOTATION),
        Some("foo-next")
    );
    assert_eq!(selector_string(&old), format!("app=foo,deployment={value}"));
}

#[test]
fn selector_rule() {
    type Labels<'a> = &'a [(&'a str, &'a str)];
    let table: [(Labels<'_>, Labels<'_>, bool); 6] = [
        (&[("version", "v1")], &[("version", "v2")], true),
        (&[("version", "v1")], &[("version", "v1")], false),
        (
            &[("app", "a"), ("version", "v1")],
            &[("app", "a"), ("version", "v2")],
            true,
        ),
        (&[("app", "a")], &[("app", "a"), ("version", "v2")], false),
        (&[("app", "a")], &[("other", "b")], false),
        (&[], &[("a", "b")], false),
    ];
    for (old, new, want) in table {
        let (o, n) = (rc("o", old, &[]), rc("n", new, &[]));
        assert_eq!(selectors_differ(&o, &n), want, "{old:?} -> {new:?}");
    }
}

#[test]
fn rollback_swaps_and_annotates() {
    let mut original = rc("foo", &[("v", "1")], &[("c", "i")]);
    let partial = rc("foo-next", &[("v", "2")], &[("c", "j")]);
    assert_eq!(
        abort_rolling_update(&original, &partial)
            .unwrap_err()
            .to_string(),
        "couldn't find original replica count of \"foo\""
    );
    set_annotation(&mut original, ORIGINAL_REPLICAS_ANNOTATION, "3");
    let (old, new, message) = abort_rolling_update(&original, &partial).unwrap();
    assert_eq!(message, "Setting \"foo\" replicas to 3");
    assert_eq!(name(&old), "foo-next");
    assert_eq!(name(&new), "foo");
    assert_eq!(
        annotation(&new, SOURCE_ID_ANNOTATION),
        Some("foo-next:uid-1")
    );
    assert_eq!(annotation(&new, DESIRED_REPLICAS_ANNOTATION), Some("3"));
}
