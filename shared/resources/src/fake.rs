//! A fake [`Discover`] for tests: canned resource lists and a log of what was asked.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIResource, APIResourceList};

use super::Discover;

/// Serves the group-versions it was given; everything else is "not served".
#[derive(Clone, Default)]
pub struct FakeDiscovery {
    lists: HashMap<String, APIResourceList>,
    /// Group-versions whose discovery fails.
    failing: HashSet<String>,
    /// The group-versions asked for, in order.
    pub requests: Arc<Mutex<Vec<String>>>,
}

impl FakeDiscovery {
    /// A fake serving the core `v1` group with ConfigMaps, Namespaces and Pods, and
    /// `apps/v1` with Deployments.
    pub fn standard() -> Self {
        Self::default()
            .serve(
                "v1",
                &[
                    ("ConfigMap", "configmaps", true),
                    ("Namespace", "namespaces", false),
                    ("Pod", "pods", true),
                ],
            )
            .serve("apps/v1", &[("Deployment", "deployments", true)])
    }

    /// Adds a group-version with `(kind, resource, namespaced)` entries.
    pub fn serve(mut self, group_version: &str, kinds: &[(&str, &str, bool)]) -> Self {
        let resources = kinds
            .iter()
            .map(|(kind, name, namespaced)| APIResource {
                kind: kind.to_string(),
                name: name.to_string(),
                namespaced: *namespaced,
                singular_name: String::new(),
                verbs: vec!["create".into(), "get".into(), "list".into()],
                ..Default::default()
            })
            .collect();
        self.lists.insert(
            group_version.to_string(),
            APIResourceList {
                group_version: group_version.to_string(),
                resources,
            },
        );
        self
    }

    /// Makes discovery of `group_version` fail, as an unreachable server's does.
    pub fn fail(mut self, group_version: &str) -> Self {
        self.failing.insert(group_version.to_string());
        self
    }

    /// The group-versions asked for so far.
    pub fn requested(&self) -> Vec<String> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Discover for FakeDiscovery {
    /// A server that does not aggregate: its group list names what it serves, and
    /// says nothing when some discovery fails (the server is unreachable).
    fn all(&self) -> BoxFuture<'_, Option<crate::mapper::aggregated::Aggregated>> {
        let answer = self.failing.is_empty().then(|| {
            let mut all = crate::mapper::aggregated::Aggregated::default();
            all.stale.extend(self.lists.keys().cloned());
            all
        });
        Box::pin(async move { answer })
    }

    fn resources<'a>(
        &'a self,
        group_version: &'a str,
    ) -> BoxFuture<'a, Result<Option<APIResourceList>, kube::Error>> {
        if let Ok(mut log) = self.requests.lock() {
            log.push(group_version.to_string());
        }
        if self.failing.contains(group_version) {
            let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
            return Box::pin(async move { Err(kube::Error::Service(Box::new(refused))) });
        }
        let answer = self.lists.get(group_version).cloned();
        Box::pin(async move { Ok(answer) })
    }
}
