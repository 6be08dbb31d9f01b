//! An admission webhook on loopback that holds one request until the test releases
//! it: a slow early object, or a point in a client's protocol at which the test
//! acts (pauses a component) before the server goes on. Made by the real API
//! server's admission chain (the server waits for the webhook's answer before it
//! stores the change and answers the client), with no proxy between client and
//! server.
//!
//! It validates one operation on one resource in one namespace (its
//! `namespaceSelector`; ConfigMap creates too, which tell when it is in effect),
//! allows every request, and records each in the order it arrived and whether the
//! held one was released by then, so a test can tell how many requests a client sent
//! while an earlier one was outstanding, from the server's side. The API server
//! gives a webhook 30 s at most (`timeoutSeconds`); the policy is `Fail`, so a test
//! that forgets to release sees its held request fail rather than pass by accident.

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, PostParams};
use rcgen::{CertificateParams, KeyPair, SanType};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// Names of the server-side dry-run creates that tell when the webhook is in effect.
const PROBE: &str = "webhook-probe-";

/// The requests the webhook sees (besides ConfigMap creates): an operation
/// (`CREATE`, `DELETE`…) on a core (`v1`) resource.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub operation: &'static str,
    pub resource: &'static str,
}

/// ConfigMap creates.
pub const CONFIGMAP_CREATES: Rule = Rule {
    operation: "CREATE",
    resource: "configmaps",
};

/// One admission request the webhook answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Admitted {
    /// The object's name.
    pub name: String,
    /// Whether it arrived before [`HoldingWebhook::release`] (the held request
    /// itself included).
    pub before_release: bool,
}

#[derive(Default)]
struct Shared {
    /// What is held: the first request of `rule`'s operation for this name.
    hold: (String, String),
    admitted: Mutex<Vec<Admitted>>,
    /// The held create arrived (and is held until `released`).
    holding: std::sync::atomic::AtomicBool,
    released: std::sync::atomic::AtomicBool,
    release: tokio::sync::Notify,
    arrived: tokio::sync::Notify,
}

/// The webhook and its `ValidatingWebhookConfiguration`; [`Self::remove`] deletes the
/// configuration (the server stops when dropped).
pub struct HoldingWebhook {
    configuration: String,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl HoldingWebhook {
    /// Serves on `listener` (on 127.0.0.1 where the API server runs:
    /// `Cluster::loopback_listener`), registers itself for `rule` (and ConfigMap
    /// creates) in `namespace`, and returns once the API server calls it; the first
    /// request of `rule` for the object named `hold` is then held until
    /// [`Self::release`].
    pub async fn start(
        client: &kube::Client,
        listener: std::net::TcpListener,
        namespace: &str,
        rule: Rule,
        hold: &str,
    ) -> anyhow::Result<Self> {
        let (acceptor, ca) = acceptor()?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            hold: (rule.operation.to_string(), hold.to_string()),
            ..Shared::default()
        });
        let thread_shared = Arc::clone(&shared);
        let (stop, thread) =
            localcluster::latency::serve_on_own_thread("webhook", listener, move |listener| {
                accept_loop(listener, acceptor, thread_shared)
            })?;
        let configuration = format!("kubeplug-hold-{namespace}");
        let webhook = Self {
            configuration: configuration.clone(),
            shared,
            stop: Some(stop),
            thread: Some(thread),
        };
        let rules = [rule, CONFIGMAP_CREATES].map(|rule| {
            serde_json::json!({
                "apiGroups": [""], "apiVersions": ["v1"],
                "operations": [rule.operation], "resources": [rule.resource],
            })
        });
        let config: ValidatingWebhookConfiguration = serde_json::from_value(serde_json::json!({
            "metadata": {"name": configuration},
            "webhooks": [{
                "name": "hold.kubeplug.io",
                "clientConfig": {
                    "url": format!("https://{addr}/validate"),
                    "caBundle": base64_encode(ca.as_bytes()),
                },
                "rules": rules,
                "namespaceSelector": {
                    "matchLabels": {"kubernetes.io/metadata.name": namespace},
                },
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 30,
                "failurePolicy": "Fail",
            }],
        }))?;
        Api::<ValidatingWebhookConfiguration>::all(client.clone())
            .create(&PostParams::default(), &config)
            .await
            .context("create the webhook configuration")?;
        webhook.wait_in_effect(client, namespace).await?;
        Ok(webhook)
    }

    /// The API server picks a new configuration up from its informer: dry-run creates
    /// (which reach webhooks without side effects) until one reaches this one.
    async fn wait_in_effect(&self, client: &kube::Client, namespace: &str) -> anyhow::Result<()> {
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
        let params = PostParams {
            dry_run: true,
            ..PostParams::default()
        };
        for attempt in 0..300 {
            let probe: ConfigMap = serde_json::from_value(serde_json::json!({
                "metadata": {"name": format!("{PROBE}{attempt}")},
            }))?;
            api.create(&params, &probe).await?;
            if lock(&self.shared.admitted)
                .iter()
                .any(|a| a.name.starts_with(PROBE))
            {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Err(anyhow!(
            "the API server did not call the webhook within 30 s"
        ))
    }

    /// Whether the held request has arrived and is being held.
    pub fn holding(&self) -> bool {
        self.shared
            .holding
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Waits (at most `bound`) until the held request arrives; whether it did.
    pub async fn wait_holding(&self, bound: Duration) -> bool {
        let wait = async {
            loop {
                let mut arrived = std::pin::pin!(self.shared.arrived.notified());
                arrived.as_mut().enable();
                if self.holding() {
                    return;
                }
                arrived.await;
            }
        };
        tokio::time::timeout(bound, wait).await.is_ok()
    }

    /// Lets the held create (and any later one of that name) through.
    pub fn release(&self) {
        self.shared
            .released
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.shared.release.notify_waiters();
    }

    /// The creates admitted so far, in order of arrival (the probes left out).
    pub fn admitted(&self) -> Vec<Admitted> {
        lock(&self.shared.admitted)
            .iter()
            .filter(|a| !a.name.starts_with(PROBE))
            .cloned()
            .collect()
    }

    /// Deletes the configuration and stops the server.
    pub async fn remove(mut self, client: &kube::Client) -> anyhow::Result<()> {
        self.release();
        Api::<ValidatingWebhookConfiguration>::all(client.clone())
            .delete(&self.configuration, &DeleteParams::default())
            .await?;
        self.stop_server();
        Ok(())
    }

    fn stop_server(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for HoldingWebhook {
    fn drop(&mut self) {
        // A test that failed before `remove`: the configuration only selects its own
        // namespace, which the harness deletes.
        self.release();
        self.stop_server();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A self-signed serving certificate for 127.0.0.1 (the API server is given it as the
/// webhook's CA bundle).
fn acceptor() -> anyhow::Result<(TlsAcceptor, String)> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params
        .subject_alt_names
        .push(SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()));
    let cert = params.self_signed(&key)?;
    let acceptor = super::proxy::serving(&cert, &key, vec![b"http/1.1".to_vec()])?;
    Ok((acceptor, cert.pem()))
}

async fn accept_loop(listener: TcpListener, acceptor: TlsAcceptor, shared: Arc<Shared>) {
    loop {
        let Ok((tcp, _peer)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let acceptor = acceptor.clone();
        let shared = Arc::clone(&shared);
        tokio::spawn(async move {
            let Ok(tls) = acceptor.accept(tcp).await else {
                return;
            };
            let service = hyper::service::service_fn(move |req| {
                let shared = Arc::clone(&shared);
                async move { review(req, &shared).await }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), service)
                .await;
        });
    }
}

/// Answers one `AdmissionReview`: allowed, after the release if it is the held one.
async fn review(
    req: Request<Incoming>,
    shared: &Shared,
) -> Result<Response<Full<Bytes>>, Infallible> {
    // An AdmissionReview of a ConfigMap: far below the server's own 3 MiB bound.
    let body = match Limited::new(req.into_body(), 4 << 20).collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return Ok(Response::new(Full::new(Bytes::new()))),
    };
    let review: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let request = &review["request"];
    let name = request["name"]
        .as_str()
        .or_else(|| request["object"]["metadata"]["name"].as_str())
        .unwrap_or_default()
        .to_string();
    let operation = request["operation"].as_str().unwrap_or_default();
    let held = (operation, name.as_str()) == (shared.hold.0.as_str(), shared.hold.1.as_str())
        && !shared.holding.load(std::sync::atomic::Ordering::SeqCst);
    lock(&shared.admitted).push(Admitted {
        name,
        before_release: !shared.released.load(std::sync::atomic::Ordering::SeqCst),
    });
    if held {
        shared
            .holding
            .store(true, std::sync::atomic::Ordering::SeqCst);
        shared.arrived.notify_waiters();
        loop {
            // Registered before the flag is read, so a release in between wakes it.
            let mut released = std::pin::pin!(shared.release.notified());
            released.as_mut().enable();
            if shared.released.load(std::sync::atomic::Ordering::SeqCst) {
                break;
            }
            released.await;
        }
    }
    let answer = serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": request["uid"], "allowed": true},
    });
    let mut response = Response::new(Full::new(Bytes::from(answer.to_string())));
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}
