//! `--overrides` / `--override-type`: applying a user's inline JSON to a generated
//! object before it is sent or printed, as kubectl's `cmdutil.Overrider` does.
//!
//! kubectl applies all three kinds on the client, then decodes the result into the
//! typed object (dropping unknown fields, rejecting wrong types). The same happens
//! here: merge patches come from the `json-patch` crate, JSON patches from
//! [`super::json_patch`] (evanphx/json-patch's rules and words), strategic merge from
//! [`super::strategic`], and [`normalize`] decodes the kinds run-pod generates along
//! the built-in schema ([`super::typed_decode`]).

use std::str::FromStr;

use serde_json::Value;

use super::Error;

/// `--override-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OverrideType {
    /// RFC 7386 JSON merge patch (the default).
    #[default]
    Merge,
    /// RFC 6902 JSON patch (a list of operations).
    Json,
    /// Kubernetes strategic merge patch (lists merged by key).
    Strategic,
}

impl FromStr for OverrideType {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "merge" => Ok(Self::Merge),
            "json" => Ok(Self::Json),
            "strategic" => Ok(Self::Strategic),
            other => Err(Error::Invalid(format!("invalid override type: {other}"))),
        }
    }
}

/// Applies `overrides` (inline JSON) to `obj`. An empty string changes nothing.
pub fn apply_overrides(obj: Value, overrides: &str, kind: OverrideType) -> Result<Value, Error> {
    if overrides.is_empty() {
        return Ok(obj);
    }
    let mut doc = obj;
    match kind {
        OverrideType::Merge => {
            // kubectl's json-patch library reports any unparsable fragment this way.
            let patch: Value = serde_json::from_str(overrides)
                .map_err(|_| Error::Invalid("Invalid JSON Patch".into()))?;
            json_patch::merge(&mut doc, &patch);
        }
        OverrideType::Json => {
            super::json_patch::apply(&mut doc, overrides).map_err(Error::Invalid)?;
        }
        OverrideType::Strategic => {
            let patch: Value = serde_json::from_str(overrides)
                .map_err(|_| Error::Invalid("Invalid JSON Patch".into()))?;
            if !patch.is_object() {
                return Err(Error::Invalid("Invalid JSON Patch".into()));
            }
            super::strategic::strategic_merge(&mut doc, &patch)?;
        }
    }
    normalize(doc)
}

/// Checks `apiVersion` and `kind` as kubectl's decoder does (same messages), then
/// round-trips the kinds `run-pod` generates through their typed form.
pub fn normalize(obj: Value) -> Result<Value, Error> {
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if api_version.is_empty() {
        return Err(Error::Invalid(format!(
            "Object 'apiVersion' is missing in '{obj}'"
        )));
    }
    if kind.is_empty() {
        return Err(Error::Invalid(format!(
            "Object 'Kind' is missing in '{obj}'"
        )));
    }
    if !KUBECTL_SCHEME.contains(&api_version.as_str()) {
        return Err(Error::Invalid(format!(
            "no kind {kind:?} is registered for version {api_version:?} in scheme \"pkg/runtime/scheme.go:111\""
        )));
    }
    match (api_version.as_str(), kind.as_str()) {
        ("v1", "Pod" | "Service") | ("apps/v1", "Deployment") | ("batch/v1", "Job" | "CronJob") => {
            decode(&api_version, &kind, obj)
        }
        ("batch/v1beta1", "CronJob") => {
            // Same fields as batch/v1 for everything kubectl run sets; decode as v1.
            let mut out = decode("batch/v1", "CronJob", obj)?;
            out["apiVersion"] = Value::from("batch/v1beta1");
            Ok(out)
        }
        // Anything else (a user may override apiVersion) goes to the server as given.
        _ => Ok(obj),
    }
}

/// The group-versions of kubectl's scheme (`k8s.io/kubectl/pkg/scheme`'s install), the
/// only ones its decoder of an overridden object reads; any other fails there, before
/// anything is sent. A kind the scheme lacks in one of them is left to the server.
const KUBECTL_SCHEME: &[&str] = &[
    "v1",
    "admission.k8s.io/v1",
    "admission.k8s.io/v1beta1",
    "admissionregistration.k8s.io/v1",
    "admissionregistration.k8s.io/v1beta1",
    "apps/v1",
    "apps/v1beta1",
    "apps/v1beta2",
    "authentication.k8s.io/v1",
    "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1",
    "authorization.k8s.io/v1beta1",
    "autoscaling/v1",
    "autoscaling/v2",
    "batch/v1",
    "batch/v1beta1",
    "certificates.k8s.io/v1",
    "certificates.k8s.io/v1beta1",
    "extensions/v1beta1",
    "imagepolicy.k8s.io/v1alpha1",
    "networking.k8s.io/v1",
    "policy/v1",
    "policy/v1beta1",
    "rbac.authorization.k8s.io/v1",
    "rbac.authorization.k8s.io/v1alpha1",
    "rbac.authorization.k8s.io/v1beta1",
    "storage.k8s.io/v1",
    "storage.k8s.io/v1alpha1",
    "storage.k8s.io/v1beta1",
];

/// The object decoded as kubectl's typed decode does (see [`super::typed_decode`]),
/// read as `api_version` and `kind`, then its pod spec's quantities canonicalised.
fn decode(api_version: &str, kind: &str, obj: Value) -> Result<Value, Error> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let Some(model) = crate::builtin::model(group, version, kind) else {
        // The built-in schema lacks it only in a build that skipped its generation.
        return Ok(obj);
    };
    let mut value = super::typed_decode::decode(model, &obj)
        .map_err(|e| Error::Invalid(format!("unable to decode the overridden object: {e}")))?;
    // kubectl's typed decode canonicalises a Quantity (`0.5` → `500m`) and rejects an
    // invalid one.
    let pod_spec = match kind {
        "Pod" => "/spec",
        "Deployment" | "Job" => "/spec/template/spec",
        "CronJob" => "/spec/jobTemplate/spec/template/spec",
        _ => return Ok(value),
    };
    if let Some(spec) = value.pointer_mut(pod_spec) {
        super::quantity::canonicalize_pod_spec(spec)?;
    }
    Ok(value)
}
