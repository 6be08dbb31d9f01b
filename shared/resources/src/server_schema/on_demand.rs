//! create-file's [`SchemaSource`]: kubectl 1.37's order of asking the server what it
//! validates (see [`crate::openapi::v3`]), once the Builder's first pass knows the
//! input's kinds.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures::future::{BoxFuture, join_all};

use super::{Kinds, SchemaSource, ServerSchema};
use crate::Validation;
use crate::openapi::fetch::{cache_dir_beside, load};
use crate::openapi::{Published, v3};

/// create-file's [`SchemaSource`]: what kubectl 1.37 downloads, once the input's kinds
/// are known. `GET /openapi/v3` and the documents of the kinds' group-versions (each
/// from the disk cache while its hash stands, see [`v3`]) say which kinds the server
/// validates; the v2 document is fetched only when `strict` validates something on
/// the client (a List's items, a kind the server does not validate). A server without
/// `/openapi/v3`, or one whose v3 documents cannot be read, is asked through v2
/// alone, as kubectl falls back to it.
pub struct OnDemand {
    client: kube::Client,
    dir: Option<PathBuf>,
    /// `GET /openapi/v3`, started by [`SchemaSource::prefetch`].
    index: Mutex<Option<tokio::task::JoinHandle<Option<Vec<u8>>>>>,
}

impl OnDemand {
    /// For the server of `client`, caching beside its discovery cache.
    pub fn new(client: kube::Client, cache: Option<&crate::DiscoveryCache>) -> Self {
        Self {
            client,
            dir: cache.and_then(|c| cache_dir_beside(c.dir())),
            index: Mutex::default(),
        }
    }

    async fn schema(&self, kinds: &Kinds, mode: Validation) -> ServerSchema {
        // Only `v1` Lists: kubectl answers those without asking v3, and validates
        // their items against v2.
        let only_lists = kinds
            .documents
            .iter()
            .all(|(g, v, k)| crate::openapi::is_v1_list(g, v, k));
        let field_validation = match only_lists {
            true => None,
            false => self.field_validation(kinds).await,
        };
        let Some(field_validation) = field_validation else {
            return load(&self.client, self.dir.as_deref())
                .await
                .map(|doc| Arc::new(Published::v2(doc)));
        };
        let client_side = mode == Validation::Strict
            && (kinds.lists
                || kinds
                    .documents
                    .iter()
                    .any(|k| !field_validation.supports(k)));
        let document = match client_side {
            true => Some(load(&self.client, self.dir.as_deref()).await),
            false => None,
        };
        Ok(Arc::new(Published::v3(field_validation, document)))
    }

    /// v3's answers for `kinds`; `None` when the server has no v3 or one of the
    /// documents could not be read.
    async fn field_validation(&self, kinds: &Kinds) -> Option<v3::FieldValidation> {
        let prefetched = self.index.lock().ok().and_then(|mut i| i.take());
        let index = match prefetched {
            Some(started) => started.await.ok().flatten()?,
            None => get(&self.client, INDEX).await?,
        };
        let index = v3::Index::from_json(&index).ok()?;
        let (listed, unlisted) = v3::plan(&index, &kinds.documents);
        let fetches = listed.into_iter().map(|(group, version)| {
            let index = &index;
            async move {
                let url = index.url(&group, &version)?;
                let cached = v3::Index::hash_of(url)
                    .zip(self.dir.as_ref())
                    .map(|(hash, dir)| dir.join("v3").join(format!("{hash}.json")));
                if let Some(patches) = cached.as_deref().and_then(v3::Patches::load) {
                    return Some(((group, version), patches));
                }
                let body = get(&self.client, url).await?;
                let patches = v3::Patches::from_document(&body, &group, &version).ok()?;
                if let Some(path) = &cached {
                    patches.store(path);
                }
                Some(((group, version), patches))
            }
        });
        let known: HashMap<_, _> = join_all(fetches).await.into_iter().collect::<Option<_>>()?;
        let namespace = unlisted
            && known
                .get(&(String::new(), "v1".to_string()))
                .and_then(|core| core.declares("Namespace"))
                .unwrap_or(false);
        Some(v3::FieldValidation::new(&index, known, namespace))
    }
}

impl SchemaSource for OnDemand {
    fn fetch<'a>(&'a self, kinds: &'a Kinds, mode: Validation) -> BoxFuture<'a, ServerSchema> {
        Box::pin(self.schema(kinds, mode))
    }

    /// The v3 index, which every input but a List-only one needs: on a task of its own
    /// (the runtime has worker threads), so that it progresses while the build
    /// decodes on this one.
    fn prefetch(&self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Ok(mut index) = self.index.lock() else {
            return;
        };
        if index.is_none() {
            let client = self.client.clone();
            *index = Some(runtime.spawn(async move { get(&client, INDEX).await }));
        }
    }
}

/// OpenAPI v3's index of the group-versions' documents.
const INDEX: &str = "/openapi/v3";

/// `GET path` as JSON: the body of a success, `None` otherwise (the caller falls
/// back to what it can do without).
async fn get(client: &kube::Client, path: &str) -> Option<Vec<u8>> {
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, "application/json")
        .body(kube::client::Body::empty())
        .ok()?;
    let response = client.send(request).await.ok()?;
    let status = response.status();
    let body = response.into_body().collect_bytes().await.ok()?;
    if !status.is_success() {
        tracing::debug!(path, %status, "OpenAPI v3 not read");
        return None;
    }
    Some(body.to_vec())
}
