//! Objects as kubectl prints the ones it holds typed: Go's `encoding/json` over the
//! k8s.io/api structs (the current release's, v0.37), not over a map.
//!
//! kubectl holds what `run` generates, and the server's answer to it, in its typed
//! structs (`corev1.Pod`), so its `-o json` and `--save-config` write the fields in
//! the structs' declaration order (`kind`, `apiVersion`, `metadata` with `name`,
//! `namespace`, `uid`, …), drop an `omitempty` field at its zero value (`value: ""` of
//! an env var, an empty `annotations`) and an `omitzero` one at its zero value (a zero
//! `creationTimestamp`, since 1.34; [`Structs::BeforeOmitzero`] writes it `null`, as
//! kubectl 1.17 did), write zero values of the fields without them
//! (`resources: {}`), and drop every field the struct does
//! not have (a newer server's). Objects read from files stay unstructured in kubectl
//! (`create -f`): maps, keys sorted, as [`super::go_fmt::json`] writes them.
//!
//! [`Typed`] is that encoding of a JSON value whose `apiVersion` and `kind` name one of
//! the types of the generated table (`table.rs`, written by `shared/cli/gojson-gen`
//! through Go's reflection over the same structs; see CONTRIBUTING.md, "Generated
//! files"): [`Typed::to_json`] in Go's order, [`Typed::to_value`] as a JSON value with
//! the same content, for the printers that sort keys anyway (YAML: sigs.k8s.io/yaml
//! converts through a map) or read it (templates). No crate carries Go's field order:
//! k8s-openapi's models serialise their fields alphabetically.
//!
//! ```
//! use cli::printers::gojson::{Structs, Typed};
//! let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
//!     "spec": {"containers": [{"name": "web", "image": "nginx", "env": [{"name": "C", "value": ""}]}]}});
//! let typed = Typed::of(&pod, Structs::Current).expect("a Pod is typed");
//! assert_eq!(
//!     typed.to_json(None),
//!     r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web"},"spec":{"containers":[{"name":"web","image":"nginx","env":[{"name":"C"}],"resources":{}}]},"status":{}}"#
//! );
//! ```

mod table;

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::go_fmt;

/// A field's Go type, as `encoding/json` treats it.
#[derive(Debug)]
pub(crate) enum Ty {
    /// A string (or a string type such as `types.UID`, `metav1.Duration`).
    Str,
    /// Any integer type.
    Int,
    /// `bool`.
    Bool,
    /// `metav1.Time`, `MicroTime`: a struct encoding itself, `null` when zero.
    Time,
    /// `resource.Quantity`: a struct encoding itself, `"0"` when zero.
    Quantity,
    /// `intstr.IntOrString`: a struct encoding itself, `0` when zero.
    IntOrString,
    /// `metav1.FieldsV1`, `runtime.RawExtension`: raw JSON, `null` when empty.
    Raw,
    /// A struct of the table, by index.
    Struct(u16),
    /// A pointer: `null` when nil, never omitted when set.
    Ptr(&'static Ty),
    /// A slice: `null` when nil.
    Slice(&'static Ty),
    /// A map with string keys (written sorted): `null` when nil.
    Map(&'static Ty),
}

/// One JSON field of a struct.
#[derive(Debug)]
pub(crate) struct Field {
    name: &'static str,
    omitempty: bool,
    /// Go 1.24's `omitzero` (`metadata.creationTimestamp` since k8s.io/apimachinery
    /// 0.34): dropped at the type's zero value, structs included.
    omitzero: bool,
    ty: Ty,
}

impl Field {
    const fn new(name: &'static str, omitempty: bool, ty: Ty) -> Self {
        Self {
            name,
            omitempty,
            omitzero: false,
            ty,
        }
    }

    const fn omitzero(name: &'static str, omitempty: bool, ty: Ty) -> Self {
        Self {
            name,
            omitempty,
            omitzero: true,
            ty,
        }
    }
}

/// A value laid out as Go encodes its typed form.
#[derive(Debug, Clone, PartialEq)]
enum Node<'a> {
    /// Written as it is (scalars, the self-encoding types, values of an unexpected
    /// shape).
    Leaf(Cow<'a, Value>),
    /// A struct's fields in Go's order, or a map's keys sorted.
    Object(Vec<(Cow<'a, str>, Node<'a>)>),
    Array(Vec<Node<'a>>),
}

/// Which k8s.io/apimachinery the Go structs come from, for the one encoding rule that
/// changed under the plugins: since 0.34 (kubectl 1.34) `metadata.creationTimestamp`
/// is `omitzero`, so a zero one is left out; before (kubectl 1.17, whose output
/// rolling-update keeps), it is written as `null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Structs {
    /// The current release's (the table's own tags).
    #[default]
    Current,
    /// Before `omitzero`: every field written as `omitempty` alone says.
    BeforeOmitzero,
}

/// An object in the layout of its Go type; see the module.
#[derive(Debug, Clone, PartialEq)]
pub struct Typed<'a>(Node<'a>);

impl<'a> Typed<'a> {
    /// The typed layout of `obj`, or `None` when its `apiVersion` and `kind` are not
    /// a type of the table (kubectl would hold it unstructured).
    pub fn of(obj: &'a Value, structs: Structs) -> Option<Self> {
        let api_version = obj.get("apiVersion")?.as_str()?;
        let kind = obj.get("kind")?.as_str()?;
        // k8s.io/api no longer has `batch/v2alpha1`; its CronJob had the fields of
        // `batch/v1beta1`'s, in the same order (kubectl 1.17's run generated both).
        let api_version = match (api_version, kind) {
            ("batch/v2alpha1", "CronJob") => "batch/v1beta1",
            _ => api_version,
        };
        let (_, _, index) = table::ROOTS
            .iter()
            .find(|(v, k, _)| *v == api_version && *k == kind)?;
        Some(Self(encode_struct(*index, Some(obj), structs)))
    }

    /// `json.Marshal` (`indent` `None`) or `json.MarshalIndent(v, "", indent)` of the
    /// typed object.
    pub fn to_json(&self, indent: Option<&str>) -> String {
        let mut out = String::new();
        write(&self.0, indent, 0, &mut out);
        out
    }

    /// The same content as a JSON value (keys sorted, as every `Value` is).
    pub fn to_value(&self) -> Value {
        to_value(&self.0)
    }
}

/// `obj` as kubectl holds it when typed: [`Typed::to_value`] for a type of the table,
/// `obj` itself otherwise.
pub fn normalize(obj: &Value, structs: Structs) -> Value {
    Typed::of(obj, structs).map_or_else(|| obj.clone(), |t| t.to_value())
}

/// `json.Marshal(indent)` of `obj` as kubectl's typed object when the table knows its
/// type, else of the map (keys sorted).
pub fn json(obj: &Value, indent: Option<&str>, structs: Structs) -> String {
    match Typed::of(obj, structs) {
        Some(typed) => typed.to_json(indent),
        None => go_fmt::json(obj, indent),
    }
}

/// A present value that Go's decoder would leave at the zero value.
fn absent(value: Option<&Value>) -> Option<&Value> {
    value.filter(|v| !v.is_null())
}

/// Whether `value` is its type's zero value, for `omitzero`: absent (a nil pointer,
/// slice or map, a zero time), a zero scalar, or a struct of zero fields.
fn is_zero(ty: &Ty, value: Option<&Value>) -> bool {
    let Some(value) = absent(value) else {
        return true;
    };
    match ty {
        Ty::Struct(index) => value.as_object().is_some_and(|object| {
            let fields = table::STRUCTS
                .get(usize::from(*index))
                .copied()
                .unwrap_or_default();
            object.iter().all(|(key, v)| {
                fields
                    .iter()
                    .find(|f| f.name == key)
                    .is_none_or(|f| is_zero(&f.ty, Some(v)))
            })
        }),
        Ty::Str | Ty::Int | Ty::Bool => is_empty(ty, Some(value)),
        _ => false,
    }
}

/// `encoding/json`'s `isEmptyValue` for a field that is present.
fn is_empty(ty: &Ty, value: Option<&Value>) -> bool {
    let Some(value) = absent(value) else {
        // Nil pointers, slices and maps, and every zero scalar.
        return !matches!(
            ty,
            Ty::Struct(_) | Ty::Time | Ty::Quantity | Ty::IntOrString | Ty::Raw
        );
    };
    match ty {
        Ty::Str => value.as_str() == Some(""),
        Ty::Int => value.as_f64() == Some(0.0),
        Ty::Bool => value.as_bool() == Some(false),
        Ty::Slice(_) => value.as_array().is_some_and(Vec::is_empty),
        Ty::Map(_) => value.as_object().is_some_and(Map::is_empty),
        // omitempty never drops a struct, and a set pointer is not empty.
        Ty::Ptr(_) | Ty::Struct(_) | Ty::Time | Ty::Quantity | Ty::IntOrString | Ty::Raw => false,
    }
}

fn encode_struct(index: u16, value: Option<&Value>, structs: Structs) -> Node<'_> {
    let object = value.and_then(Value::as_object);
    let fields = table::STRUCTS
        .get(usize::from(index))
        .copied()
        .unwrap_or_default();
    let mut out = Vec::with_capacity(fields.len());
    for field in fields {
        let value = object.and_then(|o| o.get(field.name));
        if (field.omitempty && is_empty(&field.ty, value))
            || (field.omitzero && structs == Structs::Current && is_zero(&field.ty, value))
        {
            continue;
        }
        out.push((Cow::Borrowed(field.name), encode(&field.ty, value, structs)));
    }
    Node::Object(out)
}

/// The node of a field of type `ty` whose value is `value` (`None`: absent, so zero).
fn encode<'a>(ty: &Ty, value: Option<&'a Value>, structs: Structs) -> Node<'a> {
    let value = absent(value);
    let leaf = |v: &'a Value| Node::Leaf(Cow::Borrowed(v));
    let zero = |v: Value| Node::Leaf(Cow::Owned(v));
    match (ty, value) {
        (Ty::Struct(i), None) => encode_struct(*i, None, structs),
        (Ty::Struct(i), Some(v)) if v.is_object() => encode_struct(*i, Some(v), structs),
        (Ty::Ptr(inner), Some(v)) => encode(inner, Some(v), structs),
        (Ty::Slice(inner), Some(Value::Array(items))) => Node::Array(
            items
                .iter()
                .map(|item| encode(inner, Some(item), structs))
                .collect(),
        ),
        (Ty::Map(inner), Some(Value::Object(map))) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Node::Object(
                keys.into_iter()
                    .map(|k| {
                        (
                            Cow::Borrowed(k.as_str()),
                            encode(inner, map.get(k), structs),
                        )
                    })
                    .collect(),
            )
        }
        // A value of another shape than the type's: kubectl could not have decoded
        // it; it is shown as it is rather than lost.
        (_, Some(v)) => leaf(v),
        (Ty::Str, None) => zero(Value::from("")),
        (Ty::Int | Ty::IntOrString, None) => zero(Value::from(0)),
        (Ty::Bool, None) => zero(Value::Bool(false)),
        (Ty::Quantity, None) => zero(Value::from("0")),
        (Ty::Time | Ty::Raw | Ty::Ptr(_) | Ty::Slice(_) | Ty::Map(_), None) => zero(Value::Null),
    }
}

fn write(node: &Node<'_>, indent: Option<&str>, depth: usize, out: &mut String) {
    match node {
        Node::Leaf(value) => go_fmt::write_json(value, indent, depth, out),
        Node::Array(items) if items.is_empty() => out.push_str("[]"),
        Node::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_fmt::newline(indent, depth + 1, out);
                write(item, indent, depth + 1, out);
            }
            go_fmt::newline(indent, depth, out);
            out.push(']');
        }
        Node::Object(fields) if fields.is_empty() => out.push_str("{}"),
        Node::Object(fields) => {
            out.push('{');
            for (i, (key, value)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_fmt::newline(indent, depth + 1, out);
                go_fmt::json_string(key, out);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write(value, indent, depth + 1, out);
            }
            go_fmt::newline(indent, depth, out);
            out.push('}');
        }
    }
}

fn to_value(node: &Node<'_>) -> Value {
    match node {
        Node::Leaf(value) => value.clone().into_owned(),
        Node::Array(items) => Value::Array(items.iter().map(to_value).collect()),
        Node::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.to_string(), to_value(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests;
