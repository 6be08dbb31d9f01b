//! kube-openapi's validation rules, checked with definitions taken from the local 1.20
//! server's `/openapi/v2` (`testdata-v1.20.json`: the Pod's and ConfigMap's models, a
//! CRD's `Widget`, and three POST operations) against kubectl 1.32's recorded messages.

use serde_json::json;

use super::*;

fn doc() -> OpenApiV2 {
    OpenApiV2::from_json(include_bytes!("testdata-v1.20.json")).expect("document")
}

/// `kubectl create -f doc2.yaml` on the 1.20 server printed these three problems, in
/// this order (fields sorted, a number given as a string, an unknown field of a
/// referenced model).
#[test]
fn every_problem_of_a_pod_in_kubectl_words_and_order() {
    let pod = json!({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "c", "image": "nginx",
                "ports": [{"containerPort": "80", "bogus": 1}]}],
            "volumes": [{"name": "v", "rbd": {"monitors": ["a"], "image": "i", "imagefeatures": ["x"]}}],
        },
    });
    let errs = doc().validate(&pod);
    assert_eq!(
        aggregate(&errs),
        "[ValidationError(Pod.spec.containers[0].ports[0]): unknown field \"bogus\" in io.k8s.api.core.v1.ContainerPort, ValidationError(Pod.spec.containers[0].ports[0].containerPort): invalid type for io.k8s.api.core.v1.ContainerPort.containerPort: got \"string\", expected \"integer\", ValidationError(Pod.spec.volumes[0].rbd): unknown field \"imagefeatures\" in io.k8s.api.core.v1.RBDVolumeSource]"
    );
}

#[test]
fn custom_resources_are_checked_against_their_published_schema() {
    let widget = |spec: Value| json!({"apiVersion": "v19.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec});
    // Recorded: `kubectl create -f cr.yaml` (`colour` for `color`).
    assert_eq!(
        doc().validate(&widget(json!({"size": 3, "colour": "red"}))),
        [
            "ValidationError(Widget.spec): unknown field \"colour\" in com.example.v19.v1.Widget.spec"
        ]
    );
    assert_eq!(
        doc().validate(&widget(json!({"color": "red"}))),
        [
            "ValidationError(Widget.spec): missing required field \"size\" in com.example.v19.v1.Widget.spec"
        ]
    );
    assert!(doc().validate(&widget(json!({"size": 3}))).is_empty());
}

#[test]
fn type_rules_are_kube_openapi_s() {
    let cm = |data: Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": data});
    // A string accepts any scalar (kubectl sends it and the server refuses it).
    assert!(doc().validate(&cm(json!({"a": 1, "b": true}))).is_empty());
    assert_eq!(
        doc().validate(&cm(json!({"a": {"x": 1}}))),
        [
            "ValidationError(ConfigMap.data.a): invalid type for io.k8s.api.core.v1.ConfigMap.data: got \"map\", expected \"string\""
        ]
    );
    assert_eq!(
        doc().validate(&cm(json!(["x"]))),
        [
            "ValidationError(ConfigMap.data): invalid type for io.k8s.api.core.v1.ConfigMap.data: got \"array\", expected \"map\""
        ]
    );
    // A null value of a map is itemFactory's error, without the ValidationError.
    assert_eq!(
        doc().validate(&cm(json!({"a": null}))),
        ["unknown object type \"nil\" in ConfigMap.data.a"]
    );
    // Null fields are skipped; a missing required field is named after the others.
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"image": "x", "tty": "yes", "ports": [null]}], "volumes": null}});
    assert_eq!(
        doc().validate(&pod),
        [
            "ValidationError(Pod.spec.containers[0].ports[0]): unknown object type \"nil\" in Pod.spec.containers[0].ports[0]",
            "ValidationError(Pod.spec.containers[0].tty): invalid type for io.k8s.api.core.v1.Container.tty: got \"string\", expected \"boolean\"",
            "ValidationError(Pod.spec.containers[0]): missing required field \"name\" in io.k8s.api.core.v1.Container",
        ]
    );
}

#[test]
fn kinds_are_named_or_every_reason_is_given() {
    assert_eq!(
        aggregate(&doc().validate(&json!({"metadata": {"name": "x"}}))),
        "[apiVersion not set, kind not set]"
    );
    assert_eq!(
        doc().validate(&json!({"apiVersion": 1, "kind": ["x"]})),
        ["apiVersion isn't string type", "kind isn't string type"]
    );
    assert_eq!(
        doc().validate(&json!({"apiVersion": "a/b/c", "kind": "X"})),
        ["unexpected GroupVersion string: a/b/c"]
    );
    assert_eq!(
        doc().validate(&json!("text")),
        ["invalid object to validate"]
    );
    // A kind the document does not describe is left to mapping.
    assert!(
        doc()
            .validate(&json!({"apiVersion": "v1", "kind": "Nope", "spec": 1}))
            .is_empty()
    );
}

#[test]
fn field_validation_support_is_read_from_the_posts() {
    let old = doc();
    assert!(!old.supports_field_validation("", "v1", "Pod"));
    assert!(!old.supports_field_validation("v19.example.com", "v1", "Widget"));
    assert!(!old.supports_field_validation("unknown.example.com", "v1", "Thing"));
    // A server that declares the parameter (1.25 and later) on Namespaces: unknown
    // kinds follow the Namespace; a List never.
    let mut text: Value =
        serde_json::from_slice(include_bytes!("testdata-v1.20.json")).expect("json");
    let param =
        json!({"name": "fieldValidation", "in": "query", "type": "string", "uniqueItems": true});
    text["paths"]["/api/v1/namespaces"]["post"]["parameters"]
        .as_array_mut()
        .expect("parameters")
        .push(param);
    let new = OpenApiV2::from_json(&serde_json::to_vec(&text).expect("json")).expect("doc");
    assert!(new.supports_field_validation("", "v1", "Namespace"));
    assert!(!new.supports_field_validation("", "v1", "Pod"));
    assert!(new.supports_field_validation("unknown.example.com", "v1", "Thing"));
    assert!(!new.supports_field_validation("", "v1", "List"));
}

#[test]
fn aggregates_read_as_go_s() {
    assert_eq!(aggregate(&["a".into()]), "a");
    assert_eq!(aggregate(&["a".into(), "b".into(), "a".into()]), "[a, b]");
    assert_eq!(aggregate(&["a".into(), "a".into()]), "a");
}

#[test]
fn reference_loops_end() {
    let doc = OpenApiV2::from_json(
        br##"{"definitions": {
            "a": {"$ref": "#/definitions/b", "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "Loop"}]},
            "b": {"$ref": "#/definitions/a"}}}"##,
    )
    .expect("doc");
    assert!(
        doc.validate(&json!({"apiVersion": "v1", "kind": "Loop"}))
            .is_empty()
    );
}
