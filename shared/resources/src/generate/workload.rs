//! The legacy generators of kubectl ≤ 1.17 that wrap the run pod in a controller:
//! `run/v1` (a ReplicationController), `deployment/apps.v1`, `job/v1` and `cronjob/v1`
//! (`batch/v1`; the older group-versions of the same kinds are produced from these by
//! [`super::RunGenerator::generate`], since they agree on every field set here).
//! Built as JSON with the fields k8s-openapi's models encoded (see [`super::pod`]).

use serde_json::{Map, Value};

use super::pod::{object, pod_spec, restart_or, string_map};
use super::{Error, RunParams};

/// The pod template shared by the kinds (the run labels and annotations on the
/// template, and the run pod spec), the object's metadata (its name and the run
/// labels), and the labels.
fn template(
    params: &RunParams,
    restart_policy: Option<String>,
) -> Result<(Value, Value, Value), Error> {
    let env = params.env()?;
    let annotations = params.annotations()?;
    let labels = string_map(params.labels()?);
    let mut spec = pod_spec(params, env)?;
    if let Some(policy) = restart_policy {
        spec.insert("restartPolicy".into(), Value::from(policy));
    }
    let mut template_meta = Map::new();
    template_meta.insert("labels".into(), labels.clone());
    if let Some(annotations) = annotations {
        template_meta.insert("annotations".into(), string_map(annotations));
    }
    let template = object([
        ("metadata", Value::Object(template_meta)),
        ("spec", Value::Object(spec)),
    ]);
    let meta = object([
        ("name", Value::from(params.name.clone())),
        ("labels", labels.clone()),
    ]);
    Ok((template, meta, labels))
}

/// An object of `kind` at `api_version` with its metadata, spec and status.
fn resource(api_version: &str, kind: &str, metadata: Value, spec: Value, status: Value) -> Value {
    object([
        ("apiVersion", Value::from(api_version)),
        ("kind", Value::from(kind)),
        ("metadata", metadata),
        ("spec", spec),
        ("status", status),
    ])
}

/// `deployment/apps.v1`: `--replicas` pods selected by the run labels. As in kubectl
/// the pod spec leaves `restartPolicy` to the server (Deployments only allow `Always`).
pub fn deployment(params: &RunParams) -> Result<Value, Error> {
    let (template, metadata, labels) = template(params, None)?;
    let spec = object([
        ("replicas", Value::from(params.replicas)),
        ("selector", object([("matchLabels", labels)])),
        ("strategy", object([])),
        ("template", template),
    ]);
    Ok(resource(
        "apps/v1",
        "Deployment",
        metadata,
        spec,
        object([]),
    ))
}

/// `run/v1`: kubectl 1.17's `BasicReplicationController`: `--replicas` pods, selected
/// by the run labels (the selector is a plain map on a ReplicationController), the
/// template's `restartPolicy` left to the server (which allows only `Always`).
/// `status: {replicas: 0}` is kept: Go prints that field even when zero.
pub fn replication_controller(params: &RunParams) -> Result<Value, Error> {
    let (template, metadata, labels) = template(params, None)?;
    let spec = object([
        ("replicas", Value::from(params.replicas)),
        ("selector", labels),
        ("template", template),
    ]);
    let status = object([("replicas", Value::from(0))]);
    Ok(resource(
        "v1",
        "ReplicationController",
        metadata,
        spec,
        status,
    ))
}

/// `job/v1`: a Job running the pod to completion. Without `--restart` the pod restarts
/// `OnFailure`, the policy that made kubectl ≤ 1.17 pick this generator.
pub fn job(params: &RunParams) -> Result<Value, Error> {
    let (template, metadata, _) = template(params, Some(restart_or(params, "OnFailure")))?;
    let spec = object([("template", template)]);
    Ok(resource("batch/v1", "Job", metadata, spec, object([])))
}

/// `cronjob/v1`: a CronJob on `--schedule`, concurrency `Allow`. Without `--restart` the
/// pod restarts `Never` (kubectl's documented default for cron jobs).
pub fn cron_job(params: &RunParams) -> Result<Value, Error> {
    let (template, metadata, _) = template(params, Some(restart_or(params, "Never")))?;
    let job_template = object([("spec", object([("template", template)]))]);
    let spec = object([
        ("schedule", Value::from(params.schedule.clone())),
        ("concurrencyPolicy", Value::from("Allow")),
        ("jobTemplate", job_template),
    ]);
    Ok(resource("batch/v1", "CronJob", metadata, spec, object([])))
}
