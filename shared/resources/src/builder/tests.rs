//! The Builder end to end over real files, with a fake discovery. Each test pins one
//! consequence of the fixed stage order.

use std::path::Path;

use super::*;
use crate::fake::FakeDiscovery;

fn write(dir: &Path, rel: &str, text: &str) -> String {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(&p, text).expect("write");
    p.display().to_string()
}

fn files(names: Vec<String>) -> FilenameOptions {
    FilenameOptions {
        filenames: names,
        ..Default::default()
    }
}

fn summary(v: &Visited) -> Vec<String> {
    v.entries()
        .map(|e| match e {
            Ok(i) => format!(
                "{}/{}@{}",
                i.gvk.kind,
                i.name(),
                i.namespace().unwrap_or("-")
            ),
            Err(e) => format!("ERR {e}"),
        })
        .collect()
}

fn mapper(fake: &FakeDiscovery) -> RestMapper {
    RestMapper::with_discovery(std::sync::Arc::new(fake.clone()), None)
}

const LIST: &str = r#"
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: web-config, labels: {app: web}}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: db-config, labels: {app: db}}
"#;

#[tokio::test]
async fn list_items_are_filtered_one_by_one_because_flatten_comes_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(dir.path(), "list.yaml", LIST);
    let fake = FakeDiscovery::standard();
    let v = Builder::new()
        .flatten()
        .label_selector_param("app=web")
        .namespace_param("ns1")
        .default_namespace()
        .filename_param(false, &files(vec![f]))
        .build(&mut mapper(&fake))
        .await
        .expect("built");
    assert_eq!(summary(&v), ["ConfigMap/web-config@ns1"]);
}

/// kubectl maps a list by its own kind before flattening it: a list kind that does not
/// map, or whose discovery fails, is one error, and its items are not sent.
#[tokio::test]
async fn a_list_whose_own_kind_does_not_map_is_one_error_without_its_items() {
    let dir = tempfile::tempdir().expect("tempdir");
    let unknown = LIST.replace("kind: List", "kind: FooList").replace(
        "apiVersion: v1\nkind: FooList",
        "apiVersion: foo.example/v1\nkind: FooList",
    );
    let nope = LIST.replace("kind: List", "kind: NopeList");
    let names = vec![
        write(dir.path(), "a-unknown.yaml", &unknown),
        write(dir.path(), "b-nope.yaml", &nope),
        write(dir.path(), "c-list.yaml", LIST),
    ];
    let fake = FakeDiscovery::standard();
    let v = Builder::new()
        .flatten()
        .continue_on_error()
        .namespace_param("ns1")
        .default_namespace()
        .filename_param(false, &files(names))
        .build(&mut mapper(&fake))
        .await
        .expect("built");
    let got = summary(&v);
    assert_eq!(got.len(), 4, "{got:#?}");
    assert!(
        got[0].starts_with("ERR resource mapping not found for name: \"\" namespace: \"\" from ")
            && got[0].contains("no matches for kind \"FooList\" in version \"foo.example/v1\""),
        "{got:#?}"
    );
    assert!(
        got[1].contains("no matches for kind \"NopeList\" in version \"v1\""),
        "{got:#?}"
    );
    assert_eq!(
        got[2..4],
        ["ConfigMap/web-config@ns1", "ConfigMap/db-config@ns1"]
    );

    // Discovery that fails for the list's group-version: one error for the list.
    let fake = FakeDiscovery::standard().fail("v1");
    let v = Builder::new()
        .flatten()
        .continue_on_error()
        .filename_param(false, &files(vec![write(dir.path(), "e.yaml", LIST)]))
        .build(&mut mapper(&fake))
        .await
        .expect("built");
    let got = summary(&v);
    assert_eq!(got.len(), 1, "{got:#?}");
    assert!(got[0].starts_with("ERR unable to recognize "), "{got:#?}");
}

#[tokio::test]
async fn filtered_out_objects_are_neither_mapped_nor_namespace_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(
        dir.path(),
        "mixed.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, labels: {app: other}}\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata: {name: elsewhere, namespace: zzz, labels: {app: other}}\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mine, labels: {app: web}}\n",
    );
    let fake = FakeDiscovery::standard();
    let v = Builder::new()
        .label_selector_param("app=web")
        .namespace_param("ns1")
        .default_namespace()
        .filename_param(true, &files(vec![f]))
        .build(&mut mapper(&fake))
        .await
        .expect("built");
    assert_eq!(summary(&v), ["ConfigMap/mine@ns1"]);
    assert_eq!(
        fake.requested(),
        ["v1"],
        "discovery is not asked about example.com/v1"
    );
}

#[tokio::test]
async fn cluster_scoped_objects_never_get_the_namespace_because_mapping_comes_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(
        dir.path(),
        "a.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
    );
    let fake = FakeDiscovery::standard();
    let v = Builder::new()
        .namespace_param("ns1")
        .default_namespace()
        .filename_param(true, &files(vec![f]))
        .build(&mut mapper(&fake))
        .await
        .expect("built");
    assert_eq!(summary(&v), ["Namespace/team@-", "Deployment/d@ns1"]);
}

#[tokio::test]
async fn continue_on_error_keeps_every_error_in_input_order_with_its_origin() {
    let dir = tempfile::tempdir().expect("tempdir");
    let good = write(
        dir.path(),
        "d/1-good.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    );
    write(
        dir.path(),
        "d/2-bad.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\nkind: [\n",
    );
    write(
        dir.path(),
        "d/3-nokind.json",
        "{\"apiVersion\": \"v1\", \"metadata\": {\"name\": \"c\"}}",
    );
    write(
        dir.path(),
        "d/4-other.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d, namespace: other}\n",
    );
    let fake = FakeDiscovery::standard();
    let opts = FilenameOptions {
        filenames: vec![dir.path().join("d").display().to_string()],
        ..Default::default()
    };
    let v = Builder::new()
        .schema(Validation::Strict)
        .continue_on_error()
        .namespace_param("mine")
        .default_namespace()
        .filename_param(true, &opts)
        .build(&mut mapper(&fake))
        .await
        .expect("built");
    let bad = dir.path().join("d/2-bad.yaml").display().to_string();
    let nokind = dir.path().join("d/3-nokind.json").display().to_string();
    assert_eq!(
        summary(&v),
        [
            "ConfigMap/a@mine".to_string(),
            "ConfigMap/b@mine".into(),
            format!("ERR error parsing {bad}: error converting YAML to JSON: yaml: line 1: did not find expected node content"),
            format!("ERR error validating \"{nokind}\": error validating data: kind not set; if you choose to ignore these errors, turn validation off with --validate=false"),
            "ERR the namespace from the provided object \"other\" does not match the namespace \"mine\". You must pass '--namespace=other' to perform this operation.".into(),
        ]
    );
    assert_eq!(
        v.entries()
            .next()
            .and_then(|e| e.ok())
            .map(|i| i.origin.source.to_string()),
        Some(good)
    );
}

#[tokio::test]
async fn without_continue_on_error_the_first_error_ends_the_result() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = write(
        dir.path(),
        "a.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nnot: [valid\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    );
    let fake = FakeDiscovery::standard();
    let v = Builder::new()
        .filename_param(false, &files(vec![a]))
        .build(&mut mapper(&fake))
        .await
        .expect("built");
    let entries: Vec<Entry> = v.entries().collect();
    assert_eq!(entries.len(), 2);
    assert!(entries[1].is_err());
}

#[tokio::test]
async fn stdin_and_comma_separated_inputs_keep_command_line_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = write(
        dir.path(),
        "a.json",
        "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"from-file\"}}",
    );
    let fake = FakeDiscovery::standard();
    let v = Builder::new()
        .stdin(std::io::Cursor::new(
            "apiVersion: v1\nkind: Pod\nmetadata: {name: from-stdin}\n",
        ))
        .namespace_param("n")
        .default_namespace()
        .filename_param(false, &files(vec!["-".into(), a]))
        .build(&mut mapper(&fake))
        .await
        .expect("built");
    assert_eq!(summary(&v), ["Pod/from-stdin@n", "ConfigMap/from-file@n"]);
    assert_eq!(
        v.entries()
            .next()
            .and_then(|e| e.ok())
            .map(|i| i.origin.source.to_string())
            .as_deref(),
        Some("STDIN")
    );
}

#[tokio::test]
async fn a_crd_and_its_instance_map_in_one_build() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(
        dir.path(),
        "crd.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n---\n\
         apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\n\
         spec: {group: example.com, scope: Namespaced, names: {kind: Widget, plural: widgets}, versions: [{name: v1}]}\n",
    );
    let fake = FakeDiscovery::standard().serve(
        "apiextensions.k8s.io/v1",
        &[(
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
        )],
    );
    let v = Builder::new()
        .flatten()
        .namespace_param("n")
        .default_namespace()
        .filename_param(false, &files(vec![f]))
        .build(&mut mapper(&fake))
        .await
        .expect("built");
    assert_eq!(
        summary(&v),
        [
            "Widget/w@n",
            "CustomResourceDefinition/widgets.example.com@-"
        ]
    );
}

#[tokio::test]
async fn command_line_errors_are_returned_before_reading() {
    let fake = FakeDiscovery::standard();
    let both = FilenameOptions {
        filenames: vec!["a".into()],
        kustomize: Some("k".into()),
        recursive: false,
    };
    let err = Builder::new()
        .filename_param(false, &both)
        .build(&mut mapper(&fake))
        .await
        .expect_err("usage");
    assert_eq!(err.to_string(), "only one of -f or -k can be specified");
    let err = Builder::new()
        .label_selector_param("a in (b")
        .build(&mut mapper(&fake))
        .await
        .expect_err("selector");
    assert_eq!(
        err.to_string(),
        "the provided selector \"a in (b\" is not valid: unable to parse requirement: found '', expected: ',' or ')'"
    );
}

#[tokio::test]
async fn a_named_stream_is_read_like_a_file_and_errors_carry_its_name() {
    let fake = FakeDiscovery::standard();
    let v = Builder::new()
        .namespace_param("ns1")
        .require_namespace()
        .continue_on_error()
        .stream(
            "edited-file",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMapp\nmetadata: {name: b}\n",
        )
        .build(&mut mapper(&fake))
        .await
        .expect("build");
    let got = summary(&v);
    assert_eq!(got[0], "ConfigMap/a@ns1");
    assert!(
        got[1].starts_with(
            "ERR resource mapping not found for name: \"b\" namespace: \"\" from \"edited-file\": "
        ),
        "{got:?}"
    );
}

/// With the server's schema, every problem of an object is one error in kubectl's
/// words, and a kind the document lacks passes validation to meet mapping's error
/// (kubectl maps, and fails, where the document cannot validate). A mapping error
/// skips its object; a document that does not validate ends the file.
#[tokio::test]
async fn with_a_server_schema_unknown_kinds_reach_mapping_and_problems_are_listed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(
        dir.path(),
        "two.yaml",
        "apiVersion: v1\nkind: Nope\nmetadata: {name: n1}\nspec: {x: 1}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndta: {a: b}\nimmutable: \"yes\"\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: never-read}\n",
    );
    let doc =
        crate::openapi::OpenApiV2::from_json(include_bytes!("../openapi/testdata-v1.20.json"))
            .expect("doc");
    let fake = FakeDiscovery::standard();
    let v = Builder::new()
        .schema(Validation::Strict)
        .server_schema(Ok(std::sync::Arc::new(crate::openapi::Published::v2(
            std::sync::Arc::new(doc),
        ))))
        .continue_on_error()
        .filename_param(false, &files(vec![f.clone()]))
        .build(&mut mapper(&fake))
        .await
        .expect("build");
    assert_eq!(
        summary(&v),
        [
            format!(
                "ERR resource mapping not found for name: \"n1\" namespace: \"\" from \"{f}\": no matches for kind \"Nope\" in version \"v1\"\nensure CRDs are installed first"
            ),
            format!(
                "ERR error validating \"{f}\": error validating data: [ValidationError(ConfigMap): unknown field \"dta\" in io.k8s.api.core.v1.ConfigMap, ValidationError(ConfigMap.immutable): invalid type for io.k8s.api.core.v1.ConfigMap.immutable: got \"string\", expected \"boolean\"]; if you choose to ignore these errors, turn validation off with --validate=false"
            ),
        ]
    );
}

/// A schema fetched on demand: the source hears the documents' kinds (a List's items
/// only as "some list"), once, and strict validation then uses what it returned: the
/// List's items on the client, a kind the server validates left to it.
#[tokio::test]
async fn a_schema_source_hears_the_input_s_kinds_and_its_schema_validates() {
    use crate::openapi::{OpenApiV2, Published};
    use crate::{Kinds, SchemaSource, ServerSchema};
    use futures::future::BoxFuture;
    use std::sync::{Arc, Mutex};

    struct Recording(Arc<Mutex<Vec<Kinds>>>);
    impl SchemaSource for Recording {
        fn fetch<'a>(&'a self, kinds: &'a Kinds, _mode: Validation) -> BoxFuture<'a, ServerSchema> {
            self.0.lock().expect("lock").push(kinds.clone());
            // The 1.20 document, whose endpoints take no fieldValidation: everything
            // is validated on the client.
            let doc = OpenApiV2::from_json(include_bytes!("../openapi/testdata-v1.20.json"))
                .expect("doc");
            Box::pin(async move { Ok(Arc::new(Published::v2(Arc::new(doc)))) })
        }
    }

    let dir = tempfile::tempdir().expect("tempdir");
    let f = write(
        dir.path(),
        "mixed.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n  dta: {x: y}\n",
    );
    let heard = Arc::new(Mutex::new(Vec::new()));
    let fake = FakeDiscovery::standard();
    let v = Builder::new()
        .schema(Validation::Strict)
        .server_schema_from(Recording(heard.clone()))
        .continue_on_error()
        .filename_param(false, &files(vec![f.clone()]))
        .flatten()
        .build(&mut mapper(&fake))
        .await
        .expect("build");
    let heard = heard.lock().expect("lock").clone();
    assert_eq!(
        heard,
        [Kinds {
            documents: [(String::new(), "v1".to_string(), "ConfigMap".to_string())]
                .into_iter()
                .collect(),
            lists: true,
        }]
    );
    assert_eq!(
        summary(&v),
        [
            "ConfigMap/a@-".to_string(),
            format!(
                "ERR error validating \"{f}\": error validating data: ValidationError(ConfigMap): unknown field \"dta\" in io.k8s.api.core.v1.ConfigMap; if you choose to ignore these errors, turn validation off with --validate=false"
            ),
        ]
    );
}

/// The source is told to start what every input but a List-only one needs before the
/// input is decoded, and is not told for an input that may hold a List (which asks no
/// OpenAPI v3, as with kubectl) or when nothing is validated.
#[tokio::test]
async fn a_schema_source_prefetches_unless_the_input_may_be_lists() {
    use crate::openapi::{OpenApiV2, Published};
    use crate::{Kinds, SchemaSource, ServerSchema};
    use futures::future::BoxFuture;
    use std::sync::{Arc, Mutex};

    struct Recording(Arc<Mutex<Vec<&'static str>>>);
    impl SchemaSource for Recording {
        fn fetch<'a>(&'a self, _: &'a Kinds, _: Validation) -> BoxFuture<'a, ServerSchema> {
            self.0.lock().expect("lock").push("fetch");
            let doc = OpenApiV2::from_json(include_bytes!("../openapi/testdata-v1.20.json"))
                .expect("doc");
            Box::pin(async move { Ok(Arc::new(Published::v2(Arc::new(doc)))) })
        }
        fn prefetch(&self) {
            self.0.lock().expect("lock").push("prefetch");
        }
    }

    let dir = tempfile::tempdir().expect("tempdir");
    let plain = write(
        dir.path(),
        "plain.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    );
    let list = write(
        dir.path(),
        "list.yaml",
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n",
    );
    let fake = FakeDiscovery::standard();
    let calls = |file: &str, mode: Validation| {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let builder = Builder::new()
            .schema(mode)
            .server_schema_from(Recording(heard.clone()))
            .continue_on_error()
            .filename_param(false, &files(vec![file.to_string()]))
            .flatten();
        let fake = &fake;
        async move {
            builder.build(&mut mapper(fake)).await.expect("build");
            heard.lock().expect("lock").clone()
        }
    };
    assert_eq!(
        calls(&plain, Validation::Strict).await,
        ["prefetch", "fetch"]
    );
    assert_eq!(calls(&plain, Validation::Warn).await, ["prefetch", "fetch"]);
    assert_eq!(calls(&list, Validation::Strict).await, ["fetch"]);
    assert!(calls(&plain, Validation::Ignore).await.is_empty());
}

/// kubectl's `Builder` looks at every path before reading any: those that do not
/// exist are one aggregate error of the command line, and nothing is read.
#[tokio::test]
async fn paths_that_do_not_exist_are_refused_together_before_reading() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "good.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    );
    let path = |name: &str| dir.path().join(name).display().to_string();
    let fake = FakeDiscovery::standard();
    let build = |filenames: Vec<String>| {
        let fake = &fake;
        async move {
            let opts = FilenameOptions {
                filenames,
                ..Default::default()
            };
            Builder::new()
                .continue_on_error()
                .filename_param(false, &opts)
                .build(&mut mapper(fake))
                .await
                .err()
                .map(|e| e.to_string())
        }
    };
    assert_eq!(
        build(vec![path("good.yaml"), path("a.yaml")]).await,
        Some(format!("the path \"{}\" does not exist", path("a.yaml")))
    );
    assert_eq!(
        build(vec![path("a.yaml"), path("good.yaml"), path("b.yaml")]).await,
        Some(format!(
            "the path \"{}\" does not exist\nthe path \"{}\" does not exist",
            path("a.yaml"),
            path("b.yaml")
        ))
    );
}

#[tokio::test]
async fn a_directory_without_manifests_refuses_the_command_only_before_any_other_path() {
    // kubectl's Builder.Path: its list of paths is kept across `-f`, and the refusal
    // comes only while it (and the list of errors) is empty.
    let dir = tempfile::tempdir().expect("tempdir");
    let a = write(
        dir.path(),
        "a.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    );
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    let empty = empty.display().to_string();
    let run = |names: Vec<String>| async move {
        let fake = FakeDiscovery::standard();
        Builder::new()
            .continue_on_error()
            .default_namespace()
            .filename_param(false, &files(names))
            .build(&mut mapper(&fake))
            .await
            .map(|v| summary(&v))
            .map_err(|e| e.to_string())
    };
    assert_eq!(
        run(vec![a.clone(), empty.clone()]).await,
        Ok(vec!["ConfigMap/a@-".to_string()])
    );
    // First, it is an error of the builder: `Do` refuses the whole command, and
    // nothing after it is created (kubectl 1.37: `-f empty -f a.yaml` creates nothing).
    let refused =
        format!("error reading [{empty}]: recognized file extensions are [.json .yaml .yml]");
    assert_eq!(
        run(vec![empty.clone(), a.clone()]).await,
        Err(refused.clone()),
        "first: the command refused"
    );
    assert_eq!(
        run(vec![empty.clone(), empty.clone()]).await,
        Err(refused),
        "once: the first refusal is an error of the list"
    );
}
