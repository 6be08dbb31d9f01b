//! RFC 6902 JSON patches as kubectl applies `--overrides` with `--override-type=json`:
//! through evanphx/json-patch v4, whose rules and words reach the user. Its rules are
//! not the RFC's in places (`replace` of a missing object key adds it, negative array
//! indices count from the end, `test` of a missing key against `null` passes, an
//! operation is only read when its turn comes), and its errors read
//! `error in remove for path: '/spec/nope': Unable to remove nonexistent key: nope: missing value`.
//! The `json-patch` crate follows the RFC and words its errors its own way, hence
//! this port (kubectl's merge patches stay that crate's: the two agree there).
//!
//! A JSON `null` in the document is Go's nil node: absent and null read the same.

use serde_json::{Map, Value};

/// Go's `ErrMissing`.
const MISSING: &str = "missing value";
/// Go's `ErrInvalidIndex`.
const INVALID_INDEX: &str = "invalid index referenced";
/// Go's `ErrTestFailed`.
const TEST_FAILED: &str = "test failed";

/// Applies `patch` (the text of `--overrides`) to `doc`, operation by operation; the
/// first failure is the error, in evanphx/json-patch's words.
pub fn apply(doc: &mut Value, patch: &str) -> Result<(), String> {
    let ops = decode(patch)?;
    for op in &ops {
        match kind(op).as_str() {
            "add" => add(doc, op)?,
            "remove" => remove(doc, op)?,
            "replace" => replace(doc, op)?,
            "move" => move_op(doc, op)?,
            "test" => test(doc, op)?,
            "copy" => copy(doc, op)?,
            other => return Err(format!("Unexpected kind: {other}")),
        }
    }
    Ok(())
}

/// `DecodePatch`: a JSON array of objects, in `encoding/json`'s words otherwise.
fn decode(patch: &str) -> Result<Vec<Map<String, Value>>, String> {
    let value: Value = serde_json::from_str(patch).map_err(|e| e.to_string())?;
    let Value::Array(items) = value else {
        return Err(cannot_unmarshal(&value, "jsonpatch.Patch"));
    };
    items
        .into_iter()
        .map(|item| match item {
            Value::Object(op) => Ok(op),
            // Go decodes a null element as an empty operation.
            Value::Null => Ok(Map::new()),
            other => Err(cannot_unmarshal(&other, "jsonpatch.Operation")),
        })
        .collect()
}

fn cannot_unmarshal(value: &Value, go_type: &str) -> String {
    let what = match value {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    };
    format!("json: cannot unmarshal {what} into Go value of type {go_type}")
}

/// `Operation.Kind`: the `op` string, else `unknown`.
fn kind(op: &Map<String, Value>) -> String {
    match op.get("op") {
        Some(Value::String(s)) => s.clone(),
        _ => "unknown".into(),
    }
}

/// `Operation.Path` and `From`: the field's string; `null` or absent is missing, another
/// type is Go's decoding error.
fn field(op: &Map<String, Value>, name: &str, missing: &str) -> Result<String, String> {
    match op.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        None | Some(Value::Null) => Err(format!("{missing}: {MISSING}")),
        Some(other) => Err(cannot_unmarshal(other, "string")),
    }
}

fn path(op: &Map<String, Value>) -> Result<String, String> {
    field(op, "path", "operation missing path field")
}

fn from(op: &Map<String, Value>) -> Result<String, String> {
    field(op, "from", "operation, missing from field")
}

/// `Operation.value`: absent and `null` are both Go's nil node.
fn value(op: &Map<String, Value>) -> Value {
    op.get("value").cloned().unwrap_or(Value::Null)
}

/// `decodePatchKey`: `~1` is `/`, then `~0` is `~`.
fn decode_key(part: &str) -> String {
    part.replace("~1", "/").replace("~0", "~")
}

/// `findObject`: the container holding the path's last key, and that key; `None` when
/// the path has no `/` or a step on the way is missing, null or not a container.
fn find_object<'a>(doc: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let split: Vec<&str> = path.split('/').collect();
    let (key, parts) = split.split_last()?;
    if parts.is_empty() {
        return None;
    }
    let mut container = doc;
    for part in &parts[1..] {
        let next = child(container, &decode_key(part))?;
        if !(next.is_object() || next.is_array()) {
            return None;
        }
        container = next;
    }
    Some((container, decode_key(key)))
}

/// The child of a container at `key`, resolved as `get` resolves it.
fn child<'a>(container: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    match container {
        Value::Object(map) => map.get_mut(key),
        Value::Array(items) => {
            let idx = array_index(key, items.len()).ok()?;
            items.get_mut(idx)
        }
        _ => None,
    }
}

/// Go's `strconv.Atoi`, its error in `NumError`'s words.
fn atoi(key: &str) -> Result<i64, String> {
    key.parse::<i64>().map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        format!("strconv.Atoi: parsing {key:?}: {why}")
    })
}

fn invalid_index(idx: i64) -> String {
    format!("Unable to access invalid index: {idx}: {INVALID_INDEX}")
}

/// `partialArray.get`'s index: negative ones count from the end.
fn array_index(key: &str, len: usize) -> Result<usize, String> {
    let idx = atoi(key)?;
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let at = if idx < 0 { idx + len } else { idx };
    if at < 0 || at >= len {
        return Err(invalid_index(idx));
    }
    usize::try_from(at).map_err(|_| invalid_index(idx))
}

/// `container.get`: an object's missing key is `None` (no error), an array's bad index
/// an error.
fn get<'a>(container: &'a Value, key: &str) -> Result<Option<&'a Value>, String> {
    match container {
        Value::Object(map) => Ok(map.get(key).filter(|v| !v.is_null())),
        Value::Array(items) => {
            let idx = array_index(key, items.len())?;
            Ok(items.get(idx).filter(|v| !v.is_null()))
        }
        _ => Ok(None),
    }
}

/// `container.add`: an object's key set; into an array at an index up to its length
/// (`-` appends, a negative index counts from the end of the grown array).
fn add_to(container: &mut Value, key: &str, val: Value) -> Result<(), String> {
    match container {
        Value::Array(items) => {
            if key == "-" {
                items.push(val);
                return Ok(());
            }
            let idx = atoi(key)
                .map_err(|e| format!("value was not a proper array index: '{key}': {e}"))?;
            let size = i64::try_from(items.len() + 1).unwrap_or(i64::MAX);
            let at = if idx < 0 { idx + size } else { idx };
            if idx >= size || at < 0 {
                return Err(invalid_index(idx));
            }
            let at = usize::try_from(at).map_err(|_| invalid_index(idx))?;
            items.insert(at, val);
            Ok(())
        }
        Value::Object(map) => {
            map.insert(key.to_string(), val);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// `container.remove`.
fn remove_from(container: &mut Value, key: &str) -> Result<(), String> {
    match container {
        Value::Object(map) => match map.remove(key) {
            Some(_) => Ok(()),
            None => Err(format!(
                "Unable to remove nonexistent key: {key}: {MISSING}"
            )),
        },
        Value::Array(items) => {
            let idx = atoi(key)?;
            let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
            let at = if idx < 0 { idx + len } else { idx };
            if idx >= len || at < 0 {
                return Err(invalid_index(idx));
            }
            let at = usize::try_from(at).map_err(|_| invalid_index(idx))?;
            items.remove(at);
            Ok(())
        }
        _ => Ok(()),
    }
}

fn add(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let path = path(op).map_err(|_| format!("add operation failed to decode path: {MISSING}"))?;
    let Some((con, key)) = find_object(doc, &path) else {
        return Err(format!(
            "add operation does not apply: doc is missing path: \"{path}\": {MISSING}"
        ));
    };
    add_to(con, &key, value(op)).map_err(|e| format!("error in add for path: '{path}': {e}"))
}

fn remove(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let path =
        path(op).map_err(|_| format!("remove operation failed to decode path: {MISSING}"))?;
    let Some((con, key)) = find_object(doc, &path) else {
        return Err(format!(
            "remove operation does not apply: doc is missing path: \"{path}\": {MISSING}"
        ));
    };
    remove_from(con, &key).map_err(|e| format!("error in remove for path: '{path}': {e}"))
}

fn replace(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let path = path(op).map_err(|e| format!("replace operation failed to decode path: {e}"))?;
    if path.is_empty() {
        let val = value(op);
        if !(val.is_object() || val.is_array()) {
            // Go formats the nil error it wraps there as `%!w(<nil>)`.
            return Err("replace operation value must be object or array: %!w(<nil>)".to_string());
        }
        *doc = val;
        return Ok(());
    }
    let Some((con, key)) = find_object(doc, &path) else {
        return Err(format!(
            "replace operation does not apply: doc is missing path: {path}: {MISSING}"
        ));
    };
    if get(con, &key).is_err() {
        return Err(format!(
            "replace operation does not apply: doc is missing key: {path}: {MISSING}"
        ));
    }
    match con {
        Value::Object(map) => {
            map.insert(key, value(op));
        }
        Value::Array(items) => {
            // In range: `get` above accepted the index.
            if let Ok(at) = array_index(&key, items.len()) {
                items[at] = value(op);
            }
        }
        _ => {}
    }
    Ok(())
}

fn move_op(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let from = from(op).map_err(|e| format!("move operation failed to decode from: {e}"))?;
    let Some((con, key)) = find_object(doc, &from) else {
        return Err(format!(
            "move operation does not apply: doc is missing from path: {from}: {MISSING}"
        ));
    };
    let val = get(con, &key)
        .map_err(|e| format!("error in move for path: '{key}': {e}"))?
        .cloned()
        .unwrap_or(Value::Null);
    remove_from(con, &key).map_err(|e| format!("error in move for path: '{key}': {e}"))?;
    let path = path(op).map_err(|e| format!("move operation failed to decode path: {e}"))?;
    let Some((con, key)) = find_object(doc, &path) else {
        return Err(format!(
            "move operation does not apply: doc is missing destination path: {path}: {MISSING}"
        ));
    };
    add_to(con, &key, val).map_err(|e| format!("error in move for path: '{path}': {e}"))
}

fn test(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let path = path(op).map_err(|e| format!("test operation failed to decode path: {e}"))?;
    let failed = || Err(format!("testing value {path} failed: {TEST_FAILED}"));
    let want = value(op);
    if path.is_empty() {
        return if *doc == want { Ok(()) } else { failed() };
    }
    let Some((con, key)) = find_object(doc, &path) else {
        return Err(format!(
            "test operation does not apply: is missing path: {path}: {MISSING}"
        ));
    };
    let got = get(con, &key).map_err(|e| format!("error in test for path: '{path}': {e}"))?;
    match got {
        None if want.is_null() => Ok(()),
        Some(got) if *got == want => Ok(()),
        _ => failed(),
    }
}

fn copy(doc: &mut Value, op: &Map<String, Value>) -> Result<(), String> {
    let from = from(op).map_err(|e| format!("copy operation failed to decode from: {e}"))?;
    let Some((con, key)) = find_object(doc, &from) else {
        return Err(format!(
            "copy operation does not apply: doc is missing from path: {from}: {MISSING}"
        ));
    };
    let val = get(con, &key)
        .map_err(|e| format!("error in copy for from: '{from}': {e}"))?
        .cloned()
        .unwrap_or(Value::Null);
    let path = path(op).map_err(|_| format!("copy operation failed to decode path: {MISSING}"))?;
    let Some((con, key)) = find_object(doc, &path) else {
        return Err(format!(
            "copy operation does not apply: doc is missing destination path: {path}: {MISSING}"
        ));
    };
    add_to(con, &key, val).map_err(|e| format!("error while adding value during copy: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "x", "labels": {"run": "x"}},
            "spec": {"containers": [{"name": "x", "image": "nginx"}]}
        })
    }

    fn patched(patch: &str) -> Result<Value, String> {
        let mut doc = pod();
        apply(&mut doc, patch).map(|()| doc)
    }

    /// Each message is evanphx/json-patch v4's for the case, as kubectl prints it.
    #[test]
    fn errors_are_evanphx_s() {
        for (patch, want) in [
            (
                r#"[{"op":"remove","path":"/spec/nope"}]"#,
                "error in remove for path: '/spec/nope': Unable to remove nonexistent key: nope: missing value",
            ),
            (
                r#"[{"op":"test","path":"/kind","value":"Service"}]"#,
                "testing value /kind failed: test failed",
            ),
            (
                r#"[{"op":"bogus","path":"/kind"}]"#,
                "Unexpected kind: bogus",
            ),
            (r#"[{"path":"/kind"}]"#, "Unexpected kind: unknown"),
            (
                r#"{"op":"remove","path":"/kind"}"#,
                "json: cannot unmarshal object into Go value of type jsonpatch.Patch",
            ),
            (
                r#"["remove"]"#,
                "json: cannot unmarshal string into Go value of type jsonpatch.Operation",
            ),
            (
                r#"[{"op":"add","path":"/spec/containers/5","value":{}}]"#,
                "error in add for path: '/spec/containers/5': Unable to access invalid index: 5: invalid index referenced",
            ),
            (
                r#"[{"op":"add","path":"/spec/containers/x","value":{}}]"#,
                "error in add for path: '/spec/containers/x': value was not a proper array index: 'x': strconv.Atoi: parsing \"x\": invalid syntax",
            ),
            (
                r#"[{"op":"add","path":"/nope/deeper","value":1}]"#,
                "add operation does not apply: doc is missing path: \"/nope/deeper\": missing value",
            ),
            (
                r#"[{"op":"add","value":1}]"#,
                "add operation failed to decode path: missing value",
            ),
            (
                r#"[{"op":"replace","path":"/nope/x","value":1}]"#,
                "replace operation does not apply: doc is missing path: /nope/x: missing value",
            ),
            (
                r#"[{"op":"replace","path":"/spec/containers/3","value":1}]"#,
                "replace operation does not apply: doc is missing key: /spec/containers/3: missing value",
            ),
            (
                r#"[{"op":"move","from":"/spec/nope","path":"/x"}]"#,
                "error in move for path: 'nope': Unable to remove nonexistent key: nope: missing value",
            ),
            (
                r#"[{"op":"copy","from":"/nope/a","path":"/x"}]"#,
                "copy operation does not apply: doc is missing from path: /nope/a: missing value",
            ),
        ] {
            assert_eq!(patched(patch).unwrap_err(), want, "for {patch}");
        }
    }

    /// evanphx's own rules where the RFC's differ.
    #[test]
    fn rules_are_evanphx_s() {
        let doc = patched(r#"[{"op":"replace","path":"/spec/hostname","value":"h"}]"#).unwrap();
        assert_eq!(
            doc["spec"]["hostname"], "h",
            "replace of a missing key adds it"
        );
        let doc =
            patched(r#"[{"op":"add","path":"/spec/containers/-1","value":{"name":"y"}}]"#).unwrap();
        assert_eq!(
            doc["spec"]["containers"][1]["name"], "y",
            "-1 is the grown end"
        );
        patched(r#"[{"op":"test","path":"/spec/nope","value":null}]"#)
            .expect("a missing key tests equal to null");
        let doc = patched(
            r#"[{"op":"move","from":"/metadata/labels","path":"/metadata/annotations"},
                {"op":"copy","from":"/metadata/name","path":"/spec/hostname"},
                {"op":"remove","path":"/spec/containers/-1"}]"#,
        )
        .unwrap();
        assert_eq!(doc["metadata"]["annotations"], json!({"run": "x"}));
        assert_eq!(doc["metadata"].get("labels"), None);
        assert_eq!(doc["spec"]["hostname"], "x");
        assert_eq!(doc["spec"]["containers"], json!([]));
    }
}
