//! The editor session's choices: which editor runs, and how it gets the file.

use super::*;

fn env<'a>(vars: &'a [(&str, &str)]) -> impl Fn(&str) -> Option<String> + 'a {
    |name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}

#[test]
fn the_editor_defaults_to_vi_and_to_notepad_on_windows_like_kubectl() {
    assert_eq!(
        Editor::choose(env(&[]), false),
        Editor::Program("vi".into())
    );
    assert_eq!(
        Editor::choose(env(&[]), true),
        Editor::Program("notepad".into())
    );
    // Blank values count as unset.
    assert_eq!(
        Editor::choose(env(&[("KUBE_EDITOR", " "), ("EDITOR", "")]), true),
        Editor::Program("notepad".into())
    );
}

#[test]
fn kube_editor_wins_over_editor_and_only_a_quoted_line_goes_through_the_shell() {
    let both = [("KUBE_EDITOR", "nano"), ("EDITOR", "emacs")];
    assert_eq!(
        Editor::choose(env(&both), false),
        Editor::Program("nano".into())
    );
    // Spaces alone: split at each space and run directly, as kubectl does (so a
    // missing program is "unable to launch", not the shell's failure).
    let editor = Editor::choose(env(&[("EDITOR", " code --wait ")]), true);
    assert_eq!(editor, Editor::Program("code --wait".into()));
    let cmd = editor.command(Path::new("/tmp/f.yaml"));
    assert_eq!(cmd.get_program(), "code");
    let args: Vec<_> = cmd.get_args().collect();
    assert_eq!(args, ["--wait", "/tmp/f.yaml"]);
    // Quotes or backslashes: the shell's to resolve.
    let quoted = Editor::choose(
        env(&[(
            "EDITOR",
            r#""C:\Program Files\Notepad++\notepad++.exe" -multiInst"#,
        )]),
        true,
    );
    assert!(matches!(quoted, Editor::Shell(_)), "{quoted:?}");
}

#[cfg(unix)]
#[test]
fn a_shell_editor_gets_the_path_as_an_argument_not_as_text() {
    let cmd = Editor::Shell("code --wait".into()).command(Path::new("/tmp/a b'c.yaml"));
    assert_eq!(cmd.get_program(), "sh");
    let args: Vec<_> = cmd.get_args().collect();
    assert_eq!(args, ["-c", "code --wait \"$1\"", "sh", "/tmp/a b'c.yaml"]);
}

#[test]
fn only_json_kyaml_and_yaml_have_an_editor_printer_as_in_kubectl() {
    assert_eq!(EditFormat::from_output(None), Ok(EditFormat::Yaml));
    assert_eq!(EditFormat::from_output(Some("yaml")), Ok(EditFormat::Yaml));
    assert_eq!(
        EditFormat::from_output(Some("kyaml")),
        Ok(EditFormat::Kyaml)
    );
    assert_eq!(EditFormat::from_output(Some("json")), Ok(EditFormat::Json));
    // cli-runtime's NoCompatiblePrinterError: the whole -o value, the three formats
    // sorted.
    assert_eq!(
        EditFormat::from_output(Some("name")),
        Err("unable to match a printer suitable for the output format \"name\", allowed formats are: json,kyaml,yaml".into())
    );
    assert_eq!(
        EditFormat::from_output(Some("jsonpath={.kind}")),
        Err("unable to match a printer suitable for the output format \"jsonpath={.kind}\", allowed formats are: json,kyaml,yaml".into())
    );
}

#[test]
fn the_editor_gets_kubectls_json_and_kyaml() {
    let object = serde_json::json!({"kind": "ConfigMap", "apiVersion": "v1", "data": {"a": "<b>"}});
    // Go's json.MarshalIndent with four spaces, keys sorted, HTML characters escaped.
    assert_eq!(
        EditFormat::Json.print(&object).expect("json"),
        "{\n    \"apiVersion\": \"v1\",\n    \"data\": {\n        \"a\": \"\\u003cb\\u003e\"\n    },\n    \"kind\": \"ConfigMap\"\n}\n"
    );
    assert!(
        EditFormat::Kyaml
            .print(&object)
            .expect("kyaml")
            .starts_with("---\n{\n  apiVersion: \"v1\",")
    );
    assert_eq!(
        EditFormat::Yaml.print(&object).expect("yaml"),
        "apiVersion: v1\ndata:\n  a: <b>\nkind: ConfigMap\n"
    );
}
