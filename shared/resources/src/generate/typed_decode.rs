//! kubectl's typed decode of an overridden object, as a walk of the built-in schema.
//!
//! kubectl decodes the object `--overrides` produced into its Go struct before using
//! it: fields the struct lacks are dropped, a value of the wrong type is refused.
//! run-pod did the same by decoding into k8s-openapi's model and encoding it back,
//! which linked every model's decoder and encoder into its binary (half a megabyte
//! with serde's code for them; docs/binary-size.md). The built-in schema
//! (`crate::builtin`) is generated from the same models, so walking the object along
//! it gives what the round trip gave, without them:
//!
//! - a property the schema does not know is dropped, at any depth; a `null` property
//!   is dropped (k8s-openapi's `Option` reads it as `None`);
//! - a property the model requires (a non-`Option` field) that is missing or `null` is
//!   written at its zero value (`name: ""`, `containers: []`), as the model's decode
//!   defaults it and its encode writes it;
//! - maps (`additionalProperties`) keep their keys; list items and map values are
//!   walked by their schema, a `null` one is its type's zero value, as kubectl's Go
//!   decoder leaves it (`args: [null]` is `[""]`, `nodeSelector: {a: null}` is
//!   `{a: ""}`, a `null` container one named `""`), where k8s-openapi refused it;
//! - a value of the wrong type is refused with serde's words, as the round trip said
//!   them (`invalid type: integer `3`, expected a string`), at the first bad field in
//!   key order. kubectl names the Go type there (`json: cannot unmarshal number into
//!   Go struct field PodSpec.spec.restartPolicy of type v1.RestartPolicy`); the
//!   schema does not carry Go's type names;
//! - the models' own encodings: a `Time` is written in whole seconds, UTC; a number
//!   given as a `Quantity` becomes its text; an `IntOrString` is a 32-bit integer or a
//!   string.

use serde_json::{Map, Number, Value};

use crate::builtin::definition;

const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
const FIELDS_V1: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1";

/// How deep zero values of required structs are built (the schema's models do not
/// require themselves; a hostile schema must not recurse forever).
const MAX_DEPTH: usize = 64;

/// Decodes `object` as the built-in schema's model `model` and encodes it back (see
/// the module); the error is serde's message.
pub(super) fn decode(model: &str, object: &Value) -> Result<Value, String> {
    Walk.model(model, object, 0)
}

/// The walk, along the built-in schema.
struct Walk;

impl Walk {
    /// A value of a named model: the types k8s-openapi encodes itself, or a struct.
    fn model(&self, name: &str, value: &Value, depth: usize) -> Result<Value, String> {
        match name {
            QUANTITY => quantity(value),
            INT_OR_STRING => int_or_string(value),
            TIME => time(value),
            // Raw JSON, kept as it is.
            FIELDS_V1 => Ok(value.clone()),
            _ => {
                let Some(definition) = definition(name) else {
                    return Ok(value.clone());
                };
                match definition.get("properties").and_then(Value::as_object) {
                    Some(properties) => {
                        let Value::Object(fields) = value else {
                            return Err(invalid_type(value, short_name(name)));
                        };
                        self.fields(definition, properties, fields, depth)
                    }
                    None => self.value(definition, value, depth),
                }
            }
        }
    }

    /// A struct's fields: known ones walked, unknown and `null` ones dropped, required
    /// ones present.
    fn fields(
        &self,
        definition: &Value,
        properties: &Map<String, Value>,
        fields: &Map<String, Value>,
        depth: usize,
    ) -> Result<Value, String> {
        let mut out = Map::new();
        // In key order, as the model's decoder reads the JSON text: the first bad
        // field is the one reported.
        for (key, value) in fields {
            if value.is_null() {
                continue;
            }
            if let Some(schema) = properties.get(key) {
                out.insert(key.clone(), self.value(schema, value, depth + 1)?);
            }
        }
        for key in required(definition) {
            if !out.contains_key(key)
                && let Some(schema) = properties.get(key)
            {
                out.insert(key.to_string(), self.zero(schema, depth + 1));
            }
        }
        Ok(Value::Object(out))
    }

    /// A value against a property's (or an item's) schema.
    fn value(&self, schema: &Value, value: &Value, depth: usize) -> Result<Value, String> {
        if let Some(name) = reference(schema) {
            return if depth > MAX_DEPTH {
                Ok(value.clone())
            } else {
                self.model(name, value, depth + 1)
            };
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => match value {
                Value::String(_) => Ok(value.clone()),
                _ => Err(invalid_type(value, "a string")),
            },
            Some("boolean") => match value {
                Value::Bool(_) => Ok(value.clone()),
                _ => Err(invalid_type(value, "a boolean")),
            },
            Some("integer") => integer(value, schema.get("format").and_then(Value::as_str)),
            Some("number") => match value {
                Value::Number(_) => Ok(value.clone()),
                _ => Err(invalid_type(value, "f64")),
            },
            Some("array") => {
                let Value::Array(items) = value else {
                    return Err(invalid_type(value, "a sequence"));
                };
                let Some(item) = schema.get("items") else {
                    return Ok(value.clone());
                };
                let items: Result<Vec<Value>, String> = items
                    .iter()
                    .map(|v| self.element(item, v, depth + 1))
                    .collect();
                Ok(Value::Array(items?))
            }
            Some("object") => {
                let Some(values) = schema.get("additionalProperties") else {
                    return Ok(value.clone());
                };
                let Value::Object(map) = value else {
                    return Err(invalid_type(value, "a map"));
                };
                let mut out = Map::new();
                for (key, v) in map {
                    out.insert(key.clone(), self.element(values, v, depth + 1)?);
                }
                Ok(Value::Object(out))
            }
            _ => Ok(value.clone()),
        }
    }

    /// A list item or a map value: `null` is the type's zero value, as Go's decoder
    /// leaves it (`[null]` of containers is one container named `""`; k8s-openapi
    /// refused it), anything else is walked.
    fn element(&self, schema: &Value, value: &Value, depth: usize) -> Result<Value, String> {
        if value.is_null() {
            Ok(self.zero(schema, depth))
        } else {
            self.value(schema, value, depth)
        }
    }

    /// The zero value the model's decoder gives a required field that is missing, and
    /// Go's decoder a `null` item.
    fn zero(&self, schema: &Value, depth: usize) -> Value {
        if let Some(name) = reference(schema) {
            return match name {
                // Go's zero Quantity; no model requires one.
                QUANTITY => Value::from("0"),
                INT_OR_STRING => Value::from(0),
                _ if depth > MAX_DEPTH => Value::Object(Map::new()),
                _ => self
                    .model(name, &Value::Object(Map::new()), depth + 1)
                    .unwrap_or(Value::Null),
            };
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => Value::from(""),
            Some("boolean") => Value::Bool(false),
            Some("integer") => Value::from(0),
            Some("number") => Value::from(0.0),
            Some("array") => Value::Array(Vec::new()),
            Some("object") => Value::Object(Map::new()),
            _ => Value::Null,
        }
    }
}

/// The required fields of a definition: its `required`, and a kind's `metadata`
/// (required in k8s-openapi's models, not in the API's document, whose form the
/// built-in schema keeps).
fn required(definition: &Value) -> impl Iterator<Item = &str> {
    let listed = definition
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    let kind = definition.get("x-kubernetes-group-version-kind").is_some();
    listed.chain(kind.then_some("metadata"))
}

/// The definition a `$ref` names.
fn reference(schema: &Value) -> Option<&str> {
    schema
        .get("$ref")
        .and_then(Value::as_str)?
        .strip_prefix("#/definitions/")
}

/// `io.k8s.api.core.v1.PodSpec` → `PodSpec`, the name k8s-openapi's decoder expects.
fn short_name(name: &str) -> &str {
    name.rsplit('.').next().unwrap_or(name)
}

/// An integer field: `int32` (`i32` in the model) or `int64`.
fn integer(value: &Value, format: Option<&str>) -> Result<Value, String> {
    let (min, max, expected) = match format {
        Some("int32") => (i64::from(i32::MIN), i64::from(i32::MAX), "i32"),
        _ => (i64::MIN, i64::MAX, "i64"),
    };
    let Value::Number(n) = value else {
        return Err(invalid_type(value, expected));
    };
    in_range(n, min, max, expected).map(|()| value.clone())
}

/// Whether `n` is an integer within `min..=max`, in serde's words when not.
fn in_range(n: &Number, min: i64, max: i64, expected: &str) -> Result<(), String> {
    let fits = if let Some(u) = n.as_u64() {
        i64::try_from(u).is_ok_and(|i| i <= max)
    } else if let Some(i) = n.as_i64() {
        i >= min
    } else {
        return Err(invalid_type(&Value::Number(n.clone()), expected));
    };
    if fits {
        Ok(())
    } else {
        Err(format!("invalid value: integer `{n}`, expected {expected}"))
    }
}

/// k8s-openapi's `Quantity`: its text, or a number's (`1` → `"1"`, `0.5` → `"0.5"`,
/// as Rust prints the number read).
fn quantity(value: &Value) -> Result<Value, String> {
    match value {
        Value::String(_) => Ok(value.clone()),
        Value::Number(n) => {
            let text = if let Some(u) = n.as_u64() {
                u.to_string()
            } else if let Some(i) = n.as_i64() {
                i.to_string()
            } else {
                n.as_f64().unwrap_or_default().to_string()
            };
            Ok(Value::String(text))
        }
        _ => Err(invalid_type(value, "Quantity")),
    }
}

/// k8s-openapi's `IntOrString`: a 32-bit integer or a string.
fn int_or_string(value: &Value) -> Result<Value, String> {
    match value {
        Value::String(_) => Ok(value.clone()),
        Value::Number(n) => {
            let in_range = in_range(
                n,
                i64::from(i32::MIN),
                i64::from(i32::MAX),
                "a 32-bit integer",
            );
            match in_range {
                Ok(()) => Ok(value.clone()),
                // A float is no integer of another range: the type is wrong.
                Err(_) if n.is_f64() => Err(invalid_type(value, "IntOrString")),
                Err(e) => Err(e),
            }
        }
        _ => Err(invalid_type(value, "IntOrString")),
    }
}

/// k8s-openapi's `Time`: an RFC 3339 timestamp, written back in whole seconds, UTC.
fn time(value: &Value) -> Result<Value, String> {
    let Value::String(text) = value else {
        return Err(invalid_type(value, "a timestamp string"));
    };
    let at: jiff::Timestamp = text.parse().map_err(|e: jiff::Error| e.to_string())?;
    jiff::fmt::strtime::format("%Y-%m-%dT%H:%M:%SZ", at)
        .map(Value::String)
        .map_err(|e| e.to_string())
}

/// serde's `invalid type` error, as serde_json words it (`null` for a null).
fn invalid_type(value: &Value, expected: &str) -> String {
    let unexpected = match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("boolean `{b}`"),
        Value::Number(n) if n.is_f64() => {
            // serde's `Unexpected::Float` always shows a decimal point.
            let f = n.as_f64().unwrap_or_default();
            let mut text = f.to_string();
            if f.is_finite() && !text.contains('.') {
                text.push_str(".0");
            }
            format!("floating point `{text}`")
        }
        Value::Number(n) => format!("integer `{n}`"),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "sequence".to_string(),
        Value::Object(_) => "map".to_string(),
    };
    format!("invalid type: {unexpected}, expected {expected}")
}

#[cfg(test)]
mod tests;
