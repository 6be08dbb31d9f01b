//! Creating the generated objects: one POST per object through kube's dynamic API,
//! with no discovery (the generators know their group, version and plural), plus the
//! one discovery request the cron-job fallback needs.
//!
//! kubectl 1.17 mapped every generated object through discovery before sending it, so
//! a generator whose group-version the server no longer serves (`deployment/v1beta1`
//! on a 1.16+ server) failed with the REST mapper's `no matches for kind …`. The object
//! is sent here without asking first; only when the server answers that the resource
//! does not exist is discovery asked, so that the user reads the same message.

use anyhow::{Context as _, Result};
use kube::api::{ApiResource, DynamicObject, PostParams};
use kube::{Api, Client};
use serde_json::Value;

use shared::generate::RunGenerator;

/// An object the command created, with what is needed to delete it again (`--rm`).
#[derive(Debug, Clone)]
pub struct Created {
    /// The object as the server returned it.
    pub object: Value,
    /// Its API resource (for deletion).
    pub resource: ApiResource,
}

/// Where and how objects are created.
#[derive(Clone)]
pub struct Target {
    /// The client.
    pub client: Client,
    /// The namespace (kubectl run's objects are all namespaced).
    pub namespace: String,
    /// `--dry-run=server`: send `dryRun=All`.
    pub dry_run: bool,
    /// `--field-manager`.
    pub field_manager: String,
    /// `--save-config`.
    pub save_config: bool,
}

impl Target {
    /// Creates `obj` (one POST) and returns what the server answered.
    pub async fn create(&self, mut obj: Value) -> Result<Created> {
        let resource = resource_of(&obj)?;
        if self.save_config {
            // kubectl run annotates typed objects (see shared::flags::save_config).
            shared::flags::save_config(&mut obj, shared::flags::Held::Typed)?;
        }
        let dynamic: DynamicObject =
            serde_json::from_value(obj).context("the generated object is not a valid object")?;
        let api: Api<DynamicObject> =
            Api::namespaced_with(self.client.clone(), &self.namespace, &resource);
        let params = PostParams {
            dry_run: self.dry_run,
            field_manager: Some(self.field_manager.clone()),
        };
        let created = match api.create(&params, &dynamic).await {
            Ok(created) => created,
            Err(kube::Error::Api(status)) if is_missing_resource(&status) => {
                return Err(match no_kind_match(&self.client, &resource).await {
                    Some(no_match) => no_match,
                    None => kube::Error::Api(status).into(),
                });
            }
            Err(e) => return Err(e.into()),
        };
        let object = serde_json::to_value(&created).context("unable to read the created object")?;
        Ok(Created { object, resource })
    }
}

/// A 404 that names no object: the URL's resource does not exist on the server (a
/// missing namespace, by contrast, comes back with the namespace's name).
fn is_missing_resource(status: &kube::core::Status) -> bool {
    status.is_not_found() && status.details.as_ref().is_none_or(|d| d.name.is_empty())
}

/// kubectl's REST mapper error for a kind the server does not serve in that version
/// (`no matches for kind "Deployment" in version "extensions/v1beta1"`), from one
/// discovery request; `None` when discovery lists the resource after all, or cannot
/// tell, so that the server's own answer is shown instead.
async fn no_kind_match(client: &Client, resource: &ApiResource) -> Option<anyhow::Error> {
    let list = if resource.group.is_empty() {
        client.list_core_api_resources(&resource.version).await
    } else {
        client.list_api_group_resources(&resource.api_version).await
    };
    let served = match list {
        Ok(list) => list
            .resources
            .iter()
            .any(|r| r.kind == resource.kind && r.name == resource.plural),
        Err(kube::Error::Api(s)) if s.is_not_found() => false,
        Err(_) => return None,
    };
    (!served).then(|| {
        anyhow::anyhow!(
            "no matches for kind {:?} in version {:?}",
            resource.kind,
            resource.api_version
        )
    })
}

/// The API resource of an object kubectl run generates, from its apiVersion and kind.
/// Overrides may change the apiVersion (`apps/v1beta1`); the plural stays the kind's.
pub fn resource_of(obj: &Value) -> Result<ApiResource> {
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let plural = match kind {
        "Pod" => "pods",
        "Service" => "services",
        "Deployment" => "deployments",
        "Job" => "jobs",
        "CronJob" => "cronjobs",
        "ReplicationController" => "replicationcontrollers",
        "ReplicaSet" => "replicasets",
        "DaemonSet" => "daemonsets",
        "StatefulSet" => "statefulsets",
        other => anyhow::bail!("no known resource for kind {other:?} (apiVersion {api_version:?})"),
    };
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    Ok(ApiResource {
        group: group.to_string(),
        version: version.to_string(),
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        plural: plural.to_string(),
    })
}

/// `cronjob/v1` when the server serves `batch/v1` cronjobs (Kubernetes ≥ 1.21), else
/// `cronjob/v1beta1`. One request: the `batch/v1` resource list.
pub async fn cron_job_generator(client: &Client) -> Result<RunGenerator> {
    match client.list_api_group_resources("batch/v1").await {
        Ok(list) if list.resources.iter().any(|r| r.name == "cronjobs") => {
            Ok(RunGenerator::CronJobV1)
        }
        Ok(_) => Ok(RunGenerator::CronJobV1Beta1),
        Err(kube::Error::Api(s)) if s.is_not_found() => Ok(RunGenerator::CronJobV1Beta1),
        Err(e) => Err(e).context("unable to discover the batch/v1 API"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resources_need_no_discovery() {
        let r =
            resource_of(&json!({"apiVersion": "apps/v1", "kind": "Deployment"})).expect("known");
        assert_eq!(
            (r.group.as_str(), r.version.as_str(), r.plural.as_str()),
            ("apps", "v1", "deployments")
        );
        let r = resource_of(&json!({"apiVersion": "v1", "kind": "Pod"})).expect("known");
        assert_eq!(
            (r.group.as_str(), r.version.as_str(), r.plural.as_str()),
            ("", "v1", "pods")
        );
        assert!(resource_of(&json!({"apiVersion": "v1", "kind": "Widget"})).is_err());
    }
}
