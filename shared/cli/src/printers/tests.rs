//! Printer tests: every format into a `Vec<u8>`, compared byte for byte.

use serde_json::json;

use super::*;

fn print(printer: &dyn Printer, obj: &Value) -> String {
    let mut out = Vec::new();
    printer.print(obj, &mut out).expect("print");
    String::from_utf8(out).expect("utf-8")
}

fn pod() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "x", "labels": {"run": "x"}},
        "spec": {
            "containers": [{"image": "nginx", "name": "x", "resources": {}}],
            "dnsPolicy": "ClusterFirst",
            "restartPolicy": "Always"
        },
        "status": {}
    })
}

#[test]
fn yaml_matches_kubectls_layout() {
    // kubectl 1.32's `run x --image=nginx --dry-run=client -o yaml`, minus the
    // `creationTimestamp: null` artefact of Go's struct encoding.
    let expected = "\
apiVersion: v1
kind: Pod
metadata:
  labels:
    run: x
  name: x
spec:
  containers:
  - image: nginx
    name: x
    resources: {}
  dnsPolicy: ClusterFirst
  restartPolicy: Always
status: {}
";
    assert_eq!(print(&YamlPrinter::default(), &pod()), expected);
}

#[test]
fn yaml_separates_documents_after_the_first() {
    let printer = YamlPrinter::default();
    let one = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}});
    let first = print(&printer, &one);
    let second = print(&printer, &one);
    assert!(!first.starts_with("---"));
    assert_eq!(second, format!("---\n{first}"));
}

#[test]
fn yaml_quotes_strings_that_would_read_back_as_other_types() {
    let cm = json!({"data": {"a": "yes", "b": "0777", "c": "true", "d": "1"}});
    let text = print(&YamlPrinter::default(), &cm);
    assert_eq!(
        text,
        "data:\n  a: \"yes\"\n  b: \"0777\"\n  c: \"true\"\n  d: \"1\"\n"
    );
}

#[test]
fn json_is_indented_with_four_spaces() {
    let obj = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "status": {}});
    let expected = "{\n    \"apiVersion\": \"v1\",\n    \"kind\": \"Pod\",\n    \"metadata\": {\n        \"name\": \"x\"\n    },\n    \"status\": {}\n}\n";
    assert_eq!(print(&JsonPrinter::default(), &obj), expected);
}

/// What `kubectl create -f … --dry-run=client -o json` 1.32 printed for these values:
/// Go's json.MarshalIndent escapes `<`, `>`, `&` and U+2028/U+2029, and writes a large
/// whole number as the float64 it decoded (`12345678901234567000`) and exponents with
/// a sign (`1e+21`).
#[test]
fn json_is_gos_marshal_indent() {
    let obj = json!({
        "a": "x<y>&z \u{2028} é \u{7f} \t",
        "big": 1e21,
        "e": 1.5e-7,
        "i": 12345678901234567890u64,
        "neg": -3,
        "tie": 1_808_473_927_573_735.2
    });
    // `tie` is exactly halfway between two shortest forms; Go takes the even one.
    let expected = "{\n    \"a\": \"x\\u003cy\\u003e\\u0026z \\u2028 é \u{7f} \\t\",\n    \"big\": 1e+21,\n    \"e\": 1.5e-7,\n    \"i\": 12345678901234567000,\n    \"neg\": -3,\n    \"tie\": 1808473927573735.2\n}\n";
    assert_eq!(print(&JsonPrinter::default(), &obj), expected);
}

#[test]
fn managed_fields_are_hidden_unless_asked_for() {
    let obj = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "managedFields": [{"manager": "kubectl-run"}]}});
    assert!(!print(&JsonPrinter::default(), &obj).contains("managedFields"));
    assert!(!print(&YamlPrinter::default(), &obj).contains("managedFields"));
    assert!(
        print(
            &JsonPrinter {
                show_managed_fields: true,
                ..Default::default()
            },
            &obj
        )
        .contains("kubectl-run")
    );
    assert!(print(&YamlPrinter::new(true), &obj).contains("kubectl-run"));
}

#[test]
fn names_carry_the_group_except_for_the_core_group() {
    let named = |api_version: &str, kind: &str| {
        qualified_name(
            &json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "web"}}),
        )
    };
    assert_eq!(named("v1", "Pod"), "pod/web");
    assert_eq!(named("v1", "Service"), "service/web");
    assert_eq!(named("apps/v1", "Deployment"), "deployment.apps/web");
    assert_eq!(named("batch/v1beta1", "CronJob"), "cronjob.batch/web");
    assert_eq!(print(&NamePrinter, &pod()), "pod/x\n");
}

#[test]
fn malformed_objects_print_without_panicking() {
    assert_eq!(qualified_name(&json!({})), "/<unknown>");
    assert_eq!(qualified_name(&json!("not an object")), "/<unknown>");
    // kubectl's name printer, for an object that has only a generateName.
    assert_eq!(
        qualified_name(
            &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "x-", "name": ""}})
        ),
        "pod/<unknown>"
    );
}

#[test]
fn operation_printer() {
    let printer = OperationPrinter {
        operation: "created (server dry run)".into(),
    };
    assert_eq!(print(&printer, &pod()), "pod/x created (server dry run)\n");
}

#[test]
fn jsonpath_prints_the_template_without_a_trailing_newline() {
    let printer = JsonPathPrinter::new("{.metadata.name} {.spec.containers[*].image}", true, false)
        .expect("parses");
    assert_eq!(print(&printer, &pod()), "x nginx");
}

#[test]
fn jsonpath_as_json_prints_one_indented_list_per_action() {
    let printer = JsonPathPrinter::new("{.metadata.labels}", true, true).expect("parses");
    assert_eq!(
        print(&printer, &pod()),
        "[\n    {\n        \"run\": \"x\"\n    }\n]\n"
    );
}

#[test]
fn jsonpath_missing_keys_are_empty_or_kubectls_error() {
    let lenient = JsonPathPrinter::new("a{.nope}b", true, false).expect("parses");
    assert_eq!(print(&lenient, &pod()), "ab");

    // kubectl 1.32 `run x --image=nginx --dry-run=client -o jsonpath='{.nope}'
    // --allow-missing-template-keys=false`, without the null creationTimestamp.
    let strict = JsonPathPrinter::new("{.nope}", false, false).expect("parses");
    let mut out = Vec::new();
    let err = strict.print(&pod(), &mut out).expect_err("missing key");
    assert!(out.is_empty());
    assert_eq!(
        err.to_string(),
        "error executing jsonpath \"{.nope}\": Error executing template: nope is not found. \
         Printing more information for debugging the template:\n\
         \ttemplate was:\n\t\t{.nope}\n\
         \tobject given to jsonpath engine was:\n\
         \t\tmap[string]interface {}{\"apiVersion\":\"v1\", \"kind\":\"Pod\", \"metadata\":map[string]interface {}{\"labels\":map[string]interface {}{\"run\":\"x\"}, \"name\":\"x\"}, \"spec\":map[string]interface {}{\"containers\":[]interface {}{map[string]interface {}{\"image\":\"nginx\", \"name\":\"x\", \"resources\":map[string]interface {}{}}}, \"dnsPolicy\":\"ClusterFirst\", \"restartPolicy\":\"Always\"}, \"status\":map[string]interface {}{}}\n\n\n"
    );
}

#[test]
fn jsonpath_parse_errors_name_the_template() {
    let err = JsonPathPrinter::new("{.metadata.name", true, false).err();
    assert_eq!(
        err.map(|e| e.to_string()).as_deref(),
        Some("error parsing jsonpath {.metadata.name, unclosed action")
    );
}

#[test]
fn go_template_prints_the_template_without_a_trailing_newline() {
    let printer = GoTemplatePrinter::new(
        "{{.metadata.name}} {{range .spec.containers}}{{.image}}{{end}}",
        true,
    )
    .expect("parses");
    assert_eq!(print(&printer, &pod()), "x nginx");
}

/// On a failing template kubectl writes the output so far and a debugging text to
/// stdout, and fails with the message; recorded from kubectl 1.32:
/// `kubectl create -f cm.yaml --dry-run=client --validate=false -o
/// go-template='{{.metadata.name}} {{.data.nope}}/{{.data.nope.x}}'
/// --allow-missing-template-keys=false`.
#[test]
fn go_template_errors_print_kubectls_debugging_text() {
    let cm = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"labels": {"app": "web"}, "name": "web", "namespace": "default"},
        "data": {"mode": "<on>", "size": "3"}
    });
    let template = "{{.metadata.name}} {{.data.nope}}/{{.data.nope.x}}";
    let printer = GoTemplatePrinter::new(template, false).expect("parses");
    let mut out = Vec::new();
    let err = printer.print(&cm, &mut out).expect_err("missing key");
    assert_eq!(
        String::from_utf8(out).expect("utf-8"),
        "web Error executing template: template: output:1:26: executing \"output\" at <.data.nope>: map has no entry for key \"nope\". Printing more information for debugging the template:
\ttemplate was:
\t\t{{.metadata.name}} {{.data.nope}}/{{.data.nope.x}}
\traw data was:
\t\t{\"apiVersion\":\"v1\",\"data\":{\"mode\":\"\\u003con\\u003e\",\"size\":\"3\"},\"kind\":\"ConfigMap\",\"metadata\":{\"labels\":{\"app\":\"web\"},\"name\":\"web\",\"namespace\":\"default\"}}
\tobject given to template engine was:
\t\tmap[apiVersion:v1 data:map[mode:<on> size:3] kind:ConfigMap metadata:map[labels:map[app:web] name:web namespace:default]]

"
    );
    assert_eq!(
        err.to_string(),
        "error executing template \"{{.metadata.name}} {{.data.nope}}/{{.data.nope.x}}\": template: output:1:26: executing \"output\" at <.data.nope>: map has no entry for key \"nope\""
    );
    // With missing keys allowed the same template prints.
    let lenient = GoTemplatePrinter::new(template, true).expect("parses");
    assert_eq!(print(&lenient, &cm), "web <no value>/<no value>");
}

#[test]
fn go_template_parse_errors_name_the_template() {
    // kubectl run x --image=nginx --dry-run=client -o go-template='{{.a'
    let err = GoTemplatePrinter::new("{{.a", true).err();
    assert_eq!(
        err.map(|e| e.to_string()).as_deref(),
        Some("error parsing template {{.a, template: output:1: unclosed action")
    );
}
