//! No secret in any output: every plugin, through each of its error paths,
//! at every `-v` level from 0 to 10 (the headers of 7 and 8 and the curl line of 9
//! masking `Authorization` as client-go does), with a kubeconfig whose tokens, keys, exec `env:`
//! values and arguments and auth-provider settings are marker strings; no byte of
//! stdout or stderr may carry one.
//!
//! The paths: a kubeconfig with a syntax error next to its token and key; an exec
//! plugin that fails (its stderr passed through, as client-go does); one that fails
//! when its expired token is refreshed before the first request; an exec token, a static
//! token the server refuses (401); an OIDC auth-provider's id-token that is not a JWT; basic auth
//! (the 1.20 server has none: anonymous, 403); a gcp auth-provider (removed: refused);
//! the limited user outside its namespace (403); a client certificate and key of a CA
//! the server does not trust (401); a client key that is not a key; a CA that did not
//! sign the server's certificate; and a closed loopback port. These fail fast and run
//! at all eleven levels, in parallel; a rolling update interrupted with SIGTERM (which
//! needs pods becoming ready) runs at three.

// The helpers below run only inside tests: an unwrap there is a failed assertion
// (clippy's allow-unwrap-in-tests does not reach non-#[test] helpers).
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use localcluster::steering;
use serde_json::{Value, json};
use tests::foreign::closed_port;
use tests::harness::{Cluster, Output, cluster, plugin_binary};

/// A marker per secret place of the kubeconfig: the test fails if any is printed.
const EXEC_ENV: &str = "kplugMARKERexecEnv7f3a";
const EXEC_ARG: &str = "kplugMARKERexecArg51c0";
const EXEC_TOKEN: &str = "kplugMARKERexecToken9b2e";
const STATIC_TOKEN: &str = "kplugMARKERstaticToken44d1";
const PASSWORD: &str = "kplugMARKERpassword0e6b";
const OIDC_ID_TOKEN: &str = "kplugMARKERoidcIdToken2a7c";
const OIDC_REFRESH_TOKEN: &str = "kplugMARKERoidcRefresh8d15";
const OIDC_CLIENT_SECRET: &str = "kplugMARKERoidcSecret3f90";
const GCP_ARG: &str = "kplugMARKERgcpArg6e21";
const GCP_ACCESS_TOKEN: &str = "kplugMARKERgcpAccess17bd";
const KEY_GARBAGE: &str = "kplugMARKERkeyGarbage5c3e";
const BROKEN_TOKEN: &str = "kplugMARKERbrokenToken70fa";
const BROKEN_KEY: &str = "kplugMARKERbrokenKey2d68";

const MANIFEST: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: secrets\ndata:\n  a: b\n";

/// The marker kubeconfig, the files it names, and every secret in them.
struct Fixture {
    _dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    /// A kubeconfig with a syntax error next to its token and key.
    broken: PathBuf,
    secrets: Vec<String>,
}

/// The server, CA file and tokens of the harness's kubeconfig.
struct Harness {
    server: String,
    ca: String,
    admin_token: String,
    limited_token: String,
}

fn harness(cluster: &Cluster) -> Harness {
    let text = std::fs::read_to_string(&cluster.kubeconfig).unwrap();
    let kc: Value = serde_saphyr::from_str(&text).unwrap();
    let cluster = &kc["clusters"][0]["cluster"];
    let token = |user: &str| {
        kc["users"]
            .as_array()
            .unwrap()
            .iter()
            .find(|u| u["name"] == user)
            .map(|u| u["user"]["token"].as_str().unwrap().to_string())
            .unwrap()
    };
    Harness {
        server: cluster["server"].as_str().unwrap().to_string(),
        ca: cluster["certificate-authority"]
            .as_str()
            .unwrap()
            .to_string(),
        admin_token: token("admin"),
        limited_token: token("limited"),
    }
}

/// A CA of our own and a client certificate and key it signed: the server trusts
/// neither.
fn foreign_pki() -> (String, String, String) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.distinguished_name
        .push(DnType::CommonName, "kubeplug-foreign-ca");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, &ca_key);
    let key = KeyPair::generate().unwrap();
    let mut client = CertificateParams::new(Vec::<String>::new()).unwrap();
    client
        .distinguished_name
        .push(DnType::CommonName, "kubeplug-intruder");
    let cert = client.signed_by(&key, &issuer).unwrap();
    (ca_cert.pem(), cert.pem(), key.serialize_pem())
}

/// The lines of a PEM's base64 body: each one is a piece of the secret.
fn pem_body_lines(pem: &str) -> impl Iterator<Item = String> + '_ {
    pem.lines()
        .filter(|l| !l.starts_with("-----") && l.len() >= 16)
        .map(str::to_string)
}

fn b64(data: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

fn exec_user(script: &str, env: &[(&str, &str)], interactive: &str) -> Value {
    let env: Vec<Value> = env
        .iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect();
    json!({"exec": {
        "apiVersion": "client.authentication.k8s.io/v1beta1",
        "command": "/bin/sh",
        // `$0` of the script: arguments can hold secrets too.
        "args": ["-c", script, EXEC_ARG],
        "env": env,
        "interactiveMode": interactive,
    }})
}

/// Prints an ExecCredential with `$TOKEN`, expired already when `$EXPIRED` is set.
const PRINT_CREDENTIAL: &str = r#"exp=""; [ -n "$EXPIRED" ] && exp=',"expirationTimestamp":"2000-01-01T00:00:00Z"'; printf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"%s"%s}}' "$TOKEN" "$exp""#;

fn fixture(cluster: &Cluster) -> Fixture {
    let h = harness(cluster);
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let (foreign_ca, client_cert, client_key) = foreign_pki();
    let garbage_key =
        format!("-----BEGIN PRIVATE KEY-----\n{KEY_GARBAGE}\n-----END PRIVATE KEY-----\n");
    let client_key_file = write("client.key", &client_key);
    let client_cert_file = write("client.crt", &client_cert);
    let state = dir.path().join("refresh");
    std::fs::create_dir(&state).unwrap();
    // Succeeds once per plugin process (`$PPID`), with a token already expired, then
    // fails: kube runs it again before the first request.
    let refresh_script = format!(
        r#"state="{}/$PPID"; if [ -e "$state" ]; then echo "credential refresh refused" >&2; exit 5; fi; : > "$state"; {PRINT_CREDENTIAL}"#,
        state.display()
    );
    let fail_script = "echo 'credential plugin failed' >&2; exit 3";
    let users = json!([
        {"name": "exec-fails", "user": exec_user(fail_script, &[("API_KEY", EXEC_ENV)], "Never")},
        {"name": "exec-fails-interactive", "user": exec_user(fail_script, &[("API_KEY", EXEC_ENV)], "IfAvailable")},
        {"name": "exec-refresh-fails", "user": exec_user(&refresh_script, &[("API_KEY", EXEC_ENV), ("TOKEN", EXEC_TOKEN), ("EXPIRED", "1")], "Never")},
        {"name": "exec-token", "user": exec_user(PRINT_CREDENTIAL, &[("API_KEY", EXEC_ENV), ("TOKEN", EXEC_TOKEN)], "Never")},
        {"name": "exec-admin", "user": exec_user(PRINT_CREDENTIAL, &[("API_KEY", EXEC_ENV), ("TOKEN", &h.admin_token)], "Never")},
        {"name": "static-token", "user": {"token": STATIC_TOKEN}},
        {"name": "basic", "user": {"username": "someone", "password": PASSWORD}},
        {"name": "oidc", "user": {"auth-provider": {"name": "oidc", "config": {
            "client-id": "kubeplug",
            "client-secret": OIDC_CLIENT_SECRET,
            "id-token": OIDC_ID_TOKEN,
            "refresh-token": OIDC_REFRESH_TOKEN,
            "idp-issuer-url": format!("https://127.0.0.1:{}", closed_port()),
        }}}},
        {"name": "gcp", "user": {"auth-provider": {"name": "gcp", "config": {
            "cmd-path": "/bin/false",
            "cmd-args": GCP_ARG,
            "access-token": GCP_ACCESS_TOKEN,
            "expiry": "2000-01-01T00:00:00Z",
        }}}},
        {"name": "limited", "user": {"token": h.limited_token}},
        {"name": "foreign-key", "user": {
            "client-certificate": client_cert_file,
            "client-key": client_key_file,
        }},
        {"name": "garbage-key", "user": {
            "client-certificate-data": b64(&client_cert),
            "client-key-data": b64(&garbage_key),
            "token": STATIC_TOKEN,
        }},
    ]);
    let clusters = json!([
        {"name": "real", "cluster": {"server": h.server, "certificate-authority": h.ca}},
        {"name": "foreign-ca", "cluster": {
            "server": h.server,
            "certificate-authority-data": b64(&foreign_ca),
        }},
        {"name": "closed", "cluster": {
            "server": format!("https://127.0.0.1:{}", closed_port()),
            "certificate-authority": h.ca,
        }},
    ]);
    let mut contexts: Vec<Value> = CASES
        .iter()
        .filter(|case| case.context != BROKEN)
        .map(|case| {
            json!({"name": case.context, "context": {"cluster": case.cluster, "user": case.user}})
        })
        .collect();
    contexts
        .push(json!({"name": "exec-admin", "context": {"cluster": "real", "user": "exec-admin"}}));
    let kubeconfig = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": clusters,
        "users": users,
        "contexts": contexts,
        "current-context": "exec-fails",
    });
    let kubeconfig = write(
        "kubeconfig",
        &serde_json::to_string_pretty(&kubeconfig).unwrap(),
    );
    // A YAML parser quoting the lines around the error would show both.
    let broken = write(
        "broken-kubeconfig",
        &format!(
            "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: {BROKEN_TOKEN}\n    client-key-data: {BROKEN_KEY}: [\n    username: x\n"
        ),
    );

    let mut secrets: Vec<String> = [
        EXEC_ENV,
        EXEC_ARG,
        EXEC_TOKEN,
        STATIC_TOKEN,
        PASSWORD,
        OIDC_ID_TOKEN,
        OIDC_REFRESH_TOKEN,
        OIDC_CLIENT_SECRET,
        GCP_ARG,
        GCP_ACCESS_TOKEN,
        KEY_GARBAGE,
        BROKEN_TOKEN,
        BROKEN_KEY,
    ]
    .map(str::to_string)
    .to_vec();
    secrets.extend([h.admin_token, h.limited_token]);
    secrets.extend(pem_body_lines(&client_key));
    secrets.extend([b64(&garbage_key), b64(&client_key)]);
    Fixture {
        _dir: dir,
        kubeconfig: PathBuf::from(kubeconfig),
        broken: PathBuf::from(broken),
        secrets,
    }
}

/// One error path: a context of the marker kubeconfig and what its failure says (so
/// the test knows the path it meant was taken).
struct Case {
    context: &'static str,
    cluster: &'static str,
    user: &'static str,
    /// One of these is in stderr.
    says: &'static [&'static str],
}

/// A 401 as kubectl words it: from a request, and from discovery (create-file).
const UNAUTHORIZED: &[&str] = &[
    "error: You must be logged in to the server (",
    "the server has asked for the client to provide credentials",
];

/// Not a context: the plugin is given the broken kubeconfig.
const BROKEN: &str = "broken-kubeconfig";

const CASES: &[Case] = &[
    Case {
        context: BROKEN,
        cluster: "",
        user: "",
        says: &["error: error loading config file \""],
    },
    Case {
        context: "exec-fails",
        cluster: "real",
        user: "exec-fails",
        says: &[
            "credential plugin failed\nUnable to connect to the server: getting credentials: exec: executable /bin/sh failed with exit code 3\n",
        ],
    },
    Case {
        context: "exec-fails-interactive",
        cluster: "real",
        user: "exec-fails-interactive",
        says: &[
            "credential plugin failed\nUnable to connect to the server: getting credentials: exec: executable /bin/sh failed with exit code 3\n",
        ],
    },
    Case {
        context: "exec-refresh-fails",
        cluster: "real",
        user: "exec-refresh-fails",
        says: &["getting credentials: exec: executable /bin/sh failed with exit code 5"],
    },
    Case {
        context: "exec-token-401",
        cluster: "real",
        user: "exec-token",
        says: UNAUTHORIZED,
    },
    Case {
        context: "token-401",
        cluster: "real",
        user: "static-token",
        says: UNAUTHORIZED,
    },
    Case {
        context: "basic-401",
        cluster: "real",
        user: "basic",
        // The 1.20 server has no basic auth: the request is anonymous.
        says: &["User \"system:anonymous\" cannot"],
    },
    Case {
        context: "oidc-401",
        cluster: "real",
        user: "oidc",
        // The marker is not a JWT: client-go's oidc provider refuses it before sending.
        says: &["Unable to connect to the server: ID Token is not a valid JWT\n"],
    },
    Case {
        context: "gcp-fails",
        cluster: "real",
        user: "gcp",
        // kubectl 1.32's words: the provider is gone, its command never runs.
        says: &[
            "error: The gcp auth plugin has been removed.\nPlease use the \"gke-gcloud-auth-plugin\" kubectl/client-go credential plugin instead.\n",
        ],
    },
    Case {
        context: "limited-403",
        cluster: "real",
        user: "limited",
        says: &["User \"limited\" cannot"],
    },
    Case {
        context: "foreign-client-key",
        cluster: "real",
        user: "foreign-key",
        says: UNAUTHORIZED,
    },
    Case {
        context: "garbage-client-key",
        cluster: "real",
        user: "garbage-key",
        // Go's `tls.X509KeyPair`, as kubectl prints it: the block is not base64.
        says: &["error: tls: failed to find any PEM data in key input\n"],
    },
    Case {
        context: "foreign-ca",
        cluster: "foreign-ca",
        user: "static-token",
        says: &["x509: certificate signed by unknown authority"],
    },
    Case {
        context: "closed-port",
        cluster: "closed",
        user: "static-token",
        says: &[
            "connect: connection refused",
            "was refused - did you specify the right host or port?",
        ],
    },
];

/// Each plugin's command line for a request that needs the server.
fn plugin_args(plugin: &str) -> &'static [&'static str] {
    match plugin {
        "run-pod" => &["secrets", "--image=nginx"],
        "create-file" => &["-f", "-"],
        "rolling-update" => &["secrets", "--image=nginx:2"],
        other => panic!("unknown plugin {other}"),
    }
}

/// The secrets of `fixture` found in a run's output, if any.
fn leaks<'a>(fixture: &'a Fixture, out: &Output) -> Vec<&'a str> {
    fixture
        .secrets
        .iter()
        .filter(|s| out.stdout.contains(s.as_str()) || out.stderr.contains(s.as_str()))
        .map(String::as_str)
        .collect()
}

/// A logged `Authorization` header (the headers of `-v=7` and 8, the curl line of 9)
/// whose value is not client-go's mask (`Bearer <masked>`, `Basic <masked>`,
/// `<masked>`): the line, if any.
fn unmasked_authorization(stderr: &str) -> Option<&str> {
    stderr.lines().find(|line| {
        line.match_indices("Authorization: ").any(|(at, _)| {
            let value = &line[at + "Authorization: ".len()..];
            let value = value.split('"').next().unwrap_or(value).trim_end();
            !(value == "<masked>"
                || value
                    .split_once(' ')
                    .is_some_and(|(_, rest)| rest == "<masked>"))
        })
    })
}

#[test]
fn a_masked_authorization_is_told_from_an_unmasked_one() {
    let masked = "\tAuthorization: Bearer <masked>\n\tcurl -v -XGET  -H \"Authorization: Basic <masked>\" 'https://h/'";
    assert_eq!(unmasked_authorization(masked), None);
    assert_eq!(
        unmasked_authorization("\tAuthorization: Bearer abc"),
        Some("\tAuthorization: Bearer abc")
    );
}

#[tokio::test]
async fn no_error_path_prints_a_secret_at_any_verbosity() {
    let cluster = cluster();
    let ns = cluster.namespace("secrets").await;
    let fixture = fixture(cluster);
    let mut runs = Vec::new();
    for case in CASES {
        for plugin in tests::harness::PLUGINS {
            for v in 0..=10 {
                runs.push((case, plugin, v));
            }
        }
    }
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    // Most runs fail within milliseconds: a few workers keep two cores busy.
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                while let Some((case, plugin, v)) = runs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let selected = if case.context == BROKEN {
                        vec!["--kubeconfig".into(), fixture.broken.display().to_string()]
                    } else {
                        vec![
                            "--kubeconfig".into(),
                            fixture.kubeconfig.display().to_string(),
                            "--context".into(),
                            case.context.to_string(),
                        ]
                    };
                    let out = cluster
                        .plugin(plugin)
                        .args(plugin_args(plugin))
                        .args(selected)
                        .args(["-n", ns.as_str()])
                        .arg(format!("-v={v}"))
                        .stdin(MANIFEST)
                        .run();
                    let leaked = leaks(&fixture, &out);
                    let problem = if !leaked.is_empty() {
                        Some(format!("printed {leaked:?}"))
                    } else if let Some(line) = unmasked_authorization(&out.stderr) {
                        Some(format!("logged an unmasked Authorization: {line}"))
                    } else if out.code != 1 {
                        Some(format!("exit code {}", out.code))
                    } else if !case.says.iter().any(|s| out.stderr.contains(s)) {
                        Some(format!("did not say any of {:?}", case.says))
                    } else {
                        None
                    };
                    if let Some(problem) = problem {
                        failures.lock().unwrap().push(format!(
                            "{plugin} --context {} -v={v}: {problem}\n--- stdout\n{}--- stderr\n{}",
                            case.context, out.stdout, out.stderr
                        ));
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} runs failed:\n{}",
        failures.len(),
        runs.len(),
        failures.join("\n")
    );
}

/// A rolling update stopped by SIGTERM while it waits for a new pod, authenticated by
/// an exec plugin that hands out the admin token: the resume hint and the logs of
/// every level name no secret. Three levels, run side by side: each needs a
/// ReplicationController with a ready pod.
#[tokio::test]
async fn an_interrupted_rolling_update_prints_no_secret() {
    let cluster = cluster();
    let ns = cluster.namespace("secrets-sigterm").await;
    let fixture = fixture(cluster);
    let levels = [0, 6, 10];
    for v in levels {
        // Pods are ready 2 s after they start: long enough to be interrupted while
        // the plugin waits for the new one.
        let rc = format!(
            "apiVersion: v1\nkind: ReplicationController\nmetadata:\n  name: web{v}\nspec:\n  replicas: 1\n  selector: {{app: web{v}}}\n  template:\n    metadata:\n      labels: {{app: web{v}}}\n    spec:\n      terminationGracePeriodSeconds: 0\n      containers:\n      - {{name: c, image: registry.k8s.io/pause:3.8, readinessProbe: {probe}}}\n",
            probe = steering::ready_after(2),
        );
        cluster
            .kubectl()
            .args(["create", "-n", ns.as_str(), "-f", "-"])
            .stdin(rc)
            .run()
            .success();
    }
    for v in levels {
        cluster
            .kubectl()
            .args(["wait", "-n", ns.as_str(), "--timeout=60s"])
            .arg("--for=jsonpath={.status.readyReplicas}=1")
            .arg(format!("rc/web{v}"))
            .run()
            .success();
    }
    let outputs: Vec<(i32, Output)> = std::thread::scope(|scope| {
        let handles: Vec<_> = levels
            .iter()
            .map(|&v| {
                let fixture = &fixture;
                let ns = ns.as_str();
                scope.spawn(move || (v, interrupted_update(cluster, fixture, ns, v)))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (v, out) in outputs {
        let leaked = leaks(&fixture, &out);
        assert!(
            leaked.is_empty(),
            "-v={v} printed {leaked:?}\n--- stdout\n{}--- stderr\n{}",
            out.stdout,
            out.stderr
        );
        assert_eq!(out.code, 143, "-v={v}\n{}", out.stderr);
        assert!(
            out.stderr
                .contains("error: interrupted by SIGTERM\nThe update is left in progress."),
            "-v={v}\n{}",
            out.stderr
        );
        if v >= 6 {
            assert!(
                out.stderr.contains("https://127.0.0.1"),
                "-v={v} logs its requests:\n{}",
                out.stderr
            );
        }
    }
}

/// Runs `rolling-update web<v>` directly (so the signal reaches it), sends SIGTERM once
/// it scales the new controller up, and returns what it printed.
fn interrupted_update(cluster: &Cluster, fixture: &Fixture, ns: &str, v: i32) -> Output {
    let mut child = Command::new(cluster.plugin_dir.join(plugin_binary("rolling-update")))
        .arg(format!("web{v}"))
        .args(["--image=registry.k8s.io/pause:3.9", "--update-period=0"])
        .arg("--kubeconfig")
        .arg(&fixture.kubeconfig)
        .args(["--context", "exec-admin", "-n", ns])
        .arg(format!("-v={v}"))
        .env("NO_PROXY", "127.0.0.1,localhost")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // -v=10 logs more than a pipe holds: stderr is drained while stdout is watched.
    let mut stderr = child.stderr.take().unwrap();
    let drain = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        text
    });
    let mut stdout = String::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while lines.read_line(&mut line).unwrap() > 0 {
        let scaling_up = line.starts_with("Scaling ") && line.ends_with(" up to 1\n");
        stdout.push_str(&line);
        line.clear();
        if scaling_up {
            // kill(1): the workspace denies the unsafe libc::kill.
            let status = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status()
                .unwrap();
            assert!(status.success());
        }
    }
    let status = child.wait().unwrap();
    Output {
        code: status.code().unwrap_or(-1),
        stdout,
        stderr: drain.join().unwrap(),
    }
}
