//! `/openapi/v2`, fetched once per command and kept on disk beside the discovery
//! cache (`<cache-dir>/kubeplug/openapi/<host_port>/`), and [`OnDemand`]: OpenAPI v3
//! first, v2 only when it is needed (the v3 cache sits in the same folder, `v3/`).
//!
//! The document is several MB and changes whenever a CRD does, so a time-to-live
//! would either refetch it often or validate against stale schemas. The server gives
//! it an `ETag`: the cached copy is revalidated with `If-None-Match` and a `304` costs
//! a few bytes. kubectl keeps it in memory only and fetches it on every command that
//! validates; nothing here runs when validation is off.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::future::{BoxFuture, join_all};

use super::{OpenApiV2, Published, v3};
use crate::{Kinds, SchemaSource, ServerSchema, Validation};

const DOCUMENT: &str = "swagger.json";
const ETAG: &str = "etag";

/// The OpenAPI cache directory of the server whose discovery cache is `discovery_dir`
/// (`…/kubeplug/discovery/<host_port>` → `…/kubeplug/openapi/<host_port>`).
pub fn cache_dir_beside(discovery_dir: &Path) -> Option<PathBuf> {
    let server = discovery_dir.file_name()?;
    Some(
        discovery_dir
            .parent()?
            .parent()?
            .join("openapi")
            .join(server),
    )
}

/// The schema `--validate=<mode>` needs from the server whose discovery cache is
/// `cache`: none when validation is off (the document stays off that path), else the
/// document or why it could not be fetched.
pub async fn for_validation(
    client: &kube::Client,
    cache: Option<&crate::DiscoveryCache>,
    mode: Validation,
) -> Option<ServerSchema> {
    if mode == Validation::Ignore {
        return None;
    }
    let dir = cache.and_then(|c| cache_dir_beside(c.dir()));
    Some(
        load(client, dir.as_deref())
            .await
            .map(|doc| Arc::new(Published::v2(doc))),
    )
}

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
}

impl OnDemand {
    /// For the server of `client`, caching beside its discovery cache.
    pub fn new(client: kube::Client, cache: Option<&crate::DiscoveryCache>) -> Self {
        Self {
            client,
            dir: cache.and_then(|c| cache_dir_beside(c.dir())),
        }
    }

    async fn schema(&self, kinds: &Kinds, mode: Validation) -> ServerSchema {
        // Only `v1` Lists: kubectl answers those without asking v3, and validates
        // their items against v2.
        let only_lists = kinds
            .documents
            .iter()
            .all(|(g, v, k)| g.is_empty() && v == "v1" && k == "List");
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
        let index = get(&self.client, "/openapi/v3").await?;
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
}

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

/// Fetches (or revalidates) and reads the document. The error is the reason in
/// client-go's words, for kubectl's `failed to download openapi: …`.
pub async fn load(client: &kube::Client, cache: Option<&Path>) -> Result<Arc<OpenApiV2>, String> {
    let cached = cache.and_then(|dir| {
        let etag = std::fs::read_to_string(dir.join(ETAG)).ok()?;
        Some((dir, etag.trim().to_string()))
    });
    let mut request =
        http::Request::get("/openapi/v2").header(http::header::ACCEPT, "application/json");
    if let Some((_, etag)) = &cached {
        request = request.header(http::header::IF_NONE_MATCH, etag.as_str());
    }
    let request = request
        .body(kube::client::Body::empty())
        .map_err(|e| e.to_string())?;
    let response = client.send(request).await.map_err(|e| transport(&e))?;
    let status = response.status();
    let etag = response
        .headers()
        .get(http::header::ETAG)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = response
        .into_body()
        .collect_bytes()
        .await
        .map_err(|e| transport(&e))?;
    if status == http::StatusCode::NOT_MODIFIED
        && let Some((dir, _)) = &cached
        && let Ok(bytes) = std::fs::read(dir.join(DOCUMENT))
        && let Ok(doc) = OpenApiV2::from_json(&bytes)
    {
        return Ok(Arc::new(doc));
    }
    if !status.is_success() {
        return Err(refusal(status.as_u16(), &body));
    }
    let doc = OpenApiV2::from_json(&body).map_err(|e| e.to_string())?;
    if let (Some(dir), Some(etag)) = (cache, etag) {
        store(dir, &body, &etag);
    }
    Ok(Arc::new(doc))
}

/// A transport failure as the discovery errors word it: kube's `ServiceError: ` names
/// its own plumbing, the cause (a refused connection, a timeout) is what matters.
fn transport(err: &kube::Error) -> String {
    // Go's url.Error for the download (apiclient::go_net, the one mapping); a request cut
    // by the client's bound says so, as every other request does.
    if let Some(url_error) = apiclient::go_net::url_error(err, "/openapi/v2") {
        return url_error;
    }
    match err {
        kube::Error::Service(cause) => apiclient::error::error_chain(cause.as_ref()),
        other => apiclient::error::error_chain(other),
    }
}

/// client-go's words for a refused download (its REST client turns a `Status` body
/// into its error; a 401 gets the generic text, as kubectl shows it).
fn refusal(code: u16, body: &[u8]) -> String {
    let status = serde_json::from_slice::<kube::core::Status>(body)
        .ok()
        .filter(|s| !s.message.is_empty() && code != 401);
    match (status, code) {
        (Some(status), _) => status.message,
        (None, 401) => "the server has asked for the client to provide credentials".into(),
        (None, 403) => "forbidden".into(),
        (None, 404) => "the server could not find the requested resource".into(),
        (None, code) => format!(
            "the server responded with the status code {code} but did not return more information"
        ),
    }
}

/// Writes the document, then its ETag, each atomically: a reader sees either the old
/// pair, or a new document with the old ETag (a `200` next time, never a wrong `304`
/// match: the ETag is written last). Failures only cost a future download.
fn store(dir: &Path, body: &[u8], etag: &str) {
    let result = (|| -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let _ = std::fs::remove_file(dir.join(ETAG));
        for (name, bytes) in [(DOCUMENT, body), (ETAG, etag.as_bytes())] {
            let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
            std::io::Write::write_all(&mut tmp, bytes)?;
            tmp.persist(dir.join(name)).map_err(|e| e.error)?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        tracing::debug!(dir = %dir.display(), error = %e, "could not write the OpenAPI cache");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_sits_beside_discovery() {
        assert_eq!(
            cache_dir_beside(Path::new("/c/kubeplug/discovery/127.0.0.1_6443")),
            Some(PathBuf::from("/c/kubeplug/openapi/127.0.0.1_6443"))
        );
    }

    #[test]
    fn refusals_read_as_client_go_says_them() {
        let status =
            br#"{"kind":"Status","message":"Unauthorized","reason":"Unauthorized","code":401}"#;
        assert_eq!(
            refusal(401, status),
            "the server has asked for the client to provide credentials"
        );
        let status = br#"{"kind":"Status","message":"forbidden: User \"x\" cannot get path \"/openapi/v2\"","reason":"Forbidden","code":403}"#;
        assert_eq!(
            refusal(403, status),
            "forbidden: User \"x\" cannot get path \"/openapi/v2\""
        );
        assert_eq!(
            refusal(502, b"bad gateway"),
            "the server responded with the status code 502 but did not return more information"
        );
    }
}
