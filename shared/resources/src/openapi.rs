//! Validation against what the server publishes, as kubectl 1.32 does it.
//!
//! kubectl sends `fieldValidation=Strict|Warn|Ignore` with every create and decides per
//! kind whether the server honours it (`resource.QueryParamVerifier`: the POST of the
//! kind in the server's OpenAPI document declares the query parameter; for a kind the
//! document lacks, the Namespace's POST decides). Where it does, the server validates
//! and nothing is checked here. Where it does not (servers before 1.25, such as the
//! 1.20 test server), `strict` validates on the client against the server's OpenAPI v2
//! document (`/openapi/v2`, [`fetch`]) with kube-openapi's `ValidateModel`, ported in
//! [`OpenApiV2::validate`]: every problem of a document, in kubectl's words
//! (`ValidationError(Pod.spec): unknown field "x" in io.k8s.api.core.v1.PodSpec`); a
//! kind the document does not describe is not validated (it is then mapped, and an
//! unknown kind gets the mapping error). `warn` only logs klog's warning that it cannot
//! warn, and `ignore` checks nothing.
//!
//! kubectl 1.37 asks `/openapi/v3` ([`v3`]) whether a kind's endpoint takes the
//! parameter and downloads the v2 document only for what it validates on the client;
//! a server without v3 (1.20 has none) is asked through the v2 document. The two
//! together are [`Published`].

pub mod fetch;
pub mod v3;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{Map, Value};

/// The server's OpenAPI v2 document, indexed for validation (the default: an empty
/// one, which knows no kind).
#[derive(Debug, Default)]
pub struct OpenApiV2 {
    definitions: Map<String, Value>,
    /// `x-kubernetes-group-version-kind` → definition name.
    models: HashMap<Gvk, String>,
    /// Per kind with a POST: whether it declares `fieldValidation`.
    field_validation: HashMap<Gvk, bool>,
}

/// Group, version and kind.
pub type Gvk = (String, String, String);

/// kubectl's verifiers, v2's and v3's alike: a `v1` `List` never takes
/// `fieldValidation` (it is never sent as one: its items are, each asked about as
/// itself), so its answer needs no document.
pub fn is_v1_list(group: &str, version: &str, kind: &str) -> bool {
    group.is_empty() && version == "v1" && kind == "List"
}

/// What the server publishes for validation: which kinds it validates itself (v3's
/// answers, or the v2 document's on a server without v3), and the v2 document for
/// what is validated on the client (fetched only when something is, or why it could
/// not be).
#[derive(Debug)]
pub struct Published {
    field_validation: Option<v3::FieldValidation>,
    document: Option<Result<Arc<OpenApiV2>, String>>,
}

impl Published {
    /// Everything from the v2 document (a server without `/openapi/v3`, or a caller
    /// that validates on the client whatever the server supports).
    pub fn v2(document: Arc<OpenApiV2>) -> Self {
        Self {
            field_validation: None,
            document: Some(Ok(document)),
        }
    }

    /// v3's answers, with the v2 document when something is validated on the client.
    pub fn v3(
        field_validation: v3::FieldValidation,
        document: Option<Result<Arc<OpenApiV2>, String>>,
    ) -> Self {
        Self {
            field_validation: Some(field_validation),
            document,
        }
    }

    /// kubectl's `HasSupport` for `fieldValidation` (see [`v3`] and
    /// [`OpenApiV2::supports_field_validation`]).
    pub fn supports_field_validation(&self, gvk: &Gvk) -> bool {
        match (&self.field_validation, &self.document) {
            (Some(fv), _) => fv.supports(gvk),
            (None, Some(Ok(doc))) => doc.supports_field_validation(&gvk.0, &gvk.1, &gvk.2),
            (None, _) => false,
        }
    }

    /// The v2 document for client-side validation, or why there is none.
    pub fn document(&self) -> Result<&OpenApiV2, String> {
        match &self.document {
            Some(Ok(doc)) => Ok(doc),
            Some(Err(reason)) => Err(reason.clone()),
            // Not fetched: the kinds asked about did not need it. Reaching here means
            // a kind was validated that the fetch was not told about.
            None => Err("the OpenAPI v2 document was not fetched".to_string()),
        }
    }
}

/// Recursion bound for references that lead to references (never seen in a real
/// document; a hostile one must not overflow the stack).
const MAX_REF_CHAIN: usize = 64;

impl OpenApiV2 {
    /// Reads the document (`/openapi/v2` as JSON).
    pub fn from_json(bytes: &[u8]) -> Result<Self, serde_json::Error> {
        let mut doc: Value = serde_json::from_slice(bytes)?;
        let definitions = match doc.get_mut("definitions").map(Value::take) {
            Some(Value::Object(defs)) => defs,
            _ => Map::new(),
        };
        let mut models = HashMap::new();
        for (name, schema) in &definitions {
            for gvk in gvks(schema) {
                models.entry(gvk).or_insert_with(|| name.clone());
            }
        }
        // kubectl's supportsQueryParam takes the first path whose POST names the kind.
        let mut field_validation = HashMap::new();
        if let Some(Value::Object(paths)) = doc.get("paths") {
            for item in paths.values() {
                let Some(post) = item.get("post") else {
                    continue;
                };
                let declares = post
                    .get("parameters")
                    .and_then(Value::as_array)
                    .is_some_and(|params| {
                        params.iter().any(|p| {
                            p.get("in").and_then(Value::as_str) == Some("query")
                                && p.get("name").and_then(Value::as_str) == Some("fieldValidation")
                        })
                    });
                for gvk in gvks(post) {
                    field_validation.entry(gvk).or_insert(declares);
                }
            }
        }
        Ok(Self {
            definitions,
            models,
            field_validation,
        })
    }

    /// The definition of a model (`io.k8s.api.core.v1.Pod`).
    pub(crate) fn definition(&self, name: &str) -> Option<&Value> {
        self.definitions.get(name)
    }

    /// The name of the definition of a kind, if the document describes it.
    pub(crate) fn model(&self, group: &str, version: &str, kind: &str) -> Option<&str> {
        self.models
            .get(&(group.to_string(), version.to_string(), kind.to_string()))
            .map(String::as_str)
    }

    /// kubectl's `QueryParamVerifier.HasSupport` for `fieldValidation`: a `List` never;
    /// a kind with a POST in the document as that POST says; another kind of a
    /// group-version the document has (a typed list such as `ConfigMapList`) never, as
    /// kubectl 1.37's verifier finds no operation for it in the group-version's
    /// document; a kind of a group-version the document lacks (a custom resource the
    /// document does not know yet) as the Namespace's POST says.
    pub fn supports_field_validation(&self, group: &str, version: &str, kind: &str) -> bool {
        if is_v1_list(group, version, kind) {
            return false;
        }
        let key = (group.to_string(), version.to_string(), kind.to_string());
        match self.field_validation.get(&key) {
            Some(supported) => *supported,
            None if self
                .field_validation
                .keys()
                .any(|(g, v, _)| g == group && v == version) =>
            {
                false
            }
            None => self
                .field_validation
                .get(&(String::new(), "v1".into(), "Namespace".into()))
                .copied()
                .unwrap_or(false),
        }
    }

    /// kubectl's client-side `schemaValidation.ValidateBytes` for one object: its
    /// problems in kubectl's words and order (empty when it is valid or its kind is
    /// not in the document).
    pub fn validate(&self, object: &Value) -> Vec<String> {
        let (group, version, kind) = match object_kind(object) {
            Ok(gvk) => gvk,
            Err(errs) => return errs,
        };
        let Some(model) = self.models.get(&(group, version, kind.clone())) else {
            // kubectl: "resource is not present, let's just skip validation".
            return Vec::new();
        };
        let mut errs = Vec::new();
        let schema = Value::Object(
            [(
                "$ref".to_string(),
                Value::String(format!("#/definitions/{model}")),
            )]
            .into_iter()
            .collect(),
        );
        self.visit(object, &kind, &schema, &kind, 0, &mut errs);
        errs
    }

    /// One value against one schema (kube-openapi's item visitors). `path` is the
    /// value's path (`Pod.spec.containers[0]`), `schema_path` the schema's
    /// (`io.k8s.api.core.v1.Container`).
    fn visit(
        &self,
        value: &Value,
        path: &str,
        schema: &Value,
        schema_path: &str,
        refs: usize,
        errs: &mut Vec<String>,
    ) {
        match shape(schema) {
            Shape::Ref(name) => {
                if refs >= MAX_REF_CHAIN {
                    return;
                }
                // A reference to a model the document lacks: kubectl could not load
                // the document at all; nothing can be checked against it here.
                if let Some(model) = self.definitions.get(name) {
                    self.visit(value, path, model, name, refs + 1, errs);
                }
            }
            Shape::Arbitrary => {}
            Shape::Primitive(expected) => {
                check_primitive(value, expected, path, schema_path, errs);
            }
            Shape::Array(items) => match value {
                Value::Array(values) => {
                    self.visit_items(values, items, path, schema_path, refs, errs);
                }
                Value::Object(_) => invalid_type(errs, path, schema_path, "map", "array"),
                other => invalid_type(errs, path, schema_path, primitive_kind(other), "array"),
            },
            Shape::Map(sub) => match value {
                Value::Object(fields) => {
                    self.visit_values(fields, sub, path, schema_path, refs, errs);
                }
                Value::Array(_) => invalid_type(errs, path, schema_path, "array", "map"),
                other => invalid_type(errs, path, schema_path, primitive_kind(other), "map"),
            },
            Shape::Kind {
                properties,
                required,
            } => match value {
                Value::Object(fields) => {
                    self.visit_fields(fields, properties, path, schema_path, refs, errs);
                    missing_required(fields, &required, path, schema_path, errs);
                }
                Value::Array(_) => invalid_type(errs, path, schema_path, "array", "map"),
                other => invalid_type(errs, path, schema_path, primitive_kind(other), "map"),
            },
        }
    }

    /// An array's items against its `items` schema (none: anything); a null item is
    /// an error.
    fn visit_items(
        &self,
        values: &[Value],
        items: Option<&Value>,
        path: &str,
        schema_path: &str,
        refs: usize,
        errs: &mut Vec<String>,
    ) {
        for (i, v) in values.iter().enumerate() {
            let item_path = format!("{path}[{i}]");
            if v.is_null() {
                errs.push(format!(
                    "ValidationError({item_path}): unknown object type \"nil\" in {item_path}"
                ));
                continue;
            }
            if let Some(items) = items {
                self.visit(v, &item_path, items, schema_path, refs, errs);
            }
        }
    }

    /// A map's values against its `additionalProperties` (none: anything); a null
    /// value is an error.
    fn visit_values(
        &self,
        fields: &Map<String, Value>,
        sub: Option<&Value>,
        path: &str,
        schema_path: &str,
        refs: usize,
        errs: &mut Vec<String>,
    ) {
        for key in sorted_keys(fields) {
            let field_path = format!("{path}.{key}");
            if fields[key].is_null() {
                // itemFactory's error, added without the ValidationError.
                errs.push(format!("unknown object type \"nil\" in {field_path}"));
                continue;
            }
            if let Some(sub) = sub {
                self.visit(&fields[key], &field_path, sub, schema_path, refs, errs);
            }
        }
    }

    /// A kind's fields against its `properties`: a field it lacks is unknown, a null
    /// field is skipped.
    fn visit_fields(
        &self,
        fields: &Map<String, Value>,
        properties: &Map<String, Value>,
        path: &str,
        schema_path: &str,
        refs: usize,
        errs: &mut Vec<String>,
    ) {
        for key in sorted_keys(fields) {
            if fields[key].is_null() {
                continue;
            }
            let Some(field_schema) = properties.get(key) else {
                errs.push(format!(
                    "ValidationError({path}): unknown field {} in {schema_path}",
                    quote(key)
                ));
                continue;
            };
            self.visit(
                &fields[key],
                &format!("{path}.{key}"),
                field_schema,
                &format!("{schema_path}.{key}"),
                refs,
                errs,
            );
        }
    }
}

/// A kind's `required` fields that are missing or null.
fn missing_required(
    fields: &Map<String, Value>,
    required: &[&str],
    path: &str,
    schema_path: &str,
    errs: &mut Vec<String>,
) {
    for field in required {
        if fields.get(*field).is_none_or(Value::is_null) {
            errs.push(format!(
                "ValidationError({path}): missing required field {} in {schema_path}",
                quote(field)
            ));
        }
    }
}

/// A scalar against a primitive schema (`boolean`, `integer`, `number`, `string`).
fn check_primitive(
    value: &Value,
    expected: &str,
    path: &str,
    schema_path: &str,
    errs: &mut Vec<String>,
) {
    match value {
        Value::Object(_) => invalid_type(errs, path, schema_path, "map", expected),
        Value::Array(_) => invalid_type(errs, path, schema_path, "array", expected),
        // Go's `TODO(wrong): this misses "null"`: a null never reaches here
        // (fields that are null are skipped, items that are null are errors).
        Value::Null => {}
        other => {
            let got = primitive_kind(other);
            let compatible = match expected {
                "boolean" => got == "boolean",
                "integer" | "number" => got == "number",
                "string" => true,
                _ => false,
            };
            if !compatible {
                invalid_type(errs, path, schema_path, got, expected);
            }
        }
    }
}

/// kube-openapi's `InvalidTypeError`.
fn invalid_type(errs: &mut Vec<String>, path: &str, schema_path: &str, got: &str, expected: &str) {
    errs.push(format!(
        "ValidationError({path}): invalid type for {schema_path}: got {}, expected {}",
        quote(got),
        quote(expected)
    ));
}

/// What kube-openapi's `ParseSchema` makes of a schema.
enum Shape<'a> {
    /// `$ref` to a definition.
    Ref(&'a str),
    /// An object with `properties`.
    Kind {
        properties: &'a Map<String, Value>,
        required: Vec<&'a str>,
    },
    /// An object without properties: `additionalProperties` (none: anything).
    Map(Option<&'a Value>),
    /// `items` (none or several: anything).
    Array(Option<&'a Value>),
    /// `string`, `integer`, `number`, `boolean` (or any other single type name).
    Primitive(&'a str),
    /// No type and no properties, or several types: anything goes.
    Arbitrary,
}

fn shape(schema: &Value) -> Shape<'_> {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        return match reference.strip_prefix("#/definitions/") {
            Some(name) => Shape::Ref(name),
            None => Shape::Arbitrary,
        };
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    let kind = |properties| Shape::Kind {
        properties,
        required: required(schema),
    };
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    match types.as_slice() {
        [] => properties.map_or(Shape::Arbitrary, kind),
        ["object"] => match properties {
            Some(properties) => kind(properties),
            // gnostic reads a boolean `additionalProperties` as no schema.
            None => Shape::Map(schema.get("additionalProperties").filter(|a| a.is_object())),
        },
        ["array"] => Shape::Array(schema.get("items").filter(|i| i.is_object())),
        [primitive] => Shape::Primitive(primitive),
        _ => Shape::Arbitrary,
    }
}

fn required(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The kinds a definition or an operation is for (`x-kubernetes-group-version-kind`,
/// one or a list).
fn gvks(node: &Value) -> Vec<Gvk> {
    let one = |v: &Value| -> Option<Gvk> {
        Some((
            v.get("group")?.as_str()?.to_string(),
            v.get("version")?.as_str()?.to_string(),
            v.get("kind")?.as_str()?.to_string(),
        ))
    };
    match node.get("x-kubernetes-group-version-kind") {
        Some(Value::Array(list)) => list.iter().filter_map(one).collect(),
        Some(v @ Value::Object(_)) => one(v).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// kubectl's `getObjectKind`: the kind of an object, or every reason it has none.
pub fn object_kind(object: &Value) -> Result<Gvk, Vec<String>> {
    let Some(fields) = object.as_object() else {
        return Err(vec!["invalid object to validate".into()]);
    };
    let mut errs = Vec::new();
    let (mut group, mut version) = (String::new(), String::new());
    match fields.get("apiVersion") {
        None | Some(Value::Null) => errs.push("apiVersion not set".to_string()),
        Some(Value::String(gv)) => match gv.matches('/').count() {
            0 => version = gv.clone(),
            1 => {
                let (g, v) = gv.split_once('/').unwrap_or_default();
                (group, version) = (g.to_string(), v.to_string());
            }
            _ => errs.push(format!("unexpected GroupVersion string: {gv}")),
        },
        Some(_) => errs.push("apiVersion isn't string type".to_string()),
    }
    let kind = match fields.get("kind") {
        None | Some(Value::Null) => {
            errs.push("kind not set".to_string());
            String::new()
        }
        Some(Value::String(k)) => k.clone(),
        Some(_) => {
            errs.push("kind isn't string type".to_string());
            String::new()
        }
    };
    if errs.is_empty() {
        Ok((group, version, kind))
    } else {
        Err(errs)
    }
}

/// Go's `sort.Strings` order (bytes).
fn sorted_keys(fields: &Map<String, Value>) -> Vec<&String> {
    let mut keys: Vec<&String> = fields.keys().collect();
    keys.sort();
    keys
}

/// kube-openapi's item kind of a JSON scalar (Go decodes every number as `float64`).
fn primitive_kind(value: &Value) -> &'static str {
    match value {
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "map",
        Value::Null => "nil",
    }
}

fn quote(s: &str) -> String {
    gotext::go_fmt::quote(s)
}

/// Go's `utilerrors.NewAggregate(errs).Error()`: one message as it is, several
/// (repeats dropped) as `[a, b]`.
pub fn aggregate(errs: &[String]) -> String {
    let mut seen = std::collections::HashSet::new();
    let unique: Vec<&String> = errs.iter().filter(|e| seen.insert(e.as_str())).collect();
    match unique.as_slice() {
        [one] => (*one).clone(),
        many => {
            let mut out = String::from("[");
            for (i, e) in many.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{e}");
            }
            out.push(']');
            out
        }
    }
}

#[cfg(test)]
mod tests;
