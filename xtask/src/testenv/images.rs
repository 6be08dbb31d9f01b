//! The test images (`localcluster::IMAGES`), built once per machine from Debian's
//! packages into a docker registry's storage root (`localcluster::node::image_store`).
//!
//! No image can be downloaded here, so each is made from what the node's packages
//! installed: four root file systems, each a layer tar written here (owner root, one
//! fixed time, so that a rebuild gives the same digests), put together with umoci
//! into one OCI layout, tagged by kind:
//! - `pause`: our static pause (`xtask/testenv/images/pause.c`, `gcc -static`) as
//!   `/pause`, user 65535, as registry.k8s.io's;
//! - `busybox`: `busybox-static`'s `/bin/busybox` with a hard link per applet in
//!   `/bin`, `/etc/passwd` and `/etc/group`, `/root`, `/tmp` (1777), `/var`…;
//!   Cmd `["sh"]`, no entrypoint, as Docker Hub's;
//! - `busybox-tini`: busybox plus `tini-static` at `/sbin/tini` as its entrypoint;
//! - `idler`: busybox-tini whose command waits for SIGTERM and exits 0, port 80/tcp:
//!   every application image of the tests (nginx, web, migrate, …).
//!
//! skopeo then pushes every reference into a `docker-registry` of ours on a free
//! loopback port whose storage is a new directory, reads each back (`skopeo inspect`),
//! and the directory is renamed to the store's name once all are there: a store is
//! complete or absent.

use std::io::Write as _;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use localcluster::IMAGES;
use localcluster::node::{image_store, registry_config, registry_path, store_holds};

use crate::run::{command_line, run_logged};

/// Where `busybox-static` and `tini` put their static programs.
const BUSYBOX: &str = "/bin/busybox";
const TINI_STATIC: &str = "/usr/bin/tini-static";
const REGISTRY: &str = "/usr/bin/docker-registry";
/// Every file's modification time and the images' creation time: fixed, so that the
/// same recipe gives the same digests.
const EPOCH: u64 = 1_767_225_600;
const CREATED: &str = "2026-01-01T00:00:00Z";
const PATH_ENV: &str = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/// The idler's command: tini hands SIGTERM to the shell, whose trap ends it at once
/// (a `sleep` as PID 1's child would die of it with status 143, nginx exits 0).
const IDLE: &str = "trap 'exit 0' TERM INT; sleep 2147483647 & wait";

/// The kinds of image, each one tag of the OCI layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pause,
    Busybox,
    BusyboxTini,
    Idler,
}

impl Kind {
    fn of(reference: &str) -> Self {
        if reference.starts_with("registry.k8s.io/pause:") {
            Kind::Pause
        } else if reference.starts_with("docker.io/library/busybox:") {
            Kind::Busybox
        } else if reference.starts_with("docker.io/kubeplug/busybox-tini:") {
            Kind::BusyboxTini
        } else {
            Kind::Idler
        }
    }

    fn tag(self) -> &'static str {
        match self {
            Kind::Pause => "pause",
            Kind::Busybox => "busybox",
            Kind::BusyboxTini => "busybox-tini",
            Kind::Idler => "idler",
        }
    }
}

/// Builds the image store unless it holds every image already (or `force`).
pub(super) fn ensure(force: bool) -> anyhow::Result<()> {
    let store = image_store();
    if !force && IMAGES.iter().all(|(r, _)| store_holds(&store, r)) {
        eprintln!(
            "testenv: test images available ({} images in {})",
            IMAGES.len(),
            store.display()
        );
        return Ok(());
    }
    let parent = store.parent().context("the image store's directory")?;
    std::fs::create_dir_all(parent)
        .with_context(|| format!("cannot create {}", parent.display()))?;
    let work = tempfile::Builder::new()
        .prefix(".build-")
        .tempdir_in(parent)
        .with_context(|| format!("cannot create a directory in {}", parent.display()))?;
    let log = work.path().join("build.log");
    eprintln!(
        "testenv: building {} test images into {} (log: {})",
        IMAGES.len(),
        store.display(),
        log.display()
    );
    let oci = work.path().join("oci");
    layout(work.path(), &oci, &log)?;
    let staged = work.path().join("store");
    {
        let registry = Registry::start(&staged, work.path())?;
        for (reference, _) in IMAGES {
            push(&oci, reference, &registry.addr, &log)?;
        }
        for (reference, _) in IMAGES {
            verify(reference, &registry.addr)?;
        }
    }
    if let Some((reference, _)) = IMAGES.iter().find(|(r, _)| !store_holds(&staged, r)) {
        bail!(
            "the registry answered for {reference} but its storage {} does not hold it",
            staged.display()
        );
    }
    if store.exists() {
        std::fs::remove_dir_all(&store)
            .with_context(|| format!("cannot remove {}", store.display()))?;
    }
    std::fs::rename(&staged, &store)
        .with_context(|| format!("cannot move the images into {}", store.display()))?;
    eprintln!("testenv: test images built into {}", store.display());
    Ok(())
}

/// The OCI layout at `oci` with one tag per [`Kind`].
fn layout(work: &Path, oci: &Path, log: &Path) -> anyhow::Result<()> {
    let pause = compile_pause(work, log)?;
    let layers = work.join("layers");
    std::fs::create_dir_all(&layers)?;
    let pause_tar = layers.join("pause.tar");
    write_layer(&pause_tar, |layer| layer.file("pause", 0o755, &pause))?;
    let busybox_tar = layers.join("busybox.tar");
    write_layer(&busybox_tar, busybox_root)?;
    let tini_tar = layers.join("tini.tar");
    write_layer(&tini_tar, |layer| {
        let tini = read(Path::new(TINI_STATIC))?;
        layer.dir("sbin", 0o755)?;
        layer.file("sbin/tini", 0o755, &tini)
    })?;

    let umoci = |args: &[&str]| {
        let mut cmd = Command::new("umoci");
        cmd.args(args);
        run_logged(&mut cmd, log)
    };
    let image = |kind: Kind| format!("{}:{}", oci.display(), kind.tag());
    let fixed = [
        "--no-history",
        "--created",
        CREATED,
        "--os=linux",
        "--architecture=amd64",
    ];
    let config = |kind: Kind, settings: &[&str]| {
        let mut args = vec!["config", "--image"];
        let name = image(kind);
        args.push(&name);
        args.extend(fixed);
        args.extend(settings);
        umoci(&args)
    };
    umoci(&["init", "--layout", &oci.display().to_string()])?;
    for (kind, layer) in [(Kind::Pause, &pause_tar), (Kind::Busybox, &busybox_tar)] {
        umoci(&["new", "--image", &image(kind)])?;
        let tar = layer.display().to_string();
        umoci(&[
            "raw",
            "add-layer",
            "--no-history",
            "--image",
            &image(kind),
            &tar,
        ])?;
    }
    config(
        Kind::Pause,
        &["--config.entrypoint=/pause", "--config.user=65535:65535"],
    )?;
    config(
        Kind::Busybox,
        &[&format!("--config.env={PATH_ENV}"), "--config.cmd=sh"],
    )?;
    let tini = tini_tar.display().to_string();
    let (busybox, tini_tag) = (image(Kind::Busybox), Kind::BusyboxTini.tag());
    let add_tini = [
        "raw",
        "add-layer",
        "--no-history",
        "--image",
        &busybox,
        "--tag",
        tini_tag,
        &tini,
    ];
    umoci(&add_tini)?;
    let entrypoint = ["--config.entrypoint=/sbin/tini", "--config.entrypoint=--"];
    config(
        Kind::BusyboxTini,
        &[&entrypoint[..], &["--config.cmd=sh"]].concat(),
    )?;
    let idler = [
        "--tag",
        Kind::Idler.tag(),
        "--config.cmd=sh",
        "--config.cmd=-c",
        &format!("--config.cmd={IDLE}"),
        "--config.exposedports=80/tcp",
    ];
    config(Kind::BusyboxTini, &idler)
}

/// Compiles `pause.c` into `work/pause`, static and stripped; returns the binary.
fn compile_pause(work: &Path, log: &Path) -> anyhow::Result<Vec<u8>> {
    let source = crate::paths::project_root().join("xtask/testenv/images/pause.c");
    let out = work.join("pause");
    let mut gcc = Command::new("gcc");
    gcc.args(["-static", "-Os", "-s", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&out)
        .arg(&source);
    run_logged(&mut gcc, log).context("compiling the pause program failed (gcc and libc6-dev?)")?;
    read(&out)
}

fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// The busybox image's root file system: Debian's static busybox, a hard link to it
/// per applet in `/bin` (as Docker Hub's image has them), and the few files and
/// directories programs expect.
fn busybox_root(layer: &mut Layer) -> anyhow::Result<()> {
    let busybox = read(Path::new(BUSYBOX))?;
    let listed = Command::new(BUSYBOX)
        .arg("--list")
        .output()
        .with_context(|| format!("cannot run {BUSYBOX} --list"))?;
    if !listed.status.success() {
        bail!("`{BUSYBOX} --list` failed ({})", listed.status);
    }
    let applets = String::from_utf8(listed.stdout).context("busybox's applet list")?;
    for (dir, mode) in [
        ("bin", 0o755),
        ("dev", 0o755),
        ("etc", 0o755),
        ("home", 0o755),
        ("proc", 0o555),
        ("root", 0o700),
        ("sys", 0o555),
        ("tmp", 0o1777),
        ("usr", 0o755),
        ("usr/sbin", 0o755),
        ("var", 0o755),
        ("var/spool", 0o755),
        ("var/spool/mail", 0o755),
        ("var/www", 0o755),
    ] {
        layer.dir(dir, mode)?;
    }
    layer.file("bin/busybox", 0o755, &busybox)?;
    for applet in applets.lines().map(str::trim) {
        // Only plain names: a list entry is never a path, but the tar must not say so.
        if applet.is_empty() || applet == "busybox" || applet.contains('/') {
            continue;
        }
        layer.hard_link(&format!("bin/{applet}"), "bin/busybox")?;
    }
    layer.file("etc/passwd", 0o644, PASSWD.as_bytes())?;
    layer.file("etc/group", 0o644, GROUP.as_bytes())
}

/// Docker Hub busybox's users: root, the system accounts, and nobody.
const PASSWD: &str = "root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
bin:x:2:2:bin:/bin:/bin/false
sys:x:3:3:sys:/dev:/bin/false
sync:x:4:100:sync:/bin:/bin/sync
mail:x:8:8:mail:/var/spool/mail:/bin/false
www-data:x:33:33:www-data:/var/www:/bin/false
operator:x:37:37:Operator:/var:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
";
const GROUP: &str = "root:x:0:
daemon:x:1:
bin:x:2:
sys:x:3:
adm:x:4:
tty:x:5:
disk:x:6:
mail:x:8:
wheel:x:10:root
www-data:x:33:
operator:x:37:
users:x:100:
nogroup:x:65534:
";

/// A layer tar being written: every entry owned by root, at [`EPOCH`].
struct Layer {
    tar: tar::Builder<std::fs::File>,
}

impl Layer {
    fn header(kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
        let mut header = tar::Header::new_ustar();
        header.set_entry_type(kind);
        header.set_mode(mode);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(EPOCH);
        header.set_size(size);
        header
    }

    fn dir(&mut self, path: &str, mode: u32) -> anyhow::Result<()> {
        let mut header = Self::header(tar::EntryType::Directory, mode, 0);
        self.tar
            .append_data(&mut header, format!("{path}/"), std::io::empty())?;
        Ok(())
    }

    fn file(&mut self, path: &str, mode: u32, data: &[u8]) -> anyhow::Result<()> {
        let mut header = Self::header(tar::EntryType::Regular, mode, data.len() as u64);
        self.tar.append_data(&mut header, path, data)?;
        Ok(())
    }

    fn hard_link(&mut self, path: &str, target: &str) -> anyhow::Result<()> {
        let mut header = Self::header(tar::EntryType::Link, 0o755, 0);
        self.tar.append_link(&mut header, path, target)?;
        Ok(())
    }
}

/// Writes the layer tar at `path` with `fill`.
fn write_layer(
    path: &Path,
    fill: impl FnOnce(&mut Layer) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut layer = Layer {
        tar: tar::Builder::new(file),
    };
    fill(&mut layer).with_context(|| format!("cannot write {}", path.display()))?;
    let mut file = layer.tar.into_inner()?;
    file.flush()?;
    Ok(())
}

/// Pushes `reference` (its kind's tag of the layout) into the registry at `addr`.
fn push(oci: &Path, reference: &str, addr: &str, log: &Path) -> anyhow::Result<()> {
    let (repository, tag) =
        registry_path(reference).with_context(|| format!("{reference} is not qualified"))?;
    let mut copy = Command::new("skopeo");
    copy.args([
        "--insecure-policy",
        "copy",
        "--quiet",
        "--dest-tls-verify=false",
    ])
    .arg(format!(
        "oci:{}:{}",
        oci.display(),
        Kind::of(reference).tag()
    ))
    .arg(format!("docker://{addr}/{repository}:{tag}"));
    run_logged(&mut copy, log).with_context(|| format!("pushing {reference} failed"))
}

/// Reads `reference` back from the registry: a linux/amd64 image.
fn verify(reference: &str, addr: &str) -> anyhow::Result<()> {
    let (repository, tag) =
        registry_path(reference).with_context(|| format!("{reference} is not qualified"))?;
    let mut inspect = Command::new("skopeo");
    inspect
        .args(["inspect", "--tls-verify=false"])
        .arg(format!("docker://{addr}/{repository}:{tag}"));
    let out = inspect
        .output()
        .with_context(|| format!("cannot run {}", command_line(&inspect)))?;
    if !out.status.success() {
        bail!(
            "`{}` failed ({}): {}",
            command_line(&inspect),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let found: serde_json::Value = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("{}: not JSON", command_line(&inspect)))?;
    let platform = (found["Os"].as_str(), found["Architecture"].as_str());
    if platform != (Some("linux"), Some("amd64")) {
        bail!("{reference} in the new store is {platform:?}, not linux/amd64");
    }
    Ok(())
}

/// A `docker-registry` of ours on a free loopback port, writing into a storage root;
/// stopped when dropped.
struct Registry {
    child: Child,
    addr: String,
}

impl Registry {
    fn start(store: &Path, work: &Path) -> anyhow::Result<Self> {
        std::fs::create_dir_all(store)?;
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let addr = format!("127.0.0.1:{port}");
        let config = work.join("registry.yml");
        std::fs::write(&config, registry_config(store, &addr, false))?;
        let log = work.join("registry.log");
        let out = std::fs::File::create(&log)?;
        let child = Command::new(REGISTRY)
            .arg("serve")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .with_context(|| format!("cannot run {REGISTRY} (is docker-registry installed?)"))?;
        let mut registry = Self { child, addr };
        registry.wait_listening(&log)?;
        Ok(registry)
    }

    /// Waits until the registry accepts connections, or says why it never will.
    fn wait_listening(&mut self, log: &Path) -> anyhow::Result<()> {
        let addr: SocketAddr = self.addr.parse()?;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            if let Some(status) = self.child.try_wait()? {
                bail!(
                    "{REGISTRY} exited ({status}); last lines of {}:\n{}",
                    log.display(),
                    localcluster::process::tail(log, 25)
                );
            }
            if Instant::now() > deadline {
                bail!("{REGISTRY} did not listen on {} within 30 s", self.addr);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_image_has_its_kind() {
        let kind = |r: &str| Kind::of(r);
        assert_eq!(kind(localcluster::SANDBOX_IMAGE), Kind::Pause);
        assert_eq!(kind("registry.k8s.io/pause:3.7"), Kind::Pause);
        assert_eq!(kind("docker.io/library/busybox:1.36"), Kind::Busybox);
        assert_eq!(kind("docker.io/kubeplug/busybox-tini:1"), Kind::BusyboxTini);
        assert_eq!(kind("docker.io/library/nginx:1.27"), Kind::Idler);
        // A name that merely starts like busybox's is an application image.
        assert_eq!(kind("docker.io/library/busybox-like:1"), Kind::Idler);
    }

    #[test]
    fn a_layer_is_owned_by_root_at_one_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("layer.tar");
        write_layer(&path, |layer| {
            layer.dir("tmp", 0o1777)?;
            layer.file("bin/busybox", 0o755, b"#!")?;
            layer.hard_link("bin/sh", "bin/busybox")
        })
        .unwrap();
        let mut archive = tar::Archive::new(std::fs::File::open(&path).unwrap());
        let entries: Vec<_> = archive
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let h = e.header();
                (
                    e.path().unwrap().display().to_string(),
                    h.entry_type(),
                    h.mode().unwrap(),
                    (h.uid().unwrap(), h.gid().unwrap(), h.mtime().unwrap()),
                    e.link_name().unwrap().map(|l| l.display().to_string()),
                )
            })
            .collect();
        let owner = (0, 0, EPOCH);
        assert_eq!(
            entries,
            [
                (
                    "tmp/".into(),
                    tar::EntryType::Directory,
                    0o1777,
                    owner,
                    None
                ),
                (
                    "bin/busybox".into(),
                    tar::EntryType::Regular,
                    0o755,
                    owner,
                    None
                ),
                (
                    "bin/sh".into(),
                    tar::EntryType::Link,
                    0o755,
                    owner,
                    Some("bin/busybox".into())
                ),
            ]
        );
    }
}
