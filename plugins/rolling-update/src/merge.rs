//! JSON merge patches (RFC 7386): the patch that turns one object into another, which
//! is how the update's writes to an RC reach the server (`cluster::writes`), and how
//! the scripted clusters of the unit tests apply them.

use serde::Serialize;
use serde_json::{Map, Value};

/// The merge patch of what `mutate` changes in `object`, or `None` for no change.
/// Both sides are encoded through text (`resources::typed::to_value_as_text`): the
/// model's encoder for text is in the binary anyway (every write sends one), and one
/// for `Value` beside it would be a second copy of the RC's and its pod template's
/// (binary size, docs/binary-size.md).
pub fn change<K: Serialize + Clone>(
    object: &K,
    mutate: impl Fn(&mut K),
) -> serde_json::Result<Option<Value>> {
    let mut changed = object.clone();
    mutate(&mut changed);
    Ok(merge_diff(
        &resources::typed::to_value_as_text(object)?,
        &resources::typed::to_value_as_text(&changed)?,
    ))
}

/// The JSON merge patch (RFC 7386) that turns `before` into `after`: the members
/// `after` changes or adds, `null` for those it removes; `None` when they are equal.
/// Hand-written: json-patch's `diff` makes RFC 6902 operations whose paths fail once
/// the server's copy has moved on (a map it no longer has), where a merge patch
/// applies to whatever copy the server holds, as a retry on a fresh copy would.
pub fn merge_diff(before: &Value, after: &Value) -> Option<Value> {
    if before == after {
        return None;
    }
    let (Value::Object(b), Value::Object(a)) = (before, after) else {
        return Some(after.clone());
    };
    let mut patch = Map::new();
    for (key, value) in a {
        match b.get(key) {
            Some(old) => {
                if let Some(d) = merge_diff(old, value) {
                    patch.insert(key.clone(), d);
                }
            }
            None => {
                patch.insert(key.clone(), value.clone());
            }
        }
    }
    for key in b.keys().filter(|k| !a.contains_key(*k)) {
        patch.insert(key.clone(), Value::Null);
    }
    Some(Value::Object(patch))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merge_diffs() {
        let before = json!({"metadata": {"name": "web", "annotations": {"a": "1", "b": "2"}},
                            "spec": {"replicas": 3, "selector": {"app": "web"}}});
        assert_eq!(merge_diff(&before, &before), None);
        let after = json!({"metadata": {"name": "web", "annotations": {"a": "1", "c": "3"}},
                           "spec": {"replicas": 4, "selector": {"app": "web", "k": "v"}}});
        assert_eq!(
            merge_diff(&before, &after),
            Some(json!({"metadata": {"annotations": {"b": null, "c": "3"}},
                        "spec": {"replicas": 4, "selector": {"k": "v"}}}))
        );
        // A map that goes away entirely, and arrays, which merge patches replace whole.
        assert_eq!(
            merge_diff(&json!({"a": {"x": 1}, "l": [1, 2]}), &json!({"l": [1]})),
            Some(json!({"a": null, "l": [1]}))
        );
    }
}
