//! The pure parts of `--edit`: kubectl's header, comment handling and error reasons.

use super::*;
use resources::{Mapping, Origin};
use serde_json::json;

#[test]
fn the_header_lists_reasons_like_kubectl() {
    assert_eq!(header(&[]), HEADER);
    let reasons = [
        Reason {
            head: "configmaps \"cm1\" was not valid".into(),
            other: vec!["<nil>: Invalid value: \"x\": y".into()],
        },
        Reason {
            head: "The edited file had a syntax error: first\nensure CRDs are installed first"
                .into(),
            other: vec![],
        },
    ];
    assert_eq!(
        header(&reasons),
        format!(
            "{HEADER}# configmaps \"cm1\" was not valid:\n# * <nil>: Invalid value: \"x\": y\n#\n# The edited file had a syntax error: first\n# ensure CRDs are installed first\n#\n"
        )
    );
}

#[test]
fn line_breaks_continue_the_comment_unless_already_commented() {
    assert_eq!(hash_on_line_break("a\nb"), "a\n# b");
    assert_eq!(hash_on_line_break("a\n#b"), "a\n#b");
    assert_eq!(hash_on_line_break("a\n"), "a\n");
}

#[test]
fn manual_strip_drops_comment_lines_only() {
    assert_eq!(
        manual_strip("# c\napiVersion: v1\n  # indented\n\nkind: X\n"),
        "apiVersion: v1\n\nkind: X\n"
    );
    assert_eq!(manual_strip("a: [\n# c"), "a: [\n");
}

#[test]
fn comparisons_ignore_comments_and_formatting() {
    let original = "apiVersion: v1\nkind: ConfigMap\ndata: {a: b}\n";
    let reformatted = "# header\nkind: ConfigMap\napiVersion: v1\ndata:\n  a: b\n";
    assert_eq!(strip_comments(original), strip_comments(reformatted));
    assert_ne!(
        strip_comments(original),
        strip_comments(&original.replace("a: b", "a: c"))
    );
    // Text that does not parse is compared without its comments.
    assert_eq!(
        strip_comments("# x\ndata: [\n"),
        strip_comments("data: [\n# y\n")
    );
    assert_ne!(strip_comments("data: [\n"), strip_comments("data: [[\n"));
}

#[test]
fn comparisons_read_scalars_as_go_yaml_v2_does() {
    // YAML 1.1, as kubectl's reader: `0400` is the octal 256, `y` is true.
    assert_eq!(
        strip_comments("spec: {mode: 0400}\n"),
        strip_comments("spec: {mode: 256}\n")
    );
    assert_eq!(
        strip_comments("spec: {on: y}\n"),
        strip_comments("spec: {on: true}\n")
    );
    // A repeated key: the last one wins, so only that one counts as a change.
    assert_eq!(
        strip_comments("data: {a: b, a: c}\n"),
        strip_comments("data: {a: c}\n")
    );
}

#[test]
fn empty_means_only_blanks_and_comments() {
    assert!(!has_lines("# a\n\n   \n  # b\n"));
    assert!(has_lines("# a\nkind: X\n"));
}

fn configmap() -> Info {
    let mut info = Info::from_object(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm1"}}),
        Origin::single("cm.yaml"),
    );
    info.mapping = Some(Mapping {
        group: String::new(),
        version: "v1".into(),
        kind: "ConfigMap".into(),
        resource: "configmaps".into(),
        namespaced: true,
    });
    info
}

fn origin() -> Origin {
    Origin::single(EDITED_SOURCE)
}

#[test]
fn validation_failures_are_reported_as_kubectl_reports_them() {
    let errors = [ResourceError::Invalid {
        origin: origin(),
        problems: vec![
            "ValidationError(ConfigMap): unknown field \"dta\" in io.k8s.api.core.v1.ConfigMap"
                .into(),
        ],
    }];
    let (reasons, line) = reasons_for(&errors, Validation::Strict, &configmap(), None);
    assert_eq!(
        reasons,
        [Reason {
            head: "configmaps \"cm1\" was not valid".into(),
            other: vec![
                "<nil>: Invalid value: \"The edited file failed validation\": ValidationError(ConfigMap): unknown field \"dta\" in io.k8s.api.core.v1.ConfigMap".into()
            ],
        }]
    );
    assert_eq!(
        line.as_deref(),
        Some("error: configmaps \"cm1\" is invalid")
    );
}

#[test]
fn syntax_errors_fail_validation_unless_it_is_off() {
    let parse = || ResourceError::Parse {
        source_name: EDITED_SOURCE.into(),
        line: 3,
        reason: "unclosed bracket '['".into(),
    };
    let unreadable = || Some("yaml: line 2: did not find expected node content".to_string());
    let (reasons, line) = reasons_for(&[parse()], Validation::Warn, &configmap(), unreadable());
    assert_eq!(
        reasons[0].other,
        [
            "<nil>: Invalid value: \"The edited file failed validation\": yaml: line 2: did not find expected node content"
        ]
    );
    assert!(line.is_some());
    let (reasons, line) = reasons_for(&[parse()], Validation::Ignore, &configmap(), unreadable());
    assert_eq!(
        reasons,
        [Reason {
            head: "The edited file had a syntax error: error parsing edited-file: unclosed bracket '['".into(),
            other: vec![],
        }]
    );
    assert!(line.is_none());
    // The first document reads (a later one does not): the validator passes it, and
    // reading the file fails.
    let (reasons, line) = reasons_for(&[parse()], Validation::Strict, &configmap(), None);
    assert!(
        reasons[0]
            .head
            .starts_with("The edited file had a syntax error: ")
    );
    assert!(line.is_none());
}

#[test]
fn the_validator_reads_the_text_without_its_comments_as_kubectl_does() {
    let header = "# one\n# two\n#\n";
    let edited = format!("{header}a: b\nc: [\n");
    // Line 2 of the text without its three comment lines, go-yaml's words without
    // the decoder's prefix.
    let reason = unreadable(&edited).expect("unreadable");
    assert!(reason.starts_with("yaml: line "), "{reason}");
    assert_eq!(
        unreadable(&edited),
        unreadable("a: b\nc: [\n"),
        "counted without the comments"
    );
    assert_eq!(unreadable(&format!("{header}a: b\n")), None);
    // Only the first document is read, as sigs.k8s.io/yaml's ToJSON reads it.
    assert_eq!(unreadable("a: b\n---\nc: [\n"), None);
}

#[test]
fn other_read_errors_are_syntax_errors_aggregated_like_kubectl() {
    let decode = |reason: &str| ResourceError::Decode {
        origin: origin(),
        reason: reason.into(),
    };
    let (reasons, _) = reasons_for(
        &[decode("kind not set")],
        Validation::Strict,
        &configmap(),
        None,
    );
    assert_eq!(
        reasons[0].head,
        "The edited file had a syntax error: unable to decode \"edited-file\": kind not set"
    );
    let (reasons, _) = reasons_for(
        &[decode("a"), decode("b")],
        Validation::Strict,
        &configmap(),
        None,
    );
    assert_eq!(
        reasons[0].head,
        "The edited file had a syntax error: [unable to decode \"edited-file\": a, unable to decode \"edited-file\": b]"
    );
}

#[test]
fn create_failures_lose_the_edited_file_prefix() {
    let status = kube::core::Status::failure(
        "error when creating \"edited-file\": configmaps \"cm1\" already exists",
        "AlreadyExists",
    );
    let Failure::Api(status) = without_edited_source(Failure::Api(Box::new(status))) else {
        panic!("still an API failure");
    };
    assert_eq!(status.message, "configmaps \"cm1\" already exists");
    let Failure::Other(message) = without_edited_source(Failure::Other(
        "error when saving the configuration: x".into(),
    )) else {
        panic!("still another failure");
    };
    assert_eq!(message, "error when saving the configuration: x");
}
