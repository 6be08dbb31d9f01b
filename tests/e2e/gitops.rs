//! The layouts of GitOps repositories, from the project's own fixtures in
//! `tests/gitops/`, through `kubectl create` and `kubectl create-file` (run by
//! kubectl's plugin lookup, so `-k` builds with the same kubectl, `KUBECTL_PATH`),
//! compared byte for byte: exit code, stdout and stderr (klog's time, process id and
//! source line masked, as no two runs share them).
//!
//! - `overlays-deprecated/`: a base and overlays with kustomize's deprecated fields
//!   (`commonLabels`, `patchesStrategicMerge`, `patchesJson6902`, `vars` with one
//!   never replaced, `sortOptions`): the `# Warning:` lines and klog's notices on
//!   success.
//! - `component-patch-fails/`: overlays whose build fails (a component's patch file
//!   that is not there, a JSON patch that removes a missing key), after warnings:
//!   kustomize's error unwrapped, the warnings before it.
//! - `crs-before-errors/`: a tree with custom resources of kinds no CRD defines
//!   before other errors (another namespace than `-n`, `metadata.labels` that is not
//!   a map, a name the server refuses, a document without `kind`, a List of unknown
//!   kinds): kubectl's order and grouping of several errors.
//!
//! Every run is a server dry run in a namespace of its own, so the two commands see
//! the same server.

use std::path::{Path, PathBuf};

use tests::harness::{Output, cluster};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("gitops")
}

/// `stderr` with klog's header masked (`tests::klog`), and kustomize's list of unused
/// vars sorted: kustomize builds it from a Go map, so its order changes from run to run
/// in kubectl itself (`kubectl kustomize` printed `WEB_SERVICE,SETTINGS_MODE` once and
/// `SETTINGS_MODE,WEB_SERVICE` five times in six runs).
fn masked(stderr: &str) -> String {
    const UNUSED: &str = "well-defined vars that were never replaced: ";
    tests::klog::normalise(stderr)
        .into_iter()
        .map(|l| match l.split_once(UNUSED) {
            Some((head, names)) => {
                let mut names: Vec<&str> = names.split(',').collect();
                names.sort_unstable();
                format!("{head}{UNUSED}{}\n", names.join(","))
            }
            None => l + "\n",
        })
        .collect()
}

/// Runs `args` through `kubectl create` and `kubectl create-file` in the fixtures'
/// directory: kubectl's output, and the differences described (none when they agree).
fn differences(ns: &str, args: &[&str]) -> (Output, Option<String>) {
    let run = |command: &str| -> Output {
        cluster()
            .kubectl()
            .current_dir(fixtures())
            .arg(command)
            .args(args)
            .args(["-n", ns, "--dry-run=server"])
            .run()
    };
    let (kubectl, ours) = (run("create"), run("create-file"));
    let same = kubectl.code == ours.code
        && kubectl.stdout == ours.stdout
        && masked(&kubectl.stderr) == masked(&ours.stderr);
    let described = (!same).then(|| {
        format!(
            "{args:?}\n--- kubectl (exit {})\n{}{}--- create-file (exit {})\n{}{}",
            kubectl.code, kubectl.stdout, kubectl.stderr, ours.code, ours.stdout, ours.stderr
        )
    });
    (kubectl, described)
}

/// Runs every case, then fails naming each that differs (with both outputs).
fn check(ns: &str, cases: &[&[&str]], expect: impl Fn(&[&str], &Output)) {
    let mut differ = Vec::new();
    for args in cases {
        let (kubectl, described) = differences(ns, args);
        differ.extend(described);
        // What kubectl printed is what each case is about (not only that both agree).
        expect(args, &kubectl);
    }
    eprintln!(
        "{} of {} cases identical to kubectl",
        cases.len() - differ.len(),
        cases.len()
    );
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// kustomize's warnings on success, and its errors, as `kubectl create -k` prints them.
#[tokio::test]
async fn kustomize_output_passes_through_as_kubectl_prints_it() {
    let ns = cluster().namespace("gitops-kustomize").await;
    let cases: &[&[&str]] = &[
        &["-k", "overlays-deprecated/overlays/common-labels"],
        &["-k", "overlays-deprecated/overlays/patches"],
        &["-k", "overlays-deprecated/overlays/vars"],
        &["-k", "overlays-deprecated/overlays/sort-options"],
        &["-k", "component-patch-fails/overlays/missing-patch"],
        &["-k", "component-patch-fails/overlays/bad-json6902"],
    ];
    check(ns.as_str(), cases, |args, kubectl| {
        let dir = args[1];
        assert!(
            kubectl.stderr.contains("# Warning: '"),
            "{dir}: every overlay uses a deprecated field: {}",
            kubectl.stderr
        );
        if dir.ends_with("/vars") {
            assert!(
                kubectl
                    .stderr
                    .contains("] well-defined vars that were never replaced: "),
                "{}",
                kubectl.stderr
            );
        }
        if dir.starts_with("component-patch-fails") {
            assert_eq!(kubectl.code, 1, "{dir} fails: {}", kubectl.stderr);
        } else {
            assert_eq!(kubectl.code, 0, "{dir}: {}", kubectl.stderr);
        }
    });
}

/// Several errors of several kinds, in kubectl's order and grouping.
#[tokio::test]
async fn several_errors_are_ordered_and_grouped_as_kubectl_does() {
    let ns = cluster().namespace("gitops-errors").await;
    let cases: &[&[&str]] = &[
        // Everything: object errors first, then every input error as one `[…]`.
        &["-R", "-f", "crs-before-errors"],
        // Mapping errors alone: one a line, across files.
        &[
            "-f",
            "crs-before-errors/00-widgets",
            "-f",
            "crs-before-errors/20-gadgets",
        ],
        // One mapping error beside an object error: no brackets.
        &[
            "-f",
            "crs-before-errors/20-gadgets",
            "-f",
            "crs-before-errors/10-apps",
        ],
        // Custom resources before a server error and a client-side validation error.
        &[
            "-f",
            "crs-before-errors/00-widgets",
            "-f",
            "crs-before-errors/30-server",
        ],
        // The namespace check and the decoder's refusal, in one file.
        &["-f", "crs-before-errors/10-apps/app.yaml"],
        // A List's unknown items: alone, then beside other input errors.
        &["-f", "crs-before-errors/40-lists"],
        &[
            "-f",
            "crs-before-errors/40-lists",
            "-f",
            "crs-before-errors/00-widgets",
        ],
        &[
            "-f",
            "crs-before-errors/40-lists",
            "-f",
            "crs-before-errors/10-apps",
        ],
    ];
    check(ns.as_str(), cases, |args, kubectl| {
        assert_eq!(kubectl.code, 1, "{args:?}: every case fails");
    });
}
