//! The legacy generators of kubectl ≤ 1.17 that wrap the run pod in a controller:
//! `run/v1` (a ReplicationController), `deployment/apps.v1`, `job/v1` and `cronjob/v1`
//! (`batch/v1`; the older group-versions of the same kinds are produced from these by
//! [`super::RunGenerator::generate`], since they agree on every field set here and
//! k8s-openapi no longer has their types).

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStatus, DeploymentStrategy,
};
use k8s_openapi::api::batch::v1::{
    CronJob, CronJobSpec, CronJobStatus, Job, JobSpec, JobStatus, JobTemplateSpec,
};
use k8s_openapi::api::core::v1::{
    PodTemplateSpec, ReplicationController, ReplicationControllerSpec, ReplicationControllerStatus,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use super::pod::{pod_spec, restart_or};
use super::{Error, RunParams};

/// The pod template shared by the three kinds: the run labels (and annotations) on
/// the template, and the run pod spec.
fn template(
    params: &RunParams,
    restart_policy: Option<String>,
) -> Result<(PodTemplateSpec, ObjectMeta), Error> {
    let env = params.env()?;
    let annotations = params.annotations()?;
    let labels = params.labels()?;
    let mut spec = pod_spec(params, env)?;
    spec.restart_policy = restart_policy;
    let template = PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels.clone()),
            annotations,
            ..Default::default()
        }),
        spec: Some(spec),
    };
    let meta = ObjectMeta {
        name: Some(params.name.clone()),
        labels: Some(labels),
        ..Default::default()
    };
    Ok((template, meta))
}

/// `deployment/apps.v1`: `--replicas` pods selected by the run labels. As in kubectl
/// the pod spec leaves `restartPolicy` to the server (Deployments only allow `Always`).
pub fn deployment(params: &RunParams) -> Result<Deployment, Error> {
    let (template, metadata) = template(params, None)?;
    let labels = metadata.labels.clone();
    Ok(Deployment {
        metadata,
        spec: Some(DeploymentSpec {
            replicas: Some(params.replicas),
            selector: LabelSelector {
                match_labels: labels,
                ..Default::default()
            },
            strategy: Some(DeploymentStrategy::default()),
            template,
            ..Default::default()
        }),
        status: Some(DeploymentStatus::default()),
    })
}

/// `run/v1`: kubectl 1.17's `BasicReplicationController`: `--replicas` pods, selected
/// by the run labels (the selector is a plain map on a ReplicationController), the
/// template's `restartPolicy` left to the server (which allows only `Always`).
/// `status: {replicas: 0}` is kept: Go prints that field even when zero.
pub fn replication_controller(params: &RunParams) -> Result<ReplicationController, Error> {
    let (template, metadata) = template(params, None)?;
    Ok(ReplicationController {
        spec: Some(ReplicationControllerSpec {
            replicas: Some(params.replicas),
            selector: metadata.labels.clone(),
            template: Some(template),
            ..Default::default()
        }),
        metadata,
        status: Some(ReplicationControllerStatus::default()),
    })
}

/// `job/v1`: a Job running the pod to completion. Without `--restart` the pod restarts
/// `OnFailure`, the policy that made kubectl ≤ 1.17 pick this generator.
pub fn job(params: &RunParams) -> Result<Job, Error> {
    let (template, metadata) = template(params, Some(restart_or(params, "OnFailure")))?;
    Ok(Job {
        metadata,
        spec: Some(JobSpec {
            template,
            ..Default::default()
        }),
        status: Some(JobStatus::default()),
    })
}

/// `cronjob/v1`: a CronJob on `--schedule`, concurrency `Allow`. Without `--restart` the
/// pod restarts `Never` (kubectl's documented default for cron jobs).
pub fn cron_job(params: &RunParams) -> Result<CronJob, Error> {
    let (template, metadata) = template(params, Some(restart_or(params, "Never")))?;
    Ok(CronJob {
        metadata,
        spec: Some(CronJobSpec {
            schedule: params.schedule.clone(),
            concurrency_policy: Some("Allow".into()),
            job_template: JobTemplateSpec {
                metadata: None,
                spec: Some(JobSpec {
                    template,
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        status: Some(CronJobStatus::default()),
    })
}
