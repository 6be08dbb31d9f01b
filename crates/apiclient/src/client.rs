//! The API server's client of a command, built here from kube's [`kube::Config`] instead
//! of by kube's `Client::try_from(Config)`.
//!
//! Why (issue 21, measured 2026-11-26): kube's builder reaches its credential code from
//! three places (the TLS identity, the `Authorization` layer, the client's expiry), so
//! calling it at all linked that code, with JSONPath, pest, regex and a YAML
//! deserializer, into every plugin; and it ran an exec plugin three times per client.
//! The credentials are [`crate::credentials`]; what is built here is the rest of kube's
//! stack, from the same libraries and in the same order: the TLS configuration
//! ([`crate::tls`]: the kubeconfig's roots or the OS's verifier, its client
//! certificate, `tls-server-name`), the proxy (the kubeconfig's `proxy-url`, else the
//! environment's for the server, as Go's `ProxyFromEnvironment` reads it; http, https
//! and socks5 as in client-go), the
//! connect, read and write timeouts, and kube's own base-URI and extra-header layers
//! (impersonation, the user agent). kube's request tracing is replaced by one line per
//! request at `-v=6`, as kubectl logs them: `GET https://…/api/v1/pods 200 OK in 4
//! milliseconds`.
//!
//! What stays kube's: [`kube::Config`] (the kubeconfig's resolution) and the
//! [`kube::Client`] above this service.

pub mod connect;

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use http_body_util::BodyExt as _;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::TokioExecutor;
use kube::client::{Body, ClientBuilder, ConfigExt as _, DynBody};
use secrecy::ExposeSecret as _;
use tower::util::BoxService;
use tower::{BoxError, ServiceBuilder, ServiceExt as _};

use crate::credentials::Credentials;
use crate::error::{Error, Result};
use crate::tls::Identity;

/// The service under a [`kube::Client`] (what kube's own builder makes).
pub type Service = BoxService<http::Request<Body>, http::Response<Box<DynBody>>, BoxError>;

/// A client builder for `config`, authenticating with `credentials`; `identity` is
/// the client certificate an exec plugin returned (else the kubeconfig's is used).
/// No request is sent.
pub fn builder(
    config: &kube::Config,
    credentials: Credentials,
    identity: Option<Identity>,
) -> Result<ClientBuilder<Service>> {
    builder_with(config, credentials, identity, connect::Proxies::from_env())
}

/// [`builder`] with the environment's proxy settings given (`env_proxies`, used when
/// `config` names no proxy), so that tests need not set variables.
fn builder_with(
    config: &kube::Config,
    credentials: Credentials,
    identity: Option<Identity>,
    env_proxies: connect::Proxies,
) -> Result<ClientBuilder<Service>> {
    let identity = match identity {
        Some(identity) => Some(identity),
        None => kubeconfig_identity(&config.auth_info)?,
    };
    let tls = crate::tls::client_config(
        config.root_cert.as_deref(),
        identity,
        config.accept_invalid_certs,
    )
    .map_err(Error::Tls)?;
    let proxies = match &config.proxy_url {
        Some(proxy) => {
            if !connect::supported(proxy) {
                return Err(Error::Proxy(format!(
                    "unsupported proxy URL {proxy}: only http, https and socks5 proxies are"
                )));
            }
            connect::Proxies::from(Matcher::builder().all(proxy.to_string()).build())
        }
        // As client-go without `proxy-url`: `HTTPS_PROXY`/`HTTP_PROXY` by the server's
        // scheme, unless `NO_PROXY` names the server or it is on loopback.
        None => env_proxies,
    };
    let connector = connect::Connector::new(proxies, tls.clone());
    let https = hyper_rustls::HttpsConnectorBuilder::new().with_tls_config(tls);
    let https = match &config.tls_server_name {
        Some(name) => {
            let name = rustls::pki_types::ServerName::try_from(name.clone())
                .map_err(|e| Error::Client(format!("invalid tls-server-name {name:?}: {e}")))?;
            https
                .https_or_http()
                .with_server_name_resolver(hyper_rustls::FixedServerNameResolver::new(name))
        }
        None => https.https_or_http(),
    };
    let mut connector =
        hyper_timeout::TimeoutConnector::new(https.enable_http1().wrap_connector(connector));
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let http: hyper_util::client::legacy::Client<_, Body> =
        hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(connector);
    let extra_headers = config
        .extra_headers_layer()
        .map_err(|e| Error::Client(e.to_string()))?;
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .layer(crate::credentials::layer(credentials))
        .layer(extra_headers)
        .layer_fn(Logged)
        .service(http)
        .map_err(BoxError::from)
        .map_response(|response| {
            response.map(|body| Box::new(body.map_err(BoxError::from)) as Box<DynBody>)
        });
    Ok(ClientBuilder::new(
        BoxService::new(service),
        config.default_namespace.clone(),
    ))
}

/// The kubeconfig's client certificate and key (`*-data` over the files, as in
/// client-go), when the user has both. A file that cannot be read was reported by
/// [`crate::credentials::validate`] already; it is reported here too in case.
fn kubeconfig_identity(auth: &kube::config::AuthInfo) -> Result<Option<Identity>> {
    let cert = load(
        auth.client_certificate_data.as_deref(),
        auth.client_certificate.as_deref(),
    )?;
    let key_data = auth.client_key_data.as_ref().map(|k| k.expose_secret());
    let key = load(key_data, auth.client_key.as_deref())?;
    match (cert, key) {
        (Some(cert), Some(key)) => Identity::from_pem(&cert, &key)
            .map(Some)
            .map_err(Error::Tls),
        _ => Ok(None),
    }
}

/// Base64 `data` (Go's words when it is not), else the file at `path`.
fn load(data: Option<&str>, path: Option<&str>) -> Result<Option<Vec<u8>>> {
    if let Some(data) = data.filter(|d| !d.is_empty()) {
        return crate::error::go_base64(&base64::engine::general_purpose::STANDARD, data)
            .map(Some)
            .map_err(Error::Authentication);
    }
    match path.filter(|p| !p.is_empty()) {
        Some(path) => std::fs::read(path)
            .map(Some)
            .map_err(|source| Error::ReadFile {
                what: "client certificate or key",
                path: path.into(),
                source,
            }),
        None => Ok(None),
    }
}

/// A request that got no answer, with its method and URL, which Go's `url.Error`
/// names (`Get "https://…": …`) and hyper's errors do not. Its text is its cause's:
/// the Go wording is [`crate::go_net`]'s, read from the fields.
#[derive(Debug)]
pub struct Requested {
    pub method: http::Method,
    pub uri: http::Uri,
    source: BoxError,
}

impl std::fmt::Display for Requested {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.source.fmt(f)
    }
}

impl std::error::Error for Requested {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.source.as_ref())
    }
}

/// One line per request at `-v=6` (target `http`, at INFO, which the lower levels'
/// filters leave out), as kubectl's round tripper logs it: method, URL, status and
/// time. Never headers: they carry the credentials.
#[derive(Clone, Debug)]
struct Logged<S>(S);

impl<S, B, R> tower::Service<http::Request<B>> for Logged<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
    S::Error: std::fmt::Display + Into<BoxError>,
{
    type Response = S::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.0.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let method = request.method().clone();
        let uri = request.uri().clone();
        let start = Instant::now();
        let response = self.0.call(request);
        Box::pin(async move {
            let response = response.await;
            let ms = start.elapsed().as_millis();
            match &response {
                Ok(r) => {
                    tracing::info!(target: "http", "{method} {uri} {} in {ms} milliseconds", r.status());
                }
                Err(e) => {
                    tracing::info!(target: "http", "{method} {uri} failed after {ms} milliseconds: {e}");
                }
            }
            // The request a failure belongs to, which Go's `url.Error` names.
            response.map_err(|source| {
                Box::new(Requested {
                    method,
                    uri,
                    source: source.into(),
                }) as BoxError
            })
        })
    }
}

#[cfg(test)]
mod tests;
