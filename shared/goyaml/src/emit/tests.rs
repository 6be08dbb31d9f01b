//! The emitter against go-yaml v2's output. Every expected text below is what
//! sigs.k8s.io/yaml v1.4.0 (kubectl 1.32's) wrote for the same object's JSON; the
//! golden table at the end is kubectl's own output, kept in `golden.yaml`.

use serde_json::json;

use super::*;

fn yaml(value: &Value) -> String {
    to_string(value).expect("writes")
}

/// How `value` is written under the key `k`: the text after `k: `, without the final
/// line break.
fn scalar(value: &str) -> String {
    let text = yaml(&json!({ "k": value }));
    text.strip_prefix("k:")
        .and_then(|t| t.strip_suffix('\n'))
        .map(|t| t.strip_prefix(' ').unwrap_or(t))
        .unwrap_or(&text)
        .to_string()
}

fn check(cases: &[(&str, &str)]) {
    let failures: Vec<String> = cases
        .iter()
        .filter(|(value, expected)| scalar(value) != *expected)
        .map(|(value, expected)| format!("{value:?}: {:?}, not {expected:?}", scalar(value)))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn kubectls_layout() {
    let pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "x", "labels": {"run": "x"}},
        "spec": {
            "containers": [{"image": "nginx", "name": "x", "resources": {}, "args": ["a", "b"]}],
            "dnsPolicy": "ClusterFirst"
        },
        "status": {}
    });
    assert_eq!(
        yaml(&pod),
        "\
apiVersion: v1
kind: Pod
metadata:
  labels:
    run: x
  name: x
spec:
  containers:
  - args:
    - a
    - b
    image: nginx
    name: x
    resources: {}
  dnsPolicy: ClusterFirst
status: {}
"
    );
}

#[test]
fn nested_collections() {
    let v = json!({"l": ["a", ["b", ["c"]], {"k": ["d", {}]}, [], {}, null, true, 1, -2, 1.5, {"m": {"n": []}}]});
    assert_eq!(
        yaml(&v),
        "l:\n- a\n- - b\n  - - c\n- k:\n  - d\n  - {}\n- []\n- {}\n- null\n- true\n- 1\n- -2\n- 1.5\n- m:\n    \"n\": []\n"
    );
    assert_eq!(yaml(&json!({})), "{}\n");
    assert_eq!(yaml(&json!([])), "[]\n");
    assert_eq!(
        yaml(&json!({"": "", "k": {"": []}})),
        "\"\": \"\"\nk:\n  \"\": []\n"
    );
}

/// A first character that is a YAML indicator, `: ` or ` #` inside, `---` and `...`:
/// single-quoted (a quote doubled); what reads back as plain text stays plain.
#[test]
fn indicators_are_single_quoted() {
    check(&[
        ("*", "'*'"),
        ("&x", "'&x'"),
        ("!x", "'!x'"),
        ("|", "'|'"),
        (">", "'>'"),
        ("'q", "'''q'"),
        ("\"q", "'\"q'"),
        ("%", "'%'"),
        ("@", "'@'"),
        ("`", "'`'"),
        ("#", "'#'"),
        ("a#b", "a#b"),
        ("a #b", "'a #b'"),
        ("-", "'-'"),
        ("- a", "'- a'"),
        ("-a", "-a"),
        ("?", "'?'"),
        ("? a", "'? a'"),
        ("?a", "?a"),
        (":", "':'"),
        (": a", "': a'"),
        ("a:b", "a:b"),
        ("a: b", "'a: b'"),
        ("a:", "'a:'"),
        ("[a]", "'[a]'"),
        ("{a}", "'{a}'"),
        (",", "','"),
        ("a,b", "a,b"),
        ("---", "'---'"),
        ("...", "'...'"),
        ("--- a", "'--- a'"),
        ("...a", "'...a'"),
        ("<<", "<<"),
        ("=", "="),
        ("~x", "~x"),
        ("127.0.0.1", "127.0.0.1"),
        ("::1", "::1"),
        ("10.0.0.0/8", "10.0.0.0/8"),
        ("1.2.3", "1.2.3"),
        ("v1", "v1"),
        (
            "i=0; while true; do echo \"$i: $(date)\"; i=$((i+1)); sleep 1; done",
            "'i=0; while true; do echo \"$i: $(date)\"; i=$((i+1)); sleep 1; done'",
        ),
    ]);
}

#[test]
fn spaces_and_quotes() {
    check(&[
        (" a", "' a'"),
        ("a ", "'a '"),
        (" ", "' '"),
        ("  ", "'  '"),
        ("a  b", "a  b"),
        ("a\tb", "\"a\\tb\""),
        ("\t", "\"\\t\""),
        ("it's", "it's"),
        ("say \"hi\"", "say \"hi\""),
        ("'both' \"kinds\"", "'''both'' \"kinds\"'"),
        ("a\\b", "a\\b"),
        ("'", "''''"),
        ("\"", "'\"'"),
        ("'a' b", "'''a'' b'"),
    ]);
}

/// What go-yaml v2's resolver reads as a number (YAML 1.1) is double-quoted; the near
/// misses stay plain.
#[test]
fn text_that_reads_back_as_a_number_is_double_quoted() {
    check(&[
        ("0777", "\"0777\""),
        ("0o17", "\"0o17\""),
        ("0x1F", "\"0x1F\""),
        ("0X1f", "\"0X1f\""),
        ("0b101", "\"0b101\""),
        ("1_000", "\"1_000\""),
        ("+1", "\"+1\""),
        ("-1", "\"-1\""),
        ("99999999999999999999", "\"99999999999999999999\""),
        ("08", "\"08\""),
        ("09.5", "\"09.5\""),
        ("1.5", "\"1.5\""),
        (".5", "\".5\""),
        ("-.5", "\"-.5\""),
        ("1e3", "\"1e3\""),
        ("1E3", "\"1E3\""),
        ("1.", "\"1.\""),
        (".5_5", "\".5_5\""),
        ("6.8523015e+5", "\"6.8523015e+5\""),
        ("1_0.5", "\"1_0.5\""),
        ("1_", "\"1_\""),
        ("0x1p-2", "0x1p-2"),
        ("0b", "0b"),
        ("0x", "0x"),
        ("_1", "_1"),
        ("+", "+"),
        (".", "."),
        ("1.20", "\"1.20\""),
        (".inf", "\".inf\""),
        ("-.Inf", "\"-.Inf\""),
        ("+.INF", "\"+.INF\""),
        (".nan", "\".nan\""),
        (".NaN", "\".NaN\""),
        ("inf", "inf"),
        ("nan", "nan"),
        ("Infinity", "Infinity"),
        ("-inf", "-inf"),
        (".Nan", ".Nan"),
        ("+.nan", "+.nan"),
    ]);
}

/// What go-yaml v2's resolver reads as a bool or null is double-quoted; the near
/// misses stay plain.
#[test]
fn text_that_reads_back_as_a_bool_or_null_is_double_quoted() {
    check(&[
        ("y", "\"y\""),
        ("Y", "\"Y\""),
        ("yes", "\"yes\""),
        ("Yes", "\"Yes\""),
        ("YES", "\"YES\""),
        ("n", "\"n\""),
        ("N", "\"N\""),
        ("no", "\"no\""),
        ("on", "\"on\""),
        ("On", "\"On\""),
        ("ON", "\"ON\""),
        ("off", "\"off\""),
        ("Off", "\"Off\""),
        ("OFF", "\"OFF\""),
        ("true", "\"true\""),
        ("True", "\"True\""),
        ("TRUE", "\"TRUE\""),
        ("false", "\"false\""),
        ("tRUE", "tRUE"),
        ("yEs", "yEs"),
        ("null", "\"null\""),
        ("Null", "\"Null\""),
        ("NULL", "\"NULL\""),
        ("~", "\"~\""),
        ("", "\"\""),
        ("nULL", "nULL"),
        ("o", "o"),
    ]);
}

/// What go-yaml v2's resolver reads as a timestamp is double-quoted; the near
/// misses stay plain.
#[test]
fn text_that_reads_back_as_a_timestamp_is_double_quoted() {
    check(&[
        ("2024-01-02", "\"2024-01-02\""),
        ("2024-1-2", "\"2024-1-2\""),
        ("2024-13-01", "2024-13-01"),
        ("2024-02-30", "2024-02-30"),
        ("2024-02-29", "\"2024-02-29\""),
        ("2023-02-29", "2023-02-29"),
        (
            "2001-12-14t21:59:43.10-05:00",
            "\"2001-12-14t21:59:43.10-05:00\"",
        ),
        ("2001-12-14T21:59:43Z", "\"2001-12-14T21:59:43Z\""),
        ("2001-12-14 21:59:43.10", "\"2001-12-14 21:59:43.10\""),
        ("2001-12-14  21:59:43", "\"2001-12-14  21:59:43\""),
        ("2001-12-14T21:59:43", "2001-12-14T21:59:43"),
        ("2001-12-14T21:59:43+25:00", "2001-12-14T21:59:43+25:00"),
        ("2001-12-14 21:59:43,5", "\"2001-12-14 21:59:43,5\""),
        ("2001-12-14T24:00:00Z", "2001-12-14T24:00:00Z"),
        ("12345-01-01", "12345-01-01"),
        (
            "2001-12-14T21:59:43.1234567891Z",
            "\"2001-12-14T21:59:43.1234567891Z\"",
        ),
        ("2001-12-14 21:59", "2001-12-14 21:59"),
        ("2001-12-14T1:2:3+24:00", "\"2001-12-14T1:2:3+24:00\""),
    ]);
}

/// What go-yaml v2's resolver reads as a base-60 float is double-quoted; the near
/// misses stay plain.
#[test]
fn text_that_reads_back_as_a_base_60_float_is_double_quoted() {
    check(&[
        ("1:20", "\"1:20\""),
        ("190:20:30", "\"190:20:30\""),
        ("1:60", "1:60"),
        ("-1:20.5", "\"-1:20.5\""),
        ("1:2:3", "\"1:2:3\""),
        ("1:20:", "'1:20:'"),
        ("a:20", "a:20"),
        ("+1_0:5_9", "+1_0:5_9"),
        ("1:5.", "\"1:5.\""),
        ("8080:80", "8080:80"),
        ("1:1:1:1", "\"1:1:1:1\""),
        ("12:345", "12:345"),
    ]);
}

/// A string with a line feed is a literal block, with go-yaml's indentation and
/// chomping indicators, unless a space ends a line or the text, or a character needs
/// an escape: then double-quoted.
#[test]
fn line_breaks() {
    let v = json!({"a": "a\nb", "b": "a\n", "c": "a\n\n", "d": "\n", "e": "\na", "f": " a\nb",
        "g": "a \nb", "h": "a\n b", "i": "a\r\nb", "j": "a\rb", "k": "a\n\n\nb", "l": "\n\n",
        "m": "a\n\n b\n"});
    assert_eq!(
        yaml(&v),
        "a: |-\n  a\n  b\nb: |\n  a\nc: |+\n  a\n\nd: |2+\n\ne: |2-\n\n  a\nf: |2-\n   a\n  b\ng: \"a \\nb\"\nh: |-\n  a\n   b\ni: \"a\\r\\nb\"\nj: \"a\\rb\"\nk: |-\n  a\n\n\n  b\nl: |2+\n\n\nm: |\n  a\n\n   b\n"
    );
}

/// Printable characters beyond ASCII as they are, everything else escaped: go-yaml's
/// `is_printable` stops at U+FFFD, so characters beyond the Basic Multilingual Plane
/// are escaped too, and a leading byte-order mark escapes the whole text.
#[test]
fn characters_beyond_ascii_and_controls() {
    check(&[
        ("é", "é"),
        ("日本語", "日本語"),
        ("😀", "\"\\U0001F600\""),
        ("a\u{a0}b", "a\u{a0}b"),
        ("\u{a0}", "\u{a0}"),
        ("a\u{2028}b", "'a\u{2028}  b'"),
        ("\u{feff}a", "\"\\uFEFF\\x61\""),
        ("a\u{feff}b", "\"a\\uFEFFb\""),
        ("e\u{301}", "e\u{301}"),
        ("\0", "\"\\0\""),
        ("\u{1}", "\"\\x01\""),
        ("\u{1b}", "\"\\e\""),
        ("\u{7}\u{8}\u{c}\u{b}", "\"\\a\\b\\f\\v\""),
    ]);
}

/// NEL stands in JSON text as it is, so go-yaml's reader folds it as a line break
/// inside the quoted string; in a key it breaks the JSON mapping.
#[test]
fn nel_as_gos_reader_sees_it() {
    check(&[
        ("a\u{85}b", "a b"),
        ("x \u{85} \u{85} y \u{85}z", "|-\n  x\n  y z"),
    ]);
    assert_eq!(
        to_string(&json!({"b": [1, 2, {"c": {"x\u{85}y": "a"}}]})),
        Err(EmitError::KeyLineBreak { line: 1 })
    );
    assert_eq!(
        to_string(&json!({"a": "\u{85}\u{85}", "b\u{85}": 1})),
        Err(EmitError::KeyLineBreak { line: 3 })
    );
    assert_eq!(
        to_string(&json!({"k": "x\u{85}--- y"})),
        Err(EmitError::DocumentIndicator { line: 2 })
    );
    assert_eq!(
        to_string(&json!({"k": "x\u{85}---y"})).as_deref(),
        Ok("k: x ---y\n")
    );
}

#[test]
fn control_characters_json_leaves_unescaped_fail_as_in_kubectl() {
    for bad in [
        "a\u{7f}", "\u{80}", "\u{84}", "\u{86}", "\u{9f}", "\u{fffe}", "\u{ffff}",
    ] {
        assert_eq!(
            to_string(&json!({"data": {"k": bad}})),
            Err(EmitError::ControlCharacters),
            "{bad:?}"
        );
        assert_eq!(
            to_string(&json!({"data": {bad: "v"}})),
            Err(EmitError::ControlCharacters),
            "{bad:?}"
        );
    }
    assert_eq!(
        EmitError::ControlCharacters.to_string(),
        "yaml: control characters are not allowed"
    );
    // The reader decodes 512 bytes at a time: a control character that comes after
    // the chunk where the parser stops at a key with a NEL is never read.
    let far = json!({"a\u{85}": 1, "z": format!("{}\u{7f}", "x".repeat(600))});
    assert_eq!(to_string(&far), Err(EmitError::KeyLineBreak { line: 1 }));
    let near = json!({"a\u{85}": 1, "z": "x\u{7f}"});
    assert_eq!(to_string(&near), Err(EmitError::ControlCharacters));
}

/// Plain, single- and double-quoted scalars fold at the first space after column 80;
/// a literal block and a word longer than the line never fold.
#[test]
fn long_lines_fold_past_80_columns() {
    check(&[
        // Exactly 80 columns with `k: `: not folded.
        (
            "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhh",
            "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhh",
        ),
        (
            "aaaaaaaa bbbbbbbb cccccccc dddddddd eeeeeeee ffffffff gggggggg hhhhhhhh iiiiiiii jjjjjjjj kkkkkkkk",
            "aaaaaaaa bbbbbbbb cccccccc dddddddd eeeeeeee ffffffff gggggggg hhhhhhhh iiiiiiii\n  jjjjjjjj kkkkkkkk",
        ),
        // Two spaces: never a fold point in plain text.
        (
            "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhhhhh  two  spaces",
            "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhhhhh  two  spaces",
        ),
        (
            "*aaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhhhhh it's here",
            "'*aaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhhhhh\n  it''s here'",
        ),
        // Double-quoted: a fold before a second space escapes it.
        (
            "\taaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhhhhh  two spaces",
            "\"\\taaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhhhhh\n  \\ two spaces\"",
        ),
        (
            "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz",
            "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz",
        ),
        (
            "line one is here\nand line two is a very long one that goes on and on and on well past eighty columns of text",
            "|-\n  line one is here\n  and line two is a very long one that goes on and on and on well past eighty columns of text",
        ),
    ]);
    let key = json!({"kk": "aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhhhx yy"});
    assert_eq!(
        yaml(&key),
        "kk: aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhhhx\n  yy\n"
    );
    // Deeper, the continuation is indented under its node.
    let nested = json!({"a": {"b": {"c": ["aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhh iiiii"]}}});
    assert_eq!(
        yaml(&nested),
        "a:\n  b:\n    c:\n    - aaaaaaaaa bbbbbbbbb ccccccccc ddddddddd eeeeeeeee fffffffff ggggggggg hhhhhhhhh\n      iiiii\n"
    );
    // Column counts characters, not bytes.
    let wide = format!("{} x", "é".repeat(76));
    assert_eq!(scalar(&wide), wide);
}

/// A key of more than 128 bytes or with a line break is written as `? key` and
/// `: value`.
#[test]
fn complex_keys() {
    let long = "a".repeat(128);
    let longer = "b".repeat(129);
    let words = "d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j k l m n o p q r s t u v";
    let v = json!({long.clone(): "x", longer.clone(): {"c": 1}, words: ["x"]});
    assert_eq!(
        yaml(&v),
        format!(
            "{long}: x\n? {longer}\n: c: 1\n? d e f g h i j k l m n o p q r s t u v w x y z a b c d e f g h i j k l m n o p q\n  r s t u v w x y z a b c d e f g h i j k l m n o p q r s t u v\n: - x\n"
        )
    );
    let v = json!({"a\nb": "x", "c\nd": {"e": 1}, "f\ng": ["y"], "h\n": "z", "i ": "\n"});
    assert_eq!(
        yaml(&v),
        "? |-\n  a\n  b\n: x\n? |-\n  c\n  d\n: e: 1\n? |-\n  f\n  g\n: - \"y\"\n? |\n  h\n: z\n'i ': |2+\n\n"
    );
}

#[test]
fn keys_in_go_yamls_order() {
    let keys = [
        "1", "10", "9", "a1", "a10", "a2", "B", "b", "_", "-", "é", "日本", "a01", "a001", "A",
        "Z", "z", "~", ".", "0", "00", "01",
    ];
    let v = Value::Object(keys.iter().map(|k| ((*k).to_string(), json!(1))).collect());
    assert_eq!(
        yaml(&v),
        "'-': 1\n.: 1\n_: 1\n\"~\": 1\n\"0\": 1\n\"00\": 1\n\"1\": 1\n\"01\": 1\n\"9\": 1\n\"10\": 1\nA: 1\nB: 1\nZ: 1\na1: 1\na01: 1\na001: 1\na2: 1\na10: 1\nb: 1\nz: 1\né: 1\n日本: 1\n"
    );
}

/// Numbers as `json.Marshal` writes them and go-yaml reads them back: integers beyond
/// int64 are kubectl's float64s, floats are Go's shortest `%g`.
#[test]
fn numbers() {
    let v = json!({"n": [0, -0.0, 1e21, 1.5e-7, 12345678901234567890u64, 1e20, 0.1, 100.0,
        1.2345675e6, 123456.5, -1e-5, 5e-324, 1.797_693_134_862_315_7e308, 9_007_199_254_740_993i64,
        1_808_473_927_573_735.2]});
    assert_eq!(
        yaml(&v),
        "\"n\":\n- 0\n- 0\n- 1e+21\n- 1.5e-07\n- 12345678901234567000\n- 1e+20\n- 0.1\n- 100\n- 1.2345675e+06\n- 123456.5\n- -1e-05\n- 5e-324\n- 1.7976931348623157e+308\n- 9007199254740993\n- 1.8084739275737352e+15\n"
    );
}

#[test]
fn scalars_at_the_root() {
    assert_eq!(yaml(&json!("*")), "'*'\n");
    assert_eq!(yaml(&json!(null)), "null\n");
    assert_eq!(yaml(&json!("a\nb")), "|-\n  a\n  b\n");
    assert_eq!(yaml(&json!(["a", {"b": "c"}])), "- a\n- b: c\n");
}

/// The golden table's one-line strings, each a value of `configmap-values` and, where
/// kubectl keeps their order, a key of `configmap-keys`.
const GOLDEN_STRINGS: &[&str] = &[
    "*",
    "&anchor",
    "!tag",
    "|",
    ">",
    "%",
    "@",
    "`",
    "#",
    "a #b",
    "a#b",
    "- a",
    "-a",
    "? a",
    "?a",
    ": a",
    "a: b",
    "a:b",
    "a:",
    "[a]",
    "{a}",
    ",",
    "a,b",
    "---",
    "...",
    "<<",
    "=",
    "~",
    "",
    " ",
    " lead",
    "trail ",
    "in  side",
    "tab\there",
    "\t",
    "it's",
    "say \"hi\"",
    "'both' \"kinds\"",
    "C:\\path",
    "127.0.0.1",
    "::1",
    "10.0.0.0/8",
    "1.2.3",
    "1.20",
    "v1",
    "0777",
    "0o17",
    "0x1F",
    "0b101",
    "1_000",
    "+1",
    "-1",
    "08",
    "1e3",
    ".5",
    ".5_5",
    "1.",
    "99999999999999999999",
    "0x",
    "_1",
    ".inf",
    "-.Inf",
    ".nan",
    "inf",
    "Infinity",
    "y",
    "Y",
    "yes",
    "no",
    "on",
    "Off",
    "true",
    "False",
    "tRUE",
    "null",
    "Null",
    "nULL",
    "2024-01-02",
    "2024-1-2",
    "2024-02-30",
    "2001-12-14t21:59:43.10-05:00",
    "2001-12-14 21:59:43.10",
    "2001-12-14T21:59:43",
    "2001-12-14T21:59:43+25:00",
    "1:20",
    "190:20:30",
    "1:60",
    "8080:80",
    "é",
    "日本語",
    "😀",
    "a\u{a0}b",
    "a\u{2028}b",
    "\u{feff}bom",
    "a\u{85}b",
    "\u{1b}[0m",
    "nul\0",
];

/// The golden table's strings with line breaks.
const GOLDEN_LINES: &[&str] = &[
    "a\nb",
    "a\n",
    "a\n\n",
    "\n",
    "\na",
    " a\nb",
    "a \nb",
    "a\n b",
    "a\r\nb",
    "a\n\n\nb",
    "#!/bin/sh\nset -e\necho \"$HOME\" 'x'\n",
    "\ttabbed\nline",
];

/// The golden table: objects written by the reference kubectl itself (`kubectl patch
/// --local -f F -p '{}' --type merge -o yaml`, offline, which prints the object it read),
/// kept in `golden.yaml` as `# case: NAME` and kubectl's text. `cargo xtask codegen`
/// writes the file again (see `golden_table_is_kubectls_output`).
fn golden_cases() -> Vec<(&'static str, Value)> {
    let data: serde_json::Map<String, Value> = GOLDEN_STRINGS
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("s{i:03}"), json!(s)))
        .collect();
    let keys = golden_keys();
    let multiline: serde_json::Map<String, Value> = GOLDEN_LINES
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("m{i:02}"), json!(s)))
        .collect();
    let long = golden_long_lines();
    let meta = |name: &str| json!({"name": name});
    vec![
        (
            "configmap-values",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("values"), "data": data}),
        ),
        (
            "configmap-keys",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("keys"), "data": keys}),
        ),
        (
            "annotations",
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "notes", "annotations": multiline.clone(),
                    "labels": {"app": "web", "tier": "8080", "enabled": "true"}}}),
        ),
        (
            "multiline",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("lines"), "data": multiline}),
        ),
        (
            "long-lines",
            json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta("long"),
                "spec": {"items": long.clone(), "nested": {"deeper": {"list": long}}}}),
        ),
        (
            "complex-keys",
            json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta("keys"),
                "spec": {"a".repeat(128): "at the limit", "b".repeat(129): {"c": 1},
                    "two\nlines": ["x"], "trailing\n": "z",
                    format!("{} and more words to pass the limit", "words ".repeat(20)): "v"}}),
        ),
        (
            "numbers",
            json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta("numbers"),
                "spec": {"ints": [0, 1, -1, 9_007_199_254_740_993i64, i64::MIN, i64::MAX],
                    "floats": [0.5, -0.0, 1e21, 1.5e-7, 1e20, 0.1, 100.5, 1.2345675e6, 5e-324,
                        1.797_693_134_862_315_7e308, 1_808_473_927_573_735.2],
                    "big": 12_345_678_901_234_567_890u64, "bools": [true, false], "none": null}}),
        ),
        (
            "nested",
            json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": meta("nested"),
                "spec": {"l": ["a", ["b", ["c", []]], {"k": ["d", {}]}, [], {}, null,
                    {"m": {"n": [], "o": {"p": [{"q": [1, [2]]}]}}}], "empty": {}, "none": []}}),
        ),
        (
            "pod",
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "counter",
                    "labels": {"run": "counter"}},
                "spec": {"containers": [{"name": "count", "image": "busybox:1.36",
                    "command": ["/bin/sh", "-c"],
                    "args": ["i=0; while true; do echo \"$i: $(date)\"; i=$((i+1)); sleep 1; done"],
                    "env": [{"name": "A", "value": "*"}, {"name": "B", "value": "yes"},
                        {"name": "C", "value": ""}, {"name": "D", "value": "0x10"}],
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                    "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}}],
                    "restartPolicy": "Always"}}),
        ),
    ]
}

/// As keys, the golden strings whose order kubectl prints the same on every run (and no
/// NEL, which kubectl refuses in a key).
fn golden_keys() -> serde_json::Map<String, Value> {
    let mut keys = serde_json::Map::new();
    for s in GOLDEN_STRINGS
        .iter()
        .copied()
        .filter(|s| !s.contains('\u{85}'))
    {
        keys.insert(s.to_string(), json!("v"));
        if !keys_sort_consistently(&Value::Object(keys.clone())) {
            keys.remove(s);
        }
    }
    keys
}

/// Lines around go-yaml's width of 80, where it folds.
fn golden_long_lines() -> Vec<Value> {
    let word = |n: usize| "w".repeat(n);
    (70..=90)
        .map(|n| json!(format!("{} {} end", word(n - 6), word(2))))
        .chain([
            json!(format!("*{} folded in single quotes", word(78))),
            json!(format!("\t{}  two spaces in double quotes", word(78))),
            json!(word(120)),
            json!(format!("{} x", "é".repeat(76))),
            json!(format!("{} x", "é".repeat(78))),
        ])
        .collect()
}

/// Whether every map's keys sort the same whatever their order (kubectl's own order
/// changes from run to run otherwise, see `key_order`).
fn keys_sort_consistently(value: &Value) -> bool {
    use crate::key_order::{less, sort};
    match value {
        Value::Array(items) => items.iter().all(keys_sort_consistently),
        Value::Object(map) => {
            let mut keys: Vec<&str> = map.keys().map(String::as_str).collect();
            sort(&mut keys);
            keys.iter()
                .enumerate()
                .all(|(i, a)| keys[i + 1..].iter().all(|b| less(a, b) && !less(b, a)))
                && map.values().all(keys_sort_consistently)
        }
        _ => true,
    }
}

fn golden_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/emit/golden.yaml")
}

/// Runs `kubectl` over each case (offline: the kubeconfig points nowhere).
fn regenerate_golden(kubectl: &std::ffi::OsStr, cases: &[(&str, Value)]) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut text = String::new();
    for (name, object) in cases {
        let file = dir.path().join(format!("{name}.json"));
        std::fs::write(&file, gotext::go_fmt::json(object, None)).expect("write");
        let out = std::process::Command::new(kubectl)
            .args([
                "patch", "--local", "-p", "{}", "--type", "merge", "-o", "yaml", "-f",
            ])
            .arg(&file)
            .env("KUBECONFIG", dir.path().join("none"))
            .output()
            .expect("kubectl runs");
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        text.push_str(&format!("# case: {name}\n"));
        text.push_str(&String::from_utf8(out.stdout).expect("UTF-8"));
    }
    text
}

/// The emitter writes each case as kubectl did. With `KUBEPLUG_CODEGEN_OUT=DIR` and
/// `KUBEPLUG_CODEGEN_KUBECTL=PATH` (set by `cargo xtask codegen`, which owns the file and
/// finds the reference kubectl) it is the golden table's generator instead: it writes
/// `golden.yaml` into DIR from that kubectl's output.
#[test]
fn golden_table_is_kubectls_output() {
    let cases = golden_cases();
    for (name, object) in &cases {
        assert!(
            keys_sort_consistently(object),
            "{name}: kubectl's order would vary"
        );
    }
    if let Some(out) = std::env::var_os("KUBEPLUG_CODEGEN_OUT") {
        let kubectl = std::env::var_os("KUBEPLUG_CODEGEN_KUBECTL")
            .expect("KUBEPLUG_CODEGEN_KUBECTL names the reference kubectl");
        std::fs::write(
            std::path::Path::new(&out).join("golden.yaml"),
            regenerate_golden(&kubectl, &cases),
        )
        .expect("write golden.yaml");
        return;
    }
    let golden = std::fs::read_to_string(golden_path()).expect("golden.yaml");
    let expected: Vec<(&str, &str)> = golden
        .split("# case: ")
        .skip(1)
        .filter_map(|part| part.split_once('\n'))
        .collect();
    assert_eq!(
        expected.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        cases.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        "shared/goyaml/src/emit/golden.yaml is stale: run `cargo xtask codegen` and commit it"
    );
    for ((name, object), (_, kubectl)) in cases.iter().zip(&expected) {
        assert_eq!(yaml(object), *kubectl, "{name}");
    }
}
