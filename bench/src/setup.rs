//! What the cases need on the cluster before a timed run, done through the API (not
//! kubectl) so that preparing a run is quick and never mistaken for the run itself:
//! fresh namespaces, a ReplicationController whose pods are all ready, and the
//! in-process client ceiling for create-file.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, Namespace, Pod, PodSpec, PodTemplateSpec, ReplicationController,
    ReplicationControllerSpec, ServiceAccount,
};
use kube::api::{DeleteParams, ListParams, ObjectMeta, PostParams};
use kube::{Api, Client};

use super::cases::{self, Kind};

/// The label every namespace the benchmark creates carries (for cleaning up an
/// `--existing` cluster).
pub const LABEL: &str = "kubeplug.io/bench";

/// A client for the current context of a kubeconfig file.
pub async fn client(kubeconfig: &Path) -> anyhow::Result<Client> {
    let config = kube::config::Kubeconfig::read_from(kubeconfig)?;
    let context = config
        .current_context
        .clone()
        .context("the kubeconfig has no current-context")?;
    localcluster::client_for(kubeconfig, &context).await
}

/// Binds `cluster-admin` to `group` (a ClusterRoleBinding named after it, created
/// once): the throttled cases' identity may then do all the admin does, but outside
/// `system:masters`, so the API server throttles it.
pub async fn throttled_group(client: &Client, group: &str) -> anyhow::Result<()> {
    use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleRef, Subject};
    let api: Api<ClusterRoleBinding> = Api::all(client.clone());
    if api.get_opt(group).await?.is_some() {
        return Ok(());
    }
    let binding = ClusterRoleBinding {
        metadata: ObjectMeta {
            name: Some(group.to_string()),
            labels: Some(BTreeMap::from([(LABEL.to_string(), "true".to_string())])),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: "cluster-admin".into(),
        },
        subjects: Some(vec![Subject {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "Group".into(),
            name: group.to_string(),
            namespace: None,
        }]),
    };
    api.create(&PostParams::default(), &binding)
        .await
        .with_context(|| format!("cannot bind cluster-admin to group {group}"))?;
    Ok(())
}

/// Creates the namespaces (labelled [`LABEL`]); with `for_pods`, also waits until each
/// has its `default` ServiceAccount (pods are rejected before it exists).
pub async fn namespaces(client: &Client, names: &[String], for_pods: bool) -> anyhow::Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    let _: Vec<Namespace> = futures::stream::iter(names)
        .map(|name| {
            let api = api.clone();
            async move {
                let ns = Namespace {
                    metadata: ObjectMeta {
                        name: Some(name.clone()),
                        labels: Some(BTreeMap::from([(LABEL.to_string(), "true".to_string())])),
                        ..Default::default()
                    },
                    ..Default::default()
                };
                api.create(&PostParams::default(), &ns)
                    .await
                    .with_context(|| format!("cannot create namespace {name}"))
            }
        })
        .buffer_unordered(8)
        .try_collect()
        .await?;
    if for_pods {
        let deadline = Instant::now() + Duration::from_secs(60);
        for name in names {
            let sa: Api<ServiceAccount> = Api::namespaced(client.clone(), name);
            while sa.get_opt("default").await?.is_none() {
                if Instant::now() > deadline {
                    bail!("namespace {name} got no default ServiceAccount within 60s");
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    Ok(())
}

/// The ReplicationController the rolling-update cases start from: `replicas` pods of
/// `nginx:1` whose readiness probe passes `ready_after_ms` (whole seconds) after they
/// start (the probe is in the template, so the new controller's pods get it too).
pub fn replication_controller(
    name: &str,
    replicas: i32,
    ready_after_ms: u64,
) -> anyhow::Result<ReplicationController> {
    let labels = BTreeMap::from([("app".to_string(), name.to_string())]);
    Ok(ReplicationController {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            ..Default::default()
        },
        spec: Some(ReplicationControllerSpec {
            replicas: Some(replicas),
            selector: Some(labels.clone()),
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: name.to_string(),
                        image: Some("nginx:1".to_string()),
                        readiness_probe: Some(serde_json::from_value(
                            localcluster::steering::ready_after((ready_after_ms / 1000) as u32),
                        )?),
                        ..Default::default()
                    }],
                    // Deleting old pods must not wait out the default 30 s grace period.
                    termination_grace_period_seconds: Some(0),
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// Creates the controller in each namespace and waits until all are fully ready.
pub async fn ready_controllers(
    client: &Client,
    namespaces: &[String],
    rc: &ReplicationController,
    timeout: Duration,
) -> anyhow::Result<()> {
    let name = rc.metadata.name.clone().unwrap_or_default();
    let want = rc.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    for ns in namespaces {
        let api: Api<ReplicationController> = Api::namespaced(client.clone(), ns);
        api.create(&PostParams::default(), rc)
            .await
            .with_context(|| format!("cannot create replicationcontroller {ns}/{name}"))?;
    }
    let deadline = Instant::now() + timeout;
    for ns in namespaces {
        let api: Api<ReplicationController> = Api::namespaced(client.clone(), ns);
        loop {
            let ready = api
                .get(&name)
                .await?
                .status
                .and_then(|s| s.ready_replicas)
                .unwrap_or(0);
            if ready >= want {
                break;
            }
            if Instant::now() > deadline {
                bail!("{ns}/{name}: {ready}/{want} replicas ready after {timeout:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    Ok(())
}

/// The ConfigMap the create-file cases create, as the manifest files hold it.
pub fn config_map(i: u32) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("cm-{i:05}")),
            labels: Some(BTreeMap::from([("app".to_string(), "bench".to_string())])),
            ..Default::default()
        },
        data: Some(BTreeMap::from([
            ("index".to_string(), i.to_string()),
            (
                "settings.conf".to_string(),
                format!("name = cm-{i:05}\nreplicas = 3\nlog_level = info\n"),
            ),
        ])),
        ..Default::default()
    }
}

/// Writes `objects` ConfigMap manifests, one YAML file each, into `dir`.
pub fn write_manifests(dir: &Path, objects: u32) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    for i in 1..=objects {
        let cm = config_map(i);
        let mut value = serde_json::to_value(&cm)?;
        if let Some(map) = value.as_object_mut() {
            map.insert("apiVersion".into(), "v1".into());
            map.insert("kind".into(), "ConfigMap".into());
        }
        // JSON is YAML; kubectl and our Builder read both, and `.yaml` is the common case.
        std::fs::write(
            dir.join(format!("cm-{i:05}.yaml")),
            serde_json::to_string_pretty(&value)?,
        )?;
    }
    Ok(())
}

/// Writes `deployments` one-replica Deployment manifests (`web-00001`…, pods ready
/// [`cases::READY_AFTER_MS`] after they start), one YAML file each, into `dir`.
pub fn write_deployments(dir: &Path, deployments: u32) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    for i in 1..=deployments {
        let name = format!("web-{i:05}");
        let value = serde_json::json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "labels": {"app": "bench"}},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{
                        "name": "web",
                        "image": "nginx:1",
                        "readinessProbe": localcluster::steering::ready_after((cases::READY_AFTER_MS / 1000) as u32),
                    }]}
                }
            }
        });
        std::fs::write(
            dir.join(format!("{name}.yaml")),
            serde_json::to_string_pretty(&value)?,
        )?;
    }
    Ok(())
}

/// The ceiling for create-file: the same ConfigMaps created by an in-process kube-rs
/// client with `in_flight` requests in flight (no process start, no parsing, no
/// discovery). Returns the wall time.
pub async fn ceiling(
    client: &Client,
    ns: &str,
    objects: u32,
    in_flight: usize,
) -> anyhow::Result<Duration> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let started = Instant::now();
    let _: Vec<ConfigMap> = futures::stream::iter(1..=objects)
        .map(|i| {
            let api = api.clone();
            async move { api.create(&PostParams::default(), &config_map(i)).await }
        })
        .buffer_unordered(in_flight)
        .try_collect()
        .await?;
    Ok(started.elapsed())
}

/// Checks that a run did what its case asks: the pod exists, all ConfigMaps exist, the
/// controller named `web` runs the new image at full size.
pub async fn verify(client: &Client, kind: Kind, ns: &str) -> anyhow::Result<()> {
    match kind {
        Kind::Help { .. } | Kind::RunPodDryRun { .. } => {}
        Kind::RunPodCreate => {
            let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
            if pods.get_opt("bench").await?.is_none() {
                bail!("pod {ns}/bench does not exist");
            }
        }
        Kind::CreateFile { objects } => {
            let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
            let found = cms
                .list_metadata(&ListParams::default().labels("app=bench"))
                .await?
                .items
                .len();
            if found != objects as usize {
                bail!("{found} of the {objects} ConfigMaps exist in {ns}");
            }
        }
        Kind::CreateFileWait { deployments } => {
            let api: Api<Deployment> = Api::namespaced(client.clone(), ns);
            let list = api.list(&ListParams::default().labels("app=bench")).await?;
            let available = list
                .items
                .iter()
                .filter(|d| d.status.as_ref().and_then(|s| s.available_replicas) == Some(1))
                .count();
            if available != deployments as usize {
                bail!("{available} of the {deployments} Deployments are available in {ns}");
            }
        }
        Kind::RollingUpdate { replicas } => {
            let rcs: Api<ReplicationController> = Api::namespaced(client.clone(), ns);
            let rc = rcs
                .get_opt("web")
                .await?
                .with_context(|| format!("{ns}/web does not exist"))?;
            let spec = rc.spec.unwrap_or_default();
            let image = spec
                .template
                .and_then(|t| t.spec)
                .and_then(|s| s.containers.into_iter().next())
                .and_then(|c| c.image)
                .unwrap_or_default();
            if image != "nginx:2" || spec.replicas != i32::try_from(replicas).ok() {
                bail!(
                    "{ns}/web runs {image:?} with {:?} replicas, not nginx:2 with {replicas}",
                    spec.replicas
                );
            }
        }
    }
    Ok(())
}

/// Deletes every namespace the benchmark created (without waiting for them to go).
pub async fn delete_namespaces(client: &Client) -> anyhow::Result<usize> {
    let api: Api<Namespace> = Api::all(client.clone());
    let list = api
        .list(&ListParams::default().labels(&format!("{LABEL}=true")))
        .await?;
    for ns in &list.items {
        if let Some(name) = &ns.metadata.name {
            api.delete(name, &DeleteParams::background()).await?;
        }
    }
    Ok(list.items.len())
}

/// Deletes the benchmark's namespaces and waits (up to `limit`) until they are gone,
/// so that the next case starts on an empty node: the node takes 250 pods and the
/// scheduler leaves the rest Pending (the rolling-update cases alone create up to 36
/// pods per run).
pub async fn clear_namespaces(client: &Client, limit: Duration) -> anyhow::Result<()> {
    delete_namespaces(client).await?;
    let api: Api<Namespace> = Api::all(client.clone());
    let started = Instant::now();
    loop {
        let left = api
            .list(&ListParams::default().labels(&format!("{LABEL}=true")))
            .await?
            .items
            .len();
        if left == 0 {
            return Ok(());
        }
        if started.elapsed() > limit {
            bail!("{left} benchmark namespaces still terminating after {limit:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// `v1.20.2` or the like.
pub async fn server_version(client: &Client) -> anyhow::Result<String> {
    Ok(client.apiserver_version().await?.git_version)
}
