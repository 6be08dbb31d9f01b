//! What a fresh control plane needs before tests can use it.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{RoleBinding, RoleRef, Subject};
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

use crate::controlplane::LIMITED_NAMESPACE;

/// Creates the limited user's namespace and gives it the built-in `admin` role there
/// (and nowhere else), then waits for kube-controller-manager to create the `default`
/// ServiceAccount in `default`: proof that the controllers run. Idempotent.
pub async fn bootstrap(client: &Client, with_controllers: bool) -> anyhow::Result<()> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(LIMITED_NAMESPACE.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    ignore_exists(namespaces.create(&PostParams::default(), &ns).await)?;

    let bindings: Api<RoleBinding> = Api::namespaced(client.clone(), LIMITED_NAMESPACE);
    let binding = RoleBinding {
        metadata: ObjectMeta {
            name: Some("limited-admin".into()),
            ..Default::default()
        },
        role_ref: RoleRef {
            api_group: "rbac.authorization.k8s.io".into(),
            kind: "ClusterRole".into(),
            name: "admin".into(),
        },
        subjects: Some(vec![Subject {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "User".into(),
            name: "limited".into(),
            namespace: None,
        }]),
    };
    ignore_exists(bindings.create(&PostParams::default(), &binding).await)?;

    if with_controllers {
        wait_for_service_account(client, "default", Duration::from_secs(60)).await?;
    }
    Ok(())
}

/// Waits until the `default` ServiceAccount of `namespace` exists. Pods cannot be
/// created in a namespace before it (the ServiceAccount admission plugin rejects them),
/// exactly as on a real cluster.
pub async fn wait_for_service_account(
    client: &Client,
    namespace: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let deadline = Instant::now() + timeout;
    loop {
        if accounts.get_opt("default").await?.is_some() {
            return Ok(());
        }
        if Instant::now() > deadline {
            anyhow::bail!(
                "the default ServiceAccount in namespace {namespace:?} did not appear within {timeout:?}; is kube-controller-manager running?"
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn ignore_exists<T>(result: Result<T, kube::Error>) -> anyhow::Result<()> {
    match result {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.is_already_exists() => Ok(()),
        Err(e) => Err(e.into()),
    }
}
