//! go-yaml v2's reading, each case checked against kubectl 1.32.

use super::*;
use serde_json::json;

const LIMITS: Limits = Limits {
    max_depth: 128,
    max_nodes: 100_000,
    max_bytes: 16 << 20,
};

fn read(text: &str) -> Result<Value, String> {
    to_json(text, LIMITS).map_err(|e| e.message)
}

#[test]
fn yaml_1_1_scalars() {
    let v = read(
        "a: 0400\nb: -0400\nc: 0o17\nd: 0x1F\ne: 1_000\nf: +1\ng: 08\nh: 1e3\ni: [y, n, yes, off, On, NO]\nj: [yEs, nULL]\nk: ~\nl: 2001-12-14\nm: 1.5\nbig: 1e400\no: !!int \"0400\"\np: '0400'\n",
    )
    .expect("reads");
    assert_eq!(
        v,
        json!({"a": 256, "b": -256, "c": 15, "d": 31, "e": 1000, "f": 1, "g": 8, "h": 1000,
            "i": [true, false, true, false, true, false], "j": ["yEs", "nULL"], "k": null,
            "l": "2001-12-14", "m": 1.5, "big": "1e400", "o": 256, "p": "0400"})
    );
}

#[test]
fn repeated_keys_last_wins_and_merges_in_order() {
    let v = read("a: 1\na: 2\nbase: &b {x: 1, q: 2}\nm:\n  <<: [*b, {x: 3, z: 4}]\n  q: 5\n")
        .expect("reads");
    assert_eq!(
        v,
        json!({"a": 2, "base": {"x": 1, "q": 2}, "m": {"x": 1, "q": 5, "z": 4}})
    );
}

#[test]
fn keys_convert_as_sigs_yaml_converts_them() {
    let v = read("1: a\ntrue: b\n1.5: c\n0x10: d\n1e7: e\n").expect("reads");
    assert_eq!(
        v,
        json!({"1": "a", "true": "b", "1.5": "c", "16": "d", "1e+07": "e"})
    );
    assert_eq!(
        read("~: x\n").unwrap_err(),
        "unsupported map key of type: %!s(<nil>), key: <nil>, value: \"x\""
    );
    assert_eq!(
        read("18446744073709551615: x\n").unwrap_err(),
        "unsupported map key of type: uint64, key: 0xffffffffffffffff, value: \"x\""
    );
}

#[test]
fn errors_in_go_yaml_words() {
    assert_eq!(
        read("a:\n  {{ .x }}: b\n").unwrap_err(),
        "invalid map key: map[interface {}]interface {}{\".x\":interface {}(nil)}"
    );
    assert_eq!(
        read("a: [b]\n[a]: x\n").unwrap_err(),
        "invalid map key: []interface {}{\"a\"}"
    );
    assert_eq!(
        read("a: .inf\n").unwrap_err(),
        "json: unsupported value: +Inf"
    );
    assert_eq!(
        read("a: .nan\n").unwrap_err(),
        "json: unsupported value: NaN"
    );
    assert_eq!(
        read("a: *nope\n").unwrap_err(),
        "unknown anchor 'nope' referenced"
    );
    assert_eq!(
        read("<<: 5\n").unwrap_err(),
        "map merge requires map or sequence of maps as the value"
    );
    assert_eq!(
        read("a: !!int 1.5\n").unwrap_err(),
        "cannot decode !!float `1.5` as a !!int"
    );
    assert_eq!(
        read("a: b\nc d\ne: f\n").unwrap_err(),
        "line 3: could not find expected ':'"
    );
    assert_eq!(
        read("a:\n  b: [c\n").unwrap_err(),
        "line 2: did not find expected ',' or ']'"
    );
    assert_eq!(
        read("a: x\nkind: [\n").unwrap_err(),
        "line 2: did not find expected node content"
    );
    assert_eq!(
        read("a: x\nb: [a, - b]\n").unwrap_err(),
        "line 1: did not find expected node content"
    );
    assert_eq!(
        read("a: b: c\n").unwrap_err(),
        "mapping values are not allowed in this context"
    );
    assert_eq!(
        read("a:\n\tb: c\n").unwrap_err(),
        "line 2: found character that cannot start any token"
    );
}

#[test]
fn alias_bombs_stop_at_the_budget() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..8 {
        let p = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    assert_eq!(
        read(&text).unwrap_err(),
        "document contains excessive aliasing"
    );
}

/// `-o yaml` output read back the way kubectl reads it gives the same strings: every
/// text YAML 1.1 would take for something else is quoted by the printer.
#[test]
fn printed_yaml_reads_back_as_the_same_strings() {
    let texts = [
        "y",
        "Y",
        "yes",
        "Yes",
        "YES",
        "n",
        "N",
        "no",
        "NO",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "true",
        "False",
        "~",
        "null",
        "Null",
        "NULL",
        "",
        "0400",
        "-0400",
        "0o17",
        "0x1F",
        "0b101",
        "1_0",
        "1_000",
        "+1",
        "08",
        "09.5",
        "1e3",
        "1.",
        ".5",
        "+.5",
        ".inf",
        "-.Inf",
        ".nan",
        ".NaN",
        "<<",
        "=",
        "2001-12-14",
        "1:30",
        "yEs",
        "- a",
        "a: b",
        "#x",
        "@x",
        "`x",
        "{{ .x }}",
        "[a]",
        "12345678901234567890",
        "0",
        "-",
        "?",
        "!x",
        "&a",
        "*a",
    ];
    let object: serde_json::Map<String, Value> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| (format!("k{i}"), Value::String((*t).to_string())))
        .collect();
    let object = Value::Object(object);
    let printed = crate::emit::to_string(&object).expect("printed");
    assert_eq!(read(&printed), Ok(object), "{printed}");
}

/// A mapping of many keys reads in linear time (keys are found through an index).
#[test]
fn many_keys_with_repeats() {
    let mut text = String::new();
    for i in 0..200_000 {
        text.push_str(&format!("k{}: {i}\n", i % 100_000));
    }
    let limits = Limits {
        max_depth: 128,
        max_nodes: 1_000_000,
        max_bytes: 16 << 20,
    };
    let v = to_json(&text, limits).expect("reads");
    let map = v.as_object().expect("map");
    assert_eq!(map.len(), 100_000);
    assert_eq!(map["k7"], 100_007);
}

#[test]
fn timestamps_stay_text_and_a_directive_ends_the_document() {
    let v = read("a: !!timestamp 2001-12-14\nb: 2001-12-14t21:59:43.10-05:00\nc: 2001-02-29\n")
        .expect("reads");
    assert_eq!(
        v,
        json!({"a": "2001-12-14", "b": "2001-12-14t21:59:43.10-05:00", "c": "2001-02-29"})
    );
    assert_eq!(
        read("a: !!timestamp 2001-02-29\n").unwrap_err(),
        "cannot decode !!str `2001-02-29` as a !!timestamp"
    );
    assert_eq!(read("a: b\n%YAML 1.1\n---\nc: d\n"), Ok(json!({"a": "b"})));
    // As Go's time.Parse reads the layouts: a run of spaces for one, any number of
    // fraction digits, a zone of at most 24 hours.
    assert_eq!(
        read("a: !!timestamp \"2001-12-14  21:59:43.1234567891\"\n"),
        Ok(json!({"a": "2001-12-14  21:59:43.1234567891"}))
    );
    assert_eq!(
        read("a: !!timestamp 2001-12-14T21:59:43+25:00\n").unwrap_err(),
        "cannot decode !!str `2001-12-14T21:59:43+25:00` as a !!timestamp"
    );
}

/// A scalar starting with `.` is a float when Go's `strconv.ParseFloat` takes it,
/// `_` between digits included (sigs.k8s.io/yaml v1.4.0 reads the same).
#[test]
fn dot_floats_as_go_parses_them() {
    assert_eq!(
        read("a: .5_5\nb: ._5\nc: .5e1_0\n"),
        Ok(json!({"a": 0.55, "b": "._5", "c": 5_000_000_000i64}))
    );
}

#[test]
fn more_syntax_errors_in_libyaml_words() {
    for (text, message) in [
        ("a: \"b\\x4\"\n", "did not find expected hexdecimal number"),
        ("x: y\ndata: {a: b}}\n", "line 1: did not find expected key"),
        ("x: y\ndata: [a]]\n", "line 1: did not find expected key"),
        ("x: y\na: \"x\"y\n", "line 1: did not find expected key"),
        ("x: y\na: 'x'y\n", "line 1: did not find expected key"),
        (
            "x: y\na: {b: [c, d}\n",
            "line 1: did not find expected ',' or ']'",
        ),
    ] {
        assert_eq!(read(text).unwrap_err(), message, "{text:?}");
    }
}

/// An alias of the node being defined, and other oddities, end in an error, never a
/// hang or a panic.
#[test]
fn self_reference_and_oddities_fail_cleanly() {
    assert!(read("a: &a [*a]\n").is_err());
    assert!(read("a: &a {b: *a}\n").is_err());
    assert_eq!(read(""), Ok(Value::Null));
    assert_eq!(read("# only\n"), Ok(Value::Null));
    assert_eq!(read("--- !!str\n"), Ok(json!("")));
    assert_eq!(read("[1, 2]\n"), Ok(json!([1, 2])));
}

#[test]
fn tabs_where_indentation_is_expected() {
    assert_eq!(
        read("a:\tb\n\tc: d\n").unwrap_err(),
        "line 2: found a tab character that violates indentation"
    );
    assert_eq!(
        read("a:\n  b: c\n\td: e\n").unwrap_err(),
        "line 3: found a tab character that violates indentation"
    );
}
