//! The query of a request URL as client-go writes it (`url.Values.Encode`): its
//! parameters sorted by name, joined by single `&`, and no `?` at all without one.
//!
//! kube-core's request builder writes `path?` and then `&name=value` for each
//! parameter, so its URLs read `pods?&fieldManager=kubectl-run`, and a DELETE with no
//! parameter ends in a bare `?`. The server reads both the same, but the URL is what
//! `-v=6` shows and what a user copies from it; kubectl's never look like that.

/// `uri` with its query in client-go's form, or `None` when it already is.
pub fn tidy(uri: &http::Uri) -> Option<http::Uri> {
    // `Uri::query` reads an empty query as none: the `?` is seen in the text.
    let (path, query) = uri.path_and_query()?.as_str().split_once('?')?;
    let tidy = tidy_query(query);
    if tidy == query && !query.is_empty() {
        return None;
    }
    let path_and_query = if tidy.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{tidy}")
    };
    let mut parts = uri.clone().into_parts();
    parts.path_and_query = Some(path_and_query.parse().ok()?);
    http::Uri::from_parts(parts).ok()
}

/// `request` with its URL's query in client-go's form ([`tidy`]).
pub fn tidy_request<B>(mut request: http::Request<B>) -> http::Request<B> {
    if let Some(uri) = tidy(request.uri()) {
        *request.uri_mut() = uri;
    }
    request
}

/// A query (without its `?`) as `url.Values.Encode` writes it: empty parameters
/// dropped, the rest sorted by name (a stable sort: the values of one name keep their
/// order, as Go keeps them), each written as it came (already escaped).
fn tidy_query(query: &str) -> String {
    let mut parameters: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
    parameters.sort_by_key(|p| p.split_once('=').map_or(*p, |(name, _)| name));
    parameters.join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tidied(uri: &str) -> String {
        let uri: http::Uri = uri.parse().expect("uri");
        tidy(&uri).unwrap_or(uri).to_string()
    }

    #[test]
    fn kube_s_leading_ampersand_goes() {
        assert_eq!(
            tidied(
                "https://127.0.0.1:6443/api/v1/namespaces/default/pods?&fieldManager=kubectl-run"
            ),
            "https://127.0.0.1:6443/api/v1/namespaces/default/pods?fieldManager=kubectl-run"
        );
    }

    #[test]
    fn a_bare_question_mark_goes() {
        assert_eq!(
            tidied("https://127.0.0.1:6443/api/v1/namespaces/default/pods/web?"),
            "https://127.0.0.1:6443/api/v1/namespaces/default/pods/web"
        );
        assert_eq!(tidied("/api/v1/pods?&"), "/api/v1/pods");
    }

    /// Go's `url.Values.Encode` sorts by name; kubectl's URLs read in that order.
    #[test]
    fn parameters_are_sorted_by_name_values_in_order() {
        assert_eq!(
            tidied(
                "/apis/apps/v1/deployments?&fieldValidation=Strict&fieldManager=kubectl-create&dryRun=All"
            ),
            "/apis/apps/v1/deployments?dryRun=All&fieldManager=kubectl-create&fieldValidation=Strict"
        );
        assert_eq!(
            tidied("/x?b=2&a=1&&b=1"),
            "/x?a=1&b=2&b=1",
            "one name's values keep their order"
        );
    }

    #[test]
    fn a_tidy_url_is_left_alone() {
        for uri in [
            "/api/v1/pods",
            "/api/v1/pods?labelSelector=app%3Dweb&limit=500",
            "https://h:1/version",
        ] {
            assert!(tidy(&uri.parse().expect("uri")).is_none(), "{uri}");
        }
    }

    #[test]
    fn the_request_keeps_its_method_and_body() {
        let request = http::Request::delete("https://h:1/api/v1/namespaces/a/pods/b?")
            .body(vec![1u8])
            .expect("request");
        let request = tidy_request(request);
        assert_eq!(request.method(), http::Method::DELETE);
        assert_eq!(request.uri(), "https://h:1/api/v1/namespaces/a/pods/b");
        assert_eq!(request.body(), &[1u8]);
    }
}
