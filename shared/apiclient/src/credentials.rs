//! The kubeconfig user's credentials, provided as client-go provides them, and their
//! failures in client-go's words, carrying nothing of the kubeconfig's secrets.
//!
//! **Ours, not kube's** (the binary-size budget and correctness, 2026-11-26). kube-client 5 builds its
//! credentials inside `Client::try_from(Config)`, and that code cost every plugin
//! 1.25–1.46 MiB of its stripped binary (a YAML deserializer for exec output, and
//! JSONPath with pest and regex for the removed gcp provider's `token-key`, measured in
//! README "Binary size"); it also ran an exec plugin three times per
//! client (once for the TLS identity, once for the header, once for the expiry), told
//! the plugin it was interactive with stdin not a terminal, still ran the gcp provider
//! kubectl 1.32 refuses, and quoted the kubeconfig's `env:` in its errors. What is
//! here: [`validate`] (client-go's `validateAuthInfo`, before anything runs),
//! [`Credentials::of`] (the user's method, chosen as client-go chooses it; an exec
//! plugin run once), and [`layer`], which puts the `Authorization` header on every
//! request, re-reading a token file each minute and running the plugin again once its
//! credential has expired.
//!
//! The methods, as client-go 1.32 applies them: an auth provider (`oidc`: its
//! `id-token` while its `exp` is ahead; `gcp` and `azure` are refused with kubectl's
//! words), else basic auth or a token (`token`, `tokenFile`), else the exec plugin,
//! which does not run when the user has a token, basic auth or a client certificate.
//! Unlike kubectl, an expired OIDC `id-token` is not refreshed from the issuer: the
//! error says to log in again.
//!
//! Messages: a failure to get credentials at request time is a [`CredentialsError`]
//! (`getting credentials: exec: executable /bin/sh failed with exit code 3`, printed
//! by [`cli::finish`] after kubectl's `Unable to connect to the server: `); a
//! kubeconfig that cannot be used is a [`crate::error::Error`], as kubectl reports it
//! before connecting. The plugin's own stderr is ours, as client-go passes it through.

use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use http::HeaderValue;
use http::header::AUTHORIZATION;
use kube::config::AuthInfo;
use secrecy::ExposeSecret as _;

pub use crate::error::CredentialsError;
use crate::error::{Error, Result};
use crate::tls::Identity;

mod exec;
pub mod policy;

/// client-go's text for a credential plugin that is not on `PATH` (its
/// `installHintVerboseHelp`).
const INSTALL_HINT_HELP: &str = "\n\nIt looks like you are trying to use a client-go credential plugin that is not installed.\n\nTo learn more about this feature, consult the documentation available at:\n      https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins";

/// A system error as Go prints it (`no such file or directory`), without Rust's
/// capital letter and ` (os error 2)`.
pub(crate) fn go_errno_text(io: &std::io::Error) -> String {
    let text = match io.raw_os_error() {
        Some(code) => std::io::Error::from_raw_os_error(code).to_string(),
        None => io.to_string(),
    };
    let text = match text.rfind(" (os error ") {
        Some(at) => &text[..at],
        None => &text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// Where the kubeconfig reader keeps an exec `interactiveMode` that is none of
/// `Never`, `IfAvailable`, `Always` (kube's type cannot hold it, and kubectl reports it
/// only when the user is validated, in its own words).
pub const INVALID_INTERACTIVE_MODE: &str = "kubeplug.invalidInteractiveMode";

/// Whether a secret of the kubeconfig is given and not empty.
fn secret_set(secret: &Option<secrecy::SecretString>) -> bool {
    secret
        .as_ref()
        .is_some_and(|s| !s.expose_secret().is_empty())
}

/// client-go's `validateAuthInfo` for the user `name`: every problem, in its words
/// and order ([`Error::InvalidAuthInfo`] prints one as kubectl prints one, several as
/// its `Error in configuration:` list).
pub fn validate(name: &str, auth: &AuthInfo) -> Result<()> {
    let mut errors = Vec::new();
    let mut methods = Vec::new();
    let set = |s: &Option<String>| s.as_deref().is_some_and(|s| !s.is_empty());
    if secret_set(&auth.token) {
        methods.push("token");
    }
    if set(&auth.username) || secret_set(&auth.password) {
        methods.push("basicAuth");
    }
    let key_data = secret_set(&auth.client_key_data);
    if set(&auth.client_certificate) || set(&auth.client_certificate_data) {
        if set(&auth.client_certificate) && set(&auth.client_certificate_data) {
            errors.push(format!("client-cert-data and client-cert are both specified for {name}. client-cert-data will override."));
        }
        if set(&auth.client_key) && key_data {
            errors.push(format!("client-key-data and client-key are both specified for {name}; client-key-data will override"));
        }
        if !set(&auth.client_key) && !key_data {
            errors.push(format!("client-key-data or client-key must be specified for {name} to use the clientCert authentication method."));
        }
        for (what, path) in [
            ("client-cert", &auth.client_certificate),
            ("client-key", &auth.client_key),
        ] {
            if let Some(path) = path.as_deref().filter(|p| !p.is_empty())
                && let Err(e) = std::fs::File::open(path)
            {
                errors.push(format!(
                    "unable to read {what} {path} for {name} due to open {path}: {}",
                    go_errno_text(&e)
                ));
            }
        }
    }
    if let Some(exec) = &auth.exec {
        if auth.auth_provider.is_some() {
            errors.push(format!(
                "authProvider cannot be provided in combination with an exec plugin for {name}"
            ));
        }
        if !set(&exec.command) {
            errors.push(format!(
                "command must be specified for {name} to use exec authentication plugin"
            ));
        }
        let api_version = exec.api_version.as_deref().unwrap_or_default();
        if api_version.is_empty() {
            errors.push(format!(
                "apiVersion must be specified for {name} to use exec authentication plugin"
            ));
        }
        for var in exec.env.iter().flatten() {
            if var.get("name").is_none_or(String::is_empty) {
                errors.push(format!(
                    "env variable name must be specified for {name} to use exec authentication plugin"
                ));
            }
        }
        // clientcmd's defaulting gives the beta versions `IfAvailable`; v1 must say.
        let defaulted = matches!(
            api_version,
            "client.authentication.k8s.io/v1beta1" | "client.authentication.k8s.io/v1alpha1"
        );
        if let Some(mode) = exec.other.get(INVALID_INTERACTIVE_MODE) {
            let mode = mode.as_str().unwrap_or_default();
            errors.push(format!("invalid interactiveMode for {name}: {mode:?}"));
        } else if exec.interactive_mode.is_none() && !defaulted {
            errors.push(format!(
                "interactiveMode must be specified for {name} to use exec authentication plugin"
            ));
        }
    }
    if methods.len() > 1 {
        errors.push(format!(
            "more than one authentication method found for {name}; found [{}], only one is allowed",
            methods.join(" ")
        ));
    }
    let impersonating = set(&auth.impersonate);
    let extras = set(&auth.impersonate_uid)
        || auth
            .impersonate_groups
            .as_ref()
            .is_some_and(|g| !g.is_empty())
        || auth
            .impersonate_user_extra
            .as_ref()
            .is_some_and(|e| !e.is_empty());
    if extras && !impersonating {
        errors.push(format!(
            "requesting uid, groups or user-extra for {name} without impersonating a user"
        ));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::InvalidAuthInfo(errors))
    }
}

/// How requests of one client are authenticated. Cheap to clone: the token file and
/// the plugin's cache are shared.
#[derive(Clone)]
pub struct Credentials(Arc<Method>);

enum Method {
    None,
    /// Basic auth, a static token: one header for every request.
    Header(HeaderValue),
    Oidc(Oidc),
    TokenFile(TokenFile),
    Exec(Box<Plugin>),
}

impl std::fmt::Debug for Credentials {
    /// Names the method, never its secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let method = match &*self.0 {
            Method::None => "none",
            Method::Header(_) => "header",
            Method::Oidc(_) => "oidc",
            Method::TokenFile(_) => "token file",
            Method::Exec(_) => "exec plugin",
        };
        f.debug_tuple("Credentials").field(&method).finish()
    }
}

impl Credentials {
    /// The credentials of `config`'s user (already [`validate`]d), and the client
    /// certificate an exec plugin returned, if it returned one. Runs the plugin (once)
    /// and reads the token file: a failure of either is the command's error.
    pub fn of(config: &kube::Config) -> Result<(Self, Option<Identity>)> {
        let auth = &config.auth_info;
        let method = |m: Method| Credentials(Arc::new(m));
        if let Some(provider) = &auth.auth_provider {
            return Ok((method(auth_provider(provider)?), None));
        }
        // client-go's `HasBasicAuth`: a username, with the password or without one.
        if let Some(user) = auth.username.as_deref().filter(|u| !u.is_empty()) {
            let password = auth.password.as_ref().map(|p| p.expose_secret());
            let plain = format!("{user}:{}", password.unwrap_or_default());
            let encoded = base64::engine::general_purpose::STANDARD.encode(plain);
            let basic = header("Basic", &encoded).map_err(Error::Credentials)?;
            return Ok((method(Method::Header(basic)), None));
        }
        if secret_set(&auth.token)
            && let Some(token) = &auth.token
        {
            let token = bearer(token.expose_secret()).map_err(Error::Credentials)?;
            return Ok((method(Method::Header(token)), None));
        }
        if let Some(path) = auth.token_file.as_deref().filter(|p| !p.is_empty()) {
            let file = blocking(|| TokenFile::read(path))?;
            return Ok((method(Method::TokenFile(file)), None));
        }
        let has_certificate = [&auth.client_certificate, &auth.client_certificate_data]
            .iter()
            .any(|c| c.as_deref().is_some_and(|c| !c.is_empty()));
        match &auth.exec {
            Some(config) if !has_certificate => {
                let api_version = config.api_version.as_deref().unwrap_or_default();
                if !exec::supported(api_version) {
                    return Err(Error::Authentication(format!(
                        "exec plugin: invalid apiVersion {api_version:?}"
                    )));
                }
                let credential = blocking(|| exec::run(config)).map_err(Error::Credentials)?;
                let identity = match &credential.certificate {
                    Some((cert, key)) => Some(
                        Identity::from_pem(cert.as_bytes(), key.as_bytes()).map_err(Error::Tls)?,
                    ),
                    None => None,
                };
                let plugin = Plugin::new(config.clone(), credential)?;
                Ok((method(Method::Exec(Box::new(plugin))), identity))
            }
            _ => Ok((method(Method::None), None)),
        }
    }

    /// The `Authorization` value for the next request, if the user has one.
    async fn authorization(&self) -> Result<Option<HeaderValue>, CredentialsError> {
        match &*self.0 {
            Method::None => Ok(None),
            Method::Header(value) => Ok(Some(value.clone())),
            Method::Oidc(oidc) => oidc.header().map(Some),
            Method::TokenFile(file) => file.header().map(Some),
            Method::Exec(plugin) => plugin.header().await,
        }
    }
}

/// A sensitive header value (hyper leaves it out of its debug output).
fn header(scheme: &str, secret: &str) -> Result<HeaderValue, CredentialsError> {
    let mut value = HeaderValue::from_str(&format!("{scheme} {secret}"))
        .map_err(|_| CredentialsError::new("invalid characters in the credentials".to_string()))?;
    value.set_sensitive(true);
    Ok(value)
}

fn bearer(token: &str) -> Result<HeaderValue, CredentialsError> {
    header("Bearer", token)
}

/// The kubeconfig's `auth-provider`, as kubectl 1.32 has them: `oidc` only.
fn auth_provider(provider: &kube::config::AuthProviderConfig) -> Result<Method> {
    let refused = |message: &str| Err(Error::Authentication(message.to_string()));
    match provider.name.as_str() {
        "oidc" => {
            let config = &provider.config;
            let get = |key: &str| config.get(key).filter(|v| !v.is_empty());
            if get("idp-issuer-url").is_none() {
                return refused("Must provide idp-issuer-url");
            }
            if get("client-id").is_none() {
                return refused("Must provide client-id");
            }
            let token = match get("id-token") {
                Some(token) => Some((
                    bearer(token).map_err(Error::Credentials)?,
                    id_token_expiry(token),
                )),
                None => None,
            };
            let oidc = Oidc {
                token,
                can_refresh: get("refresh-token").is_some(),
            };
            // Checked now as well, as the exec plugin runs now: a token that cannot be
            // used fails the command before it reads or sends anything.
            oidc.header().map_err(Error::Credentials)?;
            Ok(Method::Oidc(oidc))
        }
        "gcp" => refused(
            "The gcp auth plugin has been removed.\nPlease use the \"gke-gcloud-auth-plugin\" kubectl/client-go credential plugin instead.\nSee https://cloud.google.com/blog/products/containers-kubernetes/kubectl-auth-changes-in-gke for further details",
        ),
        "azure" => refused(
            "The azure auth plugin has been removed.\nPlease use the https://github.com/Azure/kubelogin kubectl/client-go credential plugin instead.\nSee https://kubernetes.io/docs/reference/access-authn-authz/authentication/#client-go-credential-plugins for further details",
        ),
        other => Err(Error::Authentication(format!(
            "no Auth Provider found for name {other:?}"
        ))),
    }
}

/// client-go's oidc provider, without its refresh: the `id-token` is sent while it is
/// valid (its `exp` more than 10 seconds away), checked before every request as
/// client-go checks it. Refreshing from the issuer (OIDC discovery, the token
/// endpoint, the kubeconfig rewritten with the new tokens) is not done: an expired
/// token is an error that says to log in again.
struct Oidc {
    /// The header and when the token stops being valid (or why it is not a JWT).
    token: Option<(HeaderValue, Result<jiff::Timestamp, CredentialsError>)>,
    can_refresh: bool,
}

/// How long before its `exp` client-go stops using an id-token.
const OIDC_EXPIRY_DELTA: jiff::SignedDuration = jiff::SignedDuration::from_secs(10);

impl Oidc {
    fn header(&self) -> Result<HeaderValue, CredentialsError> {
        if let Some((header, expiry)) = &self.token {
            let expiry = expiry.clone()?;
            if jiff::Timestamp::now() + OIDC_EXPIRY_DELTA < expiry {
                return Ok(header.clone());
            }
        }
        Err(if self.can_refresh {
            CredentialsError::provider(
                "the oidc id-token has expired, and refreshing it from the issuer is not supported here: log in again, or use an exec credential plugin such as kubelogin",
            )
        } else {
            CredentialsError::provider(
                "No valid id-token, and cannot refresh without refresh-token",
            )
        })
    }
}

/// The `exp` claim of a JWT (client-go's `idTokenExpired`, in its words); a token
/// without one has expired. Never quotes the token.
fn id_token_expiry(token: &str) -> Result<jiff::Timestamp, CredentialsError> {
    let parts: Vec<&str> = token.split('.').collect();
    let [_, payload, _] = parts[..] else {
        return Err(CredentialsError::provider("ID Token is not a valid JWT"));
    };
    let payload =
        crate::error::go_base64(&base64::engine::general_purpose::URL_SAFE_NO_PAD, payload)
            .map_err(|e| CredentialsError::provider(&e))?;
    let claims: serde_json::Value = serde_json::from_slice(&payload)
        .map_err(|_| CredentialsError::provider("parsing claims: the payload is not JSON"))?;
    let exp = claims
        .get("exp")
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(0.0);
    // Seconds since the epoch; out of range reads as already expired.
    Ok(jiff::Timestamp::from_second(exp as i64).unwrap_or(jiff::Timestamp::UNIX_EPOCH))
}

/// client-go's cached file token source: read at start (a failure is the command's
/// error), then again once a minute; a later failure keeps the last token, so a file
/// removed after start (kubernetes/kubernetes#68164) does not break the client.
struct TokenFile {
    path: String,
    cached: std::sync::Mutex<(HeaderValue, Instant)>,
}

/// How long a token file's contents are used before the file is read again.
const TOKEN_FILE_PERIOD: Duration = Duration::from_secs(60);

impl TokenFile {
    fn read(path: &str) -> Result<Self> {
        let header = Self::load(path).map_err(Error::Authentication)?;
        Ok(Self {
            path: path.to_string(),
            cached: std::sync::Mutex::new((header, Instant::now())),
        })
    }

    fn load(path: &str) -> Result<HeaderValue, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("open {path}: {}", go_errno_text(&e)))?;
        bearer(text.trim()).map_err(|e| e.to_string())
    }

    fn header(&self) -> Result<HeaderValue, CredentialsError> {
        // A poisoned lock only means a panic elsewhere mid-update; the value is whole.
        let mut cached = self
            .cached
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cached.1.elapsed() >= TOKEN_FILE_PERIOD {
            match blocking(|| Self::load(&self.path)) {
                Ok(header) => *cached = (header, Instant::now()),
                Err(reason) => {
                    tracing::debug!(%reason, "keeping the last token of the token file");
                    cached.1 = Instant::now();
                }
            }
        }
        Ok(cached.0.clone())
    }
}

/// Runs blocking work (an exec plugin, which may wait for its user; a token file)
/// from code that may be running on one of the runtime's workers: on the
/// multi-threaded runtime the plugins use, the worker hands its other tasks over
/// first (`block_in_place`), so the work blocks no task but its caller. Elsewhere
/// (no runtime, or a single thread, where that is not possible) it runs in place.
/// Used where the caller is synchronous (`Credentials::of`, the token file's
/// cache); a later exec run is on the blocking pool (`Plugin::header`).
fn blocking<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

/// An exec plugin with its last credential; run again once that has expired.
struct Plugin {
    config: kube::config::ExecConfig,
    cached: tokio::sync::Mutex<(Option<HeaderValue>, Option<jiff::Timestamp>)>,
}

impl Plugin {
    fn new(config: kube::config::ExecConfig, credential: exec::Credential) -> Result<Self> {
        let header = credential
            .token
            .as_deref()
            .map(bearer)
            .transpose()
            .map_err(Error::Credentials)?;
        Ok(Self {
            config,
            cached: tokio::sync::Mutex::new((header, credential.expiry)),
        })
    }

    async fn header(&self) -> Result<Option<HeaderValue>, CredentialsError> {
        // One run at a time: requests waiting here take the new credential.
        let mut cached = self.cached.lock().await;
        let expired = cached.1.is_some_and(|at| jiff::Timestamp::now() >= at);
        if expired {
            let config = self.config.clone();
            let credential = tokio::task::spawn_blocking(move || exec::run(&config))
                .await
                .map_err(|e| CredentialsError::new(format!("exec: {e}")))??;
            let header = credential.token.as_deref().map(bearer).transpose()?;
            *cached = (header, credential.expiry);
        }
        Ok(cached.0.clone())
    }
}

/// The tower layer that authenticates every request of a client with `credentials`
/// (a header the request already has is kept: `--token` over the kubeconfig's is
/// decided before, and nothing else sets it).
pub fn layer(credentials: Credentials) -> tower::filter::AsyncFilterLayer<Authorize> {
    tower::filter::AsyncFilterLayer::new(Authorize(credentials))
}

/// The predicate of [`layer`].
#[derive(Clone, Debug)]
pub struct Authorize(Credentials);

impl<B: Send + 'static> tower::filter::AsyncPredicate<http::Request<B>> for Authorize {
    type Future = std::pin::Pin<
        Box<dyn std::future::Future<Output = Result<http::Request<B>, tower::BoxError>> + Send>,
    >;
    type Request = http::Request<B>;

    fn check(&mut self, mut request: http::Request<B>) -> Self::Future {
        let credentials = self.0.clone();
        Box::pin(async move {
            if let Some(value) = credentials.authorization().await?
                && !request.headers().contains_key(AUTHORIZATION)
            {
                request.headers_mut().insert(AUTHORIZATION, value);
            }
            Ok(request)
        })
    }
}

#[cfg(test)]
mod tests;
