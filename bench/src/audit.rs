//! Counting the API requests each run makes, from the apiserver's audit log.
//!
//! Attribution: every run gets its own kubeconfig whose user impersonates a unique
//! name (`as: kubeplug-bench-…`, `as-groups: [system:masters]`). Both kubectl and
//! kube-rs send the `Impersonate-User` header from the kubeconfig, and the apiserver
//! records it in each audit event as `impersonatedUser.username`, so a request belongs
//! to exactly one run, whatever else talks to the cluster at the same time (the
//! controller-manager and the scheduler use the same admin credentials, and run
//! concurrently; a time window or a user-agent would mix them in). The command lines
//! stay exactly what a user types: only `KUBECONFIG` differs.
//!
//! Each request is counted once: at its `ResponseComplete` (or `Panic`) stage; the
//! policy omits `RequestReceived`, and long-running requests (watches) also log
//! `ResponseStarted`, which is not counted. A request from a client that exits is
//! logged a moment after its response, so before reading the log, `settle` makes one
//! more request as a marker identity and waits until the marker is in the log.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use kube::config::Kubeconfig;
use serde::Deserialize;

use super::model::Requests;

/// Every impersonated name starts with this, so the log scan can skip other lines
/// cheaply before parsing any JSON.
pub const PREFIX: &str = "kubeplug-bench-";

/// Writes kubeconfigs that impersonate one name each.
pub struct Identities {
    base: Kubeconfig,
    dir: PathBuf,
    /// Impersonation is only possible (and only useful) with an audit log to read.
    enabled: bool,
}

impl Identities {
    pub fn new(base: Kubeconfig, dir: PathBuf, enabled: bool) -> Self {
        Self { base, dir, enabled }
    }

    /// A kubeconfig for `identity` (a suffix after [`PREFIX`]); the unmodified base
    /// kubeconfig when impersonation is off. Written with mode 0600: it holds the
    /// credentials of the base kubeconfig.
    pub fn kubeconfig(&self, identity: &str) -> anyhow::Result<PathBuf> {
        self.kubeconfig_in(identity, MASTERS)
    }

    /// [`Self::kubeconfig`] impersonating `identity` in `group` instead of
    /// `system:masters` (the throttled cases: the API server exempts only that group
    /// from throttling).
    pub fn kubeconfig_in(&self, identity: &str, group: &str) -> anyhow::Result<PathBuf> {
        let name = if self.enabled { identity } else { "base" };
        let path = self.dir.join(format!("kubeconfig-{name}.json"));
        let mut config = self.base.clone();
        if self.enabled {
            impersonate(&mut config, &format!("{PREFIX}{identity}"), group)?;
        }
        let body = serde_json::to_vec(&config)?;
        write_private(&path, &body)?;
        Ok(path)
    }
}

/// The group of every identity but the throttled cases': it keeps the admin's rights
/// and is never throttled.
const MASTERS: &str = "system:masters";

/// Sets `as`/`as-groups` on the user of the current context.
pub fn impersonate(config: &mut Kubeconfig, user: &str, group: &str) -> anyhow::Result<()> {
    let context_name = config
        .current_context
        .clone()
        .context("the kubeconfig has no current-context")?;
    let user_name = config
        .contexts
        .iter()
        .find(|c| c.name == context_name)
        .and_then(|c| c.context.as_ref())
        .map(|c| c.user.clone())
        .with_context(|| format!("the kubeconfig has no context {context_name:?}"))?
        .with_context(|| format!("context {context_name:?} names no user"))?;
    let auth = config
        .auth_infos
        .iter_mut()
        .find(|a| a.name == user_name)
        .and_then(|a| a.auth_info.as_mut())
        .with_context(|| format!("the kubeconfig has no user {user_name:?}"))?;
    auth.impersonate = Some(user.to_string());
    // system:authenticated is added anyway.
    auth.impersonate_groups = Some(vec![group.to_string()]);
    Ok(())
}

fn write_private(path: &Path, body: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(body)
}

/// The fields of an audit event (audit.k8s.io/v1 `Event`) that counting needs.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    stage: String,
    verb: String,
    #[serde(default, rename = "requestURI")]
    request_uri: String,
    impersonated_user: Option<User>,
    object_ref: Option<ObjectRef>,
    response_status: Option<ResponseStatus>,
}

#[derive(Deserialize)]
struct ResponseStatus {
    code: Option<u16>,
}

#[derive(Deserialize)]
struct User {
    username: String,
}

#[derive(Deserialize)]
struct ObjectRef {
    resource: Option<String>,
    subresource: Option<String>,
}

/// Counts the completed requests per impersonated identity (the part after
/// [`PREFIX`]) in audit-log lines. Lines that are not ours, or not JSON, are skipped.
pub fn count(text: &str) -> BTreeMap<String, Requests> {
    let mut counts: BTreeMap<String, Requests> = BTreeMap::new();
    for line in text.lines().filter(|l| l.contains(PREFIX)) {
        let Ok(event) = serde_json::from_str::<Event>(line) else {
            continue;
        };
        if event.stage != "ResponseComplete" && event.stage != "Panic" {
            continue;
        }
        let Some(identity) = event
            .impersonated_user
            .as_ref()
            .and_then(|u| u.username.strip_prefix(PREFIX))
        else {
            continue;
        };
        let kind = match event.object_ref.as_ref().and_then(|o| o.resource.as_ref()) {
            Some(resource) => match event
                .object_ref
                .as_ref()
                .and_then(|o| o.subresource.as_ref())
            {
                Some(sub) => format!("{} {resource}/{sub}", event.verb),
                None => format!("{} {resource}", event.verb),
            },
            None => format!(
                "{} {}",
                event.verb,
                event.request_uri.split('?').next().unwrap_or_default()
            ),
        };
        let entry = counts.entry(identity.to_string()).or_default();
        entry.total += 1;
        *entry.by_kind.entry(kind).or_default() += 1;
        let code = event.response_status.and_then(|s| s.code).unwrap_or(0);
        if code == 429 {
            entry.throttled += 1;
        }
        if event.verb == "create" && (200..300).contains(&code) {
            entry.created += 1;
        }
    }
    counts
}

/// The audit log from a given offset on.
pub struct Log {
    pub path: PathBuf,
}

impl Log {
    /// The current end of the log (where the next case's events will start).
    pub fn end(&self) -> u64 {
        std::fs::metadata(&self.path).map(|m| m.len()).unwrap_or(0)
    }

    /// The log's text from `offset` on.
    pub fn read_from(&self, offset: u64) -> anyhow::Result<String> {
        let mut file = std::fs::File::open(&self.path)
            .with_context(|| format!("cannot open the audit log {}", self.path.display()))?;
        file.seek(SeekFrom::Start(offset))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Waits until `marker` (an identity that made one request after every run of
    /// interest ended) appears after `offset`; `false` on timeout.
    pub fn wait_for(&self, offset: u64, marker: &str, timeout: Duration) -> bool {
        let needle = format!("\"{PREFIX}{marker}\"");
        let deadline = Instant::now() + timeout;
        loop {
            if self
                .read_from(offset)
                .is_ok_and(|text| text.contains(&needle))
            {
                return true;
            }
            if Instant::now() > deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"1","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/kb-1/pods?fieldManager=kubectl-run","verb":"create","user":{"username":"admin","groups":["system:masters","system:authenticated"]},"impersonatedUser":{"username":"kubeplug-bench-run-pod-create-a1","groups":["system:masters"]},"sourceIPs":["127.0.0.1"],"userAgent":"kubeplug/0.1.0","objectRef":{"resource":"pods","namespace":"kb-1","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"2","stage":"ResponseComplete","requestURI":"/api?timeout=32s","verb":"get","user":{"username":"admin"},"impersonatedUser":{"username":"kubeplug-bench-run-pod-create-b1","groups":["system:masters"]},"userAgent":"kubectl/v1.32.4"}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"3","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/kb-2/pods","verb":"create","user":{"username":"admin"},"impersonatedUser":{"username":"kubeplug-bench-run-pod-create-b1"},"objectRef":{"resource":"pods","namespace":"kb-2","apiVersion":"v1"}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"4","stage":"ResponseStarted","requestURI":"/api/v1/pods?watch=true","verb":"watch","user":{"username":"admin"},"impersonatedUser":{"username":"kubeplug-bench-run-pod-create-b1"},"objectRef":{"resource":"pods","apiVersion":"v1"}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"4","stage":"ResponseComplete","requestURI":"/api/v1/pods?watch=true","verb":"watch","user":{"username":"admin"},"impersonatedUser":{"username":"kubeplug-bench-run-pod-create-b1"},"objectRef":{"resource":"pods","apiVersion":"v1"}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"5","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/kb-3/pods/x/status","verb":"patch","user":{"username":"admin"},"userAgent":"kube-controller-manager","objectRef":{"resource":"pods","subresource":"status"}}
{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"6","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/kb-3/pods/x/status","verb":"patch","impersonatedUser":{"username":"someone-else"},"objectRef":{"resource":"pods","subresource":"status"}}
not json kubeplug-bench-run-pod-create-a1
"#;

    #[test]
    fn counts_completed_requests_per_identity() {
        let counts = count(LOG);
        assert_eq!(counts.len(), 2, "{counts:?}");
        let a = &counts["run-pod-create-a1"];
        assert_eq!(a.total, 1);
        assert_eq!(a.by_kind["create pods"], 1);
        let b = &counts["run-pod-create-b1"];
        // get /api, create pods, and the watch counted once (at ResponseComplete).
        assert_eq!(b.total, 3);
        assert_eq!(b.by_kind["get /api"], 1);
        assert_eq!(b.by_kind["watch pods"], 1);
        assert_eq!(b.verb("create"), 1);
    }

    #[test]
    fn throttled_answers_and_applied_creates_are_counted() {
        let line = |id: u32, verb: &str, code: u16| {
            format!(
                r#"{{"kind":"Event","auditID":"{id}","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/kb/configmaps","verb":"{verb}","impersonatedUser":{{"username":"kubeplug-bench-cf-a1","groups":["kubeplug-bench-throttled"]}},"objectRef":{{"resource":"configmaps"}},"responseStatus":{{"metadata":{{}},"code":{code}}}}}"#
            )
        };
        let log = [
            line(1, "create", 201),
            line(2, "create", 429),
            line(3, "create", 429),
            line(4, "create", 201),
            line(5, "create", 409),
            line(6, "get", 200),
        ]
        .join("\n");
        let cf = &count(&log)["cf-a1"];
        assert_eq!(cf.total, 6);
        assert_eq!(cf.throttled, 2);
        // Only what the server applied: not the 429s, not the 409.
        assert_eq!(cf.created, 2);
        assert_eq!(cf.verb("create"), 5);
    }

    #[test]
    fn impersonation_is_set_on_the_current_contexts_user() {
        let yaml = r#"
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:6443"}
users:
- name: admin
  user: {token: secret}
- name: other
  user: {token: other}
contexts:
- name: ctx
  context: {cluster: c, user: admin}
current-context: ctx
"#;
        let mut config = Kubeconfig::from_yaml(yaml).unwrap();
        impersonate(&mut config, "kubeplug-bench-x", MASTERS).unwrap();
        let admin = config.auth_infos[0].auth_info.as_ref().unwrap();
        assert_eq!(admin.impersonate.as_deref(), Some("kubeplug-bench-x"));
        assert_eq!(
            admin.impersonate_groups.as_deref(),
            Some(&["system:masters".to_string()][..])
        );
        assert!(
            config.auth_infos[1]
                .auth_info
                .as_ref()
                .unwrap()
                .impersonate
                .is_none()
        );
        // The written form carries the kubectl field names.
        let json = serde_json::to_string(&config).unwrap();
        assert!(json.contains(r#""as":"kubeplug-bench-x""#), "{json}");
        assert!(json.contains(r#""as-groups":["system:masters"]"#), "{json}");

        let mut broken = Kubeconfig::from_yaml(&yaml.replace("current-context: ctx", "")).unwrap();
        assert!(impersonate(&mut broken, "x", MASTERS).is_err());
    }
}
