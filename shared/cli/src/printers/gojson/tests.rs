//! The typed encoding against kubectl's own (1.37, the current release's): each
//! `testdata/*.kubectl.json` is
//! `kubectl set image --local -f X.in.json -o json '*=probe'` (a command that decodes
//! the file into kubectl's typed struct and prints it), with the image written back.

use serde_json::{Value, json};

use super::{Structs, Typed, json as typed_json, normalize};

fn read(name: &str) -> String {
    let path = format!(
        "{}/src/printers/gojson/testdata/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_layout_is_kubectls_for_its_typed_objects() {
    for name in ["pod", "deployment"] {
        let input: Value = serde_json::from_str(&read(&format!("{name}.in.json"))).expect("json");
        let want = read(&format!("{name}.kubectl.json"));
        let typed = Typed::of(&input, Structs::Current).expect("a type of the table");
        assert_eq!(format!("{}\n", typed.to_json(Some("    "))), want, "{name}");
        // The value form holds the same content.
        let kubectl: Value = serde_json::from_str(&want).expect("json");
        assert_eq!(typed.to_value(), kubectl, "{name}");
    }
}

#[test]
fn omitempty_drops_zero_values_and_keeps_set_pointers() {
    let rc = json!({"apiVersion": "v1", "kind": "ReplicationController",
        "metadata": {"name": "a", "labels": {}, "annotations": null},
        "spec": {"replicas": 0, "minReadySeconds": 0, "selector": {}}});
    assert_eq!(
        typed_json(&rc, None, Structs::Current),
        // replicas is a pointer (kept at 0), minReadySeconds an int (dropped),
        // status.replicas an int without omitempty (written at 0), the zero
        // creationTimestamp omitted (omitzero, kubectl 1.34+).
        r#"{"kind":"ReplicationController","apiVersion":"v1","metadata":{"name":"a"},"spec":{"replicas":0},"status":{"replicas":0}}"#
    );
}

#[test]
fn fields_the_struct_lacks_are_dropped_and_odd_shapes_kept() {
    let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a", "future": 1},
        "spec": {"ports": [{"port": 80, "targetPort": "http"}], "selector": "not a map"}});
    let typed = Typed::of(&svc, Structs::Current).expect("typed");
    assert_eq!(
        typed.to_json(None),
        r#"{"kind":"Service","apiVersion":"v1","metadata":{"name":"a"},"spec":{"ports":[{"port":80,"targetPort":"http"}],"selector":"not a map"},"status":{"loadBalancer":{}}}"#
    );
}

#[test]
fn unknown_kinds_stay_unstructured() {
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": ""}});
    assert!(Typed::of(&cm, Structs::Current).is_none());
    assert_eq!(normalize(&cm, Structs::Current), cm);
    assert_eq!(
        typed_json(&cm, None, Structs::Current),
        r#"{"apiVersion":"v1","data":{"k":""},"kind":"ConfigMap","metadata":{"name":"a"}}"#
    );
    assert!(Typed::of(&json!({"kind": "Pod"}), Structs::Current).is_none());
    assert!(Typed::of(&json!("Pod"), Structs::Current).is_none());
}

#[test]
fn every_index_of_the_table_names_a_struct() {
    fn check(ty: &super::Ty) {
        match ty {
            super::Ty::Struct(i) => assert!(usize::from(*i) < super::table::STRUCTS.len()),
            super::Ty::Ptr(t) | super::Ty::Slice(t) | super::Ty::Map(t) => check(t),
            _ => {}
        }
    }
    for (_, _, i) in super::table::ROOTS {
        assert!(usize::from(*i) < super::table::STRUCTS.len());
    }
    for fields in super::table::STRUCTS {
        for f in *fields {
            check(&f.ty);
        }
    }
}

#[test]
fn before_omitzero_a_zero_creation_timestamp_is_null() {
    let rc =
        json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "a"}});
    assert_eq!(
        typed_json(&rc, None, Structs::BeforeOmitzero),
        r#"{"kind":"ReplicationController","apiVersion":"v1","metadata":{"name":"a","creationTimestamp":null},"spec":{},"status":{"replicas":0}}"#
    );
}
