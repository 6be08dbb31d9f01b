//! A scripted API server in process: the test tier between the unit tests and the
//! e2e suite, for the plugins' tests only (a dev-dependency; no binary links it). It
//! serves plain HTTP/1.1 on a loopback port to the plugin's real client stack
//! (`apiclient`'s transport, bound, retries and warnings, as
//! `cli::flags::ConfigFlags::client` builds them), keeps the objects in a small store
//! (`POST` a collection, `GET` an object or a list, `DELETE`, watches, a pod's `log`,
//! with the `managedFields` entry a create writes), records every request, and
//! answers as a test scripts it, by object name: `429` with `Retry-After`, a create
//! applied and its connection then dropped (a lost answer), a connection dropped
//! before the create is applied, a `404` for a kind not served yet, an answer held
//! until the test releases it. A test changes a stored object as a controller would
//! ([`Server::modify`]: a pod's status), and every watch open on it sees the change.
//!
//! What it proves is the client side's logic (requeue, resend, ordering, the output
//! window, waits on watches, what is printed) exactly and in milliseconds; the e2e
//! tests stay the proof against the real server. Tests wait on what the server saw
//! ([`Server::holding`], [`Server::watching`]) or on the run's own events, never on
//! time.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt as _, Full, StreamBody};
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

/// One request the server read.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: Method,
    pub path: String,
    /// The object's name: the body's for a create, the path's last segment otherwise
    /// (`log` for a pod's log).
    pub name: String,
    /// The query, as sent.
    pub query: String,
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
    /// How many watches were opened so far.
    watches: watch::Sender<usize>,
    /// How many requests were read so far.
    requests: watch::Sender<usize>,
}

#[derive(Default)]
struct State {
    log: Vec<Request>,
    /// By method and object name: the answers still to give, in order.
    script: HashMap<(Method, String), VecDeque<Answer>>,
    /// Objects by their path.
    store: BTreeMap<String, Value>,
    /// The last resourceVersion given (also each object's uid number).
    uid: u64,
    /// The open watches: a collection's path, the name a field selector limits it to,
    /// and where its events go.
    watchers: Vec<Watcher>,
    /// Pods' logs, by the pod's path.
    logs: HashMap<String, String>,
}

struct Watcher {
    collection: String,
    name: Option<String>,
    events: mpsc::UnboundedSender<Bytes>,
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
            watches: watch::Sender::new(0),
            requests: watch::Sender::new(0),
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

    /// The stored object at `path` (`/api/v1/namespaces/ns/pods/x`).
    pub fn object(&self, path: &str) -> Option<Value> {
        self.shared.lock().store.get(path).cloned()
    }

    /// Changes the stored object at `path` as a controller would (a new
    /// resourceVersion), and sends the change to every watch open on it.
    pub fn modify(&self, path: &str, change: impl FnOnce(&mut Value)) {
        let mut state = self.shared.lock();
        state.uid += 1;
        let version = state.uid.to_string();
        let object = state.store.get_mut(path).expect("the object is stored");
        change(object);
        object["metadata"]["resourceVersion"] = json!(version);
        let object = object.clone();
        state.notify(path, "MODIFIED", &object);
    }

    /// Deletes the stored object at `path`, as another client would.
    pub fn delete(&self, path: &str) {
        let mut state = self.shared.lock();
        let object = state.store.remove(path).expect("the object is stored");
        state.notify(path, "DELETED", &object);
    }

    /// What `GET <pod path>/log` answers.
    pub fn set_log(&self, pod: &str, text: &str) {
        self.shared.lock().logs.insert(pod.into(), text.into());
    }

    /// Waits until `count` watches have been opened in all.
    pub async fn watching(&self, count: usize) {
        let mut watches = self.shared.watches.subscribe();
        watches
            .wait_for(|n| *n >= count)
            .await
            .expect("the server lives");
    }

    /// Waits until the server has read `count` requests of which `what` holds.
    pub async fn saw(&self, count: usize, what: impl Fn(&Request) -> bool) {
        let mut requests = self.shared.requests.subscribe();
        requests
            .wait_for(|_| self.shared.lock().log.iter().filter(|r| what(r)).count() >= count)
            .await
            .expect("the server lives");
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

/// An answer's body: whole, or a watch's stream of events.
type Body = BoxBody<Bytes, std::io::Error>;
type Answered = Result<Response<Body>, std::io::Error>;

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
                query: query.clone(),
            });
            state
                .script
                .get_mut(&(head.method.clone(), name.clone()))
                .and_then(VecDeque::pop_front)
        };
        // Told once the lock is let go: a waiter looks at the log under it.
        self.requests.send_modify(|n| *n += 1);
        if head.method == Method::GET && scripted.is_none() && param(&query, "watch").is_some() {
            return Ok(self.watch(&path, &query));
        }
        let store = |state: &mut State| match (&head.method, &object) {
            (&Method::POST, Some(object)) => state.create(&path, &query, object.clone()),
            (&Method::GET, _) => state.get(&path, &name, &query),
            (&Method::DELETE, _) => state.delete(&path, &name),
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

impl Shared {
    /// A watch of the collection at `path` (of one object with a `metadata.name`
    /// field selector): the events of every change from now on, until the server ends.
    fn watch(&self, path: &str, query: &str) -> Response<Body> {
        let (events, received) = mpsc::unbounded_channel();
        self.lock().watchers.push(Watcher {
            collection: path.to_string(),
            name: selected_name(query),
            events,
        });
        self.watches.send_modify(|n| *n += 1);
        let stream = futures::stream::unfold(received, |mut received| async move {
            let event = received.recv().await?;
            Some((Ok(hyper::body::Frame::data(event)), received))
        });
        let mut answer = Response::new(StreamBody::new(stream).boxed());
        answer.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        answer
    }
}

/// The value of `key` in a query string (`fieldSelector=metadata.name%3Dx`), with the
/// percent-escapes kube's selectors use decoded.
fn param(query: &str, key: &str) -> Option<String> {
    query
        .split('&')
        .find_map(|p| p.strip_prefix(key)?.strip_prefix('='))
        .map(|v| {
            v.replace("%3D", "=")
                .replace("%2C", ",")
                .replace("%2F", "/")
        })
}

/// The name a `metadata.name=…` field selector limits a list or watch to.
fn selected_name(query: &str) -> Option<String> {
    param(query, "fieldSelector")?
        .strip_prefix("metadata.name=")
        .map(str::to_string)
}

/// Whether `object` has every `key=value` label of a label selector.
fn labelled(object: &Value, selector: Option<&str>) -> bool {
    selector.into_iter().flat_map(|s| s.split(',')).all(|term| {
        let (key, value) = term.split_once('=').unwrap_or((term, ""));
        object["metadata"]["labels"][key].as_str() == Some(value)
    })
}

impl State {
    /// Sends `kind` (`ADDED`, `MODIFIED`, `DELETED`) of the object at `path` to the
    /// watches open on it; a watch whose client left is forgotten.
    fn notify(&mut self, path: &str, kind: &str, object: &Value) {
        let Some((collection, name)) = path.rsplit_once('/') else {
            return;
        };
        let mut event = json!({"type": kind, "object": object}).to_string();
        event.push('\n');
        self.watchers.retain(|w| {
            let concerned =
                w.collection == collection && w.name.as_deref().is_none_or(|n| n == name);
            !concerned || w.events.send(Bytes::from(event.clone())).is_ok()
        });
    }

    /// A create into the collection at `path`, as the API server stores it: the
    /// metadata it adds, the `managedFields` entry of the request's field manager.
    fn create(&mut self, path: &str, query: &str, mut object: Value) -> Response<Body> {
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
        let param = |key: &str| param(query, key);
        // metav1.Time: RFC 3339 in whole seconds, UTC.
        let now = json!(
            jiff::Timestamp::now()
                .strftime("%Y-%m-%dT%H:%M:%SZ")
                .to_string()
        );
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
            self.store.insert(key.clone(), object.clone());
            self.notify(&key, "ADDED", &object);
        }
        json_answer(StatusCode::CREATED, &object)
    }

    /// An object, a pod's log, or a list: a path with one segment after the namespace
    /// (`…/namespaces/ns/pods`) is a collection, filtered by the query's field and
    /// label selectors.
    fn get(&self, path: &str, name: &str, query: &str) -> Response<Body> {
        if let Some(pod) = path.strip_suffix("/log") {
            let mut answer = Response::new(whole(self.logs.get(pod).cloned().unwrap_or_default()));
            answer.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("text/plain"),
            );
            return answer;
        }
        let after_namespace = path.split('/').skip_while(|s| *s != "namespaces").count();
        if after_namespace == 3 {
            let prefix = format!("{path}/");
            let wanted = selected_name(query);
            let labels = param(query, "labelSelector");
            let items: Vec<&Value> = self
                .store
                .iter()
                .filter(|(key, _)| key.strip_prefix(&prefix).is_some_and(|n| !n.contains('/')))
                .map(|(_, object)| object)
                .filter(|o| wanted.as_deref().is_none_or(|n| o["metadata"]["name"] == n))
                .filter(|o| labelled(o, labels.as_deref()))
                .collect();
            return json_answer(
                StatusCode::OK,
                &json!({
                    "kind": "List", "apiVersion": "v1",
                    "metadata": {"resourceVersion": self.uid.to_string()},
                    "items": items,
                }),
            );
        }
        match self.store.get(path) {
            Some(object) => json_answer(StatusCode::OK, object),
            None => status(
                StatusCode::NOT_FOUND,
                "NotFound",
                &format!("{name:?} not found"),
            ),
        }
    }

    fn delete(&mut self, path: &str, name: &str) -> Response<Body> {
        match self.store.remove(path) {
            Some(object) => {
                self.notify(path, "DELETED", &object);
                json_answer(StatusCode::OK, &object)
            }
            None => status(
                StatusCode::NOT_FOUND,
                "NotFound",
                &format!("{name:?} not found"),
            ),
        }
    }
}

fn whole(text: impl Into<Bytes>) -> Body {
    Full::new(text.into())
        .map_err(|never| match never {})
        .boxed()
}

fn json_answer(code: StatusCode, body: &Value) -> Response<Body> {
    let mut answer = Response::new(whole(body.to_string()));
    *answer.status_mut() = code;
    answer.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    answer
}

/// A `Status` answer, as the API server words its refusals.
fn status(code: StatusCode, reason: &str, message: &str) -> Response<Body> {
    json_answer(
        code,
        &json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code.as_u16(),
        }),
    )
}
