//! The create path against the scripted API server (the `scripted` crate), through the
//! plugin's real client stack: `create_one`'s three jobs one by one, then whole runs
//! for exactly-once reporting and the output window. Every wait is on what the
//! server saw or on the run's own log event, never on time.

use std::io::Write;
use std::sync::{Arc, Mutex};

use cli::flags::PrintFlags;
use http::Method;
use resources::{Builder, FilenameOptions, RestMapper};

use super::*;
use scripted::{Answer, Server};

/// A writer the test reads back.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("buffer").extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Buffer {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("buffer")).into_owned()
    }
}

/// `n` ConfigMaps `prefix-0000`, `prefix-0001`, … as one YAML stream.
fn configmaps(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| {
            format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {prefix}-{i:04}\ndata:\n  k: v\n")
        })
        .collect()
}

/// `yaml` read as `-f -` is, into namespace `ns`, mapped offline (built-in kinds and
/// the input's CRDs).
async fn visit(yaml: &str) -> Visited {
    let inputs = FilenameOptions {
        filenames: vec!["-".into()],
        recursive: false,
        kustomize: None,
    };
    Builder::files(Validation::Ignore, "ns", false, &inputs)
        .continue_on_error()
        .stdin(std::io::Cursor::new(yaml.to_string()))
        .build(&mut RestMapper::offline())
        .await
        .expect("the input reads")
}

/// The objects of `yaml`, read.
async fn infos(yaml: &str) -> Vec<Info> {
    visit(yaml)
        .await
        .entries()
        .map(|e| e.expect("an object"))
        .collect()
}

/// What a test gives the create step: the writers it reads back and the printer.
struct Harness {
    client: kube::Client,
    printer: Box<dyn Printer>,
    stdout: Buffer,
    stderr: Buffer,
    out: Writers,
}

impl Harness {
    fn new(server: &Server) -> Self {
        let (stdout, stderr) = (Buffer::default(), Buffer::default());
        Self {
            client: server.client(),
            printer: PrintFlags::default()
                .to_printer("created", DryRunStrategy::None)
                .expect("the default printer"),
            out: Writers::new(Box::new(stdout.clone()), Box::new(stderr.clone())),
            stdout,
            stderr,
        }
    }

    /// One answered request (a GET of an object that does not exist), as a run's
    /// discovery is before its first create.
    async fn warm_up(&self) {
        let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
            kube::Api::namespaced(self.client.clone(), "ns");
        let none = api.get_opt("warm-up").await.expect("answered");
        assert!(none.is_none());
    }

    /// create-file's step with `--concurrency=concurrency`, as `options` makes it.
    fn step(&self, concurrency: usize) -> CreateStep<'_> {
        CreateStep {
            client: Some(&self.client),
            dry_run: DryRunStrategy::None,
            field_manager: "kubectl-create",
            validation: Validation::Ignore,
            printer: self.printer.as_ref(),
            save_config: false,
            recorder: None,
            concurrency,
            crd_timeout: Duration::from_secs(60),
            wait: false,
            out: &self.out,
        }
    }

    /// One `create_one` of `info` under `limiter`, with `new_crd_groups`.
    async fn create_one(
        &self,
        limiter: &Limiter,
        info: &Info,
        new_crd_groups: &[&str],
    ) -> Result<Value, Failure> {
        let groups = new_crd_groups.iter().map(|g| g.to_string()).collect();
        create_one(
            &self.step(limiter.limit()),
            &self.client,
            limiter,
            info,
            &groups,
        )
        .await
    }
}

fn name_of(result: &Result<Value, Failure>) -> &str {
    match result {
        Ok(object) => object["metadata"]["name"].as_str().unwrap_or_default(),
        Err(_) => "",
    }
}

fn failure_text(result: Result<Value, Failure>) -> String {
    match result {
        Ok(object) => panic!("created: {object}"),
        Err(failure) => {
            let mut text = Vec::new();
            write_failures(&[failure], &mut text).expect("written");
            String::from_utf8_lossy(&text).into_owned()
        }
    }
}

/// The requests of the log, as `METHOD name` lines.
fn requests(server: &Server) -> Vec<String> {
    server
        .log()
        .iter()
        .map(|r| format!("{} {}", r.method, r.name))
        .collect()
}

// The requeue.

#[tokio::test]
async fn a_429_while_competing_is_sent_again_under_a_halved_limit() {
    let server = Server::start().await;
    let harness = Harness::new(&server);
    let info = &infos(&configmaps("cm", 1)).await[0];
    server.script(
        Method::POST,
        "cm-0000",
        [Answer::Throttle { retry_after: 0 }; 2],
    );
    let limiter = Limiter::new(4);
    let result = harness.create_one(&limiter, info, &[]).await;
    assert_eq!(name_of(&result), "cm-0000", "created");
    // Each 429 came back at once and halved the limit (4 → 2 → 1); the third send,
    // alone, went through.
    assert_eq!(
        requests(&server),
        ["POST cm-0000", "POST cm-0000", "POST cm-0000"]
    );
    assert_eq!(limiter.limit(), 1);
    assert_eq!(server.stored(), ["cm-0000"]);
}

#[tokio::test]
async fn alone_the_client_s_ten_retries_run_and_their_answer_stands() {
    let server = Server::start().await;
    let harness = Harness::new(&server);
    let infos = infos(&configmaps("cm", 2)).await;
    // Throttled twice: the client's retries (Retry-After: 0) get it through.
    server.script(
        Method::POST,
        "cm-0000",
        [Answer::Throttle { retry_after: 0 }; 2],
    );
    let result = harness.create_one(&Limiter::new(1), &infos[0], &[]).await;
    assert_eq!(name_of(&result), "cm-0000");
    assert_eq!(server.count(&Method::POST, "cm-0000"), 3);
    // Throttled eleven times: kubectl's ten retries, then its 429 is the result; not
    // requeued, as nothing competes.
    server.script(
        Method::POST,
        "cm-0001",
        [Answer::Throttle { retry_after: 0 }; 11],
    );
    let result = harness.create_one(&Limiter::new(1), &infos[1], &[]).await;
    assert_eq!(
        failure_text(result),
        "Error from server (TooManyRequests): error when creating \"STDIN\": the server has \
         received too many requests and has asked us to try again later\n"
    );
    assert_eq!(server.count(&Method::POST, "cm-0001"), 11);
    assert_eq!(server.stored(), ["cm-0000"]);
}

// The lost-answer recovery.

#[tokio::test]
async fn a_create_applied_and_its_answer_lost_is_resolved_as_this_create_s() {
    let server = Server::start().await;
    let harness = Harness::new(&server);
    let info = &infos(&configmaps("cm", 1)).await[0];
    server.script(Method::POST, "cm-0000", [Answer::ApplyThenDrop]);
    let result = harness.create_one(&Limiter::new(4), info, &[]).await;
    assert_eq!(name_of(&result), "cm-0000", "the object read back counts");
    // Sent again by name, AlreadyExists, read back: provably ours.
    assert_eq!(
        requests(&server),
        ["POST cm-0000", "POST cm-0000", "GET cm-0000"]
    );
    assert_eq!(server.stored(), ["cm-0000"], "created once");
}

#[tokio::test]
async fn a_create_lost_before_it_was_applied_is_created_by_the_resend() {
    let server = Server::start().await;
    let harness = Harness::new(&server);
    let info = &infos(&configmaps("cm", 1)).await[0];
    server.script(Method::POST, "cm-0000", [Answer::Drop]);
    let result = harness.create_one(&Limiter::new(4), info, &[]).await;
    assert_eq!(name_of(&result), "cm-0000");
    assert_eq!(requests(&server), ["POST cm-0000", "POST cm-0000"]);
}

#[tokio::test]
async fn after_a_lost_answer_someone_else_s_object_is_already_exists() {
    let server = Server::start().await;
    let harness = Harness::new(&server);
    let info = &infos(&configmaps("cm", 1)).await[0];
    // Another client's object of that name (another field manager).
    let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(harness.client.clone(), "ns");
    let theirs = serde_json::from_value(serde_json::json!({"metadata": {"name": "cm-0000"}}))
        .expect("a ConfigMap");
    let params = kube::api::PostParams {
        field_manager: Some("someone-else".into()),
        ..Default::default()
    };
    api.create(&params, &theirs).await.expect("created");
    server.script(Method::POST, "cm-0000", [Answer::Drop]);
    let result = harness.create_one(&Limiter::new(4), info, &[]).await;
    assert_eq!(
        failure_text(result),
        "Error from server (AlreadyExists): error when creating \"STDIN\": configmaps \
         \"cm-0000\" already exists\n"
    );
    assert_eq!(
        requests(&server),
        [
            "POST cm-0000",
            "POST cm-0000",
            "POST cm-0000",
            "GET cm-0000"
        ]
    );
}

#[tokio::test]
async fn a_generate_name_create_whose_answer_was_lost_is_not_sent_again() {
    let server = Server::start().await;
    let harness = Harness::new(&server);
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: cm-\n";
    let info = &infos(yaml).await[0];
    server.script(Method::POST, "", [Answer::Drop]);
    let result = harness.create_one(&Limiter::new(4), info, &[]).await;
    let text = failure_text(result);
    assert!(
        text.ends_with(
            "(the outcome is unknown: the server may have created the ConfigMap with \
             generateName \"cm-\" before the connection was lost; it was not sent again, as \
             a second create would make a second object)\n"
        ),
        "{text}"
    );
    assert_eq!(requests(&server), ["POST "], "sent once");
}

// The new-CRD retry.

const CRD_AND_WIDGET: &str = "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: example.com/v1
kind: Widget
metadata:
  name: w-1
";

#[tokio::test]
async fn a_404_for_a_crd_created_in_this_run_is_retried_until_served() {
    let server = Server::start().await;
    let harness = Harness::new(&server);
    let widget = &infos(CRD_AND_WIDGET).await[1];
    server.script(Method::POST, "w-1", [Answer::NotServed; 2]);
    let result = harness
        .create_one(&Limiter::new(4), widget, &["example.com"])
        .await;
    assert_eq!(name_of(&result), "w-1");
    assert_eq!(requests(&server), ["POST w-1", "POST w-1", "POST w-1"]);
    assert_eq!(
        server.log()[0].path,
        "/apis/example.com/v1/namespaces/ns/widgets"
    );
}

#[tokio::test]
async fn a_404_for_a_kind_no_crd_of_this_run_defines_stands() {
    let server = Server::start().await;
    let harness = Harness::new(&server);
    let widget = &infos(CRD_AND_WIDGET).await[1];
    server.script(Method::POST, "w-1", [Answer::NotServed]);
    let result = harness.create_one(&Limiter::new(4), widget, &[]).await;
    assert_eq!(
        failure_text(result),
        "Error from server (NotFound): error when creating \"STDIN\": the server could not \
         find the requested resource\n"
    );
    assert_eq!(requests(&server), ["POST w-1"], "not retried");
}

// Whole runs: what is printed.

#[tokio::test]
async fn each_object_is_printed_once_in_input_order_whatever_was_sent_again() {
    const N: usize = 12;
    let server = Server::start().await;
    let harness = Harness::new(&server);
    server.script(Method::POST, "rep-0002", [Answer::ApplyThenDrop]);
    server.script(Method::POST, "rep-0005", [Answer::Drop]);
    server.script(
        Method::POST,
        "rep-0007",
        [Answer::Throttle { retry_after: 0 }],
    );
    let step = harness.step(4);
    let created = create_entries(&step, visit(&configmaps("rep", N)).await)
        .await
        .expect("the run");
    assert!(created.failures.is_empty());
    let expected: Vec<String> = (0..N)
        .map(|i| format!("configmap/rep-{i:04} created\n"))
        .collect();
    assert_eq!(harness.stdout.text(), expected.concat());
    assert_eq!(harness.stderr.text(), "");
    let names: Vec<String> = (0..N).map(|i| format!("rep-{i:04}")).collect();
    assert_eq!(server.stored(), names, "each created once");
    for (i, name) in names.iter().enumerate() {
        let sent = if [2, 5, 7].contains(&i) { 2 } else { 1 };
        assert_eq!(server.count(&Method::POST, name), sent, "{name}");
    }
    assert_eq!(
        server.count(&Method::GET, "rep-0002"),
        1,
        "resolved by a read"
    );
}

#[tokio::test]
async fn a_failure_is_reported_on_the_writers_stderr_after_the_others_are_printed() {
    let server = Server::start().await;
    let harness = Harness::new(&server);
    server.script(Method::POST, "f-0001", [Answer::NotServed]);
    let step = harness.step(4);
    let created = create_entries(&step, visit(&configmaps("f", 3)).await)
        .await
        .expect("the run");
    assert_eq!(
        harness.stdout.text(),
        "configmap/f-0000 created\nconfigmap/f-0002 created\n"
    );
    let exit = report(&step, &created.failures);
    assert!(exit.is_err(), "exit 1");
    assert_eq!(
        harness.stderr.text(),
        "Error from server (NotFound): error when creating \"STDIN\": the server could not \
         find the requested resource\n"
    );
}

// The output window.

/// With `--concurrency=2` the window is 32 creates (16 per slot): while the first
/// create is held, exactly the 31 after it are sent, and nothing more until it is
/// answered; then the rest follow, and every object is created once and printed
/// once, in input order. As `tests/e2e/create_file_window.rs` proves it against the
/// real server, here in milliseconds.
#[tokio::test]
async fn a_held_first_create_lets_only_the_window_run_ahead() {
    const N: usize = 100;
    // The loop's `window full` event on this thread (a current-thread runtime runs the
    // whole create loop here).
    let mut full = crate::order::stalls::watch();
    let server = Server::start().await;
    let harness = Harness::new(&server);
    // A run reads discovery before its first create; without any answer yet, the
    // client holds every request behind the first one (apiclient's first-answer
    // gate), and a held first create would hold them all.
    harness.warm_up().await;
    server.script(Method::POST, "win-0000", [Answer::Hold]);
    let step = harness.step(2);
    assert_eq!(window(2).jobs, 32);
    let visited = visit(&configmaps("win", N)).await;
    let run = create_entries(&step, visited);
    let sent_while_held = async {
        full.wait_for(|f| *f).await.expect("the log lives");
        server.holding().await;
        // The loop stopped starting creates (its window is full) and the first is
        // held: nothing more is sent until it is answered.
        let sent = server.count_method(&Method::POST);
        server.release();
        sent
    };
    let (created, sent) = tokio::join!(run, sent_while_held);
    let created = created.expect("the run");
    assert_eq!(sent, 32, "the window, the held create included");
    assert!(created.failures.is_empty());
    let expected: Vec<String> = (0..N)
        .map(|i| format!("configmap/win-{i:04} created\n"))
        .collect();
    assert_eq!(harness.stdout.text(), expected.concat(), "in input order");
    assert_eq!(server.count_method(&Method::POST), N, "each sent once");
    assert_eq!(server.stored().len(), N);
}

#[test]
fn a_crd_is_established_by_its_true_established_condition_only() {
    let crd = |status: Value| -> DynamicObject {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "crontabs.stable.example.com"},
            "status": status,
        }))
        .expect("a CRD")
    };
    let established = crd(serde_json::json!({"conditions": [
        {"type": "NamesAccepted", "status": "True"},
        {"type": "Established", "status": "True"},
    ]}));
    assert!(is_established(Some(&established)));
    let not_yet = crd(serde_json::json!({"conditions": [
        {"type": "NamesAccepted", "status": "True"},
        {"type": "Established", "status": "False"},
    ]}));
    assert!(!is_established(Some(&not_yet)));
    assert!(!is_established(Some(&crd(serde_json::json!({})))));
    assert!(!is_established(None));
}
