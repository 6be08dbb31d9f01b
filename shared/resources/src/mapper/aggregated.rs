//! Aggregated discovery (`apidiscovery.k8s.io/v2`, GA in 1.30): every group-version's
//! resources in two answers, `GET /api` and `GET /apis`, as kubectl 1.37 asks for
//! them, instead of one `GET` per group-version. On 1.37 the two are about 7 KB and
//! 20 KB. A server that does not aggregate (1.20) answers the same requests with its
//! plain group lists, which name the group-versions it serves: the mapper then asks
//! for each one it needs on its own, and for none the lists leave out.
//!
//! The answers are turned into the `APIResourceList`s of the per-group-version
//! endpoints (client-go's `convertAPIGroup`/`convertAPIResource`), which the mapper and
//! its disk cache already speak.

use std::collections::{HashMap, HashSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{APIResource, APIResourceList};
use serde::Deserialize;

/// The `Accept` header kubectl sends: the aggregated form first, plain JSON otherwise.
pub const ACCEPT: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";

/// Whether a response's `Content-Type` is the aggregated form.
pub fn is_aggregated(content_type: &str) -> bool {
    let params: Vec<&str> = content_type.split(';').map(str::trim).collect();
    ["g=apidiscovery.k8s.io", "v=v2", "as=APIGroupDiscoveryList"]
        .iter()
        .all(|p| params.contains(p))
}

#[derive(Deserialize)]
struct DiscoveryList {
    #[serde(default)]
    items: Vec<GroupDiscovery>,
}

#[derive(Deserialize)]
struct GroupDiscovery {
    #[serde(default)]
    metadata: Name,
    #[serde(default)]
    versions: Vec<VersionDiscovery>,
}

#[derive(Deserialize, Default)]
struct Name {
    #[serde(default)]
    name: String,
}

#[derive(Deserialize)]
struct VersionDiscovery {
    version: String,
    #[serde(default)]
    resources: Vec<ResourceDiscovery>,
    /// `Stale` when an aggregated API server did not answer the API server.
    #[serde(default)]
    freshness: Option<String>,
}

#[derive(Deserialize)]
struct ResourceDiscovery {
    resource: String,
    #[serde(rename = "responseKind")]
    response_kind: Option<Kind>,
    #[serde(default)]
    scope: String,
    #[serde(rename = "singularResource", default)]
    singular: String,
    #[serde(default)]
    verbs: Vec<String>,
    #[serde(rename = "shortNames")]
    short_names: Option<Vec<String>>,
    categories: Option<Vec<String>>,
    #[serde(default)]
    subresources: Vec<SubresourceDiscovery>,
}

#[derive(Deserialize)]
struct SubresourceDiscovery {
    subresource: String,
    #[serde(rename = "responseKind")]
    response_kind: Option<Kind>,
    #[serde(default)]
    verbs: Vec<String>,
}

#[derive(Deserialize, Default)]
struct Kind {
    #[serde(default)]
    group: String,
    #[serde(default)]
    version: String,
    #[serde(default)]
    kind: String,
}

/// A plain answer: `GET /api`'s `APIVersions` (`versions` of the core group) or
/// `GET /apis`'s `APIGroupList` (`groups`).
#[derive(Deserialize)]
struct Plain {
    #[serde(default)]
    versions: Vec<String>,
    #[serde(default)]
    groups: Vec<PlainGroup>,
}

#[derive(Deserialize)]
struct PlainGroup {
    #[serde(default)]
    versions: Vec<PlainVersion>,
}

#[derive(Deserialize)]
struct PlainVersion {
    #[serde(rename = "groupVersion")]
    group_version: String,
}

/// What the answers of `GET /api` and `GET /apis` list.
#[derive(Debug, Default)]
pub struct Aggregated {
    /// Group-version (`v1`, `apps/v1`) → its resources.
    pub lists: HashMap<String, APIResourceList>,
    /// Group-versions served whose resources the answers do not carry, to be asked on
    /// their own: those whose aggregated API server did not answer the API server
    /// (so that their failure is reported as such), and every one named by a server
    /// that does not aggregate.
    pub stale: HashSet<String>,
}

impl Aggregated {
    /// Every group-version the answers name as served, with or without its resources:
    /// what the disk cache keeps as the server's group list.
    pub fn served(&self) -> impl Iterator<Item = &String> {
        self.lists.keys().chain(&self.stale)
    }

    /// Adds one plain answer (`GET /api` or `GET /apis` of a server that does not
    /// aggregate): its group-versions, whose resources are asked on their own.
    pub fn read_plain(&mut self, body: &[u8]) -> Result<(), serde_json::Error> {
        let plain: Plain = serde_json::from_slice(body)?;
        let groups = plain.groups.into_iter().flat_map(|g| g.versions);
        self.stale.extend(plain.versions);
        self.stale.extend(groups.map(|v| v.group_version));
        Ok(())
    }

    /// Adds one aggregated answer (`GET /api` or `GET /apis`).
    pub fn read(&mut self, body: &[u8]) -> Result<(), serde_json::Error> {
        let list: DiscoveryList = serde_json::from_slice(body)?;
        for group in list.items {
            for version in group.versions {
                let group_version = match group.metadata.name.as_str() {
                    "" => version.version.clone(),
                    name => format!("{name}/{}", version.version),
                };
                if version.freshness.as_deref() == Some("Stale") {
                    self.stale.insert(group_version);
                    continue;
                }
                let resources = version.resources.into_iter().flat_map(convert).collect();
                self.lists.insert(
                    group_version.clone(),
                    APIResourceList {
                        group_version,
                        resources,
                    },
                );
            }
        }
        Ok(())
    }
}

/// A resource and its subresources as the per-group-version endpoint lists them.
fn convert(r: ResourceDiscovery) -> Vec<APIResource> {
    let namespaced = r.scope == "Namespaced";
    let mut out = Vec::with_capacity(1 + r.subresources.len());
    let kind = r.response_kind.unwrap_or_default();
    for sub in r.subresources {
        let sub_kind = sub.response_kind.unwrap_or_default();
        out.push(APIResource {
            name: format!("{}/{}", r.resource, sub.subresource),
            singular_name: String::new(),
            namespaced,
            group: (!sub_kind.group.is_empty()).then_some(sub_kind.group),
            version: (!sub_kind.version.is_empty()).then_some(sub_kind.version),
            kind: sub_kind.kind,
            verbs: sub.verbs,
            short_names: None,
            categories: None,
            storage_version_hash: None,
        });
    }
    out.insert(
        0,
        APIResource {
            name: r.resource,
            singular_name: r.singular,
            namespaced,
            group: None,
            version: None,
            kind: kind.kind,
            verbs: r.verbs,
            short_names: r.short_names,
            categories: r.categories,
            storage_version_hash: None,
        },
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Trimmed from v1.37.2's `GET /apis` (and `/api`, whose group has no name).
    const APIS: &str = r#"{"kind":"APIGroupDiscoveryList","apiVersion":"apidiscovery.k8s.io/v2","metadata":{},"items":[
      {"metadata":{"name":"apps"},"versions":[{"version":"v1","resources":[{"resource":"deployments","responseKind":{"group":"","version":"","kind":"Deployment"},"scope":"Namespaced","singularResource":"deployment","verbs":["create","get"],"shortNames":["deploy"],"categories":["all"],"subresources":[{"subresource":"scale","responseKind":{"group":"autoscaling","version":"v1","kind":"Scale"},"verbs":["get","patch","update"]},{"subresource":"status","responseKind":{"group":"","version":"","kind":"Deployment"},"verbs":["get"]}]}],"freshness":"Current"}]},
      {"metadata":{"name":"metrics.k8s.io"},"versions":[{"version":"v1beta1","resources":[],"freshness":"Stale"}]},
      {"metadata":{},"versions":[{"version":"v1","resources":[{"resource":"namespaces","responseKind":{"group":"","version":"","kind":"Namespace"},"scope":"Cluster","singularResource":"namespace","verbs":["get"]}]}]}]}"#;

    #[test]
    fn answers_become_the_per_group_version_lists() {
        let mut aggregated = Aggregated::default();
        aggregated.read(APIS.as_bytes()).expect("lists");
        let lists = &aggregated.lists;
        let apps = &lists["apps/v1"];
        assert_eq!(apps.group_version, "apps/v1");
        let names: Vec<(&str, &str, bool)> = apps
            .resources
            .iter()
            .map(|r| (r.name.as_str(), r.kind.as_str(), r.namespaced))
            .collect();
        assert_eq!(
            names,
            [
                ("deployments", "Deployment", true),
                ("deployments/scale", "Scale", true),
                ("deployments/status", "Deployment", true)
            ]
        );
        assert_eq!(
            apps.resources[0].short_names.as_deref(),
            Some(&["deploy".to_string()][..])
        );
        assert_eq!(apps.resources[1].group.as_deref(), Some("autoscaling"));
        assert!(
            !lists["v1"].resources[0].namespaced,
            "a cluster-scoped kind"
        );
        assert!(!lists.contains_key("metrics.k8s.io/v1beta1"));
        assert!(
            aggregated.stale.contains("metrics.k8s.io/v1beta1"),
            "asked on its own"
        );
    }

    /// v1.20.2's plain answers: every group-version is served, none carries its
    /// resources.
    #[test]
    fn plain_answers_name_the_group_versions_to_ask() {
        let mut answers = Aggregated::default();
        answers
            .read_plain(
                br#"{"kind":"APIVersions","versions":["v1"],"serverAddressByClientCIDRs":[]}"#,
            )
            .expect("/api");
        answers
            .read_plain(br#"{"kind":"APIGroupList","apiVersion":"v1","groups":[{"name":"batch","versions":[{"groupVersion":"batch/v1","version":"v1"},{"groupVersion":"batch/v1beta1","version":"v1beta1"}],"preferredVersion":{"groupVersion":"batch/v1","version":"v1"}}]}"#)
            .expect("/apis");
        assert!(answers.lists.is_empty());
        let mut served: Vec<&String> = answers.served().collect();
        served.sort();
        assert_eq!(served, ["batch/v1", "batch/v1beta1", "v1"]);
    }

    #[test]
    fn the_aggregated_form_is_told_by_its_content_type() {
        assert!(is_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
        ));
        assert!(!is_aggregated("application/json"));
        assert!(!is_aggregated(
            "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"
        ));
    }
}
