//! Generators: pure functions from parameters to the objects `kubectl run-pod`
//! creates, as JSON. **Invariant:** nothing here does IO, reads flags or knows about clients;
//! errors carry kubectl's exact wording so the command can print them as they are.
//!
//! | generator                 | object                           | function                   |
//! |---------------------------|----------------------------------|----------------------------|
//! | `run-pod/v1`              | `v1` Pod (the default)           | [`pod()`]                  |
//! | `run/v1`                  | `v1` ReplicationController       | [`replication_controller()`] |
//! | `deployment/apps.v1`      | `apps/v1` Deployment             | [`deployment()`]           |
//! | `deployment/apps.v1beta1` | `apps/v1beta1` Deployment        | [`deployment()`], relabelled |
//! | `deployment/v1beta1`      | `extensions/v1beta1` Deployment  | [`deployment()`], relabelled |
//! | `job/v1`                  | `batch/v1` Job                   | [`job()`]                  |
//! | `cronjob/v1`              | `batch/v1` CronJob               | [`cron_job()`]             |
//! | `cronjob/v1beta1`         | `batch/v1beta1` CronJob          | [`cron_job()`], relabelled |
//! | `cronjob/v2alpha1`        | `batch/v2alpha1` CronJob         | [`cron_job()`], relabelled |
//! | `service/v2`, `v1`        | `v1` Service for `--expose`      | [`service()`]              |
//!
//! The relabelled ones are kubectl 1.17's generators for group-versions that k8s-openapi
//! (whose models' encoding the objects follow) no longer models: in 1.17 they build the same fields as their successors (its
//! `DeploymentV1Beta1`, `DeploymentAppsV1Beta1` and `DeploymentAppsV1` differ only in
//! the Go type, as do `CronJobV2Alpha1` and `CronJobV1Beta1`), so only `apiVersion`
//! changes. Servers from 1.16 on no longer serve `extensions/v1beta1` and
//! `apps/v1beta1` Deployments, and `batch/v2alpha1` is off by default: the command
//! sends them anyway and reports what the server says.
//!
//! [`RunGenerator::generate`] returns the object as JSON, the form the overrides,
//! printers and the dynamic create path all work on. No typed model is involved: the
//! generators write JSON with the fields k8s-openapi's models encoded, and
//! `--overrides` is checked against the built-in schema ([`normalize`]), which keeps
//! the models' decoders and encoders out of run-pod's binary.
//!
//! ```
//! use resources::generate::{RunGenerator, RunParams};
//! let obj = RunGenerator::RunPodV1.generate(&RunParams::new("web", "nginx")).unwrap();
//! assert_eq!(obj["spec"]["containers"][0]["image"], "nginx");
//! assert_eq!(obj["metadata"]["labels"]["run"], "web");
//! ```

mod image;
mod json_patch;
mod overrides;
mod params;
mod pod;
mod quantity;
mod service;
mod strategic;
mod typed_decode;
mod workload;

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

pub use image::is_valid_image_reference;
pub use overrides::{OverrideType, apply_overrides, normalize};
pub use params::{RunParams, atoi, parse_env, parse_labels, parse_pairs, parse_resource_list};
pub use pod::pod;
pub use quantity::{QuantityError, canonical_quantity, validate_quantity};
pub use service::{ServiceParams, service};
pub use strategic::strategic_merge;
pub use workload::{cron_job, deployment, job, replication_controller};

/// Errors of the generators. Messages are kubectl's where kubectl has one.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A parameter value is unusable (bad label, env, port, override…).
    #[error("{0}")]
    Invalid(String),
    /// A `--requests` / `--limits` quantity is malformed.
    #[error(transparent)]
    Quantity(#[from] QuantityError),
    /// `--generator` / `--service-generator` names no generator.
    #[error("generator {name:?} not found; valid generators are: {}", valid.join(", "))]
    UnknownGenerator {
        /// The name given.
        name: String,
        /// The names that exist for this command.
        valid: &'static [&'static str],
    },
}

/// The generators of `kubectl run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunGenerator {
    /// `run-pod/v1`: a bare Pod (modern kubectl's only behaviour).
    RunPodV1,
    /// `run/v1`: a ReplicationController, what `kubectl rolling-update` acts on.
    RunV1,
    /// `deployment/apps.v1`.
    DeploymentAppsV1,
    /// `deployment/apps.v1beta1`: an `apps/v1beta1` Deployment (servers before 1.16).
    DeploymentAppsV1Beta1,
    /// `deployment/v1beta1`: an `extensions/v1beta1` Deployment (servers before 1.16).
    DeploymentV1Beta1,
    /// `job/v1`.
    JobV1,
    /// `cronjob/v1`: a `batch/v1` CronJob.
    CronJobV1,
    /// `cronjob/v1beta1`: a `batch/v1beta1` CronJob, for servers before 1.21.
    CronJobV1Beta1,
    /// `cronjob/v2alpha1`: a `batch/v2alpha1` CronJob (only where that alpha API is
    /// switched on).
    CronJobV2Alpha1,
}

impl RunGenerator {
    /// Every run generator, in the order their names are listed.
    pub const ALL: [RunGenerator; 9] = [
        Self::RunPodV1,
        Self::RunV1,
        Self::DeploymentAppsV1,
        Self::DeploymentAppsV1Beta1,
        Self::DeploymentV1Beta1,
        Self::JobV1,
        Self::CronJobV1,
        Self::CronJobV1Beta1,
        Self::CronJobV2Alpha1,
    ];
    const NAMES: &'static [&'static str] = &[
        "run-pod/v1",
        "run/v1",
        "deployment/apps.v1",
        "deployment/apps.v1beta1",
        "deployment/v1beta1",
        "job/v1",
        "cronjob/v1",
        "cronjob/v1beta1",
        "cronjob/v2alpha1",
    ];

    /// The name used with `--generator`.
    pub fn name(self) -> &'static str {
        match self {
            Self::RunPodV1 => "run-pod/v1",
            Self::RunV1 => "run/v1",
            Self::DeploymentAppsV1 => "deployment/apps.v1",
            Self::DeploymentAppsV1Beta1 => "deployment/apps.v1beta1",
            Self::DeploymentV1Beta1 => "deployment/v1beta1",
            Self::JobV1 => "job/v1",
            Self::CronJobV1 => "cronjob/v1",
            Self::CronJobV1Beta1 => "cronjob/v1beta1",
            Self::CronJobV2Alpha1 => "cronjob/v2alpha1",
        }
    }

    /// The `apiVersion` of the generated object (its kind's plural and scope are
    /// `resource::mapping_at`'s).
    pub fn api_version(self) -> &'static str {
        match self {
            Self::RunPodV1 | Self::RunV1 => "v1",
            Self::DeploymentAppsV1 => "apps/v1",
            Self::DeploymentAppsV1Beta1 => "apps/v1beta1",
            Self::DeploymentV1Beta1 => "extensions/v1beta1",
            Self::JobV1 | Self::CronJobV1 => "batch/v1",
            Self::CronJobV1Beta1 => "batch/v1beta1",
            Self::CronJobV2Alpha1 => "batch/v2alpha1",
        }
    }

    /// The `kind` of the generated object.
    pub fn kind(self) -> &'static str {
        match self {
            Self::RunPodV1 => "Pod",
            Self::RunV1 => "ReplicationController",
            Self::DeploymentAppsV1 | Self::DeploymentAppsV1Beta1 | Self::DeploymentV1Beta1 => {
                "Deployment"
            }
            Self::JobV1 => "Job",
            Self::CronJobV1 | Self::CronJobV1Beta1 | Self::CronJobV2Alpha1 => "CronJob",
        }
    }

    /// Generates the object as JSON.
    pub fn generate(self, params: &RunParams) -> Result<Value, Error> {
        let mut obj = match self {
            Self::RunPodV1 => pod(params)?,
            Self::RunV1 => replication_controller(params)?,
            Self::DeploymentAppsV1 | Self::DeploymentAppsV1Beta1 | Self::DeploymentV1Beta1 => {
                deployment(params)?
            }
            Self::JobV1 => job(params)?,
            Self::CronJobV1 | Self::CronJobV1Beta1 | Self::CronJobV2Alpha1 => cron_job(params)?,
        };
        // The older group-versions of the same fields (see the module doc).
        obj["apiVersion"] = Value::from(self.api_version());
        Ok(obj)
    }
}

impl fmt::Display for RunGenerator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RunGenerator {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Self::ALL
            .into_iter()
            .find(|g| g.name() == s)
            .ok_or_else(|| Error::UnknownGenerator {
                name: s.to_string(),
                valid: Self::NAMES,
            })
    }
}

/// The generators of `--expose`'s service (`--service-generator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ServiceGenerator {
    /// `service/v1`: the port is named `default`.
    V1,
    /// `service/v2`: the port is unnamed (the default).
    #[default]
    V2,
}

impl ServiceGenerator {
    const NAMES: &'static [&'static str] = &["service/v2", "service/v1"];

    /// Generates the service as JSON.
    pub fn generate(self, params: &ServiceParams) -> Result<Value, Error> {
        let mut params = params.clone();
        if self == Self::V1 {
            params.port_name = Some("default".into());
        }
        service(&params)
    }
}

impl FromStr for ServiceGenerator {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "service/v2" => Ok(Self::V2),
            "service/v1" => Ok(Self::V1),
            other => Err(Error::UnknownGenerator {
                name: other.to_string(),
                valid: Self::NAMES,
            }),
        }
    }
}

#[cfg(test)]
mod tests;
