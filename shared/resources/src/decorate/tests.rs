//! Unit tests of the decorating stages: flattening Lists, the `-l` filter, the
//! namespace, over the in-memory mapper.

use serde_json::json;

use super::*;
use crate::fake::FakeDiscovery;
use crate::{Mapping, Origin, parse_selector};

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
fn flatten_replaces_lists_by_their_items_in_place() {
    let list = info(json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}},
    ]}));
    let out = flatten_lists(
        vec![
            cm("before", json!({})),
            list,
            Err(ResourceError::Usage("x".into())),
        ],
        None,
    );
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

/// kubectl cannot flatten a list inside a List (its `FlattenListVisitor` fails to
/// extract a decoded item's items): the whole List is one error, whatever the inner
/// list's kind, and the documents around it go on.
#[test]
fn a_list_inside_a_list_fails_the_whole_list() {
    for inner in [
        json!({"apiVersion": "v1", "kind": "ConfigMapList", "items": []}),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "e"}, "items": [{}]}),
    ] {
        let list = info(json!({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}, inner]}));
        let out = flatten_lists(vec![list, cm("after", json!({}))], None);
        assert_eq!(
            names(&out),
            [
                "ERR *unstructured.Unstructured is not a list: no Items field in this object",
                "ConfigMap/after"
            ]
        );
    }
    // Any document's `items` must be an array: kubectl decodes it as a list's.
    for (items, go_type) in [
        (json!({}), "object"),
        (json!("s"), "string"),
        (json!(1), "number"),
    ] {
        let odd = info(json!({"apiVersion": "v1", "kind": "FooList", "items": items}));
        assert_eq!(
            names(&flatten_lists(vec![odd], None)),
            [format!(
                "ERR unable to decode \"f.yaml\": json: cannot unmarshal {go_type} into Go struct field decodeList.items of type []json.RawMessage"
            )]
        );
    }
    // `items: null` is no list.
    let list = info(json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "items": null}]}));
    assert_eq!(names(&flatten_lists(vec![list], None)), ["ConfigMap/a"]);
}

/// kubectl decodes a List's items into maps before flattening: one that is not a map
/// fails the whole List, a null one is an empty map.
#[test]
fn a_list_item_that_is_not_a_map_fails_the_list_and_null_is_empty() {
    let list = |bad: Value| {
        info(json!({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}, bad]}))
    };
    for (bad, go_type) in [
        (json!("s"), "string"),
        (json!(1), "number"),
        (json!(true), "bool"),
        (json!([]), "array"),
    ] {
        assert_eq!(
            names(&flatten_lists(vec![list(bad)], None)),
            [format!(
                "ERR unable to decode \"f.yaml\": json: cannot unmarshal {go_type} into Go value of type map[string]interface {{}}"
            )]
        );
    }
    let out = flatten_lists(vec![list(Value::Null)], None);
    assert_eq!(names(&out), ["ConfigMap/a", "/"]);
}

#[test]
fn a_kind_ending_in_list_without_items_is_an_object() {
    let out = flatten_lists(
        vec![info(
            json!({"apiVersion": "v1", "kind": "Playlist", "metadata": {"name": "p"}}),
        )],
        None,
    );
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
fn strict_validation_takes_a_list_whole_and_other_documents_one_by_one() {
    use crate::validate::{Validation, validate};
    let item = |name: &str, extra: Value| {
        let mut v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };
    let list =
        |items: Vec<Value>| info(json!({"apiVersion": "v1", "kind": "List", "items": items}));
    let out = validate_documents(
        vec![
            cm("a", json!({})),
            info(json!({"apiVersion": "v1", "metadata": {"name": "x"}})),
            list(vec![
                item("i1", json!({"dta": {}})),
                item("i2", json!({})),
                json!({"apiVersion": "v1", "metadata": {"name": "i3"}}),
            ]),
            // Nothing wrong that validation sees: the List goes on whole, and its
            // nameless item is left to the checks after flattening.
            list(vec![
                item("j1", json!({})),
                json!({"apiVersion": "v1", "kind": "ConfigMap"}),
            ]),
        ],
        |i, _| validate(i, Validation::Strict),
    );
    assert_eq!(
        names(&out),
        [
            "ConfigMap/a",
            "ERR error validating \"f.yaml\": error validating data: kind not set; if you choose to ignore these errors, turn validation off with --validate=false",
            "ERR error validating \"f.yaml\": error validating data: [ValidationError(ConfigMap): unknown field \"dta\" in io.k8s.api.core.v1.ConfigMap, kind not set]; if you choose to ignore these errors, turn validation off with --validate=false",
            "List/",
        ]
    );
}

#[test]
fn a_stream_ends_at_its_first_document_that_does_not_parse_or_validate() {
    let parse = || {
        Err(ResourceError::Parse {
            source_name: "f.yaml".into(),
            line: 3,
            reason: "p".into(),
        })
    };
    let invalid = || {
        Err(ResourceError::Invalid {
            origin: Origin::single("f.yaml"),
            problems: vec!["v".into()],
        })
    };
    let decode = || {
        Err(ResourceError::Decode {
            origin: Origin::single("f.yaml"),
            reason: "d".into(),
        })
    };
    let mut entries = vec![
        cm("a", json!({})),
        decode(),
        cm("b", json!({})),
        parse(),
        cm("c", json!({})),
    ];
    stop_stream_at_broken_document(&mut entries);
    assert_eq!(
        names(&entries),
        [
            "ConfigMap/a",
            "ERR unable to decode \"f.yaml\": d",
            "ConfigMap/b",
            "ERR error parsing f.yaml: p"
        ]
    );
    let mut entries = vec![invalid(), cm("c", json!({}))];
    stop_stream_at_broken_document(&mut entries);
    assert_eq!(entries.len(), 1);
    let mut entries = vec![cm("a", json!({})), decode()];
    stop_stream_at_broken_document(&mut entries);
    assert_eq!(entries.len(), 2);
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
