//! A scripted API server in process: the test tier between the unit tests and the
//! e2e suite. It serves plain HTTP/1.1 on a loopback port to the plugin's real client
//! stack (`apiclient`'s transport, bound, retries and warnings, as
//! `cli::flags::ConfigFlags::client` builds them), keeps the objects created in a
//! small store (`POST` a collection, `GET` an object, with the `managedFields` entry a
//! create writes), records every request, and answers as a test scripts it, by
//! object name: `429` with `Retry-After`, a create applied and its connection then
//! dropped (a lost answer), a connection dropped before the create is applied, a
//! `404` for a kind not served yet, an answer held until the test releases it.
//!
//! What it proves is the client side's logic (requeue, resend, ordering, the output
//! window, what is printed) exactly and in milliseconds; the e2e tests stay the proof
//! against the real server. Tests wait on what the server saw ([`Server::holding`])
//! or on the run's own events, never on time.
//!
//! A test module of create-file for now, written to need nothing of it: the day
//! another plugin's tests want it, it moves to a dev-only crate under `shared/`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use serde_json::{Value, json};
use tokio::sync::watch;

/// One request the server read.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: Method,
    pub path: String,
    /// The object's name: the body's for a create, the path's last segment otherwise.
    pub name: String,
}

/// A scripted answer, in place of what the store would answer.
#[derive(Debug, Clone, Copy)]
pub enum Answer {
    /// `429 Too Many Requests` with `Retry-After: seconds`.
    Throttle { retry_after: u32 },
    /// The create is applied, then the connection is dropped without an answer.
    ApplyThenDrop,
    /// The connection is dropped without an answer; nothing is applied.
    Drop,
    /// `404 NotFound`, as for a resource the server does not serve (yet).
    NotServed,
    /// Held until [`Server::release`], then answered by the store.
    Hold,
}

/// The server; it stops when dropped.
pub struct Server {
    port: u16,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

struct Shared {
    state: Mutex<State>,
    /// How many answers are held now.
    held: watch::Sender<usize>,
    released: watch::Sender<bool>,
}

#[derive(Default)]
struct State {
    log: Vec<Request>,
    /// By method and object name: the answers still to give, in order.
    script: HashMap<(Method, String), VecDeque<Answer>>,
    /// Objects by their path.
    store: BTreeMap<String, Value>,
    uid: u64,
}

impl Server {
    /// Starts a server on a loopback port of its own.
    pub async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a loopback port");
        let port = listener.local_addr().expect("local address").port();
        let shared = Arc::new(Shared {
            state: Mutex::default(),
            held: watch::Sender::new(0),
            released: watch::Sender::new(false),
        });
        let serving = shared.clone();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let shared = serving.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        let shared = shared.clone();
                        async move { shared.answer(request).await }
                    });
                    // A service error ends the connection without an answer: the
                    // scripted drop.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                        .await;
                });
            }
        });
        Self { port, shared, task }
    }

    /// A client of the server through the plugins' real stack, with the default bound.
    pub fn client(&self) -> kube::Client {
        apiclient::tls::install_crypto_provider();
        let url = format!("http://127.0.0.1:{}", self.port);
        let mut config = kube::Config::new(url.parse().expect("a URL"));
        config.default_namespace = "ns".into();
        let bound = apiclient::bound::bound_requests(&mut config, None, None);
        cli::flags::ConfigFlags::default()
            .client(config, bound)
            .expect("a client")
    }

    /// Answers the next requests of `method` for the object `name` with `answers`, in
    /// order, then as the store does.
    pub fn script(&self, method: Method, name: &str, answers: impl IntoIterator<Item = Answer>) {
        self.shared
            .lock()
            .script
            .entry((method, name.to_string()))
            .or_default()
            .extend(answers);
    }

    /// Every request read so far, in order.
    pub fn log(&self) -> Vec<Request> {
        self.shared.lock().log.clone()
    }

    /// The requests of `method` for `name`, counted.
    pub fn count(&self, method: &Method, name: &str) -> usize {
        let state = self.shared.lock();
        state
            .log
            .iter()
            .filter(|r| r.method == method && r.name == name)
            .count()
    }

    /// The requests of `method`, counted.
    pub fn count_method(&self, method: &Method) -> usize {
        let state = self.shared.lock();
        state.log.iter().filter(|r| r.method == method).count()
    }

    /// The names of the objects stored, by path order.
    pub fn stored(&self) -> Vec<String> {
        let state = self.shared.lock();
        state
            .store
            .values()
            .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
            .collect()
    }

    /// Waits until an answer is held ([`Answer::Hold`]).
    pub async fn holding(&self) {
        let mut held = self.shared.held.subscribe();
        held.wait_for(|n| *n > 0).await.expect("the server lives");
    }

    /// Answers the held requests, and any scripted to be held from now on at once.
    pub fn release(&self) {
        self.shared.released.send_replace(true);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

type Answered = Result<Response<Full<Bytes>>, std::io::Error>;

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn answer(&self, request: http::Request<hyper::body::Incoming>) -> Answered {
        let (head, body) = request.into_parts();
        let body = body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let object: Option<Value> = serde_json::from_slice(&body).ok();
        let path = head.uri.path().to_string();
        let name = match (&head.method, &object) {
            (&Method::POST, Some(object)) => object["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            _ => path.rsplit('/').next().unwrap_or_default().to_string(),
        };
        let query = head.uri.query().unwrap_or_default().to_string();
        let scripted = {
            let mut state = self.lock();
            state.log.push(Request {
                method: head.method.clone(),
                path: path.clone(),
                name: name.clone(),
            });
            state
                .script
                .get_mut(&(head.method.clone(), name.clone()))
                .and_then(VecDeque::pop_front)
        };
        let store = |state: &mut State| match (&head.method, &object) {
            (&Method::POST, Some(object)) => state.create(&path, &query, object.clone()),
            (&Method::GET, _) => state.get(&path, &name),
            _ => status(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                "not scripted",
            ),
        };
        let dropped = || Err(std::io::Error::other("scripted: connection dropped"));
        match scripted {
            None => Ok(store(&mut self.lock())),
            Some(Answer::Throttle { retry_after }) => {
                let mut answer = status(
                    StatusCode::TOO_MANY_REQUESTS,
                    "TooManyRequests",
                    "the server has received too many requests and has asked us to try again later",
                );
                answer
                    .headers_mut()
                    .insert(http::header::RETRY_AFTER, retry_after.into());
                Ok(answer)
            }
            Some(Answer::ApplyThenDrop) => {
                let _ = store(&mut self.lock());
                dropped()
            }
            Some(Answer::Drop) => dropped(),
            Some(Answer::NotServed) => Ok(status(
                StatusCode::NOT_FOUND,
                "NotFound",
                "the server could not find the requested resource",
            )),
            Some(Answer::Hold) => {
                self.held.send_modify(|n| *n += 1);
                let mut released = self.released.subscribe();
                let _ = released.wait_for(|r| *r).await;
                self.held.send_modify(|n| *n -= 1);
                Ok(store(&mut self.lock()))
            }
        }
    }
}

impl State {
    /// A create into the collection at `path`, as the API server stores it: the
    /// metadata it adds, the `managedFields` entry of the request's field manager.
    fn create(&mut self, path: &str, query: &str, mut object: Value) -> Response<Full<Bytes>> {
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let resource = path.rsplit('/').next().unwrap_or_default().to_string();
        let key = format!("{path}/{name}");
        if self.store.contains_key(&key) {
            return json_answer(
                StatusCode::CONFLICT,
                &json!({
                    "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": format!("{resource} {name:?} already exists"),
                    "reason": "AlreadyExists",
                    "details": {"name": name, "kind": resource}, "code": 409,
                }),
            );
        }
        let param = |key: &str| {
            query
                .split('&')
                .find_map(|p| p.strip_prefix(key)?.strip_prefix('='))
                .map(str::to_string)
        };
        let now = serde_json::to_value(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            k8s_openapi::jiff::Timestamp::now(),
        ))
        .expect("a time");
        self.uid += 1;
        let namespace = path
            .split('/')
            .skip_while(|s| *s != "namespaces")
            .nth(1)
            .map(str::to_string);
        let api_version = object["apiVersion"].clone();
        let metadata = &mut object["metadata"];
        if let Some(namespace) = namespace {
            metadata["namespace"] = json!(namespace);
        }
        metadata["uid"] = json!(format!("uid-{}", self.uid));
        metadata["resourceVersion"] = json!(self.uid.to_string());
        metadata["creationTimestamp"] = now.clone();
        metadata["managedFields"] = json!([{
            "manager": param("fieldManager").unwrap_or_else(|| "unknown".into()),
            "operation": "Update",
            "apiVersion": api_version,
            "time": now,
            "fieldsType": "FieldsV1",
            "fieldsV1": {},
        }]);
        if param("dryRun").is_none() {
            self.store.insert(key, object.clone());
        }
        json_answer(StatusCode::CREATED, &object)
    }

    fn get(&self, path: &str, name: &str) -> Response<Full<Bytes>> {
        match self.store.get(path) {
            Some(object) => json_answer(StatusCode::OK, object),
            None => status(
                StatusCode::NOT_FOUND,
                "NotFound",
                &format!("{name:?} not found"),
            ),
        }
    }
}

fn json_answer(code: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    let mut answer = Response::new(Full::new(Bytes::from(body.to_string())));
    *answer.status_mut() = code;
    answer.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    answer
}

/// A `Status` answer, as the API server words its refusals.
fn status(code: StatusCode, reason: &str, message: &str) -> Response<Full<Bytes>> {
    json_answer(
        code,
        &json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code.as_u16(),
        }),
    )
}
