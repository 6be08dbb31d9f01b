//! Distribution, end to end: `cargo xtask install --prefix TMP` lays the plugins out
//! the way krew does, and the real `kubectl`, with only TMP/bin added to PATH, finds
//! them, runs them (exit codes unchanged), and completes their arguments through the
//! `kubectl_complete-*` helpers — ReplicationController and namespace names included,
//! from the local cluster.
//!
//! The install uses the dev profile: these tests are about the layout and kubectl's
//! lookup, and `cargo xtask test` has just built the dev binaries, whereas the release
//! profile (LTO) would add minutes of building (see CONTRIBUTING.md).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use k8s_openapi::api::core::v1::{
    Container, PodSpec, PodTemplateSpec, ReplicationController, ReplicationControllerSpec,
};
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use tests::harness::{Output, PLUGINS, cluster, plugin_binary};

/// The install, done once per test run: its prefix.
fn installed() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root")
            .to_path_buf();
        // In the target directory, so nothing is left in /tmp.
        let prefix = tests::harness::target_bin_dir().join("e2e-install");
        let _ = std::fs::remove_dir_all(&prefix);
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = Command::new(cargo)
            .current_dir(&root)
            .args(["xtask", "install", "--profile", "dev", "--prefix"])
            .arg(&prefix)
            .arg("--out")
            .arg(prefix.with_extension("dist"))
            .output()
            .expect("run cargo xtask install");
        assert!(
            out.status.success(),
            "cargo xtask install failed\n--- stdout\n{}\n--- stderr\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!(
                "export PATH=\"{}:$PATH\"",
                prefix.join("bin").display()
            )),
            "install prints the PATH to add:\n{stdout}"
        );
        prefix
    })
}

/// Runs `kubectl` with PATH = the install's bin directory + the directory of the
/// release's own kubectl (nothing else, so no other plugin or kubectl on the machine
/// can interfere).
fn kubectl(args: &[&str], kubeconfig: &Path) -> Output {
    run(Path::new("kubectl"), args, kubeconfig)
}

fn run(program: &Path, args: &[&str], kubeconfig: &Path) -> Output {
    let cluster = cluster();
    // The release's kubectl (on 1.20.2, the installed one, found on PATH).
    let kubectl = which::which(&cluster.kubectl_binary).expect("the reference kubectl");
    let path = std::env::join_paths([
        installed().join("bin"),
        kubectl.parent().expect("kubectl's directory").to_path_buf(),
    ])
    .expect("PATH");
    cluster.check_kubectl_on(&path);
    let out = Command::new(program)
        .args(args)
        .env("PATH", path)
        .env("KUBECONFIG", kubeconfig)
        .env("NO_PROXY", "127.0.0.1,localhost")
        .output()
        .expect("run command");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn install_lays_out_the_plugins_like_krew() {
    let prefix = installed();
    for plugin in PLUGINS {
        let bin = plugin_binary(plugin);
        let link = prefix.join("bin").join(&bin);
        let target = std::fs::read_link(&link).expect("the plugin is a link");
        assert!(
            target.starts_with(prefix.join("store").join(plugin)),
            "{} -> {}",
            link.display(),
            target.display()
        );
        let version_dir = target.parent().expect("version directory");
        assert!(version_dir.join("LICENSE").is_file(), "license installed");
        assert!(
            prefix
                .join("receipts")
                .join(format!("{plugin}.yaml"))
                .is_file(),
            "krew receipt"
        );
        let helper = prefix
            .join("bin")
            .join(format!("kubectl_complete-{}", plugin.replace('-', "_")));
        assert_eq!(
            std::fs::read_link(&helper).expect("completion helper is a link"),
            PathBuf::from(&bin)
        );
    }
}

#[test]
fn kubectl_plugin_list_shows_the_three_without_warnings() {
    let prefix = installed();
    let out = kubectl(&["plugin", "list"], &cluster().kubeconfig);
    out.success();
    for plugin in PLUGINS {
        let link = prefix.join("bin").join(plugin_binary(plugin));
        assert!(
            out.stdout.contains(&link.display().to_string()),
            "{plugin} listed:\n{}",
            out.stdout
        );
    }
    assert!(
        !out.stdout.contains("kubectl_complete"),
        "helpers are not plugins:\n{}",
        out.stdout
    );
    assert_eq!(out.stderr, "", "no warnings");
}

#[test]
fn help_reaches_our_binaries() {
    let prefix = installed();
    let kubeconfig = &cluster().kubeconfig;
    for plugin in PLUGINS {
        let through = kubectl(&[plugin, "--help"], kubeconfig);
        through.success();
        // Byte for byte what the installed binary prints (its usage line may name it
        // by its file name, so compare with the link kubectl runs).
        let direct = run(
            &prefix.join("bin").join(plugin_binary(plugin)),
            &["--help"],
            kubeconfig,
        );
        assert_eq!(through.stdout, direct.stdout, "kubectl {plugin} --help");
        assert!(
            through.stdout.contains("--kubeconfig"),
            "{}",
            through.stdout
        );
    }
}

#[test]
fn exit_codes_pass_through_kubectl_unchanged() {
    let prefix = installed();
    let kubeconfig = &cluster().kubeconfig;
    for plugin in PLUGINS {
        let direct = prefix.join("bin").join(plugin_binary(plugin));
        for args in [
            &["--no-such-flag"][..],
            &["completion"][..],
            &["--help"][..],
        ] {
            let through = kubectl(&[&[plugin][..], args].concat(), kubeconfig);
            let alone = run(&direct, args, kubeconfig);
            assert_eq!(
                through.code, alone.code,
                "kubectl {plugin} {args:?}\n--- kubectl\n{}\n--- direct\n{}",
                through.stderr, alone.stderr
            );
            if args != ["--help"] {
                assert_ne!(alone.code, 0, "{plugin} {args:?} fails");
            }
        }
    }
}

fn rc(name: &str) -> ReplicationController {
    let labels = BTreeMap::from([("app".to_string(), name.to_string())]);
    ReplicationController {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: Some(ReplicationControllerSpec {
            replicas: Some(0),
            selector: Some(labels.clone()),
            template: Some(PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "web".into(),
                        image: Some("registry.k8s.io/pause:3.9".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The candidates of a `kubectl __complete` answer, and its directive.
fn candidates(out: &Output) -> (Vec<String>, String) {
    out.success();
    let mut lines: Vec<String> = out.stdout.lines().map(str::to_string).collect();
    let directive = lines.pop().unwrap_or_default();
    let values = lines
        .into_iter()
        .map(|l| l.split('\t').next().unwrap_or_default().to_string())
        .collect();
    (values, directive)
}

#[tokio::test]
async fn completion_lists_replication_controllers_and_namespaces_from_the_cluster() {
    installed();
    let cluster = cluster();
    let ns = cluster.namespace("dist-complete").await;
    let rcs: Api<ReplicationController> = Api::namespaced(cluster.client().await, ns.as_str());
    for name in ["frontend", "backend"] {
        rcs.create(&PostParams::default(), &rc(name))
            .await
            .expect("create rc");
    }
    let kubeconfig = &cluster.kubeconfig;

    // `-n` given: the names in that namespace, sorted, filtered by the typed prefix.
    let (values, directive) = candidates(&kubectl(
        &["__complete", "rolling-update", "-n", ns.as_str(), ""],
        kubeconfig,
    ));
    assert_eq!(directive, ":4");
    assert_eq!(&values[..2], ["backend", "frontend"], "{values:?}");
    let (values, _) = candidates(&kubectl(
        &["__complete", "rolling-update", "-n", ns.as_str(), "fr"],
        kubeconfig,
    ));
    assert_eq!(values, ["frontend"]);

    // No `-n`: the context's namespace, as kubectl would use.
    let dir = tempfile::tempdir().expect("tempdir");
    let own = dir.path().join("kubeconfig");
    std::fs::copy(kubeconfig, &own).expect("copy kubeconfig");
    kubectl(
        &[
            "config",
            "set-context",
            "--current",
            "--namespace",
            ns.as_str(),
        ],
        &own,
    )
    .success();
    let (values, _) = candidates(&kubectl(&["__complete", "rolling-update", ""], &own));
    assert!(
        values.contains(&"frontend".to_string()) && values.contains(&"backend".to_string()),
        "{values:?}"
    );

    // Namespaces for -n.
    let (values, _) = candidates(&kubectl(
        &["__complete", "rolling-update", "-n", "e2e-dist"],
        kubeconfig,
    ));
    assert!(values.contains(&ns.name), "{values:?}");

    // Context names from the kubeconfig, and flag names, for every plugin.
    let (values, _) = candidates(&kubectl(
        &["__complete", "run-pod", "--context", "kubeplug-"],
        kubeconfig,
    ));
    assert_eq!(values, ["kubeplug-admin", "kubeplug-limited"]);
    let (values, directive) = candidates(&kubectl(
        &["__complete", "create-file", "--kubec"],
        kubeconfig,
    ));
    assert_eq!(
        (values, directive.as_str()),
        (vec!["--kubeconfig".to_string()], ":4")
    );
}

#[test]
fn completion_is_silent_when_the_cluster_is_unreachable() {
    installed();
    let dir = tempfile::tempdir().expect("tempdir");
    let broken = dir.path().join("kubeconfig");
    std::fs::write(
        &broken,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\nusers:\n- name: u\n  user: {token: t}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n",
    )
    .expect("write kubeconfig");
    let out = kubectl(&["__complete", "rolling-update", ""], &broken);
    assert_eq!(candidates(&out).0, Vec::<String>::new());
}

/// The commands of the ```sh block after `<!-- recipe: NAME -->` in
/// docs/install-in-ci.md, one per line.
fn recipe(name: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root");
    let doc =
        std::fs::read_to_string(root.join("docs/install-in-ci.md")).expect("docs/install-in-ci.md");
    let marker = format!("<!-- recipe: {name} -->");
    let after = doc
        .split_once(&marker)
        .unwrap_or_else(|| panic!("docs/install-in-ci.md has no {marker}"))
        .1;
    let block = after
        .split_once("```sh\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .unwrap_or_else(|| panic!("no ```sh block after {marker}"))
        .0;
    block.lines().map(str::to_owned).collect()
}

/// `NAME=value` of a recipe.
fn assignment<'a>(lines: &'a [String], name: &str) -> &'a str {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("the recipe sets {name}"))
}

/// Runs `script` with bash in `dir`, with `env` and a minimal PATH.
fn bash(dir: &Path, script: &str, env: &[(&str, &Path)], path: &str) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(script)
        .current_dir(dir)
        .env_clear()
        .env("PATH", path);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run bash");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn the_install_in_ci_recipes_work() {
    // The archives and manifests `cargo xtask dist` made for the install above.
    let dist = installed().with_extension("dist");
    let work = tests::harness::target_bin_dir().join("e2e-recipes");
    let _ = std::fs::remove_dir_all(&work);
    let system_path = "/usr/local/bin:/usr/bin:/bin";

    // From the release archives: every line but the downloads, on copies of them.
    let lines = recipe("archives");
    let archive = format!(
        "kubeplug-{}-{}.tar.gz",
        assignment(&lines, "VERSION"),
        assignment(&lines, "TARGET")
    );
    assert!(
        dist.join(&archive).is_file(),
        "docs/install-in-ci.md installs {archive}, which `cargo xtask dist` did not build (in {})",
        dist.display()
    );
    let script: String = lines
        .iter()
        .filter(|l| !l.trim_start().starts_with("curl "))
        .map(|l| format!("{l}\n"))
        .collect();
    let sums = std::fs::read_to_string(dist.join("sha256sums.txt")).unwrap();
    for (case, sums) in [
        ("good", sums.clone()),
        // A digest that does not match: the job must stop before installing.
        ("tampered", sums.replace(&sums[..8], "00000000")),
    ] {
        let dir = work.join(case);
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::copy(dist.join(&archive), dir.join(&archive)).unwrap();
        std::fs::write(dir.join("sha256sums.txt"), sums).unwrap();
        let out = bash(&dir, &script, &[("HOME", &home)], system_path);
        if case == "tampered" {
            assert_ne!(out.code, 0, "a wrong checksum fails the recipe:\n{out:?}");
            assert!(!home.join(".local/bin/kubectl-run_pod").exists());
            continue;
        }
        assert_eq!(out.code, 0, "{out:?}");
        for plugin in PLUGINS {
            let installed = home.join(".local/bin").join(plugin_binary(plugin));
            assert!(
                out.stdout.contains(&installed.display().to_string()),
                "kubectl plugin list shows {}:\n{out:?}",
                installed.display()
            );
        }
    }

    // With krew: the index lines replaced by installs from the manifests and the
    // archive (`--manifest`/`--archive`: krew still checks the digest).
    let krew = localcluster::krew_binary();
    assert!(
        krew.is_file(),
        "{} is missing: run `cargo xtask testenv`",
        krew.display()
    );
    let mut script = String::new();
    for line in recipe("krew") {
        if line.contains("krew index add") {
            continue;
        }
        if line.contains("krew install kubeplug/") {
            for plugin in PLUGINS {
                script.push_str(&format!(
                    "kubectl krew install --manifest=\"$DIST/krew/{plugin}.yaml\" --archive=\"$DIST/{archive}\"\n"
                ));
            }
            continue;
        }
        script.push_str(&line);
        script.push('\n');
    }
    let dir = work.join("krew");
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let path = format!("{}:{system_path}", krew.parent().unwrap().display());
    let out = bash(&dir, &script, &[("HOME", &home), ("DIST", &dist)], &path);
    assert_eq!(out.code, 0, "{out:?}");
    for plugin in PLUGINS {
        let installed = home.join(".krew/bin").join(plugin_binary(plugin));
        assert!(
            out.stdout.contains(&installed.display().to_string()),
            "kubectl plugin list shows {}:\n{out:?}",
            installed.display()
        );
    }
}
