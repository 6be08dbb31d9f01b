//! A client-side strategic merge patch for the kinds `run-pod` generates.
//!
//! Hand-written because kube-rs only sends strategic patches to the server and no Rust
//! crate implements apimachinery's `strategicpatch`. It covers what overrides of a
//! generated Pod, Service or workload need:
//! - maps merge recursively and `null` deletes a key, as in a JSON merge patch;
//! - lists whose Kubernetes schema declares `patchStrategy: merge` are merged by their
//!   `patchMergeKey` (containers by `name`, container ports by `containerPort`, service
//!   ports by `port`, …); a patch element with an unknown key is appended;
//! - other lists are replaced;
//! - the directives `$patch: replace` / `$patch: delete` (on maps and on list elements)
//!   and `$retainKeys` are honoured, and other `$…` directive keys are dropped.

use serde_json::{Map, Value};

use super::Error;

/// The merge key of a list field, from the Kubernetes schema's `patchMergeKey`.
/// `parent` is the key the enclosing map sits under, which tells container ports
/// from service ports.
fn merge_key(field: &str, elements: &[Value]) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets" => "name",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "hostAliases" => "ip",
        "conditions" => "type",
        "topologySpreadConstraints" => "topologyKey",
        "resourceClaims" => "name",
        // Container ports merge on containerPort, service ports on port; the elements say which.
        "ports" => {
            if elements.iter().any(|e| e.get("containerPort").is_some()) {
                "containerPort"
            } else {
                "port"
            }
        }
        _ => return None,
    })
}

/// Applies `patch` to `doc` in place.
pub fn strategic_merge(doc: &mut Value, patch: &Value) -> Result<(), Error> {
    let (Some(target), Some(patch)) = (doc.as_object_mut(), patch.as_object()) else {
        *doc = strip_directives(patch.clone());
        return Ok(());
    };
    merge_map(target, patch)
}

fn merge_map(target: &mut Map<String, Value>, patch: &Map<String, Value>) -> Result<(), Error> {
    match patch.get("$patch").and_then(Value::as_str) {
        Some("replace") => {
            let mut replacement = patch.clone();
            replacement.remove("$patch");
            *target = as_map(strip_directives(Value::Object(replacement)));
            return Ok(());
        }
        Some("delete") => {
            target.clear();
            return Ok(());
        }
        Some("merge") | None => {}
        Some(other) => {
            return Err(Error::Invalid(format!(
                "Unknown patch type: {other} in map: {patch:?}"
            )));
        }
    }
    if let Some(retain) = patch.get("$retainKeys").and_then(Value::as_array) {
        let keep: Vec<&str> = retain.iter().filter_map(Value::as_str).collect();
        target.retain(|k, _| keep.contains(&k.as_str()));
    }
    for (key, value) in patch {
        if key.starts_with('$') {
            continue;
        }
        match value {
            Value::Null => {
                target.remove(key);
            }
            Value::Object(p) => match target.get_mut(key) {
                Some(Value::Object(t)) => merge_map(t, p)?,
                _ => {
                    if p.get("$patch").and_then(Value::as_str) == Some("delete") {
                        target.remove(key);
                    } else {
                        target.insert(key.clone(), strip_directives(value.clone()));
                    }
                }
            },
            Value::Array(p) => {
                let merged = match (merge_key(key, p), target.get_mut(key)) {
                    (Some(mk), Some(Value::Array(t))) => merge_list(std::mem::take(t), p, mk)?,
                    _ => p
                        .iter()
                        .filter(|e| !is_delete(e))
                        .cloned()
                        .map(strip_directives)
                        .collect(),
                };
                target.insert(key.clone(), Value::Array(merged));
            }
            scalar => {
                target.insert(key.clone(), scalar.clone());
            }
        }
    }
    Ok(())
}

fn merge_list(mut target: Vec<Value>, patch: &[Value], key: &str) -> Result<Vec<Value>, Error> {
    // `[{"$patch": "replace"}, …]` replaces the whole list with the other elements.
    if patch
        .iter()
        .any(|e| e.get("$patch").and_then(Value::as_str) == Some("replace"))
    {
        return Ok(patch
            .iter()
            .filter(|e| e.get("$patch").is_none())
            .cloned()
            .map(strip_directives)
            .collect());
    }
    for element in patch {
        let Some(map) = element.as_object() else {
            // A list of scalars under a merge key field: append what is missing.
            if !target.contains(element) {
                target.push(element.clone());
            }
            continue;
        };
        let Some(id) = map.get(key) else {
            return Err(Error::Invalid(format!(
                "map: {element} does not contain declared merge key: {key}"
            )));
        };
        let position = target.iter().position(|t| t.get(key) == Some(id));
        match (position, is_delete(element)) {
            (Some(i), true) => {
                target.remove(i);
            }
            (None, true) => {}
            (Some(i), false) => {
                if let Some(t) = target[i].as_object_mut() {
                    merge_map(t, map)?;
                }
            }
            (None, false) => target.push(strip_directives(element.clone())),
        }
    }
    Ok(target)
}

fn is_delete(element: &Value) -> bool {
    element.get("$patch").and_then(Value::as_str) == Some("delete")
}

fn as_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// Removes directive keys (and `null`s, which mean "absent") from a value that is
/// inserted rather than merged.
fn strip_directives(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, v)| !k.starts_with('$') && !v.is_null())
                .map(|(k, v)| (k, strip_directives(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_directives).collect()),
        other => other,
    }
}
