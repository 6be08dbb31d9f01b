//! The built-in kinds that k8s-openapi's typed models describe: their REST mapping
//! (for `--dry-run=client` without a reachable server) and a strict field check (for
//! `--validate=strict`).
//!
//! The table is generated from the typed models with a macro instead of being written
//! out, so plurals and scopes come from k8s-openapi and cannot be mistyped. It covers
//! the kinds people keep in manifests, not every type of the API.

use std::any::TypeId;

use k8s_openapi::{NamespaceResourceScope, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Mapping;

/// One built-in kind.
#[derive(Clone, Copy)]
pub struct BuiltinKind {
    /// The API group, empty for the core group.
    pub group: &'static str,
    /// The version.
    pub version: &'static str,
    /// The kind.
    pub kind: &'static str,
    /// The plural resource name.
    pub resource: &'static str,
    /// Whether objects of this kind are namespaced.
    pub namespaced: bool,
    /// Decodes the object into its typed model and encodes it back.
    roundtrip: fn(&Value) -> Result<Value, serde_json::Error>,
}

impl std::fmt::Debug for BuiltinKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{} {}", self.group, self.version, self.kind)
    }
}

fn roundtrip<K: DeserializeOwned + Serialize>(value: &Value) -> Result<Value, serde_json::Error> {
    let typed: K = crate::typed::from_value_as_text(value)?;
    serde_json::to_value(&typed)
}

fn entry<K>() -> BuiltinKind
where
    K: Resource + DeserializeOwned + Serialize + 'static,
{
    BuiltinKind {
        group: K::GROUP,
        version: K::VERSION,
        kind: K::KIND,
        resource: K::URL_PATH_SEGMENT,
        namespaced: TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>(),
        roundtrip: roundtrip::<K>,
    }
}

macro_rules! builtins {
    ($($ty:path),* $(,)?) => {
        /// Every built-in kind, in no particular order.
        pub(crate) fn all() -> &'static [BuiltinKind] {
            static ALL: std::sync::OnceLock<Vec<BuiltinKind>> = std::sync::OnceLock::new();
            ALL.get_or_init(|| vec![$(entry::<$ty>()),*])
        }
    };
}

builtins!(
    k8s_openapi::api::core::v1::ConfigMap,
    k8s_openapi::api::core::v1::Endpoints,
    k8s_openapi::api::core::v1::Event,
    k8s_openapi::api::core::v1::LimitRange,
    k8s_openapi::api::core::v1::Namespace,
    k8s_openapi::api::core::v1::Node,
    k8s_openapi::api::core::v1::PersistentVolume,
    k8s_openapi::api::core::v1::PersistentVolumeClaim,
    k8s_openapi::api::core::v1::Pod,
    k8s_openapi::api::core::v1::PodTemplate,
    k8s_openapi::api::core::v1::ReplicationController,
    k8s_openapi::api::core::v1::ResourceQuota,
    k8s_openapi::api::core::v1::Secret,
    k8s_openapi::api::core::v1::Service,
    k8s_openapi::api::core::v1::ServiceAccount,
    k8s_openapi::api::apps::v1::ControllerRevision,
    k8s_openapi::api::apps::v1::DaemonSet,
    k8s_openapi::api::apps::v1::Deployment,
    k8s_openapi::api::apps::v1::ReplicaSet,
    k8s_openapi::api::apps::v1::StatefulSet,
    k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler,
    k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler,
    k8s_openapi::api::batch::v1::CronJob,
    k8s_openapi::api::batch::v1::Job,
    k8s_openapi::api::certificates::v1::CertificateSigningRequest,
    k8s_openapi::api::coordination::v1::Lease,
    k8s_openapi::api::discovery::v1::EndpointSlice,
    k8s_openapi::api::events::v1::Event,
    k8s_openapi::api::networking::v1::Ingress,
    k8s_openapi::api::networking::v1::IngressClass,
    k8s_openapi::api::networking::v1::NetworkPolicy,
    k8s_openapi::api::node::v1::RuntimeClass,
    k8s_openapi::api::policy::v1::PodDisruptionBudget,
    k8s_openapi::api::rbac::v1::ClusterRole,
    k8s_openapi::api::rbac::v1::ClusterRoleBinding,
    k8s_openapi::api::rbac::v1::Role,
    k8s_openapi::api::rbac::v1::RoleBinding,
    k8s_openapi::api::scheduling::v1::PriorityClass,
    k8s_openapi::api::storage::v1::CSIDriver,
    k8s_openapi::api::storage::v1::CSINode,
    k8s_openapi::api::storage::v1::StorageClass,
    k8s_openapi::api::storage::v1::VolumeAttachment,
    k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration,
    k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration,
    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
);

/// The built-in kind for a group, version and kind, if the table has it.
pub(crate) fn find(group: &str, version: &str, kind: &str) -> Option<&'static BuiltinKind> {
    all()
        .iter()
        .find(|b| b.group == group && b.version == version && b.kind == kind)
}

/// The mapping of a built-in kind sent at `api_version`, which may be a group-version
/// the typed models no longer describe (1.17's `apps/v1beta1` or `extensions/v1beta1`
/// Deployment, `batch/v1beta1` CronJob): a kind keeps its plural and scope across
/// versions and groups, so they come from the table's entry for the kind, preferring
/// one of the same group. The one kind → resource table of the workspace, without
/// discovery (run-pod's generated objects).
pub fn mapping_at(api_version: &str, kind: &str) -> Option<Mapping> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let same_kind = || all().iter().filter(|b| b.kind == kind);
    let known = same_kind()
        .find(|b| b.group == group)
        .or_else(|| same_kind().next())?;
    Some(Mapping {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
        resource: known.resource.into(),
        namespaced: known.namespaced,
    })
}

impl BuiltinKind {
    /// The REST mapping of this kind.
    pub fn mapping(&self) -> Mapping {
        Mapping {
            group: self.group.into(),
            version: self.version.into(),
            kind: self.kind.into(),
            resource: self.resource.into(),
            namespaced: self.namespaced,
        }
    }

    /// Checks `object` against the typed model: the fields it has that the model does
    /// not know (as dotted paths), or the decoding error (a wrong type).
    pub(crate) fn unknown_fields(&self, object: &Value) -> Result<Vec<String>, String> {
        let known = (self.roundtrip)(object).map_err(|e| e.to_string())?;
        let mut unknown = Vec::new();
        diff_keys(object, &known, &mut String::new(), &mut unknown);
        Ok(unknown)
    }
}

/// Collects the paths of keys present (and not null) in `given` but absent from `known`.
/// The typed models drop what they do not know when they decode, so what is missing
/// after a round trip is exactly what the schema does not have.
fn diff_keys(given: &Value, known: &Value, path: &mut String, out: &mut Vec<String>) {
    match (given, known) {
        (Value::Object(given), Value::Object(known)) => {
            for (key, value) in given {
                if value.is_null() {
                    continue;
                }
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                match known.get(key) {
                    Some(k) => diff_keys(value, k, path, out),
                    None => out.push(path.clone()),
                }
                path.truncate(len);
            }
        }
        (Value::Array(given), Value::Array(known)) if given.len() == known.len() => {
            for (i, (g, k)) in given.iter().zip(known).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                diff_keys(g, k, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_kind_keeps_its_plural_and_scope_at_any_version() {
        let at = |v: &str, k: &str| {
            mapping_at(v, k).map(|m| (m.group, m.version, m.resource, m.namespaced))
        };
        let owned = |g: &str, v: &str, r: &str| Some((g.into(), v.into(), r.into(), true));
        assert_eq!(at("v1", "Pod"), owned("", "v1", "pods"));
        assert_eq!(
            at("apps/v1", "Deployment"),
            owned("apps", "v1", "deployments")
        );
        // Group-versions the typed models no longer describe (1.17's generators).
        assert_eq!(
            at("extensions/v1beta1", "Deployment"),
            owned("extensions", "v1beta1", "deployments")
        );
        assert_eq!(
            at("batch/v2alpha1", "CronJob"),
            owned("batch", "v2alpha1", "cronjobs")
        );
        assert_eq!(
            at("v1", "ReplicationController"),
            owned("", "v1", "replicationcontrollers")
        );
        assert_eq!(
            mapping_at("v1", "Namespace").map(|m| m.namespaced),
            Some(false)
        );
        assert_eq!(at("v1", "Widget"), None);
    }

    #[test]
    fn table_comes_from_the_typed_models() {
        let cm = find("", "v1", "ConfigMap").expect("ConfigMap is built in");
        assert_eq!((cm.resource, cm.namespaced), ("configmaps", true));
        let ns = find("", "v1", "Namespace").expect("Namespace is built in");
        assert_eq!((ns.resource, ns.namespaced), ("namespaces", false));
        let crd = find("apiextensions.k8s.io", "v1", "CustomResourceDefinition").expect("CRD");
        assert_eq!(
            (crd.resource, crd.namespaced),
            ("customresourcedefinitions", false)
        );
        assert!(find("apps", "v1beta1", "Deployment").is_none());
    }

    #[test]
    fn unknown_fields_are_reported_as_paths() {
        let deploy = find("apps", "v1", "Deployment").expect("Deployment");
        let obj = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "labelz": {}, "creationTimestamp": null},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "c", "image": "i", "imagePullPolicy": "Always", "colour": "red"}]}}},
            "extra": true
        });
        assert_eq!(
            deploy.unknown_fields(&obj),
            Ok(vec![
                "extra".to_string(),
                "metadata.labelz".into(),
                "spec.template.spec.containers[0].colour".into()
            ])
        );
    }

    #[test]
    fn wrong_types_are_decoding_errors() {
        let deploy = find("apps", "v1", "Deployment").expect("Deployment");
        let obj = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": "two", "selector": {}, "template": {}}});
        let err = deploy
            .unknown_fields(&obj)
            .expect_err("replicas is a number");
        assert!(err.contains("invalid type: string \"two\""), "{err}");
    }
}
