//! Values as Go's `text/template` sees an object that kubectl decoded into
//! `map[string]interface{}` with apimachinery's JSON decoder: whole numbers are
//! `int64` and other numbers `float64` (so `1000000` stays `1000000`, and `1e+21`),
//! objects `map[string]interface {}`, arrays `[]interface {}`, `null` a nil
//! interface, and a missing map key an invalid `reflect.Value` (printed `<no value>`).
//!
//! Template literals and function results add Go's `int` (`len`, `1`, range
//! indexes), `uint8` (`index` of a string), `complex128` (`1+2i`) and strings that
//! need not be UTF-8 (`base64decode`, `slice` of a string, `"\xff"`), so strings are
//! bytes here.
//!
//! Go also tells apart a value read out of a map or slice, whose static type is
//! `interface {}`, from the same value after a pipeline ends: that is what makes
//! `{{.metadata.name.x}}` fail with "can't evaluate field x in type interface {}"
//! while `{{$n := .metadata.name}}{{$n.x}}` says "in type string". [`Val::boxed`]
//! records it.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// The dynamic value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Kind<'d> {
    /// An invalid `reflect.Value`: a missing key, no data, an untyped `nil`.
    Invalid,
    /// `interface {}(nil)`: JSON `null` inside an object or array.
    Nil,
    Bool(bool),
    /// Go's `int`.
    Int(i64),
    /// A whole number of the object.
    Int64(i64),
    Uint8(u8),
    Float(f64),
    Complex(f64, f64),
    Str(Cow<'d, [u8]>),
    Map(&'d Map<String, Value>),
    List(&'d [Value]),
}

/// A value and whether its static type is `interface {}`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Val<'d> {
    pub kind: Kind<'d>,
    pub boxed: bool,
}

impl<'d> Val<'d> {
    pub const INVALID: Val<'static> = Val {
        kind: Kind::Invalid,
        boxed: false,
    };

    pub fn new(kind: Kind<'d>) -> Self {
        Val { kind, boxed: false }
    }

    pub fn str(s: impl Into<Cow<'d, [u8]>>) -> Self {
        Val::new(Kind::Str(s.into()))
    }

    /// An element of a decoded object: `interface {}` holding the JSON value.
    pub fn element(v: &'d Value) -> Self {
        Val {
            kind: kind_of(v),
            boxed: true,
        }
    }

    /// The object kubectl hands to the template: a `map[string]interface {}` (any
    /// other JSON value as Go would hold it, for completeness).
    pub fn root(v: &'d Value) -> Self {
        Val::new(kind_of(v)).unboxed()
    }

    /// What a pipeline does to its result (`reflect.ValueOf(v.Interface())`): drop
    /// the `interface {}`, so a nil interface becomes invalid.
    pub fn unboxed(self) -> Self {
        match self.kind {
            Kind::Nil => Val::new(Kind::Invalid),
            kind => Val::new(kind),
        }
    }

    pub fn is_valid(&self) -> bool {
        !matches!(self.kind, Kind::Invalid)
    }

    /// `reflect.Type.String()` of the static type.
    pub fn type_name(&self) -> &'static str {
        if self.boxed {
            "interface {}"
        } else {
            self.kind.type_name()
        }
    }
}

impl Kind<'_> {
    /// `reflect.Type.String()` of the dynamic type.
    pub fn type_name(&self) -> &'static str {
        match self {
            Kind::Invalid => "<nil>",
            Kind::Nil => "interface {}",
            Kind::Bool(_) => "bool",
            Kind::Int(_) => "int",
            Kind::Int64(_) => "int64",
            Kind::Uint8(_) => "uint8",
            Kind::Float(_) => "float64",
            Kind::Complex(..) => "complex128",
            Kind::Str(_) => "string",
            Kind::Map(_) => "map[string]interface {}",
            Kind::List(_) => "[]interface {}",
        }
    }

    /// Go's `isTrue` for a value that is not an interface: the zero value of its type
    /// (and invalid) is false.
    pub fn truth(&self) -> bool {
        match self {
            Kind::Invalid | Kind::Nil => false,
            Kind::Bool(b) => *b,
            Kind::Int(i) | Kind::Int64(i) => *i != 0,
            Kind::Uint8(u) => *u != 0,
            Kind::Float(f) => *f != 0.0,
            Kind::Complex(re, im) => *re != 0.0 || *im != 0.0,
            Kind::Str(s) => !s.is_empty(),
            Kind::Map(m) => !m.is_empty(),
            Kind::List(l) => !l.is_empty(),
        }
    }
}

fn kind_of(v: &Value) -> Kind<'_> {
    match v {
        Value::Null => Kind::Nil,
        Value::Bool(b) => Kind::Bool(*b),
        Value::Number(n) => number(n),
        Value::String(s) => Kind::Str(Cow::Borrowed(s.as_bytes())),
        Value::Array(items) => Kind::List(items),
        Value::Object(map) => Kind::Map(map),
    }
}

/// A number as kubectl's template sees it: kubectl marshals the object to JSON (a
/// whole `float64` below 1e21 is written without a decimal point) and decodes it with
/// apimachinery's decoder, which makes every number that parses as an `int64` one.
fn number(n: &serde_json::Number) -> Kind<'static> {
    if let Some(i) = n.as_i64() {
        return Kind::Int64(i);
    }
    let f = n.as_f64().unwrap_or(0.0);
    // -2^63 <= f < 2^63, whole: JSON writes it as an integer that fits an int64.
    if f.fract() == 0.0 && (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f)
    {
        return Kind::Int64(f as i64);
    }
    Kind::Float(f)
}
