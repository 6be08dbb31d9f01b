//! `service/v2` (and `service/v1`): the ClusterIP Service of `kubectl run --expose`,
//! kubectl's expose generator reduced to what `run` passes it.

use serde_json::{Map, Value};

use super::params::{atoi, parse_labels};
use super::pod::{object, string_map};
use super::{Error, RunParams};

/// The parameters of the service generators.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServiceParams {
    /// Service name (the run object's name).
    pub name: String,
    /// `a=b,c=d` selector (the run labels, or `run=NAME`).
    pub selector: String,
    /// Labels of the service itself; empty means none (kubectl only copies `--labels`).
    pub labels: String,
    /// The service port, also the target port.
    pub port: String,
    /// The port's name: `service/v1` names it `default`, `service/v2` leaves it unnamed.
    pub port_name: Option<String>,
}

impl ServiceParams {
    /// What `kubectl run --expose` passes: the service selects the run labels.
    pub fn for_run(run: &RunParams) -> Self {
        let selector = if run.labels.is_empty() {
            format!("run={}", run.name)
        } else {
            run.labels.clone()
        };
        Self {
            name: run.name.clone(),
            selector,
            labels: run.labels.clone(),
            port: run.port.clone(),
            port_name: None,
        }
    }
}

/// Generates the service: one TCP port, `targetPort` equal to `port`, the given
/// selector. Multiple comma-separated ports get the names `port-1`, `port-2`, … as in
/// kubectl. Built as JSON with the fields k8s-openapi's model encoded (see
/// [`super::pod`]).
pub fn service(params: &ServiceParams) -> Result<Value, Error> {
    if params.selector.is_empty() {
        return Err(Error::Invalid("'selector' is a required parameter".into()));
    }
    let selector = parse_labels(&params.selector)?;
    let labels = if params.labels.is_empty() {
        None
    } else {
        Some(parse_labels(&params.labels)?)
    };
    if params.name.is_empty() {
        return Err(Error::Invalid("'name' is a required parameter".into()));
    }
    if params.port.is_empty() {
        return Err(Error::Invalid(
            "'ports' or 'port' is a required parameter".into(),
        ));
    }
    let specs: Vec<&str> = params.port.split(',').collect();
    let mut ports = Vec::with_capacity(specs.len());
    for (i, spec) in specs.iter().enumerate() {
        let port = atoi(spec)?;
        let name = if specs.len() > 1 {
            Some(format!("port-{}", i + 1))
        } else {
            params.port_name.clone()
        };
        let mut service_port = Map::new();
        if let Some(name) = name {
            service_port.insert("name".into(), Value::from(name));
        }
        service_port.insert("port".into(), Value::from(port));
        service_port.insert("protocol".into(), Value::from("TCP"));
        service_port.insert("targetPort".into(), Value::from(port));
        ports.push(Value::Object(service_port));
    }
    let mut metadata = Map::new();
    metadata.insert("name".into(), Value::from(params.name.clone()));
    if let Some(labels) = labels {
        metadata.insert("labels".into(), string_map(labels));
    }
    Ok(object([
        ("apiVersion", Value::from("v1")),
        ("kind", Value::from("Service")),
        ("metadata", Value::Object(metadata)),
        (
            "spec",
            object([
                ("selector", string_map(selector)),
                ("ports", Value::Array(ports)),
            ]),
        ),
        ("status", object([("loadBalancer", object([]))])),
    ]))
}
