//! kuberc read as kubectl 1.37 reads it (the texts are kubectl's, seen beside it).

use super::*;

fn env_with(dir: &Path, kuberc: Option<&str>) -> Env {
    Env {
        kubectl_kuberc: None,
        kuberc: kuberc.map(str::to_string),
        home: Some(dir.to_path_buf()),
    }
}

fn load_text(text: &str) -> (Result<Option<Preferences>, String>, String) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("kuberc");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    let mut warn = Vec::new();
    let path = path.display().to_string();
    let result = load(Some(&path), &env_with(dir.path(), None), &mut warn);
    let warn = String::from_utf8_lossy(&warn).replace(&path, "KUBERC");
    (result.map_err(|e| e.replace(&path, "KUBERC")), warn)
}

const HEAD: &str = "apiVersion: kubectl.config.k8s.io/v1beta1\nkind: Preference\n";

#[test]
fn the_policy_is_read() {
    let (prefs, warn) = load_text(&format!("{HEAD}credentialPluginPolicy: DenyAll\n"));
    assert_eq!(warn, "");
    let policy = prefs.unwrap_or_default().unwrap_or_default().policy;
    assert_eq!(policy.policy_type, "DenyAll");
    assert_eq!(policy.allowlist, None);
    let (prefs, _) = load_text(&format!(
        "{HEAD}credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist:\n- name: sh\n- command: /bin/true\n"
    ));
    let policy = prefs.unwrap_or_default().unwrap_or_default().policy;
    assert_eq!(
        policy.allowlist,
        Some(vec!["sh".into(), "/bin/true".into()])
    );
}

#[test]
fn problems_are_kubectl_s() {
    let (result, _) = load_text(&format!(
        "{HEAD}credentialPluginPolicy: Allowlist\ncredentialPluginAllowlist: []\n"
    ));
    assert_eq!(
        result,
        Err("credential plugin policy set to \"Allowlist\", but allowlist is empty; use \"DenyAll\" policy instead".into())
    );
    let (result, _) = load_text("apiVersion: v1\nkind: Config\n");
    assert_eq!(
        result,
        Err(
            "kuberc error kuberc: no valid preferences found in KUBERC, use --v=5 to see details"
                .into()
        )
    );
    let (result, _) = load_text(&format!("{HEAD}aliases:\n- name: run-x\n  command: run\n"));
    assert_eq!(
        result,
        Err("invalid alias name, can only include alphabetical characters".into())
    );
    let (result, warn) = load_text(&format!("{HEAD}credentialPluginPolicyy: DenyAll\n"));
    assert_eq!(result, Ok(Some(Preferences::default())));
    assert_eq!(
        warn,
        "kuberc: ignoring strict decoding error in KUBERC: strict decoding error: unknown field \"credentialPluginPolicyy\""
    );
}

#[test]
fn where_it_is_read_from() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut warn = Vec::new();
    // The default file may be missing; a named one may not.
    assert_eq!(load(None, &env_with(dir.path(), None), &mut warn), Ok(None));
    let missing = dir.path().join("missing");
    let missing = missing.display().to_string();
    assert_eq!(
        load(None, &env_with(dir.path(), Some(&missing)), &mut warn),
        Err(format!(
            "kuberc error kuberc: open {missing}: no such file or directory"
        ))
    );
    assert_eq!(
        load(Some("x"), &env_with(dir.path(), Some("off")), &mut warn),
        Err("kuberc error disabling kuberc via KUBERC=off and passing kuberc flag are mutually exclusive".into())
    );
    let off = Env {
        kubectl_kuberc: Some("False".into()),
        ..env_with(dir.path(), Some(&missing))
    };
    assert_eq!(load(Some(&missing), &off, &mut warn), Ok(None));
    // A default file that is no kuberc: a warning, no final newline.
    std::fs::create_dir_all(dir.path().join(".kube")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join(".kube/kuberc"), "kind: Other\n")
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(load(None, &env_with(dir.path(), None), &mut warn), Ok(None));
    let warn = String::from_utf8_lossy(&warn).into_owned();
    assert!(
        warn.starts_with("kuberc: no preferences loaded from "),
        "{warn}"
    );
    assert!(warn.ends_with("use --v=5 to see details"), "{warn}");
}

#[test]
fn the_flag_is_found_before_parsing() {
    let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
    assert_eq!(
        explicit_path(&args(&["p", "--kuberc", "a"])),
        Ok(Some("a".into()))
    );
    assert_eq!(
        explicit_path(&args(&["p", "--kuberc=b=c"])),
        Ok(Some("b".into()))
    );
    assert_eq!(explicit_path(&args(&["p", "--", "--kuberc=b"])), Ok(None));
    assert_eq!(
        explicit_path(&args(&["p", "--kuberc"])),
        Err("kuberc file is not found".into())
    );
    assert_eq!(
        explicit_path(&args(&["p", "--kuberc="])),
        Err("kuberc file is not found".into())
    );
}
