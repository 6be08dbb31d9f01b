//! `run-pod/v1`: the Pod that `kubectl run` creates, and the pod spec the legacy
//! workload generators wrap in a template.
//!
//! The objects are built as JSON directly, with the fields k8s-openapi's models
//! encoded (a field left unset is absent; an empty struct such as `resources` is
//! `{}`): the models' encoders were a large part of run-pod's binary, and the
//! printers and the request body work on JSON anyway (docs/binary-size.md).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{Error, RunParams};

/// Generates the pod of `kubectl run NAME --image=IMAGE …`: one container named
/// `NAME`, labels `run=NAME` unless `--labels` is given, `dnsPolicy: ClusterFirst`
/// and `restartPolicy` from `--restart` (default `Always`).
///
/// Empty `resources: {}` and `status: {}` are kept, as kubectl's dry-run output has
/// them.
pub fn pod(params: &RunParams) -> Result<Value, Error> {
    // The order of the checks follows kubectl's BasicPod generator, so that a command
    // line with several mistakes reports the same one first.
    let env = params.env()?;
    let annotations = params.annotations()?;
    let labels = params.labels()?;
    let mut spec = pod_spec(params, env)?;
    spec.insert("dnsPolicy".into(), Value::from("ClusterFirst"));
    spec.insert(
        "restartPolicy".into(),
        Value::from(restart_or(params, "Always")),
    );
    let mut metadata = Map::new();
    metadata.insert("name".into(), Value::from(params.name.clone()));
    metadata.insert("labels".into(), string_map(labels));
    if let Some(annotations) = annotations {
        metadata.insert("annotations".into(), string_map(annotations));
    }
    Ok(object([
        ("apiVersion", Value::from("v1")),
        ("kind", Value::from("Pod")),
        ("metadata", Value::Object(metadata)),
        ("spec", Value::Object(spec)),
        ("status", object([])),
    ]))
}

/// A JSON object of `fields` (a struct's fields, each set).
pub(super) fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(key, value)| (key.to_string(), value))
            .collect(),
    )
}

/// A `map[string]string` (labels, annotations, a selector) as JSON.
pub(super) fn string_map(map: BTreeMap<String, String>) -> Value {
    Value::Object(
        map.into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect(),
    )
}

/// `--restart` if given, else the generator's default.
pub(super) fn restart_or(params: &RunParams, default: &str) -> String {
    if params.restart.is_empty() {
        default.to_string()
    } else {
        params.restart.clone()
    }
}

/// The pod spec with its single container: image, stdin/tty, resources, security
/// context, service account, command or args, env, pull policy and ports.
pub(super) fn pod_spec(
    params: &RunParams,
    env: Option<Vec<Value>>,
) -> Result<Map<String, Value>, Error> {
    // kubectl parses limits before requests.
    let limits = params.limits()?;
    let requests = params.requests()?;
    let mut container = Map::new();
    let mut set = |key: &str, value: Value| {
        container.insert(key.to_string(), value);
    };
    set("name", Value::from(params.name.clone()));
    set("image", Value::from(params.image.clone()));
    if params.stdin {
        set("stdin", Value::Bool(true));
        if !params.leave_stdin_open {
            set("stdinOnce", Value::Bool(true));
        }
    }
    if params.tty {
        set("tty", Value::Bool(true));
    }
    let mut resources = Map::new();
    if let Some(limits) = limits {
        resources.insert("limits".into(), string_map(limits));
    }
    if let Some(requests) = requests {
        resources.insert("requests".into(), string_map(requests));
    }
    set("resources", Value::Object(resources));
    if params.privileged {
        set(
            "securityContext",
            object([("privileged", Value::Bool(true))]),
        );
    }
    if let Some(env) = env {
        set("env", Value::Array(env));
    }
    if !params.image_pull_policy.is_empty() {
        set(
            "imagePullPolicy",
            Value::from(params.image_pull_policy.clone()),
        );
    }
    if !params.args.is_empty() {
        let key = if params.command { "command" } else { "args" };
        set(key, Value::from(params.args.clone()));
    }
    let port = params.port()?;
    if params.host_port > 0 && port.is_none() {
        return Err(Error::Invalid(
            "--hostport requires --port to be specified".into(),
        ));
    }
    if let Some(port) = port {
        let mut container_port = Map::new();
        container_port.insert("containerPort".into(), Value::from(port));
        if params.host_port > 0 {
            container_port.insert("hostPort".into(), Value::from(params.host_port));
        }
        set("ports", Value::Array(vec![Value::Object(container_port)]));
    }
    let mut spec = Map::new();
    spec.insert(
        "containers".into(),
        Value::Array(vec![Value::Object(container)]),
    );
    if !params.service_account.is_empty() {
        spec.insert(
            "serviceAccountName".into(),
            Value::from(params.service_account.clone()),
        );
    }
    Ok(spec)
}
