//! The encoder against sigs.k8s.io/yaml's own expectations (kyaml_test.go) and
//! kubectl 1.37's recorded `-o kyaml` output.

use super::*;

/// The document without kyaml's `---` header and final newline.
fn doc(json: &str) -> String {
    let out = from_json(json).unwrap_or_else(|e| panic!("{json}: {e:?}"));
    let body = out.strip_prefix("---\n").unwrap_or_else(|| panic!("{out}"));
    body.strip_suffix('\n').unwrap_or(body).to_string()
}

#[test]
fn scalars_are_kyaml_s() {
    for (json, want) in [
        ("123", "123"),
        ("-3.5", "-3.5"),
        ("1e+21", "1e+21"),
        ("true", "true"),
        ("null", "null"),
        (r#""""#, r#""""#),
        (r#""abc""#, r#""abc""#),
        (r#""yes""#, r#""yes""#),
        (r#""a\u003cb""#, r#""a<b""#),
        ("[]", "[]"),
        ("{}", "{}"),
    ] {
        assert_eq!(doc(json), want, "{json}");
    }
}

#[test]
fn a_multi_line_string_is_folded() {
    assert_eq!(
        doc(r#""This\n is a\n  multi-line\n string""#),
        "\"\\\n   This\\n\\\n  \\ is a\\n\\\n  \\  multi-line\\n\\\n  \\ string\\\n  \""
    );
}

#[test]
fn escapes_are_go_s() {
    for (c, want) in [
        ('\\', r#""\\""#),
        ('"', r#""\"""#),
        ('\u{7}', r#""\a""#),
        ('\r', r#""\r""#),
        ('\t', "\"\t\""),
        ('\0', r#""\0""#),
        ('\u{1b}', r#""\e""#),
        ('\u{85}', r#""\N""#),
        ('\u{a0}', r#""\_""#),
        ('\u{2028}', r#""\L""#),
        ('\u{1}', r#""\x01""#),
    ] {
        let mut out = String::new();
        render_string(&c.to_string(), 0, false, false, &mut out);
        assert_eq!(out, want, "{c:?}");
    }
    let mut out = String::new();
    render_string("\n", 0, false, false, &mut out);
    assert_eq!(out, "\"\\\n \\n\\\n\"");
    let mut out = String::new();
    render_string("a\tb\nc", 0, true, true, &mut out);
    assert_eq!(out, r#""a\tb\nc""#);
}

#[test]
fn keys_are_quoted_only_when_ambiguous() {
    assert_eq!(
        doc(r#"{"NULL":1,"_1":2,"__1__2__":3,"unambiguous":4,"~":5,"y":6,"on":7}"#),
        "{\n  \"NULL\": 1,\n  \"_1\": 2,\n  \"__1__2__\": 3,\n  unambiguous: 4,\n  \"~\": 5,\n  \"y\": 6,\n  \"on\": 7,\n}"
    );
    assert_eq!(
        doc(
            r#"{"_":1,"with-dash":2,"with.dot":3,"with/slash":4,"-lead":5,"trail.":6,"not safe":7}"#
        ),
        "{\n  _: 1,\n  with-dash: 2,\n  with.dot: 3,\n  with/slash: 4,\n  \"-lead\": 5,\n  \"trail.\": 6,\n  \"not safe\": 7,\n}"
    );
    assert_eq!(
        doc(r#"{"11:00":1,"2006":2,"2006-1-2":3,"2006-1-2T15:4:5.999999999-08:00":4,"1\n 2":5}"#),
        "{\n  \"11:00\": 1,\n  \"2006\": 2,\n  \"2006-1-2\": 3,\n  \"2006-1-2T15:4:5.999999999-08:00\": 4,\n  \"1\\n 2\": 5,\n}"
    );
}

#[test]
fn type_ambiguity_is_kyaml_s() {
    for (s, want) in [
        ("regular", false),
        ("hello-world", false),
        ("YES", true),
        ("N", true),
        ("OFF", true),
        ("0123", true),
        ("+123", true),
        ("123456789012345678901234567890", true),
        ("0o777", true),
        ("0xFF", true),
        (".INF", true),
        ("1E10", true),
        ("2006-1-2t15:4:5.999999999-08:00", true),
        ("2006-1-2 14:4:5.999999999", true),
        ("1:60", false),
        ("1:2:3:4:5:00:00:01.02", true),
        ("12345:60.00", false),
        ("Null", true),
        ("nginx", false),
        ("v1", false),
    ] {
        assert_eq!(is_type_ambiguous(s), want, "{s}");
    }
}

#[test]
fn lists_of_maps_are_cuddled() {
    assert_eq!(
        doc(r#"[{"I":1},{"I":2}]"#),
        "[{\n  I: 1,\n}, {\n  I: 2,\n}]"
    );
    assert_eq!(doc("[1,2]"), "[\n  1,\n  2,\n]");
    assert_eq!(
        doc(r#"{"a":{"b":["x","y"],"c":[[1],[]]}}"#),
        "{\n  a: {\n    b: [\n      \"x\",\n      \"y\",\n    ],\n    c: [[\n      1,\n    ], []],\n  },\n}"
    );
}

/// Recorded from kubectl 1.37 (`tests/fidelity/yaml/configmap-values.json`, `s094`):
/// go-yaml v3 folds a raw NEL as a line break.
#[test]
fn a_raw_nel_folds_as_go_yaml_v3_folds_it() {
    assert_eq!(doc("{\"s094\":\"a\u{85}b\"}"), "{\n  s094: \"a b\",\n}");
    assert_eq!(fold_nel("a \u{85}\u{85} b"), "a\nb");
    assert_eq!(fold_nel("plain"), "plain");
}
