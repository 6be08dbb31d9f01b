//! Reading a model's fields out of a `serde_json::Value` with k8s-openapi's words.
//!
//! k8s-openapi's decoders read every field as optional (`null` or absent is `None`,
//! a required field then defaults), visit an object's entries in order (serde_json's
//! map is sorted by key), skip the fields they do not know, and fail at the first
//! value of the wrong type: `invalid type: string "3", expected i32` for a scalar,
//! `invalid type: sequence, expected DeploymentStatus` for a struct (a model's
//! visitor names the type it reads), `invalid value: string "apps/v1beta2", expected
//! apps/v1` for a resource's `apiVersion` or `kind`. The readers here do the same for
//! the fields this crate reads; the errors are serde_json's own, built the way its
//! deserializer builds them.

use serde::de::{DeserializeOwned, Error as _, Unexpected};
use serde_json::{Error, Value};

/// A model read field by field: the fields it keeps, each decoded when its key comes.
pub(crate) trait Fields: Default {
    /// Reads `value` into the field `key` names, if it is one kept here.
    fn field(&mut self, key: &str, value: &Value) -> Result<(), Error>;
}

/// A scalar, a map or a k8s-openapi type of its own (`Time`), as serde reads it.
pub(crate) fn scalar<T: DeserializeOwned>(value: &Value) -> Result<T, Error> {
    T::deserialize(value)
}

/// An optional struct named `name` in errors: `null` is `None`.
pub(crate) fn object<T: Fields>(value: &Value, name: &str) -> Result<Option<T>, Error> {
    match value {
        Value::Null => Ok(None),
        value => item(value, name).map(Some),
    }
}

/// A struct that must be there (an element of a list).
pub(crate) fn item<T: Fields>(value: &Value, name: &str) -> Result<T, Error> {
    let Value::Object(map) = value else {
        return Err(Error::invalid_type(unexpected(value), &name));
    };
    let mut out = T::default();
    for (key, value) in map {
        out.field(key, value)?;
    }
    Ok(out)
}

/// An optional list of structs named `name`.
pub(crate) fn list<T: Fields>(value: &Value, name: &str) -> Result<Option<Vec<T>>, Error> {
    match value {
        Value::Null => Ok(None),
        Value::Array(items) => items
            .iter()
            .map(|v| item(v, name))
            .collect::<Result<_, _>>()
            .map(Some),
        // serde's visitor of a `Vec`.
        value => Err(Error::invalid_type(unexpected(value), &"a sequence")),
    }
}

/// A resource: a model whose `apiVersion` and `kind`, when given, must be its own
/// (`kind` also names the type in errors).
pub(crate) fn resource<T: Fields>(
    value: &Value,
    api_version: &str,
    kind: &str,
) -> Result<T, Error> {
    let Value::Object(map) = value else {
        return Err(Error::invalid_type(unexpected(value), &kind));
    };
    let mut out = T::default();
    for (key, value) in map {
        match key.as_str() {
            "apiVersion" => expect(value, api_version)?,
            "kind" => expect(value, kind)?,
            key => out.field(key, value)?,
        }
    }
    Ok(out)
}

fn expect(value: &Value, want: &str) -> Result<(), Error> {
    let got: String = scalar(value)?;
    if got == want {
        Ok(())
    } else {
        Err(Error::invalid_value(Unexpected::Str(&got), &want))
    }
}

/// What serde_json's `Value` reports it holds when it is not what was asked for.
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => Unexpected::Unsigned(u),
            (None, Some(i)) => Unexpected::Signed(i),
            (None, None) => Unexpected::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}
