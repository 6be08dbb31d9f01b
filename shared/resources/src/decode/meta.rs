//! kubectl's check that a document's `metadata` decodes into `ObjectMeta` before
//! anything is sent (cli-runtime's `metadataValidatingDecoder`): Go's `encoding/json`
//! decodes the document into `struct { TypeMeta; ObjectMeta "metadata" }` and the first
//! type error stops the file, e.g. `json: cannot unmarshal bool into Go struct field
//! ObjectMeta.metadata.labels of type string` for a label value `y`.
//!
//! Only the top-level `metadata` is checked (a List's items, a template's metadata go
//! to the server as they are), for every kind, built-in or not. The field types below
//! are `k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta`'s; the messages are
//! `encoding/json`'s `UnmarshalTypeError`: the innermost struct's Go name, the path of
//! JSON field names (no indices, no map keys) and the Go type.

use serde_json::Value;

/// The Go type of a field, as far as decoding cares.
#[derive(Clone, Copy)]
enum Ty {
    Str(&'static str),
    Int64,
    Bool,
    /// `metav1.Time`: its `UnmarshalJSON` decodes a string (or null).
    Time,
    MapStr,
    SliceStr,
    Struct(&'static Struct),
    Slice(&'static Struct),
    /// Decoded by its own `UnmarshalJSON` (fieldsV1): anything passes here.
    Any,
}

struct Struct {
    go_name: &'static str,
    go_type: &'static str,
    fields: &'static [(&'static str, Ty)],
}

const OWNER_REFERENCE: Struct = Struct {
    go_name: "OwnerReference",
    go_type: "v1.OwnerReference",
    fields: &[
        ("apiVersion", Ty::Str("string")),
        ("kind", Ty::Str("string")),
        ("name", Ty::Str("string")),
        ("uid", Ty::Str("types.UID")),
        ("controller", Ty::Bool),
        ("blockOwnerDeletion", Ty::Bool),
    ],
};

const MANAGED_FIELDS_ENTRY: Struct = Struct {
    go_name: "ManagedFieldsEntry",
    go_type: "v1.ManagedFieldsEntry",
    fields: &[
        ("manager", Ty::Str("string")),
        ("operation", Ty::Str("v1.ManagedFieldsOperationType")),
        ("apiVersion", Ty::Str("string")),
        ("time", Ty::Time),
        ("fieldsType", Ty::Str("string")),
        ("fieldsV1", Ty::Any),
        ("subresource", Ty::Str("string")),
    ],
};

const OBJECT_META: Struct = Struct {
    go_name: "ObjectMeta",
    go_type: "v1.ObjectMeta",
    fields: &[
        ("name", Ty::Str("string")),
        ("generateName", Ty::Str("string")),
        ("namespace", Ty::Str("string")),
        ("selfLink", Ty::Str("string")),
        ("uid", Ty::Str("types.UID")),
        ("resourceVersion", Ty::Str("string")),
        ("generation", Ty::Int64),
        ("creationTimestamp", Ty::Time),
        ("deletionTimestamp", Ty::Time),
        ("deletionGracePeriodSeconds", Ty::Int64),
        ("labels", Ty::MapStr),
        ("annotations", Ty::MapStr),
        ("ownerReferences", Ty::Slice(&OWNER_REFERENCE)),
        ("finalizers", Ty::SliceStr),
        ("managedFields", Ty::Slice(&MANAGED_FIELDS_ENTRY)),
    ],
};

/// The first type error of the document's `metadata`, in `encoding/json`'s words.
pub(super) fn check(object: &Value) -> Option<String> {
    let metadata = object.as_object()?.iter().find_map(|(k, v)| {
        // encoding/json matches field names case-insensitively, an exact match first.
        (k == "metadata").then_some(v)
    });
    let metadata = metadata.or_else(|| {
        object
            .as_object()?
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("metadata"))
            .map(|(_, v)| v)
    })?;
    let mut path = vec!["metadata"];
    check_value(
        metadata,
        Ty::Struct(&OBJECT_META),
        "metadataOnlyObject",
        &mut path,
    )
}

/// `encoding/json`'s name of a JSON value in "cannot unmarshal X": the kind, and for a
/// number that does not fit an integer its text as well.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn error(value: &str, owner: &str, path: &[&str], go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {value} into Go struct field {owner}.{} of type {go_type}",
        path.join(".")
    )
}

fn check_value(v: &Value, ty: Ty, owner: &str, path: &mut Vec<&'static str>) -> Option<String> {
    if v.is_null() {
        return None;
    }
    let mismatch = |go_type: &str| Some(error(json_kind(v), owner, path, go_type));
    match ty {
        Ty::Any => None,
        Ty::Str(go_type) => (!v.is_string()).then(|| mismatch(go_type)).flatten(),
        Ty::Time => match v {
            Value::String(text) => parse_rfc3339(text).err(),
            _ => mismatch("string"),
        },
        Ty::Bool => (!v.is_boolean()).then(|| mismatch("bool")).flatten(),
        Ty::Int64 => match v {
            Value::Number(n) if n.is_i64() => None,
            Value::Number(n) => Some(error(&format!("number {n}"), owner, path, "int64")),
            _ => mismatch("int64"),
        },
        Ty::MapStr => match v {
            Value::Object(map) => map
                .values()
                .find(|x| !x.is_string() && !x.is_null())
                .map(|x| error(json_kind(x), owner, path, "string")),
            _ => mismatch("map[string]string"),
        },
        Ty::SliceStr => match v {
            Value::Array(items) => items
                .iter()
                .find(|x| !x.is_string() && !x.is_null())
                .map(|x| error(json_kind(x), owner, path, "string")),
            _ => mismatch("[]string"),
        },
        Ty::Slice(s) => match v {
            Value::Array(items) => items.iter().find_map(|item| match item {
                Value::Object(_) | Value::Null => check_struct(item, s, path),
                _ => Some(error(json_kind(item), owner, path, s.go_type)),
            }),
            _ => Some(error(
                json_kind(v),
                owner,
                path,
                &format!("[]{}", s.go_type),
            )),
        },
        Ty::Struct(s) => match v {
            Value::Object(_) => check_struct(v, s, path),
            _ => mismatch(s.go_type),
        },
    }
}

fn check_struct(v: &Value, s: &Struct, path: &mut Vec<&'static str>) -> Option<String> {
    let map = v.as_object()?;
    // Go decodes the fields in document order and keeps the first error; serde_json's
    // map order is the key order, which is the order kubectl's JSON has (sorted).
    for (key, value) in map {
        let field = s.fields.iter().find(|(name, _)| name == key).or_else(|| {
            s.fields
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(key))
        });
        let Some(&(name, ty)) = field else { continue };
        path.push(name);
        let found = check_value(value, ty, s.go_name, path);
        path.pop();
        if found.is_some() {
            return found;
        }
    }
    None
}

/// `metav1.Time`'s `time.Parse(time.RFC3339, s)`, with Go's `ParseError` text on
/// failure. A port of the steps of Go's `time.parse` for this one layout.
fn parse_rfc3339(value: &str) -> Result<(), String> {
    const LAYOUT: &str = "2006-01-02T15:04:05Z07:00";
    let cannot = |rest: &str, elem: &str| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            go_time_quote(value),
            go_time_quote(LAYOUT),
            go_time_quote(rest),
            go_time_quote(elem)
        )
    };
    let message = |text: &str| format!("parsing time {}{text}", go_time_quote(value));
    let digit = |s: &str, i: usize| s.as_bytes().get(i).is_some_and(u8::is_ascii_digit);
    // Go's getnum: one or two digits (two when fixed).
    let getnum = |s: &str, fixed: bool| -> Option<(u32, usize)> {
        if !digit(s, 0) {
            return None;
        }
        let b = s.as_bytes();
        if !digit(s, 1) {
            return (!fixed).then(|| (u32::from(b[0] - b'0'), 1));
        }
        Some((u32::from(b[0] - b'0') * 10 + u32::from(b[1] - b'0'), 2))
    };
    let mut rest = value;
    // 2006
    if rest.len() < 4 || !rest.as_bytes()[..4].iter().all(u8::is_ascii_digit) {
        return Err(cannot(rest, "2006"));
    }
    let year: u32 = rest[..4].parse().unwrap_or(0);
    rest = &rest[4..];
    let mut fields = [0u32; 5];
    for (i, (prefix, elem, fixed, limit, name)) in [
        ("-", "01", true, 13, "month"),
        ("-", "02", true, 100, ""),
        ("T", "15", false, 24, "hour"),
        (":", "04", true, 60, "minute"),
        (":", "05", true, 60, "second"),
    ]
    .into_iter()
    .enumerate()
    {
        let Some(after) = rest.strip_prefix(prefix) else {
            return Err(cannot(rest, prefix));
        };
        rest = after;
        let Some((n, len)) = getnum(rest, fixed) else {
            return Err(cannot(rest, elem));
        };
        rest = &rest[len..];
        if n >= limit || (name == "month" && n == 0) {
            return Err(message(&format!(": {name} out of range")));
        }
        fields[i] = n;
    }
    // A fraction of a second the layout does not name is read anyway.
    if rest.len() >= 2 && matches!(rest.as_bytes()[0], b'.' | b',') && digit(rest, 1) {
        let n = 1 + rest[1..].bytes().take_while(u8::is_ascii_digit).count();
        rest = &rest[n..];
    }
    // Z07:00
    if let Some(after) = rest.strip_prefix('Z') {
        rest = after;
    } else {
        let b = rest.as_bytes();
        let ok = b.len() >= 6
            && b[3] == b':'
            && matches!(b[0], b'+' | b'-')
            && getnum(&rest[1..3], true).is_some()
            && getnum(&rest[4..6], true).is_some();
        if !ok {
            return Err(cannot(rest, "Z07:00"));
        }
        let (hours, minutes) = (
            getnum(&rest[1..3], true).map_or(0, |n| n.0),
            getnum(&rest[4..6], true).map_or(0, |n| n.0),
        );
        if hours > 24 {
            return Err(message(": time zone offset hour out of range"));
        }
        if minutes > 60 {
            return Err(message(": time zone offset minute out of range"));
        }
        rest = &rest[6..];
    }
    if !rest.is_empty() {
        return Err(message(&format!(": extra text: {}", go_time_quote(rest))));
    }
    let days = goyaml::days_in_month(year, fields[0]).unwrap_or(31);
    if fields[1] < 1 || fields[1] > days {
        return Err(message(": day out of range"));
    }
    Ok(())
}

/// The `quote` of Go's time package: bytes outside printable ASCII as `\xNN`.
fn go_time_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c.is_ascii() && c >= ' ' && c != '\u{7f}' {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_value_of_the_wrong_type() {
        let obj = json!({"kind": "ConfigMap", "metadata": {"name": "x", "labels": {"a": true}}});
        assert_eq!(
            check(&obj).as_deref(),
            Some(
                "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"
            )
        );
    }

    #[test]
    fn nested_structs_and_whole_values() {
        let obj = json!({"metadata": {"ownerReferences": [{"name": 5}]}});
        assert_eq!(
            check(&obj).as_deref(),
            Some(
                "json: cannot unmarshal number into Go struct field OwnerReference.metadata.ownerReferences.name of type string"
            )
        );
        let obj = json!({"metadata": {"labels": ["a"]}});
        assert_eq!(
            check(&obj).as_deref(),
            Some(
                "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string"
            )
        );
        let obj = json!({"metadata": {"generation": 1.5}});
        assert_eq!(
            check(&obj).as_deref(),
            Some(
                "json: cannot unmarshal number 1.5 into Go struct field ObjectMeta.metadata.generation of type int64"
            )
        );
        assert_eq!(
            check(&json!({"metadata": {"name": "x", "labels": null}})),
            None
        );
    }

    #[test]
    fn times_parse_as_go_parses_rfc3339() {
        let time = |t: &str| check(&json!({"metadata": {"creationTimestamp": t}}));
        assert_eq!(time("2020-01-01T00:00:00Z"), None);
        assert_eq!(time("2020-02-29T23:59:59.123+01:00"), None);
        assert_eq!(
            time("x").as_deref(),
            Some(
                "parsing time \"x\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"x\" as \"2006\""
            )
        );
        assert_eq!(
            time("2020-13-01T00:00:00Z").as_deref(),
            Some("parsing time \"2020-13-01T00:00:00Z\": month out of range")
        );
        assert_eq!(
            time("2020-01-01").as_deref(),
            Some(
                "parsing time \"2020-01-01\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"T\""
            )
        );
    }
}
