//! Creating the generated objects: one POST per object through `resources::rest::Helper`
//! (the create path create-file uses too), with no discovery (the kind's plural and
//! scope come from `resources::mapping_at`); the cron-job fallback asks
//! discovery through `Context::server_mapping` (the disk cache first).
//!
//! kubectl 1.17 mapped every generated object through discovery before sending it, so
//! a generator whose group-version the server no longer serves (`deployment/v1beta1`
//! on a 1.16+ server) failed with the REST mapper's `no matches for kind …`. The object
//! is sent here without asking first; only when the server answers that the resource
//! does not exist is discovery asked, so that the user reads the same message.

use anyhow::{Context as _, Result};
use kube::Client;
use kube::api::{ApiResource, DynamicObject};
use serde_json::Value;

use resources::Mapping;
use resources::rest::{DryRunStrategy, Helper};

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
    /// `--dry-run`: `none` or `server` (which sends `dryRun=All`); a client dry run
    /// never gets here (the helper would refuse it).
    pub dry_run: DryRunStrategy,
    /// `--field-manager`.
    pub field_manager: String,
    /// `--save-config`.
    pub save_config: bool,
}

impl Target {
    /// Creates `obj` (one POST) and returns what the server answered. `kind` is the
    /// generated one: kubectl maps the object before `--overrides`, so an override
    /// that changes the kind is sent to the generated kind's resource, and the
    /// server refuses it (`ConfigMap in version "v1" cannot be handled as a Pod`).
    pub async fn create(&self, mut obj: Value, kind: &str) -> Result<Created> {
        let mapping = mapping_of(&obj, kind)?;
        let resource = mapping.api_resource();
        if self.save_config {
            // kubectl run annotates typed objects (see cli::flags::save_config).
            cli::flags::save_config(&mut obj, cli::flags::Held::Typed)?;
        }
        // What was generated (and overridden) must read as an object before anything
        // is sent, and is sent as read: metadata in its typed form.
        let dynamic: DynamicObject =
            serde_json::from_value(obj).context("the generated object is not a valid object")?;
        let body =
            serde_json::to_value(&dynamic).context("the generated object is not a valid object")?;
        // `--field-manager` defaults to `kubectl-run`; an empty one is left out, as
        // client-go's `CreateOptions` leaves it out.
        let helper = Helper::new(self.client.clone(), mapping)
            .typed()
            .dry_run(self.dry_run)
            .with_field_manager(self.field_manager.as_str());
        // Sent as kubectl sends its typed objects: `json.Marshal`'s field order (the
        // server reads any order; `-v=8` shows the body as kubectl's does).
        let encoded =
            cli::printers::gojson::json(&body, None, cli::printers::gojson::Structs::Current);
        let object = match helper
            .create_encoded(Some(&self.namespace), encoded.into_bytes())
            .await
        {
            Ok(created) => created,
            Err(kube::Error::Api(status)) if is_missing_resource(&status) => {
                return Err(match no_kind_match(&self.client, &resource).await {
                    Some(no_match) => no_match,
                    None => kube::Error::Api(status).into(),
                });
            }
            Err(e) => return Err(e.into()),
        };
        Ok(Created { object, resource })
    }
}

/// A 404 that names no object: the URL's resource does not exist on the server (a
/// missing namespace, by contrast, comes back with the namespace's name). A group the
/// server does not have at all (`extensions` on 1.22+) answers with a plain-text `404
/// page not found`, which kube reads as a Status without the `NotFound` reason, so the
/// code decides.
fn is_missing_resource(status: &kube::core::Status) -> bool {
    (status.is_not_found() || status.code == 404)
        && status.details.as_ref().is_none_or(|d| d.name.is_empty())
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
        // `404 page not found` in plain text for a group the server lacks altogether.
        Err(kube::Error::Api(s)) if s.is_not_found() || s.code == 404 => false,
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

/// The REST mapping of an object kubectl run generates, from its apiVersion and the
/// generated `kind`. Overrides may change the apiVersion (`apps/v1beta1`); the plural
/// stays the generated kind's.
pub fn mapping_of(obj: &Value, kind: &str) -> Result<Mapping> {
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    resources::mapping_at(api_version, kind).with_context(|| {
        format!("no known resource for kind {kind:?} (apiVersion {api_version:?})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resources_need_no_discovery() {
        let r = mapping_of(
            &json!({"apiVersion": "apps/v1", "kind": "Deployment"}),
            "Deployment",
        )
        .expect("known");
        assert_eq!(
            (r.group.as_str(), r.version.as_str(), r.resource.as_str()),
            ("apps", "v1", "deployments")
        );
        let r = mapping_of(&json!({"apiVersion": "v1", "kind": "Pod"}), "Pod").expect("known");
        assert_eq!(
            (r.group.as_str(), r.version.as_str(), r.resource.as_str()),
            ("", "v1", "pods")
        );
        // An override that changes the kind is sent where the generated kind goes.
        let r =
            mapping_of(&json!({"apiVersion": "v1", "kind": "ConfigMap"}), "Pod").expect("known");
        assert_eq!((r.kind.as_str(), r.resource.as_str()), ("Pod", "pods"));
        let err = mapping_of(&json!({"apiVersion": "v1", "kind": "Widget"}), "Widget")
            .expect_err("unknown");
        assert_eq!(
            err.to_string(),
            "no known resource for kind \"Widget\" (apiVersion \"v1\")"
        );
    }

    #[test]
    fn a_missing_group_or_resource_is_told_from_a_missing_object() {
        let status = |reason: &str, name: Option<&str>| {
            let mut s = kube::core::Status::failure("not found", reason).with_code(404);
            if let Some(name) = name {
                s.details = Some(kube::core::response::StatusDetails {
                    name: name.into(),
                    group: String::new(),
                    kind: "namespaces".into(),
                    uid: String::new(),
                    causes: Vec::new(),
                    retry_after_seconds: 0,
                });
            }
            s
        };
        // A group the server lacks answers `404 page not found` in plain text.
        assert!(is_missing_resource(&status("", None)));
        assert!(is_missing_resource(&status("NotFound", None)));
        // A missing namespace names it.
        assert!(!is_missing_resource(&status("NotFound", Some("nope"))));
    }
}
