//! `--save-config`: kubectl's `cmdutil.AddApplyAnnotationFlags` and
//! `CreateOrUpdateAnnotation`, the one implementation both creating plugins use.
//!
//! kubectl stores the object, serialised without the annotation itself, in
//! `kubectl.kubernetes.io/last-applied-configuration`, with Go's final newline. How an
//! emptied annotations map is serialised depends on how kubectl holds the object
//! (checked with kubectl 1.32): `create -f` holds it unstructured, where setting an
//! empty map writes `"annotations":{}` (and creates a missing `metadata`), keys sorted;
//! `run` holds typed objects, whose `omitempty` drops it, encoded in the Go struct's
//! field order with its zero values (`crate::printers::gojson`).

use serde_json::{Map, Value};

/// The annotation `kubectl apply` reads.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The `--save-config` flag, to `#[command(flatten)]` into a command's arguments.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SaveConfigFlags {
    /// Whether to save the configuration; see [`save_config`].
    #[arg(
        long = "save-config",
        help = "If true, the configuration of current object will be saved in its annotation. Otherwise, the annotation will be unchanged. This flag is useful when you want to perform kubectl apply on this object in the future."
    )]
    pub save_config: bool,
}

/// How kubectl holds the object it annotates; see the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// `create -f`: an emptied annotations map is kept as `{}`.
    Unstructured,
    /// `run`'s generated objects: an emptied annotations map is left out.
    Typed,
}

/// Writes the last-applied annotation on `object` (a JSON object), replacing any
/// earlier one and keeping the other annotations.
pub fn save_config(object: &mut Value, held: Held) -> Result<(), serde_json::Error> {
    let Some(fields) = object.as_object_mut() else {
        return Ok(());
    };
    let meta = fields
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    let mut annotations = match meta.as_object_mut().and_then(|m| m.remove("annotations")) {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    annotations.remove(LAST_APPLIED);
    let set = |object: &mut Value, annotations: Map<String, Value>| {
        if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("annotations".into(), Value::Object(annotations));
        }
    };
    if held == Held::Unstructured || !annotations.is_empty() {
        set(object, annotations.clone());
    }
    // Encoded as kubectl holds the object: typed in its Go struct's field order
    // (`runtime.Encode` of the typed object), unstructured with keys sorted.
    let mut encoded = match held {
        Held::Typed => {
            crate::printers::gojson::json(object, None, crate::printers::gojson::Structs::Current)
        }
        Held::Unstructured => serde_json::to_string(object)?,
    };
    encoded.push('\n');
    annotations.insert(LAST_APPLIED.into(), Value::String(encoded));
    set(object, annotations);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn saved(mut object: Value, held: Held) -> (Value, String) {
        save_config(&mut object, held).expect("annotated");
        let text = object["metadata"]["annotations"][LAST_APPLIED]
            .as_str()
            .expect("annotation")
            .to_string();
        (object, text)
    }

    #[test]
    fn unstructured_keeps_an_empty_map_as_kubectl_create_does() {
        // kubectl 1.32, `create --save-config -f` of this ConfigMap.
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "b"}});
        let (_, text) = saved(cm, Held::Unstructured);
        assert_eq!(
            text,
            "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"b\"},\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{},\"name\":\"x\"}}\n"
        );
    }

    #[test]
    fn missing_metadata_is_created_as_kubectl_create_does() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}});
        let (object, text) = saved(cm, Held::Unstructured);
        assert_eq!(
            text,
            "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"b\"},\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{}}}\n"
        );
        assert!(object["metadata"]["annotations"][LAST_APPLIED].is_string());
    }

    #[test]
    fn typed_leaves_an_empty_map_out_as_kubectl_run_does() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}});
        let (_, text) = saved(pod, Held::Typed);
        assert_eq!(
            text,
            "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"},\"spec\":{\"containers\":null},\"status\":{}}\n"
        );
    }

    #[test]
    fn an_old_annotation_is_replaced_and_others_kept() {
        let cm = json!({"kind": "ConfigMap", "metadata": {"name": "x", "annotations": {"a": "1", LAST_APPLIED: "old"}}});
        for held in [Held::Unstructured, Held::Typed] {
            let (object, text) = saved(cm.clone(), held);
            assert_eq!(object["metadata"]["annotations"]["a"], "1");
            assert_eq!(
                text,
                "{\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{\"a\":\"1\"},\"name\":\"x\"}}\n"
            );
        }
        let only_old =
            json!({"kind": "Pod", "metadata": {"name": "x", "annotations": {LAST_APPLIED: "old"}}});
        let (_, text) = saved(only_old, Held::Typed);
        assert_eq!(text, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"}}\n");
        let only_old = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "annotations": {LAST_APPLIED: "old"}}});
        let (_, text) = saved(only_old, Held::Typed);
        assert!(
            text.starts_with(
                "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"},"
            ),
            "{text}"
        );
    }
}
