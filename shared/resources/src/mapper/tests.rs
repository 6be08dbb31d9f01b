//! Unit tests of the `RestMapper` over fake discovery: what is asked, the disk cache
//! and its TTL, CRDs of the input, the built-in table.

use super::*;
use crate::Origin;
use crate::fake::FakeDiscovery;

fn gvk(g: &str, v: &str, k: &str) -> GroupVersionKind {
    GroupVersionKind::gvk(g, v, k)
}

fn mapper(fake: &FakeDiscovery, cache: Option<DiscoveryCache>) -> RestMapper {
    RestMapper::with_discovery(std::sync::Arc::new(fake.clone()), cache)
}

#[tokio::test]
async fn asks_only_for_the_group_versions_in_use() {
    let fake = FakeDiscovery::standard();
    let mut m = mapper(&fake, None);
    m.prepare([
        gvk("", "v1", "ConfigMap"),
        gvk("", "v1", "Pod"),
        gvk("apps", "v1", "Deployment"),
    ])
    .await;
    let mut asked = fake.requested();
    asked.sort();
    assert_eq!(asked, ["apps/v1", "v1"]);
    let cm = m.lookup(&gvk("", "v1", "ConfigMap")).expect("mapped");
    assert_eq!((cm.resource.as_str(), cm.namespaced), ("configmaps", true));
    assert!(
        !m.lookup(&gvk("", "v1", "Namespace"))
            .expect("mapped")
            .namespaced
    );
}

#[tokio::test]
async fn unknown_kinds_and_unserved_groups_have_no_match() {
    let fake = FakeDiscovery::standard();
    let mut m = mapper(&fake, None);
    m.prepare([gvk("", "v1", "Gizmo"), gvk("example.com", "v1", "Widget")])
        .await;
    assert!(matches!(
        m.lookup(&gvk("", "v1", "Gizmo")),
        Err(LookupError::NoMatch)
    ));
    assert!(matches!(
        m.lookup(&gvk("example.com", "v1", "Widget")),
        Err(LookupError::NoMatch)
    ));
}

#[tokio::test]
async fn disk_cache_is_used_within_its_ttl_and_refreshed_for_unknown_kinds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = DiscoveryCache::new(dir.path(), Duration::from_secs(3600));
    let fake = FakeDiscovery::standard();
    mapper(&fake, Some(cache.clone()))
        .prepare([gvk("", "v1", "ConfigMap")])
        .await;
    assert!(dir.path().join("v1/serverresources.json").is_file());
    assert_eq!(fake.requested(), ["v1"]);

    // A second run is served from disk.
    let mut second = mapper(&fake, Some(cache.clone()));
    second.prepare([gvk("", "v1", "Pod")]).await;
    assert_eq!(fake.requested(), ["v1"]);
    assert_eq!(
        second
            .lookup(&gvk("", "v1", "Pod"))
            .expect("from cache")
            .resource,
        "pods"
    );

    // A kind the cached list lacks sends the mapper back to the server.
    let mut updated = FakeDiscovery::standard().serve(
        "v1",
        &[("ConfigMap", "configmaps", true), ("Gizmo", "gizmos", true)],
    );
    updated.requests = fake.requests.clone();
    let mut third = mapper(&updated, Some(cache));
    third.prepare([gvk("", "v1", "Gizmo")]).await;
    assert_eq!(fake.requested(), ["v1", "v1"]);
    assert_eq!(
        third
            .lookup(&gvk("", "v1", "Gizmo"))
            .expect("refreshed")
            .resource,
        "gizmos"
    );
}

#[tokio::test]
async fn stale_cache_entries_are_fetched_again() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fake = FakeDiscovery::standard();
    mapper(
        &fake,
        Some(DiscoveryCache::new(dir.path(), Duration::from_secs(3600))),
    )
    .prepare([gvk("", "v1", "Pod")])
    .await;
    mapper(&fake, Some(DiscoveryCache::new(dir.path(), Duration::ZERO)))
        .prepare([gvk("", "v1", "Pod")])
        .await;
    assert_eq!(fake.requested(), ["v1", "v1"]);
}

#[tokio::test]
async fn crds_in_the_input_map_their_instances_without_discovery() {
    let crd = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Cluster",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [{"name": "v1"}, {"name": "v2"}]}
    });
    let fake = FakeDiscovery::standard();
    let mut m = mapper(&fake, None);
    m.learn_crds([&Info::from_object(crd, Origin::single("crd.yaml"))]);
    m.prepare([gvk("example.com", "v2", "Widget")]).await;
    assert!(fake.requested().is_empty());
    let w = m
        .lookup(&gvk("example.com", "v2", "Widget"))
        .expect("learned");
    assert_eq!((w.resource.as_str(), w.namespaced), ("widgets", false));
}

#[tokio::test]
async fn builtins_first_for_client_dry_run_and_offline() {
    let fake = FakeDiscovery::standard();
    let mut m = mapper(&fake, None).prefer_builtins(true);
    m.prepare([gvk("", "v1", "Secret")]).await;
    assert!(fake.requested().is_empty());
    assert_eq!(
        m.lookup(&gvk("", "v1", "Secret"))
            .expect("builtin")
            .resource,
        "secrets"
    );

    let offline = RestMapper::offline();
    assert_eq!(
        offline
            .lookup(&gvk("apps", "v1", "StatefulSet"))
            .expect("builtin")
            .resource,
        "statefulsets"
    );
    assert!(matches!(
        offline.lookup(&gvk("example.com", "v1", "Widget")),
        Err(LookupError::NoMatch)
    ));
}

#[test]
fn cache_directory_names_follow_kubectl() {
    let uri: http::Uri = "https://127.0.0.1:6443".parse().expect("uri");
    assert_eq!(server_dir_name(&uri), "127.0.0.1_6443");
    // A host that is not ASCII: as written, each character outside Go's ASCII `\w`
    // replaced (kubectl's `b_cher…` from `https://bücher…`).
    let uri: http::Uri = apiclient::idn::ascii_url("https://bücher-dir.invalid:6443")
        .parse()
        .expect("uri");
    assert_eq!(server_dir_name(&uri), "b_cher_dir.invalid_6443");
}

#[test]
fn cache_dir_roots_the_discovery_cache() {
    let uri: http::Uri = "https://127.0.0.1:6443".parse().expect("uri");
    let cache = DiscoveryCache::for_cache_dir(Some(Path::new("/tmp/kc")), &uri).expect("a cache");
    assert_eq!(
        cache.dir(),
        Path::new("/tmp/kc/kubeplug/discovery/127.0.0.1_6443")
    );
    // An empty `--cache-dir=` means the default root, as in kubectl.
    let default =
        DiscoveryCache::for_cache_dir(Some(Path::new("")), &uri).map(|c| c.dir().to_path_buf());
    let expected = DiscoveryCache::default_root()
        .map(|root| DiscoveryCache::for_server(&root, &uri).dir().to_path_buf());
    assert_eq!(default, expected);
}

#[tokio::test]
async fn mapping_reads_the_cache_and_says_no_match_in_kubectls_words() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = DiscoveryCache::new(dir.path(), Duration::from_secs(3600));
    // Nothing cached yet: the cache alone knows nothing.
    assert!(cache.mapping(&gvk("apps", "v1", "Deployment")).is_none());
    let fake = FakeDiscovery::standard();
    let mut m = mapper(&fake, Some(cache.clone()));
    let deployment = m
        .mapping(&gvk("apps", "v1", "Deployment"))
        .await
        .expect("served");
    assert_eq!(deployment.resource, "deployments");
    // Now the cache answers without discovery.
    let cached = cache
        .mapping(&gvk("apps", "v1", "Deployment"))
        .expect("cached");
    assert_eq!(
        (cached.resource.as_str(), cached.namespaced),
        ("deployments", true)
    );
    assert!(cache.mapping(&gvk("apps", "v1", "Gadget")).is_none());
    let err = m
        .mapping(&gvk("example.com", "v1", "Widget"))
        .await
        .expect_err("not served");
    assert_eq!(
        err.to_string(),
        "no matches for kind \"Widget\" in version \"example.com/v1\""
    );
}

/// Aggregated discovery: one `all()` names every group-version; each is cached, a
/// group-version it does not list is not served (no request), a stale one is asked on
/// its own, and a warm run asks nothing.
#[tokio::test]
async fn aggregated_discovery_answers_for_every_group_version_and_fills_the_cache() {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Aggregating {
        all: AtomicUsize,
        one: Mutex<Vec<String>>,
    }
    impl Discover for Aggregating {
        fn resources<'a>(
            &'a self,
            group_version: &'a str,
        ) -> BoxFuture<'a, Result<Option<APIResourceList>, kube::Error>> {
            self.one
                .lock()
                .expect("lock")
                .push(group_version.to_string());
            Box::pin(async { Ok(None) })
        }
        fn all(&self) -> BoxFuture<'_, Option<aggregated::Aggregated>> {
            self.all.fetch_add(1, Ordering::SeqCst);
            let mut all = aggregated::Aggregated::default();
            all.read(br#"{"items":[
              {"metadata":{"name":"apps"},"versions":[{"version":"v1","resources":[{"resource":"deployments","responseKind":{"kind":"Deployment"},"scope":"Namespaced"}]}]},
              {"metadata":{"name":"metrics.k8s.io"},"versions":[{"version":"v1beta1","freshness":"Stale"}]},
              {"metadata":{},"versions":[{"version":"v1","resources":[{"resource":"configmaps","responseKind":{"kind":"ConfigMap"},"scope":"Namespaced"}]}]}]}"#)
                .expect("aggregated");
            Box::pin(async move { Some(all) })
        }
    }

    let dir = tempfile::tempdir().expect("tempdir");
    let cache = DiscoveryCache::new(dir.path(), Duration::from_secs(3600));
    let discover = Arc::new(Aggregating {
        all: AtomicUsize::new(0),
        one: Mutex::new(Vec::new()),
    });
    let mut m = RestMapper::with_discovery(discover.clone(), Some(cache.clone()));
    m.prepare([
        gvk("", "v1", "ConfigMap"),
        gvk("example.com", "v1", "Widget"),
        gvk("metrics.k8s.io", "v1beta1", "PodMetrics"),
    ])
    .await;
    assert_eq!(discover.all.load(Ordering::SeqCst), 1);
    assert_eq!(
        *discover.one.lock().expect("lock"),
        ["metrics.k8s.io/v1beta1"]
    );
    let cm = m.lookup(&gvk("", "v1", "ConfigMap")).expect("mapped");
    assert_eq!(cm.resource, "configmaps");
    assert!(matches!(
        m.lookup(&gvk("example.com", "v1", "Widget")),
        Err(LookupError::NoMatch)
    ));
    // Every listed group-version went to the cache, apps/v1 too.
    let mut warm = RestMapper::with_discovery(discover.clone(), Some(cache));
    warm.prepare([gvk("apps", "v1", "Deployment"), gvk("", "v1", "ConfigMap")])
        .await;
    assert_eq!(
        discover.all.load(Ordering::SeqCst),
        1,
        "a warm run asks nothing"
    );
    assert_eq!(
        warm.lookup(&gvk("apps", "v1", "Deployment"))
            .expect("mapped")
            .resource,
        "deployments"
    );
}

/// A list document maps by its own kind as client-go's discovery mapper derives list
/// kinds: `List` in every served group-version, `XList` for each served `X`.
#[tokio::test]
async fn list_kinds_map_as_client_go_derives_them() {
    let fake = FakeDiscovery::standard().fail("broken.example/v1");
    let mut m = mapper(&fake, None);
    let lists = [
        gvk("", "v1", "List"),
        gvk("", "v1", "ConfigMapList"),
        gvk("", "v1", "NopeList"),
        gvk("apps", "v1", "List"),
        gvk("foo.example", "v1", "FooList"),
        gvk("broken.example", "v1", "List"),
    ];
    m.prepare(lists.clone()).await;
    let got: Vec<&str> = lists
        .iter()
        .map(|l| match m.lookup_list(l) {
            Ok(()) => "ok",
            Err(LookupError::NoMatch) => "no match",
            Err(LookupError::Discovery(_)) => "discovery",
        })
        .collect();
    assert_eq!(got, ["ok", "ok", "no match", "ok", "no match", "discovery"]);

    // Without a server, the built-in table stands for discovery.
    let offline = RestMapper::offline();
    assert!(offline.lookup_list(&gvk("", "v1", "List")).is_ok());
    assert!(
        offline
            .lookup_list(&gvk("apps", "v1", "DeploymentList"))
            .is_ok()
    );
    assert!(offline.lookup_list(&gvk("", "v1", "NopeList")).is_err());
}

/// A fresh disk cache answers for list kinds without asking the server again.
#[tokio::test]
async fn list_kinds_are_answered_from_the_disk_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = DiscoveryCache::new(dir.path(), Duration::from_secs(3600));
    let fake = FakeDiscovery::standard();
    mapper(&fake, Some(cache.clone()))
        .prepare([gvk("", "v1", "ConfigMap")])
        .await;
    let mut second = mapper(&fake, Some(cache));
    second
        .prepare([gvk("", "v1", "List"), gvk("", "v1", "ConfigMapList")])
        .await;
    assert_eq!(fake.requested(), ["v1"]);
    assert!(second.lookup_list(&gvk("", "v1", "ConfigMapList")).is_ok());
}

/// The cache is kept per host and port, where another server may have answered
/// before: a group-version's file counts only while the latest group list names it.
#[tokio::test]
async fn a_group_version_the_latest_group_list_leaves_out_is_not_trusted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = DiscoveryCache::new(dir.path(), Duration::from_secs(3600));
    let cronjob_beta = gvk("batch", "v1beta1", "CronJob");
    // An old server at this address served batch/v1beta1, and it was cached.
    let old = FakeDiscovery::standard()
        .serve("batch/v1", &[("Job", "jobs", true)])
        .serve("batch/v1beta1", &[("CronJob", "cronjobs", true)]);
    mapper(&old, Some(cache.clone()))
        .prepare([cronjob_beta.clone()])
        .await;
    assert!(cache.mapping(&cronjob_beta).is_some());

    // The new server no longer serves it. A run that had to ask it (a kind the
    // cache lacks) rewrote the group list…
    let new = FakeDiscovery::standard().serve(
        "batch/v1",
        &[("Job", "jobs", true), ("CronJob", "cronjobs", true)],
    );
    mapper(&new, Some(cache.clone()))
        .prepare([gvk("batch", "v1", "CronJob")])
        .await;
    assert!(
        dir.path()
            .join("batch/v1beta1/serverresources.json")
            .is_file(),
        "the old file is still there"
    );
    // …so the old file no longer maps: the server is asked, and says no match.
    assert!(cache.mapping(&cronjob_beta).is_none());
    let err = mapper(&new, Some(cache.clone()))
        .mapping(&cronjob_beta)
        .await
        .expect_err("not served");
    assert_eq!(
        err.to_string(),
        "no matches for kind \"CronJob\" in version \"batch/v1beta1\""
    );
    assert_eq!(
        new.requested(),
        ["batch/v1"],
        "batch/v1beta1 is not asked: the group list leaves it out"
    );
}

/// A cache without a group list (written before it was kept, or left half by a
/// failed discovery) is not trusted: the server is asked, and the list written.
#[tokio::test]
async fn a_cache_without_a_group_list_is_refilled_from_the_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cache = DiscoveryCache::new(dir.path(), Duration::from_secs(3600));
    let fake = FakeDiscovery::standard();
    mapper(&fake, Some(cache.clone()))
        .prepare([gvk("", "v1", "Pod")])
        .await;
    std::fs::remove_file(dir.path().join("servergroups.json")).expect("a group list");
    assert!(cache.mapping(&gvk("", "v1", "Pod")).is_none());
    mapper(&fake, Some(cache.clone()))
        .prepare([gvk("", "v1", "Pod")])
        .await;
    assert_eq!(fake.requested(), ["v1", "v1"]);
    let list = std::fs::read_to_string(dir.path().join("servergroups.json")).expect("rewritten");
    assert_eq!(
        list,
        concat!(
            r#"{"apiVersion":"v1","kind":"APIGroupList","groups":["#,
            r#"{"apiVersion":"v1","kind":"APIGroup","name":"","versions":[{"groupVersion":"v1","version":"v1"}]},"#,
            r#"{"apiVersion":"v1","kind":"APIGroup","name":"apps","versions":[{"groupVersion":"apps/v1","version":"v1"}]}]}"#
        ),
        "kubectl's APIGroupList, the core group's name empty"
    );
    assert!(cache.mapping(&gvk("", "v1", "Pod")).is_some());
}
