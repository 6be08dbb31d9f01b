//! Resolving a [`Lookup`]: names from the cluster (namespaces, ReplicationControllers)
//! or from the kubeconfig (contexts, clusters, users).
//!
//! A completion must answer while the user waits at a prompt, so every cluster lookup
//! is bounded by [`TIMEOUT`] (client set-up, exec credential plugins and the request
//! together) and any failure — no kubeconfig, an unreachable server, RBAC — yields no
//! names rather than a message: the shell would print it in the middle of the line.

use std::time::Duration;

use kube::api::{Api, DynamicObject, ListParams};

use super::engine::Lookup;
use super::protocol::Candidate;
use crate::flags::ConfigFlags;

/// The longest a completion waits for the cluster.
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// The names `lookup` asks for, filtered by its prefix, sorted; empty on any failure.
pub fn resolve(lookup: &Lookup, flags: &ConfigFlags) -> Vec<Candidate> {
    let (names, prefix) = match lookup {
        Lookup::Contexts { prefix } => (kubeconfig_names(flags, Kind::Contexts), prefix),
        Lookup::Clusters { prefix } => (kubeconfig_names(flags, Kind::Clusters), prefix),
        Lookup::Users { prefix } => (kubeconfig_names(flags, Kind::Users), prefix),
        Lookup::Namespaces { prefix } => (cluster_names(flags, Resource::Namespaces), prefix),
        Lookup::ReplicationControllers { prefix } => (
            cluster_names(flags, Resource::ReplicationControllers),
            prefix,
        ),
    };
    let mut names: Vec<String> = names
        .into_iter()
        .filter(|n| n.starts_with(prefix.as_str()))
        .collect();
    names.sort();
    names.dedup();
    names.into_iter().map(Candidate::new).collect()
}

enum Kind {
    Contexts,
    Clusters,
    Users,
}

fn kubeconfig_names(flags: &ConfigFlags, kind: Kind) -> Vec<String> {
    let Ok((Some(kubeconfig), _)) = flags.load_kubeconfig() else {
        return Vec::new();
    };
    match kind {
        Kind::Contexts => kubeconfig.contexts.into_iter().map(|c| c.name).collect(),
        Kind::Clusters => kubeconfig.clusters.into_iter().map(|c| c.name).collect(),
        Kind::Users => kubeconfig.auth_infos.into_iter().map(|u| u.name).collect(),
    }
}

#[derive(Clone, Copy)]
enum Resource {
    Namespaces,
    ReplicationControllers,
}

fn cluster_names(flags: &ConfigFlags, resource: Resource) -> Vec<String> {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    runtime
        .block_on(async {
            tokio::time::timeout(TIMEOUT, list_names(flags, resource))
                .await
                .ok()
                .flatten()
        })
        .unwrap_or_default()
}

async fn list_names(flags: &ConfigFlags, resource: Resource) -> Option<Vec<String>> {
    apiclient::tls::install_crypto_provider();
    let mut config = flags.to_config().await.ok()?;
    let (namespace, _) = flags.namespace_of(&config);
    // Bounded as every client is (a paused server must not hang the shell's prompt).
    apiclient::bound::bound_requests(&mut config, flags.request_timeout().ok()?, None);
    // Not `ConfigFlags::client`: a completion answer stays silent, server warnings
    // included (they would land on the user's prompt).
    let (credentials, identity) = apiclient::credentials::Credentials::of(&config).ok()?;
    let client = apiclient::client::builder(&config, credentials, identity)
        .ok()?
        .build();
    // Metadata-only lists: the names are all we need, and the objects can be large.
    let names = match resource {
        Resource::Namespaces => {
            // The plural from the one kind → resource table.
            let ar = resources::mapping_at("v1", "Namespace")?.api_resource();
            Api::<DynamicObject>::all_with(client, &ar)
                .list_metadata(&ListParams::default())
                .await
        }
        Resource::ReplicationControllers => {
            // The plural from the one kind → resource table.
            let ar = resources::mapping_at("v1", "ReplicationController")?.api_resource();
            Api::<DynamicObject>::namespaced_with(client, &namespace, &ar)
                .list_metadata(&ListParams::default())
                .await
        }
    }
    .ok()?;
    Some(
        names
            .items
            .into_iter()
            .filter_map(|item| item.metadata.name)
            .collect(),
    )
}
