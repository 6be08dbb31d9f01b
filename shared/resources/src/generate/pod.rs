//! `run-pod/v1`: the Pod that `kubectl run` creates, and the pod spec the legacy
//! workload generators wrap in a template.

use k8s_openapi::api::core::v1::{
    Container, ContainerPort, Pod, PodSpec, PodStatus, ResourceRequirements, SecurityContext,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::{Error, RunParams};

/// Generates the pod of `kubectl run NAME --image=IMAGE …`: one container named
/// `NAME`, labels `run=NAME` unless `--labels` is given, `dnsPolicy: ClusterFirst`
/// and `restartPolicy` from `--restart` (default `Always`).
///
/// Empty `resources: {}` and `status: {}` are kept, as kubectl's dry-run output has
/// them.
pub fn pod(params: &RunParams) -> Result<Pod, Error> {
    // The order of the checks follows kubectl's BasicPod generator, so that a command
    // line with several mistakes reports the same one first.
    let env = params.env()?;
    let annotations = params.annotations()?;
    let labels = params.labels()?;
    let mut spec = pod_spec(params, env)?;
    spec.dns_policy = Some("ClusterFirst".into());
    spec.restart_policy = Some(restart_or(params, "Always"));
    Ok(Pod {
        metadata: ObjectMeta {
            name: Some(params.name.clone()),
            labels: Some(labels),
            annotations,
            ..Default::default()
        },
        spec: Some(spec),
        status: Some(PodStatus::default()),
    })
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
    env: Option<Vec<k8s_openapi::api::core::v1::EnvVar>>,
) -> Result<PodSpec, Error> {
    // kubectl parses limits before requests.
    let limits = params.limits()?;
    let requests = params.requests()?;
    let mut container = Container {
        name: params.name.clone(),
        image: Some(params.image.clone()),
        stdin: params.stdin.then_some(true),
        stdin_once: (params.stdin && !params.leave_stdin_open).then_some(true),
        tty: params.tty.then_some(true),
        resources: Some(ResourceRequirements {
            limits,
            requests,
            ..Default::default()
        }),
        security_context: params.privileged.then(|| SecurityContext {
            privileged: Some(true),
            ..Default::default()
        }),
        env,
        image_pull_policy: (!params.image_pull_policy.is_empty())
            .then(|| params.image_pull_policy.clone()),
        ..Default::default()
    };
    if !params.args.is_empty() {
        if params.command {
            container.command = Some(params.args.clone());
        } else {
            container.args = Some(params.args.clone());
        }
    }
    let port = params.port()?;
    if params.host_port > 0 && port.is_none() {
        return Err(Error::Invalid(
            "--hostport requires --port to be specified".into(),
        ));
    }
    if let Some(port) = port {
        container.ports = Some(vec![ContainerPort {
            container_port: port,
            host_port: (params.host_port > 0).then_some(params.host_port),
            ..Default::default()
        }]);
    }
    Ok(PodSpec {
        containers: vec![container],
        service_account_name: (!params.service_account.is_empty())
            .then(|| params.service_account.clone()),
        ..Default::default()
    })
}
