//! `/openapi/v3`: which kinds' endpoints take `fieldValidation`, asked as kubectl 1.37
//! asks it (cli-runtime's `queryParamVerifierV3`), without the whole v2 document.
//!
//! The index (`GET /openapi/v3`, about 11 KB on 1.37, never cached by the server's
//! headers) names one document per group-version, with a hash of its content in the
//! URL. A group-version's document is large (1.6 MB for the core group) but changes
//! only with its hash, so what is needed of it — for each kind with a PATCH, whether
//! the PATCH declares `fieldValidation` — is kept on disk under that hash
//! (`<openapi cache>/v3/<hash>.json`, a few hundred bytes) and never fetched again. A
//! CRD that changes changes only its own group-version's hash; with v2, any change
//! anywhere meant the whole document (2.4 MB on 1.37) again.
//!
//! kubectl's answers, kept here:
//! - a `v1` `List`: never (its items are validated on the client;
//!   [`super::is_v1_list`], v2's rule too);
//! - a kind whose group-version the index lists: as that kind's PATCH says; a kind
//!   without a PATCH there (a typed list such as `ConfigMapList`) never;
//! - a kind of a group-version the index lacks (a custom resource the server has not
//!   published yet): as the Namespace's PATCH says. kubectl asks the server whether a
//!   CRD defines the kind first, one more request; a kind that is no CRD fails to map
//!   anyway.
//!
//! A server without `/openapi/v3` (before 1.24, such as the 1.20 test server) is asked
//! through the v2 document instead, as kubectl falls back to it.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::Deserialize;

use super::Gvk;

/// The index: group-version → its document's server-relative URL.
#[derive(Debug, Default)]
pub struct Index {
    documents: HashMap<(String, String), String>,
}

#[derive(Deserialize)]
struct IndexJson {
    #[serde(default)]
    paths: HashMap<String, IndexEntry>,
}

#[derive(Deserialize)]
struct IndexEntry {
    #[serde(rename = "serverRelativeURL")]
    url: String,
}

impl Index {
    /// Reads `GET /openapi/v3`'s answer.
    pub fn from_json(bytes: &[u8]) -> Result<Self, serde_json::Error> {
        let index: IndexJson = serde_json::from_slice(bytes)?;
        let documents = index
            .paths
            .into_iter()
            .filter_map(|(path, entry)| Some((group_version_of(&path)?, entry.url)))
            .collect();
        Ok(Self { documents })
    }

    /// The URL of `group`/`version`'s document, when the server publishes one.
    pub fn url(&self, group: &str, version: &str) -> Option<&str> {
        self.documents
            .get(&(group.to_string(), version.to_string()))
            .map(String::as_str)
    }

    /// The content hash in a document's URL (`…?hash=ABC`): the name of its cache
    /// entry. `None` for a URL without one (nothing is cached then).
    pub fn hash_of(url: &str) -> Option<&str> {
        let query = url.split_once('?')?.1;
        query
            .split('&')
            .find_map(|pair| pair.strip_prefix("hash="))
            .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_alphanumeric()))
    }
}

/// `api/v1` → ("", "v1"); `apis/apps/v1` → ("apps", "v1"); anything else (`api`,
/// `.well-known/…`) is no group-version.
fn group_version_of(path: &str) -> Option<(String, String)> {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.as_slice() {
        ["api", version] => Some((String::new(), version.to_string())),
        ["apis", group, version] => Some((group.to_string(), version.to_string())),
        _ => None,
    }
}

/// What one group-version's document says: for each kind with a PATCH, whether it
/// declares `fieldValidation`.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
pub struct Patches {
    kinds: HashMap<String, bool>,
}

#[derive(Deserialize)]
struct DocJson {
    #[serde(default)]
    paths: HashMap<String, PathJson>,
}

#[derive(Deserialize)]
struct PathJson {
    patch: Option<OperationJson>,
}

#[derive(Deserialize)]
struct OperationJson {
    #[serde(rename = "x-kubernetes-group-version-kind")]
    gvk: Option<GvkJson>,
    #[serde(default)]
    parameters: Vec<ParameterJson>,
}

#[derive(Deserialize)]
struct GvkJson {
    #[serde(default)]
    group: String,
    #[serde(default)]
    version: String,
    #[serde(default)]
    kind: String,
}

#[derive(Deserialize)]
struct ParameterJson {
    name: Option<String>,
    #[serde(rename = "in")]
    location: Option<String>,
}

impl Patches {
    /// Reads a group-version's document (`GET /openapi/v3/apis/G/V?hash=…`); only
    /// the PATCH operations of the group-version's own kinds count. serde skips the
    /// schemas without building them.
    pub fn from_document(
        bytes: &[u8],
        group: &str,
        version: &str,
    ) -> Result<Self, serde_json::Error> {
        let doc: DocJson = serde_json::from_slice(bytes)?;
        let mut kinds = HashMap::new();
        // kubectl takes the first PATCH naming the kind; every PATCH of a kind
        // declares the same parameters, so the order of the map does not matter.
        for op in doc.paths.into_values().filter_map(|p| p.patch) {
            let Some(gvk) = op.gvk else { continue };
            if gvk.group != group || gvk.version != version {
                continue;
            }
            let declares = op.parameters.iter().any(|p| {
                p.name.as_deref() == Some("fieldValidation")
                    && p.location.as_deref() == Some("query")
            });
            kinds.entry(gvk.kind).or_insert(declares);
        }
        Ok(Self { kinds })
    }

    /// The kind's PATCH declares `fieldValidation`; `None` when the kind has no PATCH.
    pub fn declares(&self, kind: &str) -> Option<bool> {
        self.kinds.get(kind).copied()
    }

    /// Reads a cache entry written by [`Self::store`].
    pub fn load(path: &Path) -> Option<Self> {
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    }

    /// Writes the entry atomically ([`crate::cache_file`]); a failure only costs a
    /// future download.
    pub fn store(&self, path: &Path) {
        if let Ok(bytes) = serde_json::to_vec(self) {
            crate::cache_file::store(path, &bytes, "OpenAPI v3 cache");
        }
    }
}

/// kubectl 1.37's answer to "does the server validate this kind's fields?", from the
/// index and the documents of the group-versions asked about.
#[derive(Debug, Default)]
pub struct FieldValidation {
    /// Per group-version the index lists and the input uses: its PATCHes.
    known: HashMap<(String, String), Patches>,
    /// Every group-version the index lists.
    listed: HashSet<(String, String)>,
    /// The Namespace's answer, for kinds of group-versions the index lacks.
    namespace: bool,
}

impl FieldValidation {
    /// From what was fetched: the documents of the listed group-versions the input
    /// uses, and the Namespace's answer (asked when some group-version is not listed).
    pub fn new(index: &Index, known: HashMap<(String, String), Patches>, namespace: bool) -> Self {
        Self {
            known,
            listed: index.documents.keys().cloned().collect(),
            namespace,
        }
    }

    /// Whether the server validates `kind`'s fields (see the module docs).
    pub fn supports(&self, (group, version, kind): &Gvk) -> bool {
        if super::is_v1_list(group, version, kind) {
            return false;
        }
        let gv = (group.clone(), version.clone());
        match self.known.get(&gv) {
            Some(patches) => patches.declares(kind).unwrap_or(false),
            // Listed but not fetched: a List's item, which is validated on the client
            // anyway and only asked about for `warn`'s notice. A server with v3
            // validates the fields of every built-in endpoint (GA in 1.27).
            None if self.listed.contains(&gv) => true,
            None => self.namespace,
        }
    }
}

/// The group-versions and kinds to ask about, for a set of kinds: those the index
/// lists, and whether the Namespace must be asked too.
pub fn plan<'a>(
    index: &Index,
    gvks: impl IntoIterator<Item = &'a Gvk>,
) -> (HashSet<(String, String)>, bool) {
    let mut listed = HashSet::new();
    let mut unlisted = false;
    for (group, version, kind) in gvks {
        if super::is_v1_list(group, version, kind) {
            continue;
        }
        if index.url(group, version).is_some() {
            listed.insert((group.clone(), version.clone()));
        } else {
            unlisted = true;
        }
    }
    if unlisted && index.url("", "v1").is_some() {
        listed.insert((String::new(), "v1".to_string()));
    }
    (listed, unlisted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gvk(g: &str, v: &str, k: &str) -> Gvk {
        (g.into(), v.into(), k.into())
    }

    const INDEX: &str = r#"{"paths":{
        ".well-known/openid-configuration":{"serverRelativeURL":"/openapi/v3/.well-known/openid-configuration?hash=AA"},
        "api":{"serverRelativeURL":"/openapi/v3/api?hash=BB"},
        "api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=8F5F21DF"},
        "apis/apps/v1":{"serverRelativeURL":"/openapi/v3/apis/apps/v1?hash=D9D93953"}}}"#;

    #[test]
    fn the_index_names_group_versions_and_their_hashes() {
        let index = Index::from_json(INDEX.as_bytes()).expect("index");
        assert_eq!(
            index.url("", "v1"),
            Some("/openapi/v3/api/v1?hash=8F5F21DF")
        );
        assert_eq!(
            index.url("apps", "v1"),
            Some("/openapi/v3/apis/apps/v1?hash=D9D93953")
        );
        assert_eq!(index.url("batch", "v1"), None);
        assert_eq!(
            index.documents.len(),
            2,
            "api and .well-known are no group-versions"
        );
        assert_eq!(
            Index::hash_of("/openapi/v3/api/v1?hash=8F5F21DF"),
            Some("8F5F21DF")
        );
        assert_eq!(Index::hash_of("/openapi/v3/api/v1"), None);
        assert_eq!(
            Index::hash_of("/x?hash=../../etc"),
            None,
            "a hash names a file"
        );
    }

    #[test]
    fn a_document_gives_each_kinds_patch() {
        let doc = r#"{"openapi":"3.0.0","paths":{
          "/api/v1/namespaces/{namespace}/configmaps/{name}":{
            "get":{"x-kubernetes-group-version-kind":{"group":"","version":"v1","kind":"ConfigMap"}},
            "patch":{"x-kubernetes-group-version-kind":{"group":"","version":"v1","kind":"ConfigMap"},
              "parameters":[{"name":"dryRun","in":"query"},{"name":"fieldValidation","in":"query"}]}},
          "/api/v1/namespaces/{name}":{
            "patch":{"x-kubernetes-group-version-kind":{"group":"","version":"v1","kind":"Namespace"},
              "parameters":[{"name":"fieldValidation","in":"query"}]}},
          "/api/v1/old/{name}":{
            "patch":{"x-kubernetes-group-version-kind":{"group":"","version":"v1","kind":"Old"},
              "parameters":[{"name":"fieldValidation","in":"path"}]}},
          "/api/v1/other/{name}":{
            "patch":{"x-kubernetes-group-version-kind":{"group":"autoscaling","version":"v1","kind":"Scale"},
              "parameters":[{"name":"fieldValidation","in":"query"}]}}},
          "components":{"schemas":{"io.k8s.api.core.v1.ConfigMap":{"type":"object"}}}}"#;
        let patches = Patches::from_document(doc.as_bytes(), "", "v1").expect("doc");
        assert_eq!(patches.declares("ConfigMap"), Some(true));
        assert_eq!(
            patches.declares("Old"),
            Some(false),
            "only a query parameter counts"
        );
        assert_eq!(patches.declares("ConfigMapList"), None);
        assert_eq!(
            patches.declares("Scale"),
            None,
            "another group-version's kind"
        );

        let index = Index::from_json(INDEX.as_bytes()).expect("index");
        let fv = FieldValidation::new(
            &index,
            HashMap::from([((String::new(), "v1".to_string()), patches)]),
            true,
        );
        assert!(fv.supports(&gvk("", "v1", "ConfigMap")));
        assert!(!fv.supports(&gvk("", "v1", "Old")));
        assert!(
            !fv.supports(&gvk("", "v1", "ConfigMapList")),
            "a typed list"
        );
        assert!(!fv.supports(&gvk("", "v1", "List")));
        assert!(
            fv.supports(&gvk("example.com", "v1", "Widget")),
            "as the Namespace"
        );
    }

    #[test]
    fn the_plan_asks_for_the_listed_group_versions_and_the_namespace_when_needed() {
        let index = Index::from_json(INDEX.as_bytes()).expect("index");
        let (listed, unlisted) = plan(
            &index,
            &[gvk("apps", "v1", "Deployment"), gvk("", "v1", "List")],
        );
        assert_eq!(
            listed,
            HashSet::from([("apps".to_string(), "v1".to_string())])
        );
        assert!(!unlisted);
        let (listed, unlisted) = plan(&index, &[gvk("example.com", "v1", "Widget")]);
        assert_eq!(listed, HashSet::from([(String::new(), "v1".to_string())]));
        assert!(unlisted);
    }

    #[test]
    fn cache_entries_round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("v3").join("ABC.json");
        let patches = Patches {
            kinds: HashMap::from([("ConfigMap".to_string(), true)]),
        };
        patches.store(&path);
        assert_eq!(Patches::load(&path), Some(patches));
        assert_eq!(Patches::load(&dir.path().join("missing.json")), None);
    }
}
