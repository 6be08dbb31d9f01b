//! Projected volumes, as a kubelet of the current release gives them to a
//! container: the service-account volume (`kube-api-access-*`, added to every
//! pod by the API server's ServiceAccount admission) is what lets a process
//! in a pod use in-cluster credentials, as CI steps running in pods do.
//!
//! - **Contents.** Each projected volume of the pod is written into a
//!   directory of the pod's scratch directory: a `serviceAccountToken`
//!   source by a `TokenRequest` (`POST serviceaccounts/NAME/token`) with the
//!   source's audience and `expirationSeconds` and the pod as bound object,
//!   as the kubelet's token manager asks for it; a `configMap` source
//!   (`kube-root-ca.crt`'s `ca.crt`) from the ConfigMap; a `downwardAPI`
//!   source from the pod's fields (`metadata.namespace`, …). A `secret`
//!   volume (where 1.20 puts the service account's token) from the Secret. A volume that
//!   cannot be written yet (the root-CA ConfigMap not published yet in a new
//!   namespace, the API server restarting) is retried, and the pod's
//!   containers wait in `ContainerCreating`, as with a kubelet.
//! - **Atomic rewrites**, as the kubelet's `AtomicWriter` does them: the files
//!   go into a new `..<UTC time>.<random>` directory, a `..data_tmp` symlink
//!   to it is renamed over `..data`, and each visible name (`token`, …) is a
//!   symlink into `..data`. A reader therefore sees the old set of files or
//!   the new one, never a half-written token.
//! - **Refresh**, as the kubelet's token manager decides it: a token is
//!   requested again once 80% of its lifetime is up (or it is 24 h old),
//!   less up to 10 s of jitter. Two steering annotations shorten this for
//!   tests (see [`TOKEN_REFRESH_AFTER_MS`] and [`TOKEN_BOUND_SECRET`]).
//! - **Mounts.** A container sees each volume at its `volumeMounts` path
//!   (`/var/run/secrets/kubernetes.io/serviceaccount`), read-only, through a
//!   bind mount in a mount namespace of its own (see [`Mounts`]).

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use k8s_openapi::api::authentication::v1::{BoundObjectReference, TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, Pod, Secret, ServiceAccount, Volume as PodVolume, VolumeProjection,
};
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;

/// `"N"` (milliseconds): the node requests a new service-account token N ms
/// after it requested the last one, instead of at 80% of its lifetime (at
/// least 600 s, the API's minimum), so a test can see a rotation.
pub const TOKEN_REFRESH_AFTER_MS: &str = "sim.kubeplug.io/token-refresh-after-ms";
/// `"NAME"`: the pod's *first* service-account token is bound to the Secret
/// NAME of the pod's namespace instead of to the pod (later ones are bound to
/// the pod, as always). Deleting that Secret makes the API server refuse the
/// first token while the pod keeps running: how a test proves that a
/// process in the pod moved on to the rewritten token.
pub const TOKEN_BOUND_SECRET: &str = "sim.kubeplug.io/token-bound-secret";

/// The API server as pods reach it.
#[derive(Clone)]
pub struct Api {
    /// The node's client (requests tokens, reads ConfigMaps).
    pub client: kube::Client,
    /// `KUBERNETES_SERVICE_HOST`: the loopback address the API server listens
    /// on (there is no kube-proxy to take the `kubernetes` Service's cluster
    /// IP there).
    pub host: String,
    /// `KUBERNETES_SERVICE_PORT`.
    pub port: u16,
}

impl Api {
    /// The variables the kubelet gives every container for the `kubernetes`
    /// Service (whatever `enableServiceLinks` says), pointing at the API
    /// server's real address.
    pub fn service_env(&self) -> Vec<(String, String)> {
        let (host, port) = (&self.host, self.port);
        let tcp = format!("tcp://{host}:{port}");
        vec![
            ("KUBERNETES_SERVICE_HOST".into(), host.clone()),
            ("KUBERNETES_SERVICE_PORT".into(), port.to_string()),
            ("KUBERNETES_SERVICE_PORT_HTTPS".into(), port.to_string()),
            ("KUBERNETES_PORT".into(), tcp.clone()),
            (format!("KUBERNETES_PORT_{port}_TCP"), tcp),
            (format!("KUBERNETES_PORT_{port}_TCP_PROTO"), "tcp".into()),
            (format!("KUBERNETES_PORT_{port}_TCP_PORT"), port.to_string()),
            (format!("KUBERNETES_PORT_{port}_TCP_ADDR"), host.clone()),
        ]
    }
}

/// One source of a projected volume.
#[derive(Clone, Debug, PartialEq)]
enum Source {
    Token {
        path: String,
        audience: Option<String>,
        expiration_seconds: i64,
    },
    ConfigMap {
        name: String,
        /// (key, path); empty: every key under its own name.
        items: Vec<(String, String)>,
        optional: bool,
    },
    /// (fieldPath, path).
    Downward(Vec<(String, String)>),
    /// A `secret` volume (1.20's service-account token comes in one).
    Secret {
        name: String,
        /// (key, path); empty: every key under its own name.
        items: Vec<(String, String)>,
        optional: bool,
    },
}

/// A projected volume of the pod, written into `dir`.
#[derive(Clone, Debug)]
pub struct Volume {
    name: String,
    dir: PathBuf,
    mode: u32,
    sources: Vec<Source>,
}

impl Volume {
    /// The volume of the pod's volume `v` (None: a type that is not
    /// materialised).
    fn of(v: &PodVolume, scratch: &Path) -> Option<Self> {
        if let Some(secret) = &v.secret {
            // Servers before the projected token (1.20) mount the
            // service account's token Secret; the kubelet writes a
            // Secret volume the same atomic way.
            return Some(Volume {
                name: v.name.clone(),
                dir: scratch.join("volumes").join(&v.name),
                mode: secret
                    .default_mode
                    .and_then(|m| u32::try_from(m).ok())
                    .unwrap_or(0o644),
                sources: vec![Source::Secret {
                    name: secret.secret_name.clone().unwrap_or_default(),
                    items: secret
                        .items
                        .iter()
                        .flatten()
                        .map(|i| (i.key.clone(), i.path.clone()))
                        .collect(),
                    optional: secret.optional.unwrap_or(false),
                }],
            });
        }
        let projected = v.projected.as_ref()?;
        let sources = projected
            .sources
            .iter()
            .flatten()
            .filter_map(|s| Source::of(s, &v.name))
            .collect();
        Some(Volume {
            name: v.name.clone(),
            dir: scratch.join("volumes").join(&v.name),
            mode: projected
                .default_mode
                .and_then(|m| u32::try_from(m).ok())
                .unwrap_or(0o644),
            sources,
        })
    }
}

impl Source {
    /// The source `s` of the projected volume `volume` (None: a kind the
    /// simulated node does not write).
    fn of(s: &VolumeProjection, volume: &str) -> Option<Self> {
        if let Some(t) = &s.service_account_token {
            Some(Source::Token {
                path: t.path.clone(),
                audience: t.audience.clone().filter(|a| !a.is_empty()),
                expiration_seconds: t.expiration_seconds.unwrap_or(3600),
            })
        } else if let Some(c) = &s.config_map {
            Some(Source::ConfigMap {
                name: c.name.clone(),
                items: c
                    .items
                    .iter()
                    .flatten()
                    .map(|i| (i.key.clone(), i.path.clone()))
                    .collect(),
                optional: c.optional.unwrap_or(false),
            })
        } else if let Some(d) = &s.downward_api {
            Some(Source::Downward(
                d.items
                    .iter()
                    .flatten()
                    .filter_map(|i| {
                        Some((i.field_ref.as_ref()?.field_path.clone(), i.path.clone()))
                    })
                    .collect(),
            ))
        } else {
            tracing::warn!(volume = %volume, "projected source not supported by the simulated node; left out");
            None
        }
    }
}

/// The token refresh period the pod's [`TOKEN_REFRESH_AFTER_MS`] annotation
/// asks for.
fn refresh_after(annotations: &BTreeMap<String, String>) -> Option<Duration> {
    annotations
        .get(TOKEN_REFRESH_AFTER_MS)
        .and_then(|v| match v.parse::<u64>() {
            Ok(ms) => Some(Duration::from_millis(ms)),
            Err(_) => {
                tracing::warn!(value = %v, "ignoring {TOKEN_REFRESH_AFTER_MS}: expected milliseconds");
                None
            }
        })
}

/// The pod's projected volumes, and what writes and refreshes them.
pub struct Volumes {
    volumes: Vec<Volume>,
    namespace: String,
    pod: String,
    uid: String,
    service_account: String,
    refresh_after: Option<Duration>,
    first_bound_secret: Option<String>,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
}

/// The kubelet's token manager: refresh after at most this age…
const MAX_TTL: Duration = Duration::from_secs(24 * 3600);
/// …less a jitter of up to this much.
const MAX_JITTER: Duration = Duration::from_secs(10);

impl Volumes {
    /// The projected and secret volumes of `pod`, each to be written into
    /// `scratch/volumes/<name>`. Other volume types are not materialised.
    pub fn of(pod: &Pod, scratch: &Path) -> Self {
        let meta = &pod.metadata;
        let spec = pod.spec.as_ref();
        let volumes = spec
            .and_then(|s| s.volumes.as_ref())
            .into_iter()
            .flatten()
            .filter_map(|v| Volume::of(v, scratch))
            .collect();
        let annotations = meta.annotations.clone().unwrap_or_default();
        let refresh_after = refresh_after(&annotations);
        Self {
            volumes,
            namespace: meta.namespace.clone().unwrap_or_default(),
            pod: meta.name.clone().unwrap_or_default(),
            uid: meta.uid.clone().unwrap_or_default(),
            service_account: spec
                .and_then(|s| s.service_account_name.clone())
                .unwrap_or_else(|| "default".into()),
            refresh_after,
            first_bound_secret: annotations.get(TOKEN_BOUND_SECRET).cloned(),
            labels: meta.labels.clone().unwrap_or_default(),
            annotations,
        }
    }

    /// Whether the pod has nothing to write.
    pub fn is_empty(&self) -> bool {
        self.volumes.is_empty()
    }

    /// The bind mounts of `container`: its `volumeMounts` of these volumes.
    /// A `subPath` mount is left out (a kubelet never refreshes those either).
    pub fn mounts_for(&self, container: &Container) -> Mounts {
        let mounts = container
            .volume_mounts
            .iter()
            .flatten()
            .filter(|m| m.sub_path.as_deref().is_none_or(str::is_empty))
            .filter_map(|m| {
                let volume = self.volumes.iter().find(|v| v.name == m.name)?;
                Some((volume.dir.clone(), PathBuf::from(&m.mount_path)))
            })
            .collect();
        Mounts(mounts)
    }

    /// Writes every volume once, retrying until it succeeds; then keeps the
    /// tokens fresh. Never returns: cancel it with the pod. `ready` is
    /// called once, when every volume has been written.
    pub async fn run(mut self, api: Api, ready: impl FnOnce()) {
        let mut delay = Duration::from_millis(200);
        let mut tokens = loop {
            match self.write_all(&api, true).await {
                Ok(next) => break next,
                Err(e) => {
                    tracing::warn!(pod = %format!("{}/{}", self.namespace, self.pod), error = %format!("{e:#}"), "MountVolume.SetUp failed; retrying");
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(2));
                }
            }
        };
        ready();
        self.first_bound_secret = None;
        loop {
            let due = tokens
                .iter()
                .map(|t: &Issued| self.refresh_at(t))
                .min()
                .unwrap_or(Timestamp::MAX);
            let wait = Duration::try_from(due.duration_since(Timestamp::now())).unwrap_or_default();
            if due == Timestamp::MAX {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(wait).await;
            match self.write_all(&api, false).await {
                Ok(next) => tokens = next,
                Err(e) => {
                    tracing::warn!(pod = %format!("{}/{}", self.namespace, self.pod), error = %format!("{e:#}"), "token refresh failed; retrying");
                    tokio::time::sleep(Duration::from_secs(2)).await;
                }
            }
        }
    }

    /// When the kubelet's token manager would ask for a new token.
    fn refresh_at(&self, token: &Issued) -> Timestamp {
        if let Some(after) = self.refresh_after {
            return token.issued.checked_add(after).unwrap_or(Timestamp::MAX);
        }
        let ttl = Duration::from_secs(u64::try_from(token.expiration_seconds).unwrap_or(0));
        let jitter = MAX_JITTER.mul_f64(rand_fraction());
        let by_ttl = token.expires.checked_sub(ttl / 5).unwrap_or(token.expires);
        let by_age = token.issued.checked_add(MAX_TTL).unwrap_or(Timestamp::MAX);
        by_ttl.min(by_age).checked_sub(jitter).unwrap_or(by_ttl)
    }

    /// Writes every volume; the tokens it requested.
    async fn write_all(&self, api: &Api, first: bool) -> anyhow::Result<Vec<Issued>> {
        let mut issued = Vec::new();
        for volume in &self.volumes {
            let mut files = BTreeMap::new();
            for source in &volume.sources {
                match source {
                    Source::Token {
                        path,
                        audience,
                        expiration_seconds,
                    } => {
                        let token = self
                            .request_token(api, audience.as_deref(), *expiration_seconds, first)
                            .await?;
                        files.insert(path.clone(), token.token.clone().into_bytes());
                        issued.push(token);
                    }
                    Source::ConfigMap {
                        name,
                        items,
                        optional,
                    } => {
                        let api_cm: kube::Api<ConfigMap> =
                            kube::Api::namespaced(api.client.clone(), &self.namespace);
                        let Some(cm) = api_cm.get_opt(name).await? else {
                            anyhow::ensure!(*optional, "configmap {name:?} not found");
                            continue;
                        };
                        let data = cm
                            .data
                            .unwrap_or_default()
                            .into_iter()
                            .map(|(k, v)| (k, v.into_bytes()))
                            .collect();
                        keyed(&mut files, data, items, *optional, "configmap", "config")?;
                    }
                    Source::Secret {
                        name,
                        items,
                        optional,
                    } => {
                        let secrets: kube::Api<Secret> =
                            kube::Api::namespaced(api.client.clone(), &self.namespace);
                        let Some(secret) = secrets.get_opt(name).await? else {
                            anyhow::ensure!(*optional, "secret {name:?} not found");
                            continue;
                        };
                        let data = secret
                            .data
                            .unwrap_or_default()
                            .into_iter()
                            .map(|(k, v)| (k, v.0))
                            .collect();
                        keyed(&mut files, data, items, *optional, "secret", "secret")?;
                    }
                    Source::Downward(items) => {
                        for (field, path) in items {
                            let value = self.field(field).ok_or_else(|| {
                                anyhow::anyhow!("unsupported downward API field {field:?}")
                            })?;
                            files.insert(path.clone(), value.into_bytes());
                        }
                    }
                }
            }
            write_atomically(&volume.dir, &files, volume.mode)?;
        }
        Ok(issued)
    }

    fn field(&self, path: &str) -> Option<String> {
        let lines = |map: &BTreeMap<String, String>| {
            map.iter()
                .map(|(k, v)| format!("{k}={}\n", serde_json::Value::String(v.clone())))
                .collect::<String>()
                .trim_end()
                .to_owned()
        };
        match path {
            "metadata.namespace" => Some(self.namespace.clone()),
            "metadata.name" => Some(self.pod.clone()),
            "metadata.uid" => Some(self.uid.clone()),
            "metadata.labels" => Some(lines(&self.labels)),
            "metadata.annotations" => Some(lines(&self.annotations)),
            _ => None,
        }
    }

    async fn request_token(
        &self,
        api: &Api,
        audience: Option<&str>,
        expiration_seconds: i64,
        first: bool,
    ) -> anyhow::Result<Issued> {
        let bound = match self.first_bound_secret.as_deref().filter(|_| first) {
            // A steered first token (see TOKEN_BOUND_SECRET); the Secret's uid is
            // filled in by the API server.
            Some(secret) => BoundObjectReference {
                api_version: Some("v1".into()),
                kind: Some("Secret".into()),
                name: Some(secret.into()),
                uid: None,
            },
            None => BoundObjectReference {
                api_version: Some("v1".into()),
                kind: Some("Pod".into()),
                name: Some(self.pod.clone()),
                uid: Some(self.uid.clone()),
            },
        };
        let request = TokenRequest {
            spec: TokenRequestSpec {
                audiences: audience.map(|a| vec![a.to_owned()]).unwrap_or_default(),
                expiration_seconds: Some(expiration_seconds),
                bound_object_ref: Some(bound),
            },
            ..Default::default()
        };
        let accounts: kube::Api<ServiceAccount> =
            kube::Api::namespaced(api.client.clone(), &self.namespace);
        let issued = Timestamp::now();
        let answer = accounts
            .create_token_request(&self.service_account, &PostParams::default(), &request)
            .await?;
        let status = answer
            .status
            .ok_or_else(|| anyhow::anyhow!("the TokenRequest came back without a status"))?;
        let expiration_seconds = answer.spec.expiration_seconds.unwrap_or(expiration_seconds);
        Ok(Issued {
            token: status.token,
            issued,
            expires: status.expiration_timestamp.0,
            expiration_seconds,
        })
    }
}

/// A ConfigMap's or Secret's `data` as files: every key, or the `items` asked
/// for (a missing key fails the volume unless it is optional, in the kubelet's
/// words).
fn keyed(
    files: &mut BTreeMap<String, Vec<u8>>,
    mut data: BTreeMap<String, Vec<u8>>,
    items: &[(String, String)],
    optional: bool,
    kind: &str,
    what: &str,
) -> anyhow::Result<()> {
    if items.is_empty() {
        files.extend(data);
        return Ok(());
    }
    for (key, path) in items {
        match data.remove(key) {
            Some(value) => {
                files.insert(path.clone(), value);
            }
            None => anyhow::ensure!(optional, "{kind} references non-existent {what} key: {key}"),
        }
    }
    Ok(())
}

/// A token the API issued.
struct Issued {
    token: String,
    issued: Timestamp,
    expires: Timestamp,
    expiration_seconds: i64,
}

/// A number in [0, 1) for the refresh jitter (no randomness crate here: the
/// clock's nanoseconds are random enough for spreading refreshes).
fn rand_fraction() -> f64 {
    f64::from(Timestamp::now().subsec_nanosecond().unsigned_abs() % 1_000_000) / 1_000_000.0
}

/// Writes `files` (relative paths) into `dir` as the kubelet's `AtomicWriter`
/// does: a new timestamped directory, `..data` switched to it by renaming a
/// symlink over it, each visible name a symlink into `..data`, the old
/// directory removed. Unchanged contents are left alone.
pub fn write_atomically(
    dir: &Path,
    files: &BTreeMap<String, Vec<u8>>,
    mode: u32,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let data = dir.join("..data");
    let old = std::fs::read_link(&data).ok();
    if let Some(old) = &old
        && same_contents(&dir.join(old), files)
    {
        return Ok(());
    }
    let stamp = Timestamp::now()
        .strftime("..%Y_%m_%d_%H_%M_%S.")
        .to_string();
    let fresh = tempfile::Builder::new()
        .prefix(&stamp)
        .tempdir_in(dir)?
        .keep();
    std::fs::set_permissions(&fresh, std::fs::Permissions::from_mode(0o755))?;
    for (path, contents) in files {
        let target = fresh.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&target, contents)?;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode))?;
    }
    let name = fresh
        .file_name()
        .ok_or_else(|| std::io::Error::other("the new data directory has no name"))?;
    let tmp = dir.join("..data_tmp");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(name, &tmp)?;
    std::fs::rename(&tmp, &data)?;
    for path in files.keys() {
        // The visible name of a top-level entry (a nested path's first
        // component), pointing into `..data`.
        let top = path.split('/').next().unwrap_or(path);
        let link = dir.join(top);
        if std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(Path::new("..data").join(top), &link)?;
        }
    }
    if let Some(old) = old {
        let _ = std::fs::remove_dir_all(dir.join(old));
    }
    Ok(())
}

fn same_contents(dir: &Path, files: &BTreeMap<String, Vec<u8>>) -> bool {
    files
        .iter()
        .all(|(path, contents)| std::fs::read(dir.join(path)).is_ok_and(|c| c == *contents))
}

/// A container's bind mounts: (volume directory, path in the container).
#[derive(Clone, Debug, Default)]
pub struct Mounts(Vec<(PathBuf, PathBuf)>);

/// [`Mounts`] as C strings, made before `fork` so that the child only makes
/// system calls.
pub struct PreparedMounts(Vec<(CString, CString)>);

impl Mounts {
    /// Whether there is nothing to mount.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Creates the mount points (on the host: a mount needs an existing
    /// directory, and `/var/run/secrets/kubernetes.io/serviceaccount` is an
    /// empty directory under the host's tmpfs `/run`, where nothing else
    /// looks; in-cluster detection needs `KUBERNETES_SERVICE_HOST` and the
    /// token file, which host processes do not have) and the C strings.
    pub fn prepare(&self) -> std::io::Result<PreparedMounts> {
        let c = |p: &Path| {
            CString::new(p.as_os_str().as_bytes()).map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "a path with a NUL byte")
            })
        };
        let mut out = Vec::new();
        for (source, target) in &self.0 {
            std::fs::create_dir_all(target)?;
            out.push((c(source)?, c(target)?));
        }
        Ok(PreparedMounts(out))
    }
}

impl PreparedMounts {
    /// In the child, between `fork` and `exec`: a mount namespace of its own
    /// with each volume bound read-only at its path.
    ///
    /// Why this and not something else: a container runtime gives each
    /// container its own mount namespace, and the node runs as root, so
    /// `unshare(CLONE_NEWNS)` in the forked child is the same mechanism at
    /// the smallest cost (no helper binary, no user namespace, nothing to
    /// clean up: the namespace and its mounts go away with the container's
    /// last process). `/` is made private recursively first, so the binds
    /// never propagate back into the node's namespace (systemd mounts `/`
    /// shared). Writing the files at the fixed path on the host instead
    /// would let pods see each other's tokens. Only `unshare` and `mount`,
    /// both async-signal-safe system calls, run here, on strings made
    /// before the fork.
    pub fn enter(&self) -> std::io::Result<()> {
        if self.0.is_empty() {
            return Ok(());
        }
        let fail = || Err(std::io::Error::last_os_error());
        #[allow(unsafe_code)]
        // SAFETY: plain system calls on NUL-terminated strings that outlive
        // them; no memory of the parent is touched.
        unsafe {
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return fail();
            }
            if libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return fail();
            }
            for (source, target) in &self.0 {
                if libc::mount(
                    source.as_ptr(),
                    target.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ) != 0
                {
                    return fail();
                }
                // Read-only, as the kubelet mounts every projected volume.
                if libc::mount(
                    std::ptr::null(),
                    target.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY,
                    std::ptr::null(),
                ) != 0
                {
                    return fail();
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(pairs: &[(&str, &str)]) -> BTreeMap<String, Vec<u8>> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.as_bytes().to_vec()))
            .collect()
    }

    #[test]
    fn atomic_writes_swap_the_data_link_and_keep_visible_links() {
        let dir = tempfile::tempdir().unwrap();
        let vol = dir.path().join("v");
        write_atomically(
            &vol,
            &files(&[("token", "one"), ("namespace", "ns")]),
            0o644,
        )
        .unwrap();
        let first = std::fs::read_link(vol.join("..data")).unwrap();
        assert!(first.to_string_lossy().starts_with("..20"), "{first:?}");
        assert_eq!(
            std::fs::read_link(vol.join("token")).unwrap(),
            Path::new("..data/token")
        );
        assert_eq!(std::fs::read_to_string(vol.join("token")).unwrap(), "one");
        let mode = std::fs::metadata(vol.join("token"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644);

        // Unchanged: nothing rewritten.
        write_atomically(
            &vol,
            &files(&[("token", "one"), ("namespace", "ns")]),
            0o644,
        )
        .unwrap();
        assert_eq!(std::fs::read_link(vol.join("..data")).unwrap(), first);

        write_atomically(
            &vol,
            &files(&[("token", "two"), ("namespace", "ns")]),
            0o644,
        )
        .unwrap();
        let second = std::fs::read_link(vol.join("..data")).unwrap();
        assert_ne!(second, first);
        assert!(!vol.join(&first).exists(), "the old directory is removed");
        assert!(!vol.join("..data_tmp").exists());
        assert_eq!(std::fs::read_to_string(vol.join("token")).unwrap(), "two");
        let mut names: Vec<String> = std::fs::read_dir(&vol)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with("..20"))
            .collect();
        names.sort();
        assert_eq!(names, ["..data", "namespace", "token"]);
    }

    #[test]
    fn the_service_account_volume_is_read_from_the_pod() {
        let pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p", "namespace": "ns", "uid": "u-1",
                "annotations": {TOKEN_REFRESH_AFTER_MS: "1500"}},
            "spec": {
                "serviceAccountName": "builder",
                "containers": [{"name": "c", "volumeMounts": [
                    {"name": "kube-api-access-x", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true},
                    {"name": "kube-api-access-x", "mountPath": "/elsewhere", "subPath": "token"},
                    {"name": "data", "mountPath": "/data"}
                ]}],
                "volumes": [
                    {"name": "data", "emptyDir": {}},
                    {"name": "default-token-abc", "secret": {"secretName": "default-token-abc", "defaultMode": 420}},
                    {"name": "kube-api-access-x", "projected": {"defaultMode": 420, "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                        {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}}
                    ]}}
                ]
            }
        }))
        .unwrap();
        let volumes = Volumes::of(&pod, Path::new("/scratch"));
        assert_eq!(volumes.volumes.len(), 2);
        assert_eq!(
            volumes.volumes[0].sources,
            [Source::Secret {
                name: "default-token-abc".into(),
                items: vec![],
                optional: false
            }]
        );
        let v = &volumes.volumes[1];
        assert_eq!(v.dir, Path::new("/scratch/volumes/kube-api-access-x"));
        assert_eq!(v.mode, 0o644);
        assert_eq!(
            v.sources,
            [
                Source::Token {
                    path: "token".into(),
                    audience: None,
                    expiration_seconds: 3607
                },
                Source::ConfigMap {
                    name: "kube-root-ca.crt".into(),
                    items: vec![("ca.crt".into(), "ca.crt".into())],
                    optional: false
                },
                Source::Downward(vec![("metadata.namespace".into(), "namespace".into())]),
            ]
        );
        assert_eq!(volumes.service_account, "builder");
        assert_eq!(volumes.field("metadata.namespace").as_deref(), Some("ns"));
        assert_eq!(volumes.refresh_after, Some(Duration::from_millis(1500)));
        let mounts = volumes.mounts_for(&pod.spec.as_ref().unwrap().containers[0]);
        assert_eq!(
            mounts.0,
            [(
                PathBuf::from("/scratch/volumes/kube-api-access-x"),
                PathBuf::from("/var/run/secrets/kubernetes.io/serviceaccount")
            )]
        );
    }

    #[test]
    fn tokens_are_refreshed_at_80_percent_of_their_life_as_the_kubelet_does() {
        let pod = Pod::default();
        let volumes = Volumes::of(&pod, Path::new("/s"));
        let issued: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let token = Issued {
            token: String::new(),
            issued,
            expires: issued.checked_add(Duration::from_secs(3607)).unwrap(),
            expiration_seconds: 3607,
        };
        let at = volumes.refresh_at(&token);
        let after = at.duration_since(issued).as_secs_f64();
        // 80% of 3607 s is 2885.6 s; the jitter takes up to 10 s off.
        assert!((2875.0..=2886.0).contains(&after), "{after}");
    }
}
