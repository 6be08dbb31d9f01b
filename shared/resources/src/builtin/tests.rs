//! The built-in table's mappings, the schema's validation in kubectl's words, and the
//! generator that keeps `schema.json` what the typed models describe.

use serde_json::{Map, Value, json};

use super::*;

#[test]
fn a_kind_keeps_its_plural_and_scope_at_any_version() {
    let at =
        |v: &str, k: &str| mapping_at(v, k).map(|m| (m.group, m.version, m.resource, m.namespaced));
    let owned = |g: &str, v: &str, r: &str| Some((g.into(), v.into(), r.into(), true));
    assert_eq!(at("v1", "Pod"), owned("", "v1", "pods"));
    assert_eq!(
        at("apps/v1", "Deployment"),
        owned("apps", "v1", "deployments")
    );
    // Group-versions the typed models no longer describe (1.17's generators).
    assert_eq!(
        at("extensions/v1beta1", "Deployment"),
        owned("extensions", "v1beta1", "deployments")
    );
    assert_eq!(
        at("batch/v2alpha1", "CronJob"),
        owned("batch", "v2alpha1", "cronjobs")
    );
    assert_eq!(
        at("v1", "ReplicationController"),
        owned("", "v1", "replicationcontrollers")
    );
    assert_eq!(
        mapping_at("v1", "Namespace").map(|m| m.namespaced),
        Some(false)
    );
    assert_eq!(at("v1", "Widget"), None);
}

#[test]
fn table_comes_from_the_typed_models() {
    let cm = find("", "v1", "ConfigMap").expect("ConfigMap is built in");
    assert_eq!((cm.resource, cm.namespaced), ("configmaps", true));
    let ns = find("", "v1", "Namespace").expect("Namespace is built in");
    assert_eq!((ns.resource, ns.namespaced), ("namespaces", false));
    let crd = find("apiextensions.k8s.io", "v1", "CustomResourceDefinition").expect("CRD");
    assert_eq!(
        (crd.resource, crd.namespaced),
        ("customresourcedefinitions", false)
    );
    assert!(find("apps", "v1beta1", "Deployment").is_none());
}

/// The schema validates as kubectl's validator does against a server's document.
#[test]
fn the_schema_reports_problems_in_kubectl_words() {
    let deploy = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "labelz": {}, "creationTimestamp": null},
        "spec": {"replicas": "two", "selector": {"matchLabels": {"a": "b"}},
            "template": {"metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"image": "i", "imagePullPolicy": "Always", "colour": "red"}]}}},
        "extra": true
    });
    assert_eq!(
        schema().validate(&deploy),
        [
            "ValidationError(Deployment): unknown field \"extra\" in io.k8s.api.apps.v1.Deployment",
            "ValidationError(Deployment.metadata): unknown field \"labelz\" in io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "ValidationError(Deployment.spec.replicas): invalid type for io.k8s.api.apps.v1.DeploymentSpec.replicas: got \"string\", expected \"integer\"",
            "ValidationError(Deployment.spec.template.spec.containers[0]): unknown field \"colour\" in io.k8s.api.core.v1.Container",
            "ValidationError(Deployment.spec.template.spec.containers[0]): missing required field \"name\" in io.k8s.api.core.v1.Container",
        ]
    );
    // A kind's own metadata is not required by the document (the typed models make it
    // a non-optional field; the server's document does not list it).
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}});
    assert!(schema().validate(&cm).is_empty());
    // Every kind of the table is in the schema.
    for kind in ALL {
        let gv = if kind.group.is_empty() {
            kind.version.to_string()
        } else {
            format!("{}/{}", kind.group, kind.version)
        };
        let object =
            json!({"apiVersion": gv, "kind": kind.kind, "metadata": {"name": "x"}, "nope": 1});
        let problems = schema().validate(&object);
        let unknown = format!("ValidationError({}): unknown field \"nope\"", kind.kind);
        assert!(
            problems.iter().any(|p| p.starts_with(&unknown)),
            "{kind:?}: {problems:?}"
        );
    }
}

/// Only what kube-openapi's validator reads, from a `schemars` description, and an
/// integer's `format` (`int32`, `int64`: run-pod's typed decode of `--overrides`
/// refuses a number out of the field's range, `generate::typed_decode`).
fn openapi_v2(schema: &Value) -> Value {
    let Value::Object(fields) = schema else {
        return schema.clone();
    };
    // schemars puts a `$ref` beside a description into a one-element `allOf`.
    if let Some(Value::Array(all)) = fields.get("allOf")
        && let [one] = all.as_slice()
    {
        return openapi_v2(one);
    }
    let mut out = Map::new();
    for (key, value) in fields {
        match key.as_str() {
            "type" | "$ref" | "required" => {
                out.insert(key.clone(), value.clone());
            }
            "format" if fields.get("type").and_then(Value::as_str) == Some("integer") => {
                out.insert(key.clone(), value.clone());
            }
            "items" | "additionalProperties" => {
                out.insert(key.clone(), openapi_v2(value));
            }
            "properties" => {
                let properties = value
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, s)| (name.clone(), openapi_v2(s)))
                    .collect();
                out.insert(key.clone(), Value::Object(properties));
            }
            _ => {}
        }
    }
    Value::Object(out)
}

/// `builtin/schema.json` from the typed models: one definition per line, sorted, so that
/// a k8s-openapi update shows as a readable diff.
fn generate() -> String {
    use schemars::JsonSchema;
    let mut generator = schemars::generate::SchemaSettings::openapi3()
        .with(|s| s.definitions_path = "#/definitions/".into())
        .into_generator();
    let mut kinds = Vec::new();
    macro_rules! describe {
        ($($ty:path),* $(,)?) => {$(
            let _ = generator.subschema_for::<$ty>();
            kinds.push((
                <$ty as JsonSchema>::schema_name().to_string(),
                json!([{
                    "group": <$ty as Resource>::GROUP,
                    "version": <$ty as Resource>::VERSION,
                    "kind": <$ty as Resource>::KIND,
                }]),
            ));
        )*};
    }
    builtin_types!(describe);
    let mut definitions: std::collections::BTreeMap<String, Value> = generator
        .take_definitions(true)
        .iter()
        .map(|(name, schema)| (name.clone(), openapi_v2(schema)))
        .collect();
    for (name, gvk) in kinds {
        let Some(Value::Object(def)) = definitions.get_mut(&name) else {
            panic!("{name} has no definition");
        };
        def.insert("x-kubernetes-group-version-kind".into(), gvk);
        // k8s-openapi makes a kind's metadata required; the API's document does not.
        if let Some(Value::Array(required)) = def.get_mut("required") {
            required.retain(|f| f != "metadata");
            if required.is_empty() {
                def.remove("required");
            }
        }
    }
    let lines: Vec<String> = definitions
        .iter()
        .map(|(name, def)| format!("{}:{def}", Value::String(name.clone())))
        .collect();
    format!("{{\"definitions\":{{\n{}\n}}}}\n", lines.join(",\n"))
}

/// The checked-in schema is what the typed models describe, and its deflated copy is
/// the same text. With `KUBEPLUG_CODEGEN_OUT=DIR` (set by `cargo xtask codegen`, which
/// owns the files) it is their generator instead: it writes both into DIR.
#[test]
fn schema_is_generated_from_the_typed_models() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/builtin");
    let json = generate();
    if let Some(out) = std::env::var_os("KUBEPLUG_CODEGEN_OUT") {
        let out = std::path::Path::new(&out);
        std::fs::write(out.join("schema.json"), &json).expect("write schema.json");
        let deflated = miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 10);
        std::fs::write(out.join("schema.json.deflate"), deflated).expect("write the deflated copy");
        return;
    }
    let checked_in = std::fs::read_to_string(dir.join("schema.json")).unwrap_or_default();
    assert!(
        checked_in == json,
        "shared/resources/src/builtin/schema.json is not what the typed models describe: \
         run `cargo xtask codegen` and commit it"
    );
    let inflated = miniz_oxide::inflate::decompress_to_vec(SCHEMA_DEFLATE).expect("inflates");
    assert!(
        inflated == json.as_bytes(),
        "shared/resources/src/builtin/schema.json.deflate is not schema.json: \
         run `cargo xtask codegen` and commit it"
    );
}
