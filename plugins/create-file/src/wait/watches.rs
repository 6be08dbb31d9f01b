//! The wait's watches: one per kind and namespace of the created objects, one on the
//! pods and one on the EndpointSlices of each namespace that needs them, merged into
//! one stream of [`Change`]s about the objects waited for.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::time::Duration;

use anyhow::Context as _;
use futures::stream::{BoxStream, SelectAll, StreamExt as _};
use kube::api::{Api, ApiResource, DynamicObject, ListParams};
use kube::core::{GroupVersionKind, Selector};
use kube::runtime::{WatchStreamExt as _, watcher};
use objectstatus::objects::{self, EndpointSlice, Kind, Pod, StorageClass};
use objectstatus::readiness::{self, Rule};
use resources::RestMapper;
use serde_json::Value;

use super::Target;

/// The most the one list of StorageClasses may take.
const CLASSES_BOUND: Duration = Duration::from_secs(5);

/// What a watch saw, about the wait's objects.
pub enum Change {
    /// A target's object (`None`: deleted).
    Object {
        target: usize,
        object: Option<Value>,
    },
    /// A pod one of the workloads selects.
    Pod {
        namespace: String,
        name: String,
        pod: Option<Box<Pod>>,
    },
    /// An EndpointSlice of one of the Services.
    Slice {
        namespace: String,
        name: String,
        slice: Option<Box<EndpointSlice>>,
    },
}

/// What one watch is for.
#[derive(Clone, Copy)]
enum Watched {
    /// The targets of one kind in one namespace (all namespaces: cluster-scoped).
    Targets,
    Pods,
    Slices,
}

type Item = (usize, Result<watcher::Event<DynamicObject>, watcher::Error>);

/// The merged watches.
pub struct Watches {
    stream: SelectAll<BoxStream<'static, Item>>,
    watched: Vec<Watched>,
    /// What each watch watches, for its errors (`deployments.apps`).
    resources: Vec<String>,
    /// Watch, namespace and name → the target's index.
    index: HashMap<(usize, String, String), usize>,
    /// The pod selectors of the workloads, by namespace.
    selectors: HashMap<String, Vec<Selector>>,
    /// The Services' names, by namespace.
    services: HashMap<String, BTreeSet<String>>,
    queue: VecDeque<Change>,
}

/// The EndpointSlice resource the server serves: `discovery.k8s.io/v1` from 1.21 on,
/// `v1beta1` before (1.17–1.20). The fields the Service rule reads (each endpoint's
/// addresses and `conditions.ready`) are the same in both, so either decodes as v1.
async fn endpoint_slices(mapper: &mut RestMapper) -> ApiResource {
    for version in ["v1", "v1beta1"] {
        let gvk = GroupVersionKind::gvk("discovery.k8s.io", version, "EndpointSlice");
        if let Ok(mapping) = mapper.mapping(&gvk).await {
            return mapping.api_resource();
        }
    }
    ApiResource::erase::<k8s_openapi::api::discovery::v1::EndpointSlice>(&())
}

impl Watches {
    /// Starts the watches the `targets` need (mapping their kinds through `mapper`).
    pub async fn start(
        client: &kube::Client,
        mapper: &mut RestMapper,
        targets: &[Target],
    ) -> anyhow::Result<Self> {
        let mut watches = Watches {
            stream: SelectAll::new(),
            watched: Vec::new(),
            resources: Vec::new(),
            index: HashMap::new(),
            selectors: HashMap::new(),
            services: HashMap::new(),
            queue: VecDeque::new(),
        };
        let mut by_kind: BTreeMap<(String, String, Option<String>), usize> = BTreeMap::new();
        for (i, target) in targets.iter().enumerate() {
            let object = &target.object;
            let (group, version) = match object.api_version.split_once('/') {
                Some((g, v)) => (g, v),
                None => ("", object.api_version.as_str()),
            };
            let gvk = GroupVersionKind::gvk(group, version, &object.kind);
            let mapping = mapper.mapping(&gvk).await?;
            let namespace = object.namespace.clone().filter(|_| mapping.namespaced);
            let key = (
                object.api_version.clone(),
                object.kind.clone(),
                namespace.clone(),
            );
            let id = match by_kind.get(&key) {
                Some(id) => *id,
                None => {
                    let resource = if group.is_empty() {
                        mapping.resource.clone()
                    } else {
                        format!("{}.{group}", mapping.resource)
                    };
                    let id = watches.add(
                        client,
                        &mapping.api_resource(),
                        namespace.as_deref(),
                        (Watched::Targets, resource),
                    );
                    by_kind.insert(key, id);
                    id
                }
            };
            let ns = namespace.unwrap_or_default();
            watches
                .index
                .insert((id, ns.clone(), object.name.clone()), i);
            if let Some(selector) = &object.selector {
                watches
                    .selectors
                    .entry(ns.clone())
                    .or_default()
                    .push(selector.clone());
            }
            if target.rule == Rule::Service {
                watches
                    .services
                    .entry(ns)
                    .or_default()
                    .insert(object.name.clone());
            }
        }
        let pods = ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
        let slices = endpoint_slices(mapper).await;
        let namespaces: Vec<String> = watches.selectors.keys().cloned().collect();
        for ns in namespaces {
            watches.add(client, &pods, Some(&ns), (Watched::Pods, "pods".into()));
        }
        let namespaces: Vec<String> = watches.services.keys().cloned().collect();
        for ns in namespaces {
            let what = "endpointslices.discovery.k8s.io".to_string();
            watches.add(client, &slices, Some(&ns), (Watched::Slices, what));
        }
        Ok(watches)
    }

    fn add(
        &mut self,
        client: &kube::Client,
        resource: &ApiResource,
        namespace: Option<&str>,
        (watched, resource_name): (Watched, String),
    ) -> usize {
        let api: Api<DynamicObject> = match namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, resource),
            None => Api::all_with(client.clone(), resource),
        };
        let id = self.watched.len();
        self.watched.push(watched);
        self.resources.push(resource_name);
        let stream = watcher(api, watcher::Config::default())
            .default_backoff()
            .map(move |item| (id, item));
        self.stream.push(stream.boxed());
        id
    }

    /// The next change about the wait's objects; an error when a watch of the
    /// objects themselves is refused (no change could ever come).
    pub async fn next(&mut self) -> anyhow::Result<Option<Change>> {
        loop {
            if let Some(change) = self.queue.pop_front() {
                return Ok(Some(change));
            }
            let Some((id, item)) = self.stream.next().await else {
                return Ok(None);
            };
            match item {
                Ok(event) => self.record(id, event),
                Err(err) => self.failed(id, &err)?,
            }
        }
    }

    fn failed(&self, id: usize, err: &watcher::Error) -> anyhow::Result<()> {
        let refused = match err {
            watcher::Error::InitialListFailed(kube::Error::Api(s))
            | watcher::Error::WatchStartFailed(kube::Error::Api(s))
            | watcher::Error::WatchFailed(kube::Error::Api(s)) => {
                matches!(s.code, 401 | 403).then(|| s.message.clone())
            }
            _ => None,
        };
        match (self.watched[id], refused) {
            (Watched::Targets, Some(message)) => Err(anyhow::anyhow!(
                "cannot watch {} to wait for them: {message}",
                self.resources[id]
            )),
            // Pods and slices only say why; the watch backs off and tries again.
            _ => {
                tracing::debug!("watch: {err}");
                Ok(())
            }
        }
    }

    fn record(&mut self, id: usize, event: watcher::Event<DynamicObject>) {
        let (object, present) = match event {
            watcher::Event::Apply(o) | watcher::Event::InitApply(o) => (o, true),
            watcher::Event::Delete(o) => (o, false),
            watcher::Event::Init | watcher::Event::InitDone => return,
        };
        let namespace = object.metadata.namespace.clone().unwrap_or_default();
        let name = object.metadata.name.clone().unwrap_or_default();
        match self.watched[id] {
            Watched::Targets => {
                if let Some(target) = self.index.get(&(id, namespace, name)) {
                    let object = present
                        .then(|| serde_json::to_value(&object).ok())
                        .flatten();
                    self.queue.push_back(Change::Object {
                        target: *target,
                        object,
                    });
                }
            }
            Watched::Pods => {
                let Ok(pod) = typed::<Pod>(&object) else {
                    return;
                };
                let wanted = self
                    .selectors
                    .get(&namespace)
                    .is_some_and(|s| s.iter().any(|s| readiness::selects(s, &pod)));
                if wanted {
                    let pod = present.then(|| Box::new(pod));
                    self.queue.push_back(Change::Pod {
                        namespace,
                        name,
                        pod,
                    });
                }
            }
            Watched::Slices => {
                let service = object
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get(readiness::SERVICE_NAME_LABEL));
                let wanted = service.is_some_and(|s| {
                    self.services
                        .get(&namespace)
                        .is_some_and(|names| names.contains(s))
                });
                if wanted && let Ok(slice) = slice_as_v1(object) {
                    let slice = present.then(|| Box::new(slice));
                    self.queue.push_back(Change::Slice {
                        namespace,
                        name,
                        slice,
                    });
                }
            }
        }
    }
}

/// An EndpointSlice of either version as the v1 type (the reader checks
/// `apiVersion`, and v1beta1's extra `topology` is not read).
fn slice_as_v1(mut object: DynamicObject) -> anyhow::Result<EndpointSlice> {
    if let Some(types) = object.types.as_mut() {
        types.api_version = "discovery.k8s.io/v1".to_string();
    }
    typed(&object)
}

/// The object as the rules read it (`objectstatus::objects`: its few fields, not
/// k8s-openapi's whole model).
fn typed<T: Kind>(object: &DynamicObject) -> anyhow::Result<T> {
    let value = serde_json::to_value(object)?;
    objects::from_value(&value).context("unexpected object in a watch")
}

/// A list's items as the rules read them; an error when one cannot be read, as a
/// list that cannot be decoded.
pub fn read_all<T: Kind>(items: &[DynamicObject]) -> anyhow::Result<Vec<T>> {
    items.iter().map(typed).collect()
}

/// The cluster's StorageClasses, once (a claim's binding mode); `None` when they
/// cannot be listed (a claim then waits for Bound).
pub async fn storage_classes(client: &kube::Client) -> Option<Vec<StorageClass>> {
    let classes = ApiResource::erase::<k8s_openapi::api::storage::v1::StorageClass>(&());
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &classes);
    match tokio::time::timeout(CLASSES_BOUND, api.list(&ListParams::default())).await {
        Ok(Ok(list)) => read_all(&list.items)
            .inspect_err(|e| tracing::debug!("storage classes not listed: {e}"))
            .ok(),
        Ok(Err(e)) => {
            tracing::debug!("storage classes not listed: {e}");
            None
        }
        Err(_) => None,
    }
}
