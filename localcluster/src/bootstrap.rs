//! What a fresh control plane needs before tests can use it.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{RoleBinding, RoleRef, Subject};
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

use crate::controlplane::{LIMITED_NAMESPACE, Release};

/// Creates the limited user's namespace and gives it the built-in `admin` role there
/// (and nowhere else), then waits for kube-controller-manager to create the `default`
/// ServiceAccount in `default`: proof that the controllers run. Idempotent.
pub async fn bootstrap(
    client: &Client,
    release: Release,
    with_controllers: bool,
) -> anyhow::Result<()> {
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
        wait_for_service_account(client, release, "default", Duration::from_secs(60)).await?;
    }
    Ok(())
}

/// Waits until the `default` ServiceAccount of `namespace` exists, and on releases
/// before 1.24 has its token Secret too. Before both, the 1.20 apiserver's
/// ServiceAccount admission plugin rejects pods (500 ServerTimeout "No API token found
/// for service account \"default\""), exactly as on a real cluster right after a
/// namespace is created; since 1.24 no such Secret is made (pods get projected tokens)
/// and admission only needs the account.
pub async fn wait_for_service_account(
    client: &Client,
    release: Release,
    namespace: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    let needs_secret = release.minor() < 24;
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), namespace);
    let deadline = Instant::now() + timeout;
    loop {
        let account = accounts.get_opt("default").await?;
        if account.is_some_and(|sa| !needs_secret || sa.secrets.is_some_and(|s| !s.is_empty())) {
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
