//! Generators: pure functions from parameters to the typed objects `kubectl run-pod`
//! creates. **Invariant:** nothing here does IO, reads flags or knows about clients;
//! errors carry kubectl's exact wording so the command can print them as they are.
//!
//! | generator             | object                       | function                  |
//! |-----------------------|------------------------------|---------------------------|
//! | `run-pod/v1`          | `v1` Pod (the default)       | [`pod()`]                 |
//! | `deployment/apps.v1`  | `apps/v1` Deployment         | [`deployment()`]          |
//! | `job/v1`              | `batch/v1` Job               | [`job()`]                 |
//! | `cronjob/v1`          | `batch/v1` CronJob           | [`cron_job()`]            |
//! | `cronjob/v1beta1`     | `batch/v1beta1` CronJob      | [`cron_job()`], relabelled|
//! | `service/v2`, `v1`    | `v1` Service for `--expose`  | [`service()`]             |
//!
//! [`RunGenerator::generate`] returns the object as JSON, the form the overrides,
//! printers and the dynamic create path all work on.
//!
//! ```
//! use shared::generate::{RunGenerator, RunParams};
//! let obj = RunGenerator::RunPodV1.generate(&RunParams::new("web", "nginx")).unwrap();
//! assert_eq!(obj["spec"]["containers"][0]["image"], "nginx");
//! assert_eq!(obj["metadata"]["labels"]["run"], "web");
//! ```

mod image;
mod overrides;
mod params;
mod pod;
mod quantity;
mod service;
mod strategic;
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
pub use workload::{cron_job, deployment, job};

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
    /// A generated object could not be turned into JSON (a bug, not user input).
    #[error("unable to serialise the generated object: {0}")]
    Serialize(#[source] serde_json::Error),
}

/// The generators of `kubectl run`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RunGenerator {
    /// `run-pod/v1`: a bare Pod (modern kubectl's only behaviour).
    RunPodV1,
    /// `deployment/apps.v1`.
    DeploymentAppsV1,
    /// `job/v1`.
    JobV1,
    /// `cronjob/v1`: a `batch/v1` CronJob.
    CronJobV1,
    /// `cronjob/v1beta1`: a `batch/v1beta1` CronJob, for servers before 1.21.
    CronJobV1Beta1,
}

impl RunGenerator {
    /// Every run generator, in the order their names are listed.
    pub const ALL: [RunGenerator; 5] = [
        Self::RunPodV1,
        Self::DeploymentAppsV1,
        Self::JobV1,
        Self::CronJobV1,
        Self::CronJobV1Beta1,
    ];
    const NAMES: &'static [&'static str] = &[
        "run-pod/v1",
        "deployment/apps.v1",
        "job/v1",
        "cronjob/v1",
        "cronjob/v1beta1",
    ];

    /// The name used with `--generator`.
    pub fn name(self) -> &'static str {
        match self {
            Self::RunPodV1 => "run-pod/v1",
            Self::DeploymentAppsV1 => "deployment/apps.v1",
            Self::JobV1 => "job/v1",
            Self::CronJobV1 => "cronjob/v1",
            Self::CronJobV1Beta1 => "cronjob/v1beta1",
        }
    }

    /// `(apiVersion, kind, plural resource)` of the generated object: what the create
    /// request needs, known without discovery.
    pub fn resource(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Self::RunPodV1 => ("v1", "Pod", "pods"),
            Self::DeploymentAppsV1 => ("apps/v1", "Deployment", "deployments"),
            Self::JobV1 => ("batch/v1", "Job", "jobs"),
            Self::CronJobV1 => ("batch/v1", "CronJob", "cronjobs"),
            Self::CronJobV1Beta1 => ("batch/v1beta1", "CronJob", "cronjobs"),
        }
    }

    /// Generates the object as JSON.
    pub fn generate(self, params: &RunParams) -> Result<Value, Error> {
        let to_json = |r: Result<Value, serde_json::Error>| r.map_err(Error::Serialize);
        match self {
            Self::RunPodV1 => to_json(serde_json::to_value(pod(params)?)),
            Self::DeploymentAppsV1 => to_json(serde_json::to_value(deployment(params)?)),
            Self::JobV1 => to_json(serde_json::to_value(job(params)?)),
            Self::CronJobV1 => to_json(serde_json::to_value(cron_job(params)?)),
            Self::CronJobV1Beta1 => {
                let mut obj = to_json(serde_json::to_value(cron_job(params)?))?;
                obj["apiVersion"] = Value::from("batch/v1beta1");
                Ok(obj)
            }
        }
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
        serde_json::to_value(service(&params)?).map_err(Error::Serialize)
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
