//! client-go's exec credential plugin (`users[].user.exec`): the program is run with
//! `KUBERNETES_EXEC_INFO` describing the request, and what it prints on stdout is an
//! `ExecCredential` (JSON, or YAML: client-go's decoder reads both) holding a token, a
//! client certificate and key, or both, and when they expire.
//!
//! As client-go runs it: the kubeconfig's `env` added to ours, stdin given to the
//! plugin only when it may interact (`interactiveMode`, and stdin a terminal), its
//! stderr always ours, the credential cached and the plugin run again once it has
//! expired. Messages are client-go's (`exec plugin didn't return a status field`);
//! none quotes the plugin's output or the kubeconfig's `env`, which hold secrets.
//!
//! Unlike client-go, the plugin first runs when the client is built, not at the first
//! request: a certificate it returns is needed for the TLS configuration then.

use std::io::IsTerminal as _;
use std::process::{Command, Stdio};

use base64::Engine as _;
use jiff::Timestamp;
use kube::config::{ExecConfig, ExecInteractiveMode};
use serde::{Deserialize, Serialize};

use super::{CredentialsError, INSTALL_HINT_HELP, go_errno_text};

/// The ExecCredential versions client-go 1.32 reads (v1alpha1 was removed in 1.24).
const API_VERSIONS: [&str; 2] = [
    "client.authentication.k8s.io/v1",
    "client.authentication.k8s.io/v1beta1",
];

/// Whether `api_version` is one an exec plugin may be configured with.
pub(super) fn supported(api_version: &str) -> bool {
    API_VERSIONS.contains(&api_version)
}

/// What a plugin run gave.
#[derive(Debug, Default)]
pub(super) struct Credential {
    pub token: Option<String>,
    /// PEM certificate chain and key, when the plugin authenticates with a certificate.
    pub certificate: Option<(String, String)>,
    pub expiry: Option<Timestamp>,
}

/// `KUBERNETES_EXEC_INFO`: client-go's field order and names.
#[derive(Serialize)]
struct ExecInfo<'a> {
    kind: &'static str,
    #[serde(rename = "apiVersion")]
    api_version: &'a str,
    spec: Spec<'a>,
}

#[derive(Serialize)]
struct Spec<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    cluster: Option<Cluster<'a>>,
    interactive: bool,
}

/// The cluster, for `provideClusterInfo: true` (client-go's `Cluster`: `config` is
/// always written, `null` when the kubeconfig has no extension for the plugin).
#[derive(Serialize)]
struct Cluster<'a> {
    server: &'a str,
    #[serde(rename = "tls-server-name", skip_serializing_if = "Option::is_none")]
    tls_server_name: Option<&'a str>,
    #[serde(rename = "insecure-skip-tls-verify", skip_serializing_if = "is_false")]
    insecure_skip_tls_verify: bool,
    #[serde(
        rename = "certificate-authority-data",
        skip_serializing_if = "Option::is_none"
    )]
    certificate_authority_data: Option<String>,
    #[serde(rename = "proxy-url", skip_serializing_if = "Option::is_none")]
    proxy_url: Option<&'a str>,
    #[serde(rename = "disable-compression", skip_serializing_if = "is_false")]
    disable_compression: bool,
    config: Option<&'a serde_json::Value>,
}

fn is_false(b: &bool) -> bool {
    !b
}

/// The part of an ExecCredential the transport reads.
#[derive(Deserialize)]
struct Output {
    #[serde(rename = "apiVersion", default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    status: Option<Status>,
}

#[derive(Deserialize)]
struct Status {
    #[serde(rename = "expirationTimestamp")]
    expiration_timestamp: Option<String>,
    #[serde(default)]
    token: String,
    #[serde(rename = "clientCertificateData", default)]
    client_certificate_data: String,
    #[serde(rename = "clientKeyData", default)]
    client_key_data: String,
}

/// Runs the plugin of `exec` once (blocking) and reads its credential.
pub(super) fn run(exec: &ExecConfig) -> Result<Credential, CredentialsError> {
    let program = exec.command.as_deref().unwrap_or_default();
    let api_version = exec.api_version.as_deref().unwrap_or_default();
    let interactive = interactive(exec.interactive_mode.as_ref())?;
    // client-go's `filepath.Clean` of the command, which the policy names.
    let cleaned = super::policy::clean(program);
    super::policy::check(exec, &cleaned).map_err(CredentialsError::new)?;
    let info = exec_info(exec, api_version, interactive);
    let mut cmd = Command::new(program);
    cmd.args(exec.args.iter().flatten());
    for var in exec.env.iter().flatten() {
        if let (Some(name), Some(value)) = (var.get("name"), var.get("value")) {
            cmd.env(name, value);
        }
    }
    // kube's own field (no client-go counterpart): variables the plugin must not see.
    for name in exec.drop_env.iter().flatten() {
        cmd.env_remove(name);
    }
    cmd.env("KUBERNETES_EXEC_INFO", info)
        .stdin(if interactive {
            Stdio::inherit()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let out = cmd
        .output()
        .map_err(|e| CredentialsError::new(start_failure(program, exec, &e)))?;
    if !out.status.success() {
        // Go's ExitCode() is -1 for a process killed by a signal.
        let code = out.status.code().unwrap_or(-1);
        return Err(CredentialsError::new(format!(
            "exec: executable {program} failed with exit code {code}"
        )));
    }
    decode(&out.stdout, api_version)
}

/// client-go's choice: `Never` does not interact, `IfAvailable` does when stdin is a
/// terminal, `Always` must (v1beta1 defaults to `IfAvailable`, v1 requires the field).
fn interactive(mode: Option<&ExecInteractiveMode>) -> Result<bool, CredentialsError> {
    let terminal = std::io::stdin().is_terminal();
    match mode {
        Some(ExecInteractiveMode::Never) => Ok(false),
        Some(ExecInteractiveMode::Always) if !terminal => Err(CredentialsError::new(
            "exec plugin cannot support interactive mode: standard input is not a terminal"
                .to_string(),
        )),
        _ => Ok(terminal),
    }
}

fn exec_info(exec: &ExecConfig, api_version: &str, interactive: bool) -> String {
    let cluster = exec
        .cluster
        .as_ref()
        .filter(|_| exec.provide_cluster_info)
        .map(|c| Cluster {
            server: c.server.as_deref().unwrap_or_default(),
            tls_server_name: c.tls_server_name.as_deref(),
            insecure_skip_tls_verify: c.insecure_skip_tls_verify.unwrap_or(false),
            certificate_authority_data: c
                .certificate_authority_data
                .as_deref()
                .filter(|d| !d.is_empty())
                .map(|d| base64::engine::general_purpose::STANDARD.encode(d)),
            proxy_url: c.proxy_url.as_deref(),
            // kube's `Cluster` does not read `disable-compression`.
            disable_compression: false,
            config: c.config.as_ref(),
        });
    let info = ExecInfo {
        kind: "ExecCredential",
        api_version,
        spec: Spec {
            cluster,
            interactive,
        },
    };
    // Strings, bools and a JSON value: serialising cannot fail.
    serde_json::to_string(&info).unwrap_or_default()
}

/// Go's words for a plugin that could not be started: `LookPath` failed for a bare
/// name (client-go adds its help and the kubeconfig's install hint), the exec itself
/// for a path.
fn start_failure(program: &str, exec: &ExecConfig, e: &std::io::Error) -> String {
    // A name with a path separator (a slash, or a backslash on Windows) is run as
    // given; only a bare name is looked up in PATH, as Go's LookPath does.
    let bare_name = !program.chars().any(std::path::is_separator);
    if e.kind() == std::io::ErrorKind::NotFound && bare_name {
        let mut msg = format!("exec: executable {program} not found{INSTALL_HINT_HELP}");
        if let Some(hint) = exec.install_hint.as_deref().filter(|h| !h.is_empty()) {
            msg.push_str("\n\n");
            msg.push_str(hint);
        }
        return msg;
    }
    format!("exec: fork/exec {program}: {}", go_errno_text(e))
}

/// The ExecCredential on the plugin's stdout, checked as client-go checks it.
pub(super) fn decode(stdout: &[u8], api_version: &str) -> Result<Credential, CredentialsError> {
    let fail = |reason: String| CredentialsError::new(format!("decoding stdout: {reason}"));
    let text = std::str::from_utf8(stdout)
        .map_err(|_| fail("the plugin's output is not UTF-8".to_string()))?;
    // The parser's message can quote the output, which holds the token: only the
    // position is kept.
    let value = goyaml::to_json(text, goyaml::yaml_limits(text.len())).map_err(|e| {
        fail(match e.line {
            Some(line) => format!("error converting YAML to JSON: yaml: line {line}"),
            None => "error converting YAML to JSON".to_string(),
        })
    })?;
    let go_type = match &value {
        serde_json::Value::String(_) => Some("string"),
        serde_json::Value::Number(_) => Some("number"),
        serde_json::Value::Bool(_) => Some("bool"),
        serde_json::Value::Array(_) => Some("array"),
        _ => None,
    };
    if let Some(go_type) = go_type {
        return Err(fail(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {go_type} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}"
        )));
    }
    let output: Output = serde_json::from_value(value)
        .map_err(|_| fail("the output is not an ExecCredential".to_string()))?;
    if output.kind.is_empty() {
        return Err(fail("Object 'Kind' is missing".to_string()));
    }
    if output.kind != "ExecCredential" || !supported(&output.api_version) {
        return Err(fail(format!(
            "no kind {:?} is registered for version {:?}",
            output.kind, output.api_version
        )));
    }
    if output.api_version != api_version {
        return Err(CredentialsError::new(format!(
            "exec plugin is configured to use API version {api_version}, plugin returned version {}",
            output.api_version
        )));
    }
    let status = output.status.ok_or_else(|| {
        CredentialsError::new("exec plugin didn't return a status field".to_string())
    })?;
    let Status {
        expiration_timestamp,
        token,
        client_certificate_data: cert,
        client_key_data: key,
    } = status;
    if token.is_empty() && cert.is_empty() && key.is_empty() {
        return Err(CredentialsError::new(
            "exec plugin didn't return a token or cert/key pair".to_string(),
        ));
    }
    if cert.is_empty() != key.is_empty() {
        return Err(CredentialsError::new(
            "exec plugin returned only certificate or key, not both".to_string(),
        ));
    }
    let expiry = expiration_timestamp
        .filter(|t| !t.is_empty())
        .map(|t| t.parse::<Timestamp>())
        .transpose()
        .map_err(|_| fail("invalid expirationTimestamp".to_string()))?;
    Ok(Credential {
        token: Some(token).filter(|t| !t.is_empty()),
        certificate: Some((cert, key)).filter(|(c, _)| !c.is_empty()),
        expiry,
    })
}
