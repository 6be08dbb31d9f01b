//! The pod as the attach flow reads it: its name and namespace, its first container's
//! name, its phase, its Ready condition and its first container's termination, read
//! from the JSON the server sent.
//!
//! The pods are listed and watched as `DynamicObject`s (the pods resource, untyped)
//! rather than k8s-openapi's `Pod`: that model's decoder reads the whole of a pod (its
//! volumes, probes, every status) and was, with serde's code for it, a good part of
//! run-pod's binary (docs/binary-size.md), for the few fields used here. The log and
//! attach requests still name k8s-openapi's `Pod` for their URLs only.

use kube::api::{Api, ApiResource, DynamicObject};
use serde_json::Value;

/// The pods of `namespace`, as JSON.
pub fn api(client: kube::Client, namespace: &str) -> Api<DynamicObject> {
    let resource = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
    Api::namespaced_with(client, namespace, &resource)
}

/// A pod, as listed or watched.
#[derive(Debug, Clone)]
pub struct Pod(DynamicObject);

/// A container's `state.terminated`: what the command's exit reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Terminated {
    /// `exitCode`.
    pub exit_code: i64,
    /// `reason`.
    pub reason: Option<String>,
    /// `message`.
    pub message: Option<String>,
}

impl From<DynamicObject> for Pod {
    fn from(object: DynamicObject) -> Self {
        Pod(object)
    }
}

impl Pod {
    /// `metadata.name`, empty when absent.
    pub fn name(&self) -> String {
        self.0.metadata.name.clone().unwrap_or_default()
    }

    /// `metadata.namespace`, empty when absent.
    pub fn namespace(&self) -> String {
        self.0.metadata.namespace.clone().unwrap_or_default()
    }

    /// `status.phase`, empty when absent.
    pub fn phase(&self) -> &str {
        self.text("/status/phase").unwrap_or_default()
    }

    /// The first container's name (`spec.containers[0].name`).
    pub fn container_name(&self) -> Option<String> {
        self.text("/spec/containers/0/name").map(str::to_string)
    }

    /// Whether the `Ready` condition is `True`.
    pub fn ready(&self) -> bool {
        self.0
            .data
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|conditions| {
                conditions.iter().any(|c| {
                    c.get("type").and_then(Value::as_str) == Some("Ready")
                        && c.get("status").and_then(Value::as_str) == Some("True")
                })
            })
    }

    /// The first container's termination (`status.containerStatuses[0].state.terminated`).
    pub fn terminated(&self) -> Option<Terminated> {
        let terminated = self
            .0
            .data
            .pointer("/status/containerStatuses/0/state/terminated")?;
        let text = |key: &str| {
            terminated
                .get(key)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        Some(Terminated {
            exit_code: terminated
                .get("exitCode")
                .and_then(Value::as_i64)
                .unwrap_or_default(),
            reason: text("reason"),
            message: text("message"),
        })
    }

    /// The pod as `objectstatus` reads it for its waiting reasons; `None` when its
    /// status does not read (the reasons only explain a wait: none are then shown).
    pub fn status_view(&self) -> Option<objectstatus::objects::Pod> {
        let status = self.0.data.get("status")?;
        let object = serde_json::Map::from_iter([("status".to_string(), status.clone())]);
        let mut pod: objectstatus::objects::Pod =
            objectstatus::objects::from_value(&Value::Object(object)).ok()?;
        pod.metadata = (&self.0.metadata).into();
        Some(pod)
    }

    fn text(&self, pointer: &str) -> Option<&str> {
        self.0.data.pointer(pointer).and_then(Value::as_str)
    }
}

#[cfg(test)]
impl Pod {
    /// A pod from its JSON.
    pub fn from_json(value: Value) -> Self {
        Pod(serde_json::from_value(value).expect("a pod"))
    }
}
