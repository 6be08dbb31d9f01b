//! The built-in kinds that k8s-openapi's typed models describe: their REST mapping
//! (for `--dry-run=client` without a reachable server) and their OpenAPI schema (for
//! `--validate` when there is no server document to validate against).
//!
//! The table is generated from the typed models with a macro instead of being written
//! out, so plurals and scopes come from k8s-openapi and cannot be mistyped. It covers
//! the kinds people keep in manifests, not every type of the API. It is plain data:
//! nothing in it reaches the models' decoders, which are large (the binary-size budget: the table
//! once held a decode-and-encode round trip per kind, about 0.7 MiB of every plugin,
//! run-pod's included, which only maps).
//!
//! **The schema** (`builtin/schema.json`) is the OpenAPI v2 `definitions` of these
//! kinds and of every type they reach, generated from the same typed models (their
//! `schemars` descriptions) by the test `schema_is_generated_from_the_typed_models`,
//! which `cargo xtask codegen` runs to rewrite it. It keeps what validation reads
//! (`type`, `properties`, `items`, `additionalProperties`, `required`, `$ref`),
//! `x-kubernetes-group-version-kind` on each kind and an integer's `format` (`int32`
//! or `int64`, for run-pod's decode of `--overrides`, `crate::generate`); descriptions
//! are dropped. It is validated by [`crate::openapi`], kubectl's validator, so offline
//! problems read as they would against a server's document. The binary carries it
//! deflated (about 12 KB instead of 130 KB): `schema.json.deflate`, which the same test
//! keeps equal to the JSON.

use std::sync::OnceLock;

use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope, Resource};

use super::Mapping;
use crate::openapi::OpenApiV2;

/// One built-in kind.
#[derive(Debug, Clone, Copy)]
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
}

/// A kind's scope as a constant, so that the table can be a `static`.
trait Scope {
    const NAMESPACED: bool;
}

impl Scope for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl Scope for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

macro_rules! builtins {
    ($($ty:path),* $(,)?) => {
        /// Every built-in kind, in no particular order.
        static ALL: &[BuiltinKind] = &[$(BuiltinKind {
            group: <$ty as Resource>::GROUP,
            version: <$ty as Resource>::VERSION,
            kind: <$ty as Resource>::KIND,
            resource: <$ty as Resource>::URL_PATH_SEGMENT,
            namespaced: <<$ty as Resource>::Scope as Scope>::NAMESPACED,
        }),*];
    };
}

/// The typed models of the table, handed to `$callback!` (the table above, and the
/// schema generator of the tests).
macro_rules! builtin_types {
    ($callback:ident) => {
        $callback!(
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
    };
}

builtin_types!(builtins);

/// The built-in kind for a group, version and kind, if the table has it.
pub(crate) fn find(group: &str, version: &str, kind: &str) -> Option<&'static BuiltinKind> {
    ALL.iter()
        .find(|b| b.group == group && b.version == version && b.kind == kind)
}

/// Whether the table holds a kind of `group`/`version` whose list kind `matches`
/// (see `RestMapper::lookup_list`).
pub(crate) fn any_kind(group: &str, version: &str, matches: impl Fn(&str) -> bool) -> bool {
    ALL.iter()
        .any(|b| b.group == group && b.version == version && matches(b.kind))
}

/// The mapping of a built-in kind sent at `api_version`, which may be a group-version
/// the typed models no longer describe (1.17's `apps/v1beta1` or `extensions/v1beta1`
/// Deployment, `batch/v1beta1` CronJob): a kind keeps its plural and scope across
/// versions and groups, so they come from the table's entry for the kind, preferring
/// one of the same group. The one kind → resource table of the workspace, without
/// discovery (run-pod's generated objects).
pub fn mapping_at(api_version: &str, kind: &str) -> Option<Mapping> {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let same_kind = || ALL.iter().filter(|b| b.kind == kind);
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
}

/// The schema of the built-in kinds, for validation without a server document.
pub(crate) fn schema() -> &'static OpenApiV2 {
    static SCHEMA: OnceLock<OpenApiV2> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        // Both files are generated and checked by this module's tests: a failure here
        // is a build that skipped them, and validation then knows no kind.
        let json = miniz_oxide::inflate::decompress_to_vec(SCHEMA_DEFLATE).unwrap_or_default();
        OpenApiV2::from_json(&json).unwrap_or_default()
    })
}

/// A definition of the built-in schema, by name (`io.k8s.api.core.v1.PodSpec`): plain
/// data, for run-pod's decode of `--overrides` (`crate::generate`).
pub(crate) fn definition(name: &str) -> Option<&'static serde_json::Value> {
    schema().definition(name)
}

/// The name of the built-in schema's definition of a kind.
pub(crate) fn model(group: &str, version: &str, kind: &str) -> Option<&'static str> {
    schema().model(group, version, kind)
}

/// `builtin/schema.json`, deflated (raw DEFLATE, no zlib header).
const SCHEMA_DEFLATE: &[u8] = include_bytes!("builtin/schema.json.deflate");

#[cfg(test)]
mod tests;
