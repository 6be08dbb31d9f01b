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
    let dir = crate::target_dir().join("demo-manifests");
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
            .current_dir(crate::project_root())
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
            crate::cluster::up(&state_dir, release, false, 1, None)?
        }
    };
    let on_path = PathForUser::link(state.release()?)?;
    let path = std::env::join_paths(std::iter::once(on_path.dir.clone()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))?;
    let kubectl = |args: &[&str]| -> anyhow::Result<()> {
        println!("\n$ kubectl {}", args.join(" "));
        let status = Command::new("kubectl")
            .args(args)
            .env("PATH", &path)
            .env("KUBECONFIG", &state.kubeconfig)
            .status()
            .context("cannot run kubectl (is it installed?)")?;
        if !status.success() {
            println!("(exit status {})", status.code().unwrap_or(-1));
        }
        Ok(())
    };

    println!("== the plugins, found by kubectl on PATH");
    println!("   ({})", on_path.says());
    kubectl(&["plugin", "list"])?;
    println!("\n== the local cluster: a real kube-apiserver with a simulated node");
    kubectl(&["get", "nodes", "-o", "wide"])?;

    println!("\n== a fresh namespace for the demo");
    let quiet = |args: &[&str]| {
        Command::new("kubectl")
            .args(args)
            .env("PATH", &path)
            .env("KUBECONFIG", &state.kubeconfig)
            .output()
            .map(|o| {
                (
                    o.status.success(),
                    String::from_utf8_lossy(&o.stdout).into_owned(),
                )
            })
    };
    let _ = quiet(&[
        "delete",
        "namespace",
        DEMO_NS,
        "--wait=true",
        "--ignore-not-found",
    ]);
    kubectl(&["create", "namespace", DEMO_NS])?;
    // Pods are admitted once the namespace's ServiceAccount has its token.
    for _ in 0..100 {
        let (ok, out) = quiet(&[
            "get",
            "serviceaccount",
            "default",
            "-n",
            DEMO_NS,
            "-o",
            "jsonpath={.secrets[0].name}",
        ])?;
        if ok && !out.trim().is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }

    println!("\n== kubectl run-pod: what would be created (no request is sent)");
    kubectl(&[
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
    kubectl(&[
        "run-pod",
        "hello",
        "--image=nginx:1.27",
        "--port=80",
        "--expose",
        "-n",
        DEMO_NS,
    ])?;
    kubectl(&[
        "wait",
        "--for=condition=Ready",
        "pod/hello",
        "-n",
        DEMO_NS,
        "--timeout=60s",
    ])?;
    kubectl(&["get", "pods,services", "-n", DEMO_NS])?;

    println!("\n== kubectl create-file: a directory of manifests");
    let manifests = demo_manifests()?;
    kubectl(&[
        "create-file",
        "-f",
        &manifests.to_string_lossy(),
        "-n",
        DEMO_NS,
    ])?;

    println!(
        "\n== kubectl 1.17's classic pair: run-pod --generator=run/v1 makes a ReplicationController,"
    );
    println!(
        "   rolling-update moves it to a new image one pod at a time (--update-period=1s: the default waits 1m per step)"
    );
    kubectl(&[
        "run-pod",
        "web",
        "--generator=run/v1",
        "--image=nginx:1",
        "--replicas=3",
        "-n",
        DEMO_NS,
    ])?;
    kubectl(&[
        "wait",
        "--for=jsonpath={.status.readyReplicas}=3",
        "replicationcontroller/web",
        "-n",
        DEMO_NS,
        "--timeout=60s",
    ])?;
    kubectl(&[
        "rolling-update",
        "web",
        "--image=nginx:2",
        "--update-period=1s",
        "-n",
        DEMO_NS,
    ])?;
    kubectl(&[
        "get",
        "replicationcontrollers,pods",
        "-n",
        DEMO_NS,
        "-L",
        "deployment",
    ])?;

    println!("\n== completion: what `kubectl rolling-update <TAB>` offers");
    kubectl(&["__complete", "rolling-update", "-n", DEMO_NS, ""])?;

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
