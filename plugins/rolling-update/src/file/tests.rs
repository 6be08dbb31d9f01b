//! `-f` through the Builder, offline: files, stdin, a loopback HTTP server, and
//! 1.17's checks on what they hold.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

use super::*;
use serde_json::json;

const RC_YAML: &str = "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: foo-v2\nspec:\n  selector:\n    version: v2\n  template:\n    metadata:\n      labels:\n        version: v2\n    spec:\n      containers:\n      - name: c\n        image: nginx\n";

async fn read(filename: &str, stdin: &str) -> anyhow::Result<(ReplicationController, bool)> {
    read_with(filename, stdin, true).await
}

async fn read_with(
    filename: &str,
    stdin: &str,
    validate: bool,
) -> anyhow::Result<(ReplicationController, bool)> {
    let source = FileSource {
        filename,
        validate,
        // Offline: the built-in kinds' schema validates.
        schema: None,
        namespace: "ns1",
        stdin: Some(Box::new(std::io::Cursor::new(stdin.as_bytes().to_vec()))),
    };
    read_new_controller(source, &mut RestMapper::offline()).await
}

async fn read_err(filename: &str, stdin: &str) -> String {
    read(filename, stdin)
        .await
        .expect_err("an error")
        .to_string()
}

#[tokio::test]
async fn a_file_gets_the_namespace_and_remembers_defaulted_replicas() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("v2.yaml");
    std::fs::write(&path, RC_YAML).expect("write");
    let (rc, defaulted) = read(&path.display().to_string(), "").await.expect("read");
    assert_eq!(rc.metadata.name.as_deref(), Some("foo-v2"));
    assert_eq!(rc.metadata.namespace.as_deref(), Some("ns1"));
    assert!(defaulted);
}

#[tokio::test]
async fn stdin_json_and_a_list_of_one() {
    let json = r#"{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"x"},"spec":{"replicas":2}}"#;
    let (rc, defaulted) = read("-", json).await.expect("stdin");
    assert_eq!(rc.spec.and_then(|s| s.replicas), Some(2));
    assert!(!defaulted);
    let list = format!(r#"{{"apiVersion":"v1","kind":"List","items":[{json}]}}"#);
    let (rc, _) = read("-", &list).await.expect("a List of one is flattened");
    assert_eq!(rc.metadata.name.as_deref(), Some("x"));
}

#[tokio::test]
async fn builder_errors_are_create_files() {
    assert_eq!(
        read_err("/nonexistent/v2.yaml", "").await,
        "the path \"/nonexistent/v2.yaml\" does not exist"
    );
    assert!(
        read_err("-", "kind: ReplicationController\nmetadata:\n  name: x\n")
            .await
            .starts_with("error validating \"STDIN\": error validating data: apiVersion not set")
    );
    let other_ns = RC_YAML.replace("name: foo-v2", "name: foo-v2\n  namespace: other");
    assert_eq!(
        read_err("-", &other_ns).await,
        "the namespace from the provided object \"other\" does not match the namespace \"ns1\". You must pass '--namespace=other' to perform this operation."
    );
    let unknown = RC_YAML.replace("spec:\n  selector", "spec:\n  replica: 2\n  selector");
    assert_eq!(
        read_err("-", &unknown).await,
        "error validating \"STDIN\": error validating data: ValidationError(ReplicationController.spec): unknown field \"replica\" in io.k8s.api.core.v1.ReplicationControllerSpec; if you choose to ignore these errors, turn validation off with --validate=false"
    );
}

#[tokio::test]
async fn parse_errors_name_the_line() {
    let err = read_err("-", "apiVersion: v1\nkind: [\n").await;
    assert!(
        err.starts_with("error parsing STDIN: error converting YAML to JSON: yaml: line "),
        "{err}"
    );
}

#[tokio::test]
async fn the_object_checks_of_1_17() {
    assert_eq!(
        read_err("-", &format!("{RC_YAML}---\n{RC_YAML}")).await,
        "- specifies multiple items"
    );
    assert_eq!(
        read_err("-", "# nothing\n---\n").await,
        "please make sure - exists and is not empty"
    );
    assert_eq!(
        read_err(
            "-",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  selector: {}\n  template: {}\n"
        )
        .await,
        "- contains a apps/v1, Kind=Deployment not a ReplicationController"
    );
    assert_eq!(
        read_err("-", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n").await,
        "- contains a /v1, Kind=Pod not a ReplicationController"
    );
}

#[tokio::test]
async fn wrong_types_without_validation_are_decode_errors() {
    let bad = RC_YAML.replace("spec:\n  selector", "spec:\n  replicas: two\n  selector");
    let err = read_with("-", &bad, false)
        .await
        .expect_err("wrong type")
        .to_string();
    assert!(
        err.starts_with("unable to decode - as a ReplicationController: "),
        "{err}"
    );
    let err = read_with("-", &bad, true)
        .await
        .expect_err("wrong type")
        .to_string();
    assert!(err.starts_with("error validating \"STDIN\""), "{err}");
}

#[test]
fn objects_are_checked_in_1_17s_order() {
    let rc =
        json!({"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "a"}});
    assert_eq!(
        controller_from_objects("f", vec![rc.clone(), json!({"kind": "Pod"})]),
        Err(FileError::MultipleItems("f".into()))
    );
    assert_eq!(
        controller_from_objects("f", vec![]),
        Err(FileError::Empty("f".into()))
    );
    assert_eq!(
        controller_from_objects(
            "f",
            vec![json!({"apiVersion": "apps/v1", "kind": "ReplicationController"})]
        ),
        Err(FileError::NotAnRc {
            filename: "f".into(),
            gvk: "apps/v1, Kind=ReplicationController".into()
        })
    );
    let (rc, defaulted) = controller_from_objects("f", vec![rc]).expect("an RC");
    assert_eq!(rc.metadata.name.as_deref(), Some("a"));
    assert!(defaulted);
}

/// Serves each of `answers` (status line + headers + body, verbatim) to one
/// connection on a loopback port; returns the base URL.
fn serve(answers: Vec<Vec<u8>>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for answer in answers {
            let Ok((mut conn, _)) = listener.accept() else {
                return;
            };
            // Read the request head, then answer and close.
            let mut reader = BufReader::new(conn.try_clone().expect("clone"));
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let _ = conn.write_all(&answer);
        }
    });
    format!("http://{addr}")
}

fn http(status: &str, headers: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status}\r\nConnection: close\r\n{headers}\r\n{body}",
        headers = if headers.is_empty() {
            format!("Content-Length: {}\r\n", body.len())
        } else {
            headers.to_string()
        }
    )
    .into_bytes()
}

#[tokio::test]
async fn urls_are_fetched_and_bounded() {
    let base = serve(vec![http("200 OK", "", RC_YAML)]);
    let (rc, _) = read(&format!("{base}/v2.yaml"), "").await.expect("URL");
    assert_eq!(rc.metadata.name.as_deref(), Some("foo-v2"));

    let base = serve(vec![http("404 Not Found", "", "no")]);
    let url = format!("{base}/missing.yaml");
    assert_eq!(
        read_err(&url, "").await,
        format!("unable to read URL \"{url}\", server reported 404 Not Found, status code=404")
    );

    // Declared larger than the limit: refused before any of the body is read.
    let base = serve(vec![http(
        "200 OK",
        &format!("Content-Length: {}\r\n", 64u64 << 20),
        "",
    )]);
    let url = format!("{base}/huge.yaml");
    assert_eq!(
        read_err(&url, "").await,
        format!(
            "unable to read URL \"{url}\", the document is larger than the limit of {} bytes",
            32u64 << 20
        )
    );
}
