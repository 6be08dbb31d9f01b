//! The parameters of the run generators, and the parsers for the strings users type
//! into `--labels`, `--env`, `--annotations`, `--port`, `--requests`/`--limits`.
//!
//! Parameters stay close to the flags (strings where the flag is a string) so that
//! every generator reports a bad value with kubectl's message, at generation time,
//! exactly as kubectl's generators do.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::Error;
use super::quantity::canonical_quantity;

/// Everything `kubectl run` can put into the object it generates.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunParams {
    /// Object and container name (`NAME`).
    pub name: String,
    /// `--image`, already validated by the command.
    pub image: String,
    /// `-l/--labels` (`a=b,c=d`); empty means `run=NAME`.
    pub labels: String,
    /// `--annotations` (repeatable `key=value`).
    pub annotations: Vec<String>,
    /// `--env` (repeatable `NAME=value`).
    pub env: Vec<String>,
    /// `--port`; empty means no container port.
    pub port: String,
    /// `--hostport`; negative means none.
    pub host_port: i32,
    /// `--image-pull-policy`; empty leaves the server default.
    pub image_pull_policy: String,
    /// `--requests` (`cpu=100m,memory=256Mi`).
    pub requests: String,
    /// `--limits`.
    pub limits: String,
    /// `--serviceaccount`.
    pub service_account: String,
    /// `--privileged`.
    pub privileged: bool,
    /// `-i/--stdin`.
    pub stdin: bool,
    /// `--leave-stdin-open` (otherwise `stdinOnce` is set with `-i`).
    pub leave_stdin_open: bool,
    /// `-t/--tty`.
    pub tty: bool,
    /// `--restart`, validated by the command; empty means the generator's default.
    pub restart: String,
    /// `--command`: put the trailing arguments in `command` rather than `args`.
    pub command: bool,
    /// The arguments after `NAME` (after `--`).
    pub args: Vec<String>,
    /// `-r/--replicas` (deployment only).
    pub replicas: i32,
    /// `--schedule` (cron jobs only).
    pub schedule: String,
}

impl RunParams {
    /// Parameters for a pod `name` running `image`, every other field at its default.
    pub fn new(name: impl Into<String>, image: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            image: image.into(),
            host_port: -1,
            replicas: 1,
            ..Default::default()
        }
    }

    /// `--labels`, or `run=NAME` when empty.
    pub fn labels(&self) -> Result<BTreeMap<String, String>, Error> {
        if self.labels.is_empty() {
            return Ok(BTreeMap::from([("run".to_string(), self.name.clone())]));
        }
        parse_labels(&self.labels)
    }

    /// `--annotations`; `None` when there are none, so that the field is omitted.
    pub fn annotations(&self) -> Result<Option<BTreeMap<String, String>>, Error> {
        let pairs = parse_pairs(&self.annotations, "annotations")?;
        Ok((!pairs.is_empty()).then_some(pairs))
    }

    /// `--env`; `None` when there are none.
    pub fn env(&self) -> Result<Option<Vec<Value>>, Error> {
        let env = parse_env(&self.env)?;
        Ok((!env.is_empty()).then_some(env))
    }

    /// `--port` as a number, `None` when not given.
    pub fn port(&self) -> Result<Option<i32>, Error> {
        if self.port.is_empty() {
            Ok(None)
        } else {
            atoi(&self.port).map(Some)
        }
    }

    /// `--requests` as a resource list, `None` when empty.
    pub fn requests(&self) -> Result<Option<BTreeMap<String, String>>, Error> {
        parse_resource_list(&self.requests)
    }

    /// `--limits` as a resource list, `None` when empty.
    pub fn limits(&self) -> Result<Option<BTreeMap<String, String>>, Error> {
        parse_resource_list(&self.limits)
    }
}

/// Parses `a=b,c=d` as kubectl's `generate.ParseLabels` does: every entry needs exactly
/// one `=` and a non-empty key. Values are not validated here; the server does.
pub fn parse_labels(spec: &str) -> Result<BTreeMap<String, String>, Error> {
    if spec.is_empty() {
        return Err(Error::Invalid("no label spec passed".into()));
    }
    let mut labels = BTreeMap::new();
    for entry in spec.split(',') {
        let mut parts = entry.split('=');
        let (Some(key), Some(value), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(Error::Invalid(format!("unexpected label spec: {entry}")));
        };
        if key.is_empty() {
            return Err(Error::Invalid("unexpected empty label key".into()));
        }
        labels.insert(key.to_string(), value.to_string());
    }
    Ok(labels)
}

/// Parses repeated `key=value` flags (`--annotations`) as kubectl's `ParsePairs`:
/// entries without `=` are collected into one `invalid <kind> format: a, b` error.
pub fn parse_pairs(pairs: &[String], kind: &str) -> Result<BTreeMap<String, String>, Error> {
    let mut map = BTreeMap::new();
    let mut invalid = Vec::new();
    for pair in pairs {
        match pair.split_once('=') {
            Some((key, value)) => {
                map.insert(key.to_string(), value.to_string());
            }
            None => invalid.push(pair.as_str()),
        }
    }
    if !invalid.is_empty() {
        return Err(Error::Invalid(format!(
            "invalid {kind} format: {}",
            invalid.join(", ")
        )));
    }
    Ok(map)
}

/// Parses `--env NAME=value` entries; the name must be a valid environment variable
/// name as Kubernetes 1.32 defines it (`[-._a-zA-Z][-._a-zA-Z0-9]*`, not `.`, `..` or
/// starting with `..`). Every failure is kubectl's `invalid env: ENTRY`. Each variable
/// is its JSON object (`name`, and `value` unless empty).
pub fn parse_env(entries: &[String]) -> Result<Vec<Value>, Error> {
    entries
        .iter()
        .map(|entry| {
            let invalid = || Error::Invalid(format!("invalid env: {entry}"));
            let (name, value) = entry.split_once('=').ok_or_else(invalid)?;
            if !is_env_var_name(name) {
                return Err(invalid());
            }
            // Go's `omitempty` leaves an empty value out of kubectl's object (and of
            // what it sends), so `C=` is a variable without `value`.
            let mut var = Map::new();
            var.insert("name".into(), Value::from(name));
            if !value.is_empty() {
                var.insert("value".into(), Value::from(value));
            }
            Ok(Value::Object(var))
        })
        .collect()
}

fn is_env_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || "-._".contains(c));
    first_ok
        && chars.all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
        && name != "."
        && !name.starts_with("..")
}

/// Parses `cpu=100m,memory=256Mi` into a resource list, validating each quantity;
/// an empty string is no list at all.
pub fn parse_resource_list(spec: &str) -> Result<Option<BTreeMap<String, String>>, Error> {
    if spec.is_empty() {
        return Ok(None);
    }
    let mut list = BTreeMap::new();
    for statement in spec.split(',') {
        let mut parts = statement.split('=');
        let (Some(name), Some(quantity), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(Error::Invalid(format!(
                "Invalid argument syntax {statement}, expected <resource>=<value>"
            )));
        };
        // Canonical, as kubectl's typed Quantity prints it (`0.1` → `100m`).
        list.insert(name.to_string(), canonical_quantity(quantity)?);
    }
    Ok(Some(list))
}

/// Go's `strconv.Atoi`, with its error text, for `--port`: kubectl reports a bad port
/// as `strconv.Atoi: parsing "abc": invalid syntax`.
pub fn atoi(s: &str) -> Result<i32, Error> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return Err(Error::Invalid(format!(
            "strconv.Atoi: parsing {s:?}: invalid syntax"
        )));
    }
    s.parse::<i32>()
        .map_err(|_| Error::Invalid(format!("strconv.Atoi: parsing {s:?}: value out of range")))
}
