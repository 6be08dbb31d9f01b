//! Unit tests of the decorating stages: flattening Lists, the `-l` filter, the
//! namespace, over the in-memory mapper.

use serde_json::json;

use super::*;
use crate::resource::fake::FakeDiscovery;
use crate::resource::{Mapping, Origin, parse_selector};

fn info(v: Value) -> Entry {
    Ok(Info::from_object(v, Origin::single("f.yaml")))
}

fn cm(name: &str, labels: Value) -> Entry {
    info(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}}),
    )
}

fn names(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .map(|e| match e {
            Ok(i) => format!(
                "{}/{}{}",
                i.gvk.kind,
                i.name(),
                i.namespace().map(|n| format!("@{n}")).unwrap_or_default()
            ),
            Err(e) => format!("ERR {e}"),
        })
        .collect()
}

fn mapped(v: Value, namespaced: bool) -> Entry {
    let mut i = Info::from_object(v, Origin::single("f.yaml"));
    i.mapping = Some(Mapping {
        group: String::new(),
        version: "v1".into(),
        kind: i.gvk.kind.clone(),
        resource: "x".into(),
        namespaced,
    });
    Ok(i)
}

#[test]
fn flatten_replaces_lists_by_their_items_recursively() {
    let list = info(json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}},
        {"apiVersion": "v1", "kind": "ConfigMapList", "items": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}}]},
    ]}));
    let out = flatten_lists(vec![
        cm("before", json!({})),
        list,
        Err(ResourceError::Usage("x".into())),
    ]);
    assert_eq!(
        names(&out),
        ["ConfigMap/before", "ConfigMap/a", "ConfigMap/b", "ERR x"]
    );
    let items: Vec<_> = out
        .iter()
        .filter_map(|e| e.as_ref().ok())
        .map(|i| i.origin.item)
        .collect();
    assert_eq!(items, [None, Some(1), Some(2)]);
}

#[test]
fn a_kind_ending_in_list_without_items_is_an_object() {
    let out = flatten_lists(vec![info(
        json!({"apiVersion": "v1", "kind": "Playlist", "metadata": {"name": "p"}}),
    )]);
    assert_eq!(names(&out), ["Playlist/p"]);
}

#[test]
fn selector_filter_keeps_matches_and_errors() {
    let sel = parse_selector("app=web").expect("selector");
    let out = filter_by_selector(
        vec![
            cm("a", json!({"app": "web"})),
            cm("b", json!({"app": "db"})),
            Err(ResourceError::Usage("e".into())),
        ],
        &sel,
    );
    assert_eq!(names(&out), ["ConfigMap/a", "ERR e"]);
}

#[test]
fn set_namespace_fills_only_namespaced_objects_without_one() {
    let out = set_namespace(
        vec![
            mapped(
                json!({"kind": "ConfigMap", "metadata": {"name": "a"}}),
                true,
            ),
            mapped(
                json!({"kind": "ConfigMap", "metadata": {"name": "b", "namespace": "other"}}),
                true,
            ),
            mapped(
                json!({"kind": "Namespace", "metadata": {"name": "c"}}),
                false,
            ),
        ],
        "dflt",
    );
    assert_eq!(
        names(&out),
        ["ConfigMap/a@dflt", "ConfigMap/b@other", "Namespace/c"]
    );
}

#[test]
fn require_namespace_rejects_other_namespaces_with_kubectls_message() {
    let out = require_namespace(
        vec![
            mapped(
                json!({"kind": "ConfigMap", "metadata": {"name": "a"}}),
                true,
            ),
            mapped(
                json!({"kind": "ConfigMap", "metadata": {"name": "b", "namespace": "a"}}),
                true,
            ),
            mapped(
                json!({"kind": "Namespace", "metadata": {"name": "c", "namespace": "zzz"}}),
                false,
            ),
        ],
        "b",
    );
    assert_eq!(
        names(&out),
        [
            "ConfigMap/a@b",
            "ERR the namespace from the provided object \"a\" does not match the namespace \"b\". You must pass '--namespace=a' to perform this operation.",
            "Namespace/c@zzz",
        ]
    );
}

#[test]
fn stop_at_first_error_keeps_what_came_before() {
    let e = || Err(ResourceError::Usage("e".into()));
    let stopped: Vec<Entry> =
        stop_at_first_error(vec![cm("a", json!({})), e(), cm("b", json!({})), e()].into_iter())
            .collect();
    assert_eq!(names(&stopped), ["ConfigMap/a", "ERR e"]);
    assert_eq!(
        stop_at_first_error(vec![cm("a", json!({}))].into_iter()).count(),
        1
    );
}

#[test]
fn validate_all_turns_invalid_objects_into_errors_in_place() {
    let out = validate_all(
        vec![
            cm("a", json!({})),
            info(json!({"apiVersion": "v1", "metadata": {"name": "x"}})),
        ],
        Validation::Strict,
    );
    assert_eq!(out.len(), 2);
    assert!(out[0].is_ok());
    assert!(matches!(out[1], Err(ResourceError::Invalid { .. })));
}

#[tokio::test]
async fn map_all_sets_mappings_and_reports_unknown_kinds_like_kubectl() {
    let fake = FakeDiscovery::standard();
    let mut mapper = RestMapper::with_discovery(std::sync::Arc::new(fake.clone()), None);
    let entries = vec![
        cm("a", json!({})),
        info(
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "n"}}),
        ),
    ];
    prepare_mapper(entries.iter().filter_map(|e| e.as_ref().ok()), &mut mapper).await;
    let out = map_all(entries, &mapper);
    assert_eq!(
        out[0]
            .as_ref()
            .expect("mapped")
            .mapping
            .as_ref()
            .map(|m| m.resource.as_str()),
        Some("configmaps")
    );
    assert_eq!(
        out[1].as_ref().expect_err("unknown").to_string(),
        "resource mapping not found for name: \"w\" namespace: \"n\" from \"f.yaml\": no matches for kind \"Widget\" in version \"example.com/v1\"\nensure CRDs are installed first"
    );
}
