//! `create-file --edit` beside `kubectl create --edit` of the server's release: the
//! same input and the same editor script (`KUBE_EDITOR`) given to both, each in a
//! namespace and a temporary directory of its own. Compared: exit code, stdout and
//! stderr (the kept copy's path and the namespace replaced), the objects created,
//! how often the editor ran and what it was given, and the kept copies.

use std::path::PathBuf;

use tests::harness::{Output, cluster};
use tests::objects::configmap_names;

fn configmap(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  k: v\n")
}

/// What one side did.
#[derive(Debug)]
struct Side {
    out: Output,
    /// stderr with the kept copies' paths as `"KEPT"` and the namespace as `NS`.
    stderr: String,
    created: Vec<String>,
    /// What the editor was given, each time it ran.
    given: Vec<String>,
    /// The kept copies' text.
    kept: Vec<String>,
}

/// The copies stderr says were kept (`A copy of your changes has been stored to
/// "PATH"`). kubectl also leaves, unannounced, the file of a pass before a reopened
/// one that is then given up; create-file removes it (its README says so), so only
/// the announced copies are compared.
fn kept_copies(stderr: &str) -> Vec<PathBuf> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("A copy of your changes has been stored to \""))
        .filter_map(|l| l.strip_suffix('"'))
        .map(PathBuf::from)
        .collect()
}

/// Runs `command` (`create` or `create-file`) with `args`, `-f` of `input` and `-n`
/// of a fresh namespace (where `existing` ConfigMaps are made first), `script` as the
/// editor: before it runs, the file it is given is copied to `given-N`.
async fn side(command: &str, input: &str, args: &[&str], script: &str, existing: &[&str]) -> Side {
    let ns = cluster().namespace(&format!("edit-{command}")).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).expect("tmp");
    let f = dir.path().join("in.yaml");
    std::fs::write(&f, input).expect("input");
    let editor = dir.path().join("editor.sh");
    let record = format!(
        "n=$(ls {given} | wc -l); cp \"$1\" {given}/given-$n\n",
        given = dir.path().join("given").display()
    );
    std::fs::create_dir(dir.path().join("given")).expect("given");
    std::fs::write(&editor, format!("{record}{script}")).expect("editor");
    for name in existing {
        cluster()
            .kubectl()
            .args(["create", "configmap", name, "-n", ns.as_str()])
            .run()
            .success();
    }
    let out = cluster()
        .kubectl()
        .arg(command)
        .args(["-f", &f.display().to_string(), "--edit", "-n", ns.as_str()])
        .args(args)
        .env("KUBE_EDITOR", format!("sh {}", editor.display()))
        .env("TMPDIR", &tmp)
        .run();
    let kept_paths = kept_copies(&out.stderr);
    let mut stderr = out.stderr.replace(ns.as_str(), "NS");
    for path in &kept_paths {
        stderr = stderr.replace(&format!("{:?}", path.display().to_string()), "\"KEPT\"");
    }
    let mut given_paths: Vec<_> = std::fs::read_dir(dir.path().join("given"))
        .expect("given")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    given_paths.sort();
    let read = |p: &PathBuf| {
        std::fs::read_to_string(p)
            .expect("read")
            .replace(ns.as_str(), "NS")
    };
    Side {
        stderr,
        created: configmap_names(ns.as_str()).await,
        given: given_paths.iter().map(read).collect(),
        kept: kept_paths.iter().map(read).collect(),
        out,
    }
}

/// Both sides, compared; returns the plugin's for the case's own checks.
async fn beside(input: &str, args: &[&str], script: &str, existing: &[&str]) -> Side {
    let theirs = side("create", input, args, script, existing).await;
    let ours = side("create-file", input, args, script, existing).await;
    let view = |s: &Side| {
        (
            s.out.code,
            s.out.stdout.clone(),
            s.stderr.clone(),
            s.created.clone(),
            s.given.clone(),
            s.kept.clone(),
        )
    };
    assert_eq!(
        view(&ours),
        view(&theirs),
        "create-file --edit {args:?} (left) beside kubectl create --edit (right)"
    );
    ours
}

/// An unknown field is the server's to refuse (`fieldValidation=Strict`): kubectl
/// 1.37 does not validate such a kind on the client, so the file is not reopened;
/// the create fails with the server's reason and the edited file is kept.
#[tokio::test]
async fn an_unknown_field_is_refused_by_the_server_in_its_words() {
    let script = "grep -q bogusField \"$1\" || sed -i 's/^data:/bogusField: x\\ndata:/' \"$1\"\n";
    let ours = beside(&configmap("edited"), &[], script, &[]).await;
    ours.out.code(1);
    assert!(
        ours.stderr
            .contains("strict decoding error: unknown field \"bogusField\""),
        "{}",
        ours.stderr
    );
    assert_eq!(ours.given.len(), 1);
    assert_eq!(ours.kept.len(), 1);
}

/// kubectl's editor printer knows json, kyaml and yaml only: `-o name` (or a
/// template) fails for each object before any editor opens.
#[tokio::test]
async fn an_output_without_an_editor_printer_fails_before_the_editor_opens() {
    let two = format!("{}---\n{}", configmap("one"), configmap("two"));
    for output in ["name", "jsonpath={.kind}"] {
        let ours = beside(&two, &["-o", output], "exit 0\n", &[]).await;
        ours.out.code(1);
        assert!(ours.given.is_empty(), "the editor ran: {:?}", ours.given);
        assert!(
            ours.stderr.contains("allowed formats are: json,kyaml,yaml"),
            "{}",
            ours.stderr
        );
    }
}

/// A refused create keeps its file and does not end the command: the next object is
/// edited and created (kubectl's ContinueOnError visitor), the error comes last.
#[tokio::test]
async fn a_refused_create_keeps_its_copy_and_the_next_object_is_still_edited() {
    let two = format!("{}---\n{}", configmap("taken"), configmap("after"));
    let script = "sed -i 's/k: v/k: edited/' \"$1\"\n";
    let ours = beside(&two, &[], script, &["taken"]).await;
    ours.out.code(1);
    assert_eq!(ours.kept.len(), 1);
    assert_eq!(ours.given.len(), 2);
}

/// A file that no longer reads fails validation and is reopened with the reason;
/// fixed, it is created. Saved unchanged instead, the session gives up, keeps the
/// copy, and the next object still gets its session.
#[tokio::test]
async fn a_file_that_does_not_read_is_reopened_until_fixed_or_left_unchanged() {
    let broken = "if grep -q 'was not valid' \"$1\"; then\n  sed -i '/^  bad: \\[/d; s/k: v/k: fixed/' \"$1\"\nelse\n  echo '  bad: [' >> \"$1\"\nfi\n";
    let ours = beside(&configmap("fixed"), &[], broken, &[]).await;
    ours.out.success();
    assert_eq!(ours.created, ["fixed"]);
    assert_eq!(ours.given.len(), 2);

    let two = format!("{}---\n{}", configmap("one"), configmap("two"));
    let given_up = "grep -q 'was not valid' \"$1\" || echo '  bad: [' >> \"$1\"\n";
    let ours = beside(&two, &[], given_up, &[]).await;
    ours.out.code(1);
    assert_eq!(ours.given.len(), 4);
    assert_eq!(ours.kept.len(), 2);
    assert!(ours.created.is_empty());
}

/// `-o json` and `-o kyaml`: the editor gets the object as kubectl's printer writes
/// it (JSON without the comment header, KYAML under it), and what is created is
/// printed in that format.
#[tokio::test]
async fn json_and_kyaml_are_edited_as_kubectl_writes_them() {
    for (output, script) in [
        ("json", "sed -i 's/\"k\": \"v\"/\"k\": \"w\"/' \"$1\"\n"),
        ("kyaml", "sed -i 's/k: \"v\"/k: \"w\"/' \"$1\"\n"),
    ] {
        let theirs = side(
            "create",
            &configmap("printed"),
            &["-o", output],
            script,
            &[],
        )
        .await;
        let ours = side(
            "create-file",
            &configmap("printed"),
            &["-o", output],
            script,
            &[],
        )
        .await;
        assert_eq!(ours.given, theirs.given, "-o {output}: what the editor got");
        assert_eq!(
            (ours.out.code, &ours.stderr, &ours.created),
            (theirs.out.code, &theirs.stderr, &theirs.created),
            "-o {output}"
        );
        // The server's answer (its uid and times differ between the two).
        assert!(ours.out.stdout.contains("\"w\""), "{}", ours.out.stdout);
    }
}
