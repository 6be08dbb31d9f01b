//! `/openapi/v2`, fetched once per command and kept on disk beside the discovery
//! cache (`<cache-dir>/kubeplug/openapi/<host_port>/`); the OpenAPI v3 answers are
//! cached in the same folder (`v3/`, see `crate::server_schema::on_demand`).
//!
//! The document is several MB and changes whenever a CRD does, so a time-to-live
//! would either refetch it often or validate against stale schemas. The server gives
//! it an `ETag`: the cached copy is revalidated with `If-None-Match` and a `304` costs
//! a few bytes. kubectl keeps it in memory only and fetches it on every command that
//! validates; nothing here runs when validation is off.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::OpenApiV2;

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
        kube::Error::Service(cause) => apiclient::go_net::error_chain(cause.as_ref()),
        other => apiclient::go_net::error_chain(other),
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

/// Writes the document, then its ETag, each atomically ([`crate::cache_file`]), the
/// old ETag removed first: a reader sees either the old pair, or a new document
/// without an ETag or with the new one (a `200` next time, never a wrong `304` match:
/// the ETag is written last, and only after its document). Failures only cost a
/// future download.
fn store(dir: &Path, body: &[u8], etag: &str) {
    let _ = std::fs::remove_file(dir.join(ETAG));
    let what = "OpenAPI cache";
    if crate::cache_file::store(&dir.join(DOCUMENT), body, what) {
        crate::cache_file::store(&dir.join(ETAG), etag.as_bytes(), what);
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
