//! [`Helper`]: cli-runtime's `resource.Helper`, the REST verbs for one [`Mapping`],
//! on untyped objects (`serde_json::Value`, kubectl's `Unstructured`).
//!
//! Requests are built with kube-core's sans-IO [`kube::core::Request`] and sent through
//! the shared [`kube::Client`], so they get its authentication, timeouts and TLS.

use kube::core::Request;
use kube::core::params::PostParams;
use serde_json::Value;

use super::DryRunStrategy;
use crate::Mapping;

/// The `Accept` of cli-runtime's Helper over kubectl's unstructured client.
const UNSTRUCTURED_ACCEPT: &str = "application/json";

/// The `Accept` of kubectl's typed REST client.
const TYPED_ACCEPT: &str = "application/json, */*";

/// The REST verbs for one kind of object.
#[derive(Clone)]
pub struct Helper {
    client: kube::Client,
    mapping: Mapping,
    params: PostParams,
    dry_run: DryRunStrategy,
    field_validation: Option<&'static str>,
    accept: &'static str,
}

impl Helper {
    /// A helper for objects of `mapping`.
    pub fn new(client: kube::Client, mapping: Mapping) -> Self {
        Self {
            client,
            mapping,
            params: PostParams::default(),
            dry_run: DryRunStrategy::None,
            field_validation: None,
            accept: UNSTRUCTURED_ACCEPT,
        }
    }

    /// For an object kubectl holds in its Go type (`kubectl run`'s): its typed
    /// client asks for `application/json, */*`, where the unstructured one of
    /// `kubectl create -f` asks for `application/json`.
    pub fn typed(mut self) -> Self {
        self.accept = TYPED_ACCEPT;
        self
    }

    /// The command's `--dry-run`: a server dry run is sent with `dryRun=All`
    /// (validated and admitted, never persisted); a client dry run sends nothing, so
    /// [`Self::create_request`] refuses to build a request under it.
    pub fn dry_run(mut self, strategy: DryRunStrategy) -> Self {
        self.dry_run = strategy;
        self.params.dry_run = strategy == DryRunStrategy::Server;
        self
    }

    /// The field manager recorded in `managedFields` (`fieldManager=…`).
    pub fn with_field_manager(mut self, manager: impl Into<String>) -> Self {
        let manager = manager.into();
        self.params.field_manager = (!manager.is_empty()).then_some(manager);
        self
    }

    /// `fieldValidation=Strict|Warn|Ignore` for `--validate`, sent as kubectl 1.32
    /// sends it whatever the server (servers before 1.25 ignore it).
    pub fn with_field_validation(mut self, mode: crate::Validation) -> Self {
        use crate::Validation;
        self.field_validation = Some(match mode {
            Validation::Strict => "Strict",
            Validation::Warn => "Warn",
            Validation::Ignore => "Ignore",
        });
        self
    }

    /// The request [`Self::create`] sends (separate so it can be checked without a server).
    pub fn create_request(
        &self,
        namespace: Option<&str>,
        object: &Value,
    ) -> Result<http::Request<Vec<u8>>, kube::Error> {
        let body = serde_json::to_vec(object).map_err(kube::Error::SerdeError)?;
        self.create_request_of(namespace, body)
    }

    /// [`Self::create_request`] of an object already encoded (`body`, JSON without
    /// its final newline): for a caller that writes it in its Go type's field order,
    /// as kubectl sends typed objects.
    pub fn create_request_of(
        &self,
        namespace: Option<&str>,
        mut body: Vec<u8>,
    ) -> Result<http::Request<Vec<u8>>, kube::Error> {
        // A client dry run prints what it would send: a request built under it is a
        // caller's mistake, refused before it can reach the server.
        if !self.dry_run.sends_requests() {
            return Err(kube::Error::BuildRequest(
                kube::core::request::Error::Validation("a client dry run sends no request".into()),
            ));
        }
        // Go's json.Encoder, which client-go's body goes through, ends it with a newline;
        // the server quotes the body in some refusals (`… bigger context …|{…}\n|…`),
        // which then read as kubectl's only with the same bytes.
        body.push(b'\n');
        let mut request = Request::new(self.mapping.collection_path(namespace))
            .create(&self.params, body)
            .map_err(kube::Error::BuildRequest)?;
        if let Some(directive) = self.field_validation {
            // kube's PostParams has no fieldValidation; kube always writes a query.
            let uri = format!("{}&fieldValidation={directive}", request.uri());
            *request.uri_mut() = uri.parse().map_err(|e: http::uri::InvalidUri| {
                kube::Error::BuildRequest(kube::core::request::Error::Validation(e.to_string()))
            })?;
        }
        request.headers_mut().insert(
            http::header::ACCEPT,
            http::HeaderValue::from_static(self.accept),
        );
        // The URL as client-go writes it (kube's reads `?&…`, or ends in `?`); the
        // client tidies every request anyway, this one is also returned to be read.
        Ok(apiclient::client::query::tidy_request(request))
    }

    /// POSTs `object` to its collection and returns what the server stored.
    pub async fn create(
        &self,
        namespace: Option<&str>,
        object: &Value,
    ) -> Result<Value, kube::Error> {
        self.client
            .request::<Value>(self.create_request(namespace, object)?)
            .await
    }

    /// [`Self::create`] of an object already encoded ([`Self::create_request_of`]).
    pub async fn create_encoded(
        &self,
        namespace: Option<&str>,
        body: Vec<u8>,
    ) -> Result<Value, kube::Error> {
        self.client
            .request::<Value>(self.create_request_of(namespace, body)?)
            .await
    }

    /// GETs the object `name`.
    pub async fn get(&self, namespace: Option<&str>, name: &str) -> Result<Value, kube::Error> {
        let request = Request::new(self.mapping.collection_path(namespace))
            .get(name, &kube::core::params::GetParams::default())
            .map_err(kube::Error::BuildRequest)?;
        self.client.request::<Value>(request).await
    }
}

/// `kubectl create --raw PATH`: POSTs `body` as-is to `path` on the configured server
/// and returns the answer's body. JSON is sent as JSON, anything else as YAML (which
/// the API server also accepts).
pub async fn post_raw(
    client: &kube::Client,
    path: &str,
    body: Vec<u8>,
) -> Result<String, kube::Error> {
    let is_json = body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let content_type = if is_json {
        "application/json"
    } else {
        "application/yaml"
    };
    let request = http::Request::post(path)
        .header(http::header::CONTENT_TYPE, content_type)
        .body(body)
        .map_err(kube::Error::HttpError)?;
    client.request_text(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping(namespaced: bool) -> Mapping {
        Mapping {
            group: "apps".into(),
            version: "v1".into(),
            kind: "Deployment".into(),
            resource: "deployments".into(),
            namespaced,
        }
    }

    fn client() -> kube::Client {
        let config = kube::Config::new("https://127.0.0.1:1".parse().expect("uri"));
        let (credentials, identity) =
            apiclient::credentials::Credentials::of(&config).expect("credentials");
        apiclient::client::builder(&config, credentials, identity)
            .expect("client")
            .build()
    }

    #[tokio::test]
    async fn create_request_carries_dry_run_and_field_manager() {
        let helper = Helper::new(client(), mapping(true))
            .dry_run(DryRunStrategy::Server)
            .with_field_manager("kubectl-create");
        let obj = serde_json::json!({"kind": "Deployment"});
        let req = helper.create_request(Some("team"), &obj).expect("request");
        assert_eq!(req.method(), http::Method::POST);
        assert_eq!(
            req.uri().to_string(),
            "/apis/apps/v1/namespaces/team/deployments?dryRun=All&fieldManager=kubectl-create"
        );
        let mut body = serde_json::to_vec(&obj).expect("json");
        body.push(b'\n');
        assert_eq!(req.body(), &body);
        assert_eq!(req.headers()[http::header::ACCEPT], "application/json");
        let typed = Helper::new(client(), mapping(true)).typed();
        let req = typed.create_request(None, &obj).expect("request");
        assert_eq!(req.headers()[http::header::ACCEPT], "application/json, */*");
    }

    #[tokio::test]
    async fn create_request_carries_the_field_validation_directive() {
        let obj = serde_json::json!({"kind": "Deployment"});
        for (mode, directive) in [
            (crate::Validation::Strict, "Strict"),
            (crate::Validation::Warn, "Warn"),
            (crate::Validation::Ignore, "Ignore"),
        ] {
            let helper = Helper::new(client(), mapping(false))
                .with_field_manager("kubectl-create")
                .with_field_validation(mode);
            let req = helper.create_request(None, &obj).expect("request");
            assert_eq!(
                req.uri().to_string(),
                format!(
                    "/apis/apps/v1/deployments?fieldManager=kubectl-create&fieldValidation={directive}"
                )
            );
        }
    }

    #[tokio::test]
    async fn cluster_scoped_objects_ignore_the_namespace() {
        let helper = Helper::new(client(), mapping(false));
        let req = helper
            .create_request(Some("team"), &serde_json::json!({}))
            .expect("request");
        assert_eq!(req.uri().to_string(), "/apis/apps/v1/deployments");
    }

    #[tokio::test]
    async fn only_a_server_dry_run_is_sent_and_a_client_one_is_refused() {
        let obj = serde_json::json!({"kind": "Deployment"});
        let uri = |strategy| {
            Helper::new(client(), mapping(false))
                .dry_run(strategy)
                .create_request(None, &obj)
                .map(|req| req.uri().to_string())
        };
        assert_eq!(
            uri(DryRunStrategy::None).expect("request"),
            "/apis/apps/v1/deployments"
        );
        assert_eq!(
            uri(DryRunStrategy::Server).expect("request"),
            "/apis/apps/v1/deployments?dryRun=All"
        );
        let refused = uri(DryRunStrategy::Client).expect_err("a client dry run sends nothing");
        assert!(
            refused
                .to_string()
                .contains("a client dry run sends no request"),
            "{refused}"
        );
    }

    #[tokio::test]
    async fn overlong_field_managers_are_rejected_before_sending() {
        let helper = Helper::new(client(), mapping(true)).with_field_manager("x".repeat(129));
        assert!(helper.create_request(None, &serde_json::json!({})).is_err());
    }
}
