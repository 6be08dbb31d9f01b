//! `cargo xtask demo`: bring up the local cluster, put the plugins and the release's own
//! kubectl first on PATH, and run each plugin through that kubectl, the way a user would.

use std::path::PathBuf;
use std::process::Command;

use anyhow::Context;

use crate::cluster::PathForUser;
use crate::flags;

const DEMO_NS: &str = "kubeplug-demo";

/// A ConfigMap and a ReplicationController for the create-file step.
fn demo_manifests() -> anyhow::Result<PathBuf> {
    let dir = crate::paths::target_dir().join("demo-manifests");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("config.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: frontend-config\ndata:\n  greeting: hello\n",
    )?;
    std::fs::write(
        dir.join("frontend.yaml"),
        r#"apiVersion: v1
kind: ReplicationController
metadata:
  name: frontend
spec:
  replicas: 3
  selector: {app: frontend}
  template:
    metadata:
      labels: {app: frontend}
    spec:
      containers:
      - name: nginx
        image: nginx:1.26
"#,
    )?;
    Ok(dir)
}

pub fn run(flags: &flags::Demo) -> anyhow::Result<()> {
    crate::run::run(
        Command::new(env!("CARGO"))
            .current_dir(crate::paths::project_root())
            .args(["build", "--quiet", "--workspace", "--bins"]),
    )?;
    let state_dir = crate::cluster::default_state_dir();
    let state = match crate::cluster::running(&state_dir)? {
        Some(state) => {
            eprintln!("demo: using the running cluster ({})", state.server);
            state
        }
        None => {
            // Only the release the demo runs is built if missing: neither the other
            // release nor krew, which only the tests need.
            let release = localcluster::Release::from_env()?;
            crate::cluster::ensure_release(release)?;
            crate::cluster::up(&state_dir, release, 1)?
        }
    };
    let release = state.release()?;
    let on_path = PathForUser::link(release)?;
    let path = std::env::join_paths(std::iter::once(on_path.dir.clone()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))?;
    let session = Session {
        path,
        kubeconfig: state.kubeconfig.clone(),
        release,
    };
    println!("== the plugins, found by kubectl on PATH");
    println!("   ({})", on_path.says());
    session.kubectl(&["plugin", "list"])?;
    println!(
        "\n== the local cluster: a real kube-apiserver with a real node (kubelet + containerd)"
    );
    session.kubectl(&["get", "nodes", "-o", "wide"])?;
    session.fresh_namespace()?;
    session.run_pod()?;
    println!("\n== kubectl create-file: a directory of manifests");
    let manifests = demo_manifests()?;
    session.kubectl(&[
        "create-file",
        "-f",
        &manifests.to_string_lossy(),
        "-n",
        DEMO_NS,
    ])?;
    session.rolling_update()?;
    println!("\n== completion: what `kubectl rolling-update <TAB>` offers");
    session.kubectl(&["__complete", "rolling-update", "-n", DEMO_NS, ""])?;

    if flags.down {
        crate::cluster::down(&state_dir)?;
    } else {
        println!(
            "\nThe cluster keeps running. Try it yourself ({}):\n  export KUBECONFIG={}\n  export PATH={}:$PATH\nStop it with `cargo xtask cluster down`.",
            on_path.says(),
            state.kubeconfig.display(),
            on_path.dir.display()
        );
    }
    Ok(())
}

/// kubectl as the demo's user runs it: the release's own kubectl and the plugins first
/// on `PATH`, the demo cluster's kubeconfig.
struct Session {
    path: std::ffi::OsString,
    kubeconfig: PathBuf,
    release: localcluster::Release,
}

impl Session {
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("kubectl");
        cmd.args(args)
            .env("PATH", &self.path)
            .env("KUBECONFIG", &self.kubeconfig);
        cmd
    }

    /// Shows the command line, then runs it with its output on the terminal.
    fn kubectl(&self, args: &[&str]) -> anyhow::Result<()> {
        println!("\n$ kubectl {}", args.join(" "));
        let status = self
            .command(args)
            .status()
            .context("cannot run kubectl (is it installed?)")?;
        if !status.success() {
            println!("(exit status {})", status.code().unwrap_or(-1));
        }
        Ok(())
    }

    /// Runs without showing anything: whether it succeeded, and its stdout.
    fn quiet(&self, args: &[&str]) -> std::io::Result<(bool, String)> {
        self.command(args).output().map(|o| {
            (
                o.status.success(),
                String::from_utf8_lossy(&o.stdout).into_owned(),
            )
        })
    }

    /// The demo's namespace, new, with the ServiceAccount pods need.
    fn fresh_namespace(&self) -> anyhow::Result<()> {
        println!("\n== a fresh namespace for the demo");
        let _ = self.quiet(&[
            "delete",
            "namespace",
            DEMO_NS,
            "--wait=true",
            "--ignore-not-found",
        ]);
        self.kubectl(&["create", "namespace", DEMO_NS])?;
        // Pods are admitted once the namespace's ServiceAccount exists, and before 1.24
        // once it has its token Secret (since 1.24 none is made: pods get projected
        // tokens, and waiting for one would always take the whole 10 s).
        let ready = if self.release.minor() < 24 {
            "jsonpath={.secrets[0].name}"
        } else {
            "jsonpath={.metadata.name}"
        };
        for _ in 0..100 {
            let (ok, out) = self.quiet(&[
                "get",
                "serviceaccount",
                "default",
                "-n",
                DEMO_NS,
                "-o",
                ready,
            ])?;
            if ok && !out.trim().is_empty() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        Ok(())
    }

    /// run-pod: a client dry run, then a pod and its service.
    fn run_pod(&self) -> anyhow::Result<()> {
        println!("\n== kubectl run-pod: what would be created (no request is sent)");
        self.kubectl(&[
            "run-pod",
            "web",
            "--image=nginx:1.27",
            "--port=80",
            "-n",
            DEMO_NS,
            "--dry-run=client",
            "-o",
            "yaml",
        ])?;
        // Named `hello`, not `web`: the pod's `run=web` label would be adopted by the
        // `run=web` ReplicationController of the rolling-update step.
        println!("\n== kubectl run-pod: a pod and its service");
        self.kubectl(&[
            "run-pod",
            "hello",
            "--image=nginx:1.27",
            "--port=80",
            "--expose",
            "-n",
            DEMO_NS,
        ])?;
        self.kubectl(&[
            "wait",
            "--for=condition=Ready",
            "pod/hello",
            "-n",
            DEMO_NS,
            "--timeout=60s",
        ])?;
        self.kubectl(&["get", "pods,services", "-n", DEMO_NS])?;
        Ok(())
    }

    /// kubectl 1.17's pair: run-pod's ReplicationController, moved to a new image by
    /// rolling-update.
    fn rolling_update(&self) -> anyhow::Result<()> {
        println!(
            "\n== kubectl 1.17's classic pair: run-pod --generator=run/v1 makes a ReplicationController,"
        );
        println!(
            "   rolling-update moves it to a new image one pod at a time (--update-period=1s: the default waits 1m per step)"
        );
        self.kubectl(&[
            "run-pod",
            "web",
            "--generator=run/v1",
            "--image=nginx:1",
            "--replicas=3",
            "-n",
            DEMO_NS,
        ])?;
        self.kubectl(&[
            "wait",
            "--for=jsonpath={.status.readyReplicas}=3",
            "replicationcontroller/web",
            "-n",
            DEMO_NS,
            "--timeout=60s",
        ])?;
        self.kubectl(&[
            "rolling-update",
            "web",
            "--image=nginx:2",
            "--update-period=1s",
            "-n",
            DEMO_NS,
        ])?;
        self.kubectl(&[
            "get",
            "replicationcontrollers,pods",
            "-n",
            DEMO_NS,
            "-L",
            "deployment",
        ])?;
        Ok(())
    }
}
