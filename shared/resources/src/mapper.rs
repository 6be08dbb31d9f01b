//! The RESTMapper: from an object's `apiVersion` and `kind` to the resource it is
//! created under, through discovery.
//!
//! kubectl's deferred, disk-cached discovery mapper asks the server for everything
//! once the cache is stale. So does this one when the group-versions the input uses are
//! not all cached: aggregated discovery (`aggregated`, two requests on a current
//! server) names every group-version at once; a server without it is asked one
//! `GET /apis/<group>/<version>` per group-version in use, in parallel. Each answer is
//! kept on disk for a TTL, in kubectl's layout and format under
//! `~/.kube/cache/kubeplug/discovery/<host_port>/<group>/<version>/serverresources.json`
//! (or `<--cache-dir>/kubeplug/…`, `$KUBECACHEDIR/kubeplug/…`), beside the server's
//! group list (`servergroups.json`), without which no cached group-version is
//! trusted. A cached group-version that lacks a kind the input needs is fetched again,
//! so a CRD installed since the last run is found.
//!
//! Two more sources answer without the server: CRDs in the input itself (so a CRD and
//! its instances can go in one run, and `--dry-run=client` maps them offline), and
//! the built-in kinds of k8s-openapi, used first when [`RestMapper::prefer_builtins`]
//! is set (rolling-update's `-f`) and as the last resort when there is no server at
//! all (a client dry run without a usable kubeconfig). A client dry run with a server
//! maps through its discovery, as kubectl's does, so that a kind the server does not
//! serve fails there too.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use futures::future::{BoxFuture, join_all};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    APIGroup, APIGroupList, APIResourceList, GroupVersionForDiscovery,
};
use kube::core::GroupVersionKind;
use serde_json::Value;

use super::{Info, Mapping, builtin};

/// Where discovery documents come from: the API server, or a fake in tests.
pub trait Discover: Send + Sync {
    /// The resources of one group-version (`v1`, `apps/v1`); `Ok(None)` when the
    /// server does not serve it.
    fn resources<'a>(
        &'a self,
        group_version: &'a str,
    ) -> BoxFuture<'a, Result<Option<APIResourceList>, kube::Error>>;

    /// Every group-version's resources at once (aggregated discovery, kubectl 1.37's
    /// two requests); `None` when the server does not aggregate or the answers could
    /// not be read: the group-versions are then asked one by one.
    fn all(&self) -> BoxFuture<'_, Option<aggregated::Aggregated>> {
        Box::pin(async { None })
    }
}

/// Discovery through a kube [`kube::Client`].
struct KubeDiscovery(kube::Client);

impl Discover for KubeDiscovery {
    fn resources<'a>(
        &'a self,
        group_version: &'a str,
    ) -> BoxFuture<'a, Result<Option<APIResourceList>, kube::Error>> {
        Box::pin(async move {
            let result = if group_version.contains('/') {
                self.0.list_api_group_resources(group_version).await
            } else {
                self.0.list_core_api_resources(group_version).await
            };
            match result {
                Ok(list) => Ok(Some(list)),
                Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
                Err(e) => Err(e),
            }
        })
    }

    fn all(&self) -> BoxFuture<'_, Option<aggregated::Aggregated>> {
        Box::pin(async move {
            let (core, groups) = futures::join!(self.groups("/api"), self.groups("/apis"));
            let mut all = aggregated::Aggregated::default();
            for (body, is_aggregated) in [core?, groups?] {
                if is_aggregated {
                    all.read(&body).ok()?;
                } else {
                    all.read_plain(&body).ok()?;
                }
            }
            Some(all)
        })
    }
}

impl KubeDiscovery {
    /// One answer of `/api` or `/apis`, when it succeeded: its body, and whether the
    /// server sent the aggregated form.
    async fn groups(&self, path: &str) -> Option<(Vec<u8>, bool)> {
        let request = http::Request::get(path)
            .header(http::header::ACCEPT, aggregated::ACCEPT)
            .body(kube::client::Body::empty())
            .ok()?;
        let response = self.0.send(request).await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let aggregated = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(aggregated::is_aggregated);
        let body = response.into_body().collect_bytes().await.ok()?;
        Some((body.to_vec(), aggregated))
    }
}

/// The on-disk discovery cache of one server.
#[derive(Debug, Clone)]
pub struct DiscoveryCache {
    dir: PathBuf,
    ttl: Duration,
}

impl DiscoveryCache {
    /// kubectl's TTL for its discovery cache.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(6 * 60 * 60);

    /// A cache rooted at `dir` (already specific to one server).
    pub fn new(dir: impl Into<PathBuf>, ttl: Duration) -> Self {
        Self {
            dir: dir.into(),
            ttl,
        }
    }

    /// kubectl's default `--cache-dir`: `$KUBECACHEDIR`, else `~/.kube/cache`. `None`
    /// without either.
    pub fn default_root() -> Option<PathBuf> {
        match std::env::var_os("KUBECACHEDIR").filter(|v| !v.is_empty()) {
            Some(dir) => Some(PathBuf::from(dir)),
            None => Some(apiclient::home::dir()?.join(".kube").join("cache")),
        }
    }

    /// The cache of the server at `server` under the cache directory `root`
    /// (`--cache-dir`): `<root>/kubeplug/discovery/<host_port>`.
    pub fn for_server(root: &Path, server: &http::Uri) -> Self {
        Self::new(
            root.join("kubeplug")
                .join("discovery")
                .join(server_dir_name(server)),
            Self::DEFAULT_TTL,
        )
    }

    /// The cache of the server `server` (a kube `Config`'s `cluster_url`) for a
    /// `--cache-dir` value: under it when given and not empty, else under
    /// [`Self::default_root`] (kubectl's default). `None` without any. It takes the
    /// flag's value, not the flag group, so `flags` stays below `resource`.
    pub fn for_cache_dir(cache_dir: Option<&Path>, server: &http::Uri) -> Option<Self> {
        let root = match cache_dir {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => Self::default_root()?,
        };
        Some(Self::for_server(&root, server))
    }

    /// The directory of this server's cache.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn file(&self, group_version: &str) -> PathBuf {
        self.dir.join(group_version).join("serverresources.json")
    }

    /// The server's group list, in kubectl's place and format (an `APIGroupList`).
    fn groups_file(&self) -> PathBuf {
        self.dir.join("servergroups.json")
    }

    /// The mapping of `gvk` from the cached list of its group-version, when that
    /// list is fresh and names the kind: what a client dry run can learn of the
    /// server without asking it.
    pub fn mapping(&self, gvk: &GroupVersionKind) -> Option<Mapping> {
        let list = self.load(&self.served()?, &group_version(gvk))?;
        find_resource(&list, &gvk.kind).map(|r| mapping_of(gvk, r))
    }

    /// The group-versions the server named when the cache was last filled from its
    /// group list, if that list is present, readable and younger than the TTL.
    ///
    /// The cache is kept per host and port, and another server may have answered
    /// there before (a cluster recreated at another version): a group-version's file
    /// is trusted only when the latest group list names it, as kubectl's disk cache
    /// trusts its `servergroups.json` first. Without a fresh list nothing cached is
    /// trusted, so a cache written before the list existed heals on the next run.
    fn served(&self) -> Option<BTreeSet<String>> {
        let list: APIGroupList =
            serde_json::from_slice(&self.read_fresh(&self.groups_file())?).ok()?;
        let versions = list.groups.into_iter().flat_map(|g| g.versions);
        Some(versions.map(|v| v.group_version).collect())
    }

    /// The cached list of `group_version`, if `served` names it and its file is
    /// present, readable and younger than the TTL.
    fn load(&self, served: &BTreeSet<String>, group_version: &str) -> Option<APIResourceList> {
        if !served.contains(group_version) {
            return None;
        }
        serde_json::from_slice(&self.read_fresh(&self.file(group_version))?).ok()
    }

    /// A cache file's bytes, if it is younger than the TTL.
    fn read_fresh(&self, path: &Path) -> Option<Vec<u8>> {
        let age = std::fs::metadata(path)
            .ok()?
            .modified()
            .ok()?
            .elapsed()
            .unwrap_or_default();
        if age > self.ttl {
            return None;
        }
        std::fs::read(path).ok()
    }

    /// Stores a list atomically ([`crate::cache_file`]), so concurrent runs never read
    /// half a file. Failures only cost a future cache miss.
    fn store(&self, group_version: &str, list: &APIResourceList) {
        if let Ok(bytes) = serde_json::to_vec(list) {
            crate::cache_file::store(&self.file(group_version), &bytes, "discovery cache");
        }
    }

    /// Stores the server's group list: every group-version it serves (`v1`,
    /// `apps/v1`), grouped as an `APIGroupList` (the core group's name is empty, as in
    /// kubectl's file).
    fn store_served<'a>(&self, served: impl IntoIterator<Item = &'a String>) {
        let mut groups: BTreeMap<&str, Vec<GroupVersionForDiscovery>> = BTreeMap::new();
        for gv in served {
            let (group, version) = gv.rsplit_once('/').unwrap_or(("", gv));
            groups
                .entry(group)
                .or_default()
                .push(GroupVersionForDiscovery {
                    group_version: gv.clone(),
                    version: version.to_string(),
                });
        }
        let list = APIGroupList {
            groups: groups
                .into_iter()
                .map(|(name, versions)| APIGroup {
                    name: name.to_string(),
                    versions,
                    ..Default::default()
                })
                .collect(),
        };
        if let Ok(bytes) = serde_json::to_vec(&list) {
            crate::cache_file::store(&self.groups_file(), &bytes, "discovery cache");
        }
    }
}

/// kubectl's `computeDiscoverCacheDir`: the host and port with every character other
/// than word characters, `.` and `/` replaced by `_`. The host is the server's as
/// written (a host that is not ASCII too, which Go's ASCII `\w` then replaces a
/// character at a time: `b_cher.example_6443`).
fn server_dir_name(server: &http::Uri) -> String {
    let host = server.authority().map(|a| a.as_str()).unwrap_or("default");
    apiclient::idn::written_authority(host)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// What client-go logs of a discovery that failed (`reason`: the failure as kubectl
/// words it, `Get "https://…/api?timeout=32s": dial tcp …`), each time a mapping meets
/// it: its memory cache's error line, at every verbosity (`E… memcache.go:381]
/// "Couldn't get current server API group list" err="…"`), and from `-v=4` its disk
/// cache's note that nothing was cached (`cached_discovery.go:153`).
pub fn log_failed_discovery(reason: &str) {
    use apiclient::klog::{self, Severity, Value};
    let err = [("err", Value::Text(reason.as_bytes()))];
    klog::write(&klog::line(
        Severity::Error,
        "memcache.go",
        381,
        &klog::structured("Couldn't get current server API group list", &err),
    ));
    if klog::enabled(4) {
        klog::info(
            "cached_discovery.go",
            153,
            &klog::structured("Skipped caching discovery info due to error", &err),
        );
    }
}

/// Why [`RestMapper::mapping`] found no mapping, in kubectl's words.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NoMapping {
    /// Discovery answered, and nothing serves this kind in this version (the
    /// RESTMapper's `NoKindMatchError`).
    #[error("no matches for kind {kind:?} in version {group_version:?}")]
    NoMatch {
        /// The kind asked for.
        kind: String,
        /// Its `apiVersion`.
        group_version: String,
    },
    /// Discovery for the group-version failed.
    #[error("{}", super::error::discovery_reason(.0))]
    Discovery(Arc<kube::Error>),
}

/// Why a kind has no mapping.
#[derive(Debug, Clone)]
pub(crate) enum LookupError {
    /// Discovery answered, and nothing serves this kind.
    NoMatch,
    /// Discovery for the group-version failed.
    Discovery(Arc<kube::Error>),
}

/// Maps group/version/kind to REST resources (see the module documentation).
///
/// Cloning is cheap and shares the discovery source; a clone keeps what was found.
#[derive(Clone)]
pub struct RestMapper {
    discover: Option<Arc<dyn Discover>>,
    cache: Option<DiscoveryCache>,
    prefer_builtins: bool,
    /// Discovery answers by group-version; `Ok(None)` is "not served".
    served: HashMap<String, Result<Option<APIResourceList>, Arc<kube::Error>>>,
    /// Mappings read from CRDs in the input.
    learned: HashMap<GroupVersionKind, Mapping>,
}

impl RestMapper {
    /// A mapper backed by discovery through `client`, with an optional disk cache.
    pub fn for_client(client: kube::Client, cache: Option<DiscoveryCache>) -> Self {
        Self::with_discovery(Arc::new(KubeDiscovery(client)), cache)
    }

    /// A mapper backed by any [`Discover`] (a fake in tests).
    pub fn with_discovery(discover: Arc<dyn Discover>, cache: Option<DiscoveryCache>) -> Self {
        Self {
            discover: Some(discover),
            cache,
            prefer_builtins: false,
            served: HashMap::new(),
            learned: HashMap::new(),
        }
    }

    /// A mapper without a server: built-in kinds and CRDs from the input only.
    pub fn offline() -> Self {
        Self {
            discover: None,
            cache: None,
            prefer_builtins: true,
            served: HashMap::new(),
            learned: HashMap::new(),
        }
    }

    /// Answers built-in kinds from k8s-openapi's table before asking the server
    /// (rolling-update's `-f`, which 1.17 read with its compiled-in types).
    pub fn prefer_builtins(mut self, yes: bool) -> Self {
        self.prefer_builtins = yes;
        self
    }

    /// Records the mappings that CustomResourceDefinitions in the input define.
    pub fn learn_crds<'a>(&mut self, infos: impl IntoIterator<Item = &'a Info>) {
        for info in infos {
            if info.gvk.group == "apiextensions.k8s.io"
                && info.gvk.kind == "CustomResourceDefinition"
            {
                for mapping in mappings_from_crd(&info.object) {
                    let gvk =
                        GroupVersionKind::gvk(&mapping.group, &mapping.version, &mapping.kind);
                    self.learned.insert(gvk, mapping);
                }
            }
        }
    }

    fn answered_without_server(&self, gvk: &GroupVersionKind) -> bool {
        (self.prefer_builtins && builtin::find(&gvk.group, &gvk.version, &gvk.kind).is_some())
            || self.learned.contains_key(gvk)
    }

    /// Runs discovery for the group-versions of `gvks` that are not known yet: from the
    /// disk cache when it is fresh and has every needed kind, else from the server.
    pub async fn prepare(&mut self, gvks: impl IntoIterator<Item = GroupVersionKind>) {
        let Some(discover) = self.discover.as_deref() else {
            return;
        };
        let mut needed: HashMap<String, BTreeSet<String>> = HashMap::new();
        for gvk in gvks {
            if gvk.kind.is_empty() || gvk.version.is_empty() || self.answered_without_server(&gvk) {
                continue;
            }
            needed
                .entry(group_version(&gvk))
                .or_default()
                .insert(gvk.kind);
        }
        let needed_gvs: Vec<String> = needed.keys().cloned().collect();
        let mut to_fetch = Vec::new();
        let mut cached_served = None;
        for (gv, kinds) in needed {
            let has_all = |list: &APIResourceList| kinds.iter().all(|k| known_kind(list, k));
            match self.served.get(&gv) {
                Some(Ok(Some(list))) if has_all(list) => continue,
                Some(Err(_)) => continue,
                _ => {}
            }
            let served = cached_served
                .get_or_insert_with(|| self.cache.as_ref().and_then(DiscoveryCache::served));
            if let Some(list) = self
                .cache
                .as_ref()
                .zip(served.as_ref())
                .and_then(|(c, served)| c.load(served, &gv))
                .filter(|l| has_all(l))
            {
                self.served.insert(gv, Ok(Some(list)));
                continue;
            }
            to_fetch.push(gv);
        }
        // Aggregated discovery first: two requests name every group-version, all of
        // which go to the disk cache, with the group list. What it does not list is
        // not served; a stale group-version (its aggregated API server is down), or
        // any of a server that does not aggregate, is asked on its own, so that its
        // failure is reported.
        if !to_fetch.is_empty()
            && let Some(all) = discover.all().await
        {
            if let Some(cache) = &self.cache {
                for (gv, list) in &all.lists {
                    cache.store(gv, list);
                }
                cache.store_served(all.served());
            }
            to_fetch.retain(|gv| all.stale.contains(gv));
            for (gv, list) in all.lists {
                self.served.insert(gv, Ok(Some(list)));
            }
            for gv in needed_gvs.iter().filter(|gv| !all.stale.contains(*gv)) {
                self.served.entry(gv.clone()).or_insert(Ok(None));
            }
        }
        let answers = join_all(to_fetch.iter().map(|gv| discover.resources(gv))).await;
        for (gv, answer) in to_fetch.into_iter().zip(answers) {
            if let (Some(cache), Ok(Some(list))) = (&self.cache, &answer) {
                cache.store(&gv, list);
            }
            self.served.insert(gv, answer.map_err(Arc::new));
        }
    }

    /// The mapping of `gvk`: [`Self::prepare`] for it, then what was found.
    pub async fn mapping(&mut self, gvk: &GroupVersionKind) -> Result<Mapping, NoMapping> {
        self.prepare([gvk.clone()]).await;
        self.lookup(gvk).map_err(|e| match e {
            LookupError::NoMatch => NoMapping::NoMatch {
                kind: gvk.kind.clone(),
                group_version: group_version(gvk),
            },
            LookupError::Discovery(e) => NoMapping::Discovery(e),
        })
    }

    /// The mapping of `gvk`, from what [`Self::prepare`] found.
    pub(crate) fn lookup(&self, gvk: &GroupVersionKind) -> Result<Mapping, LookupError> {
        let builtin = || builtin::find(&gvk.group, &gvk.version, &gvk.kind).map(|b| b.mapping());
        if self.prefer_builtins
            && let Some(m) = builtin()
        {
            return Ok(m);
        }
        if let Some(m) = self.learned.get(gvk) {
            return Ok(m.clone());
        }
        if self.discover.is_none() {
            return builtin().ok_or(LookupError::NoMatch);
        }
        match self.served.get(&group_version(gvk)) {
            Some(Ok(Some(list))) => find_resource(list, &gvk.kind)
                .map(|r| mapping_of(gvk, r))
                .ok_or(LookupError::NoMatch),
            Some(Err(e)) => Err(LookupError::Discovery(e.clone())),
            Some(Ok(None)) | None => Err(LookupError::NoMatch),
        }
    }
}

impl RestMapper {
    /// Whether a list document's own kind maps, as kubectl maps a list before it
    /// flattens it: client-go's discovery mapper adds `List` to every group-version it
    /// serves and `XList` for each of its kinds `X` (its "unsafe guesses"), so `v1
    /// List` maps wherever core discovery works, and a `FooList` of a group nobody
    /// serves does not (its items are then never read).
    pub(crate) fn lookup_list(&self, gvk: &GroupVersionKind) -> Result<(), LookupError> {
        let listed = |kind: &str| list_kind_of(kind, &gvk.kind);
        let builtin = || builtin::any_kind(&gvk.group, &gvk.version, listed);
        if (self.prefer_builtins || self.discover.is_none()) && builtin() {
            return Ok(());
        }
        if self.learned.keys().any(|learned| {
            learned.group == gvk.group && learned.version == gvk.version && listed(&learned.kind)
        }) {
            return Ok(());
        }
        if self.discover.is_none() {
            return Err(LookupError::NoMatch);
        }
        match self.served.get(&group_version(gvk)) {
            Some(Ok(Some(list))) if gvk.kind == "List" || known_kind(list, &gvk.kind) => Ok(()),
            Some(Err(e)) => Err(LookupError::Discovery(e.clone())),
            Some(Ok(_)) | None => Err(LookupError::NoMatch),
        }
    }
}

/// Whether `list_kind` is the list kind client-go's discovery mapper derives from a
/// served `kind`: `List` from any, `XList` from `X`.
fn list_kind_of(kind: &str, list_kind: &str) -> bool {
    list_kind == "List" || list_kind.strip_suffix("List") == Some(kind)
}

/// Whether discovery's `list` answers for `kind`: one of its kinds, or a list kind
/// derived from one (see [`RestMapper::lookup_list`]).
fn known_kind(list: &APIResourceList, kind: &str) -> bool {
    find_resource(list, kind).is_some()
        || kind == "List"
        || kind
            .strip_suffix("List")
            .is_some_and(|item| find_resource(list, item).is_some())
}

fn group_version(gvk: &GroupVersionKind) -> String {
    if gvk.group.is_empty() {
        gvk.version.clone()
    } else {
        format!("{}/{}", gvk.group, gvk.version)
    }
}

fn mapping_of(
    gvk: &GroupVersionKind,
    r: &k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResource,
) -> Mapping {
    Mapping {
        group: gvk.group.clone(),
        version: gvk.version.clone(),
        kind: gvk.kind.clone(),
        resource: r.name.clone(),
        namespaced: r.namespaced,
    }
}

/// The top-level resource of a kind; subresources (`pods/status`) share the kind.
fn find_resource<'a>(
    list: &'a APIResourceList,
    kind: &str,
) -> Option<&'a k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResource> {
    list.resources
        .iter()
        .find(|r| r.kind == kind && !r.name.contains('/'))
}

/// The mappings a CRD object defines, one per version (v1 `spec.versions[]`, or the
/// v1beta1 `spec.version`).
fn mappings_from_crd(crd: &Value) -> Vec<Mapping> {
    let spec = &crd["spec"];
    let (Some(group), Some(kind), Some(plural)) = (
        spec["group"].as_str(),
        spec["names"]["kind"].as_str(),
        spec["names"]["plural"].as_str(),
    ) else {
        return Vec::new();
    };
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let mut versions: Vec<&str> = spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .collect();
    versions.extend(spec["version"].as_str());
    versions
        .into_iter()
        .map(|version| Mapping {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            resource: plural.into(),
            namespaced,
        })
        .collect()
}

pub(crate) mod aggregated;

#[cfg(test)]
mod tests;
