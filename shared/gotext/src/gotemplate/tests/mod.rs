//! Tests of the Go-template engine. Most expectations are kubectl's own output,
//! recorded in [`kubectl`], and Go's `fmt.Sprintf` output for `printf`, recorded in
//! [`go_fmt`]; the tests here cover the same ground by piece (lexer, parser, values,
//! functions, missing keys) in a readable form, plus what kubectl cannot show: byte
//! output that is not UTF-8, the resource bounds, and that no template makes the
//! engine panic.

mod go_fmt;
mod kubectl;

use serde_json::{Value, json};

use super::exec::{Limits, MAX_EXEC_NESTING, MAX_TEMPLATE_DEPTH};
use super::lex::{ItemType, lex};
use super::parse::{MAX_NESTING, parse};
use super::*;

/// The ConfigMap the kubectl cases ran on, as `kubectl create -f obj.yaml` decodes
/// it (`metadata.namespace` comes from the file).
const OBJECT: &str = r#"
{
    "apiVersion": "v1",
    "data": {
        "bad": "aGVsbG8$",
        "bin": "/w==",
        "empty": "",
        "mode": "yes",
        "token": "aGVsbG8gd29ybGQ="
    },
    "kind": "ConfigMap",
    "metadata": {
        "annotations": {
            "note": "a <b> & \"c\""
        },
        "labels": {
            "app": "web",
            "tier": "fe"
        },
        "name": "web",
        "namespace": "team"
    },
    "spec": {
        "big": 1000000,
        "containers": [
            {
                "image": "nginx",
                "name": "web",
                "ports": [
                    {
                        "containerPort": 80
                    }
                ]
            },
            {
                "image": "busybox",
                "name": "log"
            }
        ],
        "emptylist": [],
        "emptymap": {},
        "flag": true,
        "flagoff": false,
        "huge": 12345678901234567890,
        "items": [
            "a",
            "b",
            "c"
        ],
        "mixed": [
            1,
            "x",
            true,
            null,
            {
                "k": "v"
            },
            [
                1,
                2
            ]
        ],
        "multi": "line1\nline2",
        "neg": -2,
        "nothing": null,
        "nums": [
            1,
            2.5,
            -3
        ],
        "ratio": 0.5,
        "replicas": 3,
        "small": 1e-05,
        "unicode": "héllo wörld ✓"
    }
}
"#;

fn object() -> Value {
    serde_json::from_str(OBJECT).expect("the test object is JSON")
}

/// Runs `template` on `data`: the output (lossy UTF-8), or the parse or execution
/// error message.
fn run(template: &str, data: &Value) -> Result<String, String> {
    run_with(template, data, true)
}

fn run_with(template: &str, data: &Value, allow_missing_keys: bool) -> Result<String, String> {
    let t = Template::parse(template).map_err(|e| e.to_string())?;
    t.allow_missing_keys(allow_missing_keys)
        .execute(data)
        .map(|out| String::from_utf8_lossy(&out).into_owned())
        .map_err(|e| e.message)
}

fn check(cases: &[(&str, &str)], data: &Value) {
    for (template, expected) in cases {
        assert_eq!(run(template, data).as_deref(), Ok(*expected), "{template}");
    }
}

#[test]
fn kubectl_outputs() {
    let data = object();
    for (template, expected) in kubectl::OUTPUTS {
        let out = Template::parse(template)
            .unwrap_or_else(|e| panic!("{template}: {e}"))
            .execute(&data)
            .unwrap_or_else(|e| panic!("{template}: {e}"));
        assert_eq!(String::from_utf8_lossy(&out), *expected, "{template}");
    }
    for (template, expected) in kubectl::OUTPUTS_STRICT {
        assert_eq!(
            run_with(template, &data, false).as_deref(),
            Ok(*expected),
            "{template}"
        );
    }
}

#[test]
fn kubectl_execution_errors() {
    let data = object();
    let tables = [
        (kubectl::EXEC_ERRORS, true),
        (kubectl::EXEC_ERRORS_STRICT, false),
    ];
    for (table, allow) in tables {
        for (template, partial, message) in table {
            let t = Template::parse(template).unwrap_or_else(|e| panic!("{template}: {e}"));
            let err = t
                .allow_missing_keys(allow)
                .execute(&data)
                .expect_err(template);
            assert_eq!(err.message, *message, "{template}");
            assert_eq!(
                String::from_utf8_lossy(&err.partial),
                *partial,
                "{template}"
            );
        }
    }
}

#[test]
fn kubectl_parse_errors() {
    for (template, message) in kubectl::PARSE_ERRORS {
        let err = Template::parse(template).expect_err(template);
        assert_eq!(err.to_string(), *message, "{template}");
    }
}

#[test]
fn printf_matches_gos_fmt() {
    let data = json!({"m": {"a": 1, "b": "x"}, "l": [1, "y", null]});
    for (format, expected) in go_fmt::PRINTF {
        let template = format!("{{{{printf `{format}` {}}}}}", go_fmt::PRINTF_ARGS);
        assert_eq!(run(&template, &data).as_deref(), Ok(*expected), "{format}");
    }
    for (format, value, expected) in go_fmt::FLOATS {
        let template = format!("{{{{printf `{format}` .f}}}}");
        assert_eq!(
            run(&template, &json!({ "f": value })).as_deref(),
            Ok(*expected),
            "{format} {value:?}"
        );
    }
}

/// Go strings are bytes; kubectl writes them as they are.
#[test]
fn output_is_bytes() {
    let data = object();
    let bytes = |t: &str| Template::parse(t).expect(t).execute(&data).expect(t);
    // kubectl: printf '\xff' (base64 of /w==)
    assert_eq!(bytes("{{base64decode .data.bin}}"), b"\xff");
    // kubectl prints "h\xc3 195": slicing and indexing work on bytes.
    assert_eq!(
        bytes("{{slice .spec.unicode 0 2}} {{index .spec.unicode 1}}"),
        b"h\xc3 195"
    );
    assert_eq!(
        bytes(r#"{{printf "%é" 1}} {{printf "%v\xff" 1}}"#),
        b"%!\xc3\xa9(int=1) 1\xff"
    );
    // kubectl: the piped value is printf's only operand.
    assert_eq!(
        bytes(r#"{{"\xff" | printf "%q %x %s|"}} {{len "\xff"}}"#),
        b"\"\\xff\" %!x(MISSING) %!s(MISSING)| 1"
    );
    assert_eq!(
        bytes(r#"{{printf "%q %x %s|" "\xff" "\xff" "\xff"}}"#),
        b"\"\\xff\" ff \xff|"
    );
}

#[test]
fn lexer_positions_lines_and_trim_markers() {
    let items = lex("a \n{{- .b.c | printf \"%d\" $x -}}\n z");
    let kinds: Vec<(ItemType, &str, usize, usize)> = items
        .iter()
        .map(|i| (i.typ, i.val.as_str(), i.pos, i.line))
        .collect();
    assert_eq!(
        kinds,
        [
            (ItemType::Text, "a", 0, 1),
            (ItemType::LeftDelim, "{{", 3, 2),
            (ItemType::Field, ".b", 7, 2),
            (ItemType::Field, ".c", 9, 2),
            (ItemType::Space, " ", 11, 2),
            (ItemType::Pipe, "|", 12, 2),
            (ItemType::Space, " ", 13, 2),
            (ItemType::Identifier, "printf", 14, 2),
            (ItemType::Space, " ", 20, 2),
            (ItemType::String, "\"%d\"", 21, 2),
            (ItemType::Space, " ", 25, 2),
            (ItemType::Variable, "$x", 26, 2),
            (ItemType::RightDelim, "}}", 30, 2),
            (ItemType::Text, "z", 34, 3),
            (ItemType::Eof, "", 35, 3),
        ]
    );
    // Comments vanish; "{{-3}}" is a number, not a trim marker.
    let kinds: Vec<ItemType> = lex("{{/* c */}}{{-3}}").iter().map(|i| i.typ).collect();
    assert_eq!(
        kinds,
        [
            ItemType::LeftDelim,
            ItemType::Number,
            ItemType::RightDelim,
            ItemType::Eof
        ]
    );
    let last = |t: &str| lex(t).last().map(|i| (i.typ, i.val.clone()));
    assert_eq!(
        last("{{.a"),
        Some((ItemType::Error, "unclosed action".to_string()))
    );
    assert_eq!(
        last("{{ € }}"),
        Some((
            ItemType::Error,
            "unrecognized character in action: U+20AC '€'".to_string()
        ))
    );
}

/// Parsed trees print as Go's `String()` does (the text error messages quote).
#[test]
fn parser_builds_gos_tree() {
    let tree = |t: &str| parse(NAME, t).expect(t)[NAME].to_string();
    assert_eq!(
        tree("{{if .a}}x{{else if .b}}y{{else}}z{{end}}"),
        "{{if .a}}x{{else}}{{if .b}}y{{else}}z{{end}}{{end}}"
    );
    assert_eq!(
        tree("{{with $x := .a}}{{$x.b}}{{else with .c}}d{{end}}"),
        "{{with $x := .a}}{{$x.b}}{{else}}{{with .c}}d{{end}}{{end}}"
    );
    assert_eq!(
        tree("{{range $i, $e := .items}}{{break}}{{continue}}{{end}}"),
        "{{range $i, $e := .items}}{{break}}{{continue}}{{end}}"
    );
    assert_eq!(
        tree("{{ (index .a 0).b | printf \"%s\" `raw` 'c' 1.5 nil true }}"),
        "{{(index .a 0).b | printf \"%s\" `raw` 'c' 1.5 nil true}}"
    );
    // A block defines a template and calls it; a template call may lack data.
    let trees = parse(NAME, "{{block \"b\" .x}}B{{end}}{{template \"c\"}}").expect("parses");
    assert_eq!(
        trees[NAME].to_string(),
        "{{template \"b\" .x}}{{template \"c\"}}"
    );
    assert_eq!(trees["b"].to_string(), "B");
    // Assignment prints as a declaration, as in Go.
    assert_eq!(tree("{{$x := 1}}{{$x = 2}}"), "{{$x := 1}}{{$x := 2}}");
}

/// How each kind of value prints: kubectl's `fmt.Print` of the decoded object.
#[test]
fn values_print_as_go_prints_them() {
    let data = json!({
        "s": "text", "i": 3, "big": 1000000, "f": 2.5, "tiny": 0.00001, "e": 1e21,
        "t": true, "n": null, "m": {"b": 1, "a": [1, "x", null]}, "l": [], "o": {}
    });
    check(
        &[
            (
                "{{.s}} {{.i}} {{.big}} {{.f}} {{.tiny}} {{.e}}",
                "text 3 1000000 2.5 1e-05 1e+21",
            ),
            ("{{.t}} {{.n}} {{.missing}}", "true <no value> <no value>"),
            ("{{.m}} {{.l}} {{.o}}", "map[a:[1 x <nil>] b:1] [] map[]"),
            (
                "{{printf \"%v|%s|%d\" .n .n .n}}",
                "<nil>|%!s(<nil>)|%!d(<nil>)",
            ),
            (
                "{{printf \"%T %T %T %T %T %T\" .s .i .f .t .m .l}}",
                "string int64 float64 bool map[string]interface {} []interface {}",
            ),
            (
                "{{printf \"%#v\" .m}}",
                "map[string]interface {}{\"a\":[]interface {}{1, \"x\", interface {}(nil)}, \"b\":1}",
            ),
            (
                "{{1}} {{1.0}} {{'a'}} {{0x10}} {{1+2i}}",
                "1 1 97 16 (1+2i)",
            ),
        ],
        &data,
    );
    assert_eq!(
        go_value(&data),
        "map[big:1000000 e:1e+21 f:2.5 i:3 l:[] m:map[a:[1 x <nil>] b:1] n:<nil> o:map[] s:text t:true tiny:1e-05]"
    );
}

/// `--allow-missing-template-keys`: `<no value>` (Go's `missingkey=default`) or
/// kubectl's error (`missingkey=error`); the errors are kubectl's.
#[test]
fn missing_keys_both_ways() {
    let data = object();
    for (template, allowed, strict) in [
        (
            "{{.nope}}",
            Ok("<no value>"),
            "template: output:1:2: executing \"output\" at <.nope>: map has no entry for key \"nope\"",
        ),
        (
            "{{.metadata.nope.deeper}}",
            Ok("<no value>"),
            "template: output:1:11: executing \"output\" at <.metadata.nope.deeper>: map has no entry for key \"nope\"",
        ),
        (
            "{{template \"t\"}}{{define \"t\"}}{{.x}}{{end}}",
            Ok("<no value>"),
            "template: output:1:32: executing \"t\" at <.x>: nil data; no entry for key \"x\"",
        ),
    ] {
        assert_eq!(
            run_with(template, &data, true).as_deref(),
            allowed,
            "{template}"
        );
        assert_eq!(
            run_with(template, &data, false),
            Err(strict.to_string()),
            "{template}"
        );
    }
    // `index` and `exists` never fail on a missing key.
    assert_eq!(
        run_with(
            "{{index .metadata \"nope\"}} {{exists . \"nope\"}}",
            &data,
            false
        )
        .as_deref(),
        Ok("<no value> false")
    );
}

#[test]
fn functions() {
    let data = object();
    check(
        &[
            (
                "{{and 1 0 .nope.x}}|{{or 0 \"\" .kind}}|{{not .spec.emptylist}}",
                "0|ConfigMap|true",
            ),
            (
                "{{len .spec.items}} {{len .metadata.labels}} {{len .kind}}",
                "3 2 9",
            ),
            (
                "{{index .spec.containers 0 \"ports\" 0 \"containerPort\"}}",
                "80",
            ),
            (
                "{{slice .spec.items 1}} {{slice .kind 0 6}}",
                "[b c] Config",
            ),
            (
                "{{print 1 2 \"a\" 3}}|{{println .kind 1}}|",
                "1 2a3|ConfigMap 1\n|",
            ),
            (
                "{{printf \"%05.1f|%-4d|%x|%q\" 3.14159 7 255 \"a\\tb\"}}",
                "003.1|7   |ff|\"a\\tb\"",
            ),
            (
                "{{printf \"%d %d\" .spec.replicas .spec.ratio}}",
                "3 %!d(float64=0.5)",
            ),
            (
                "{{eq .kind \"Pod\" \"ConfigMap\"}} {{ne 1 2}} {{lt 1 2}} {{le 2 2}} {{gt \"b\" \"a\"}} {{ge 1.5 2.5}}",
                "true true true true true false",
            ),
            (
                "{{html \"<a>&'\"}} {{js \"a'<\"}} {{urlquery \"a b/c\"}}",
                "&lt;a&gt;&amp;&#39; a\\'\\u003C a+b%2Fc",
            ),
            (
                "{{exists . \"spec\" \"items\" 2}} {{exists . \"spec\" \"items\" 3}} {{exists . \"spec\" \"nothing\"}}",
                "true false false",
            ),
            ("{{base64decode .data.token}}", "hello world"),
        ],
        &data,
    );
    assert_eq!(
        run("{{eq .spec.replicas 3.0}}", &data),
        Err("template: output:1:2: executing \"output\" at <eq .spec.replicas 3.0>: error calling eq: incompatible types for comparison".into())
    );
    assert_eq!(
        run("{{base64decode .data.bad}}", &data),
        Err("template: output:1:2: executing \"output\" at <base64decode .data.bad>: error calling base64decode: base64 decode failed: illegal base64 data at input byte 7".into())
    );
    assert_eq!(
        run("{{call .kind}}", &data),
        Err("template: output:1:2: executing \"output\" at <call .kind>: error calling call: non-function .kind of type string".into())
    );
    assert_eq!(
        run("{{nope}}", &data),
        Err("template: output:1: function \"nope\" not defined".into())
    );
}

#[test]
fn base64_decoding_follows_go() {
    use super::funcs::decode_base64;
    assert_eq!(decode_base64(b"aGVsbG8=").as_deref(), Ok(&b"hello"[..]));
    assert_eq!(decode_base64(b"aGVs\nbG8=").as_deref(), Ok(&b"hello"[..]));
    assert_eq!(decode_base64(b"").as_deref(), Ok(&b""[..]));
    // Go's offsets: a bad character, missing padding, padding too early, garbage.
    assert_eq!(decode_base64(b"aGVs$G8="), Err(4));
    assert_eq!(decode_base64(b"aGVsbG8"), Err(4));
    assert_eq!(decode_base64(b"a==="), Err(1));
    assert_eq!(decode_base64(b"aGVsbG8=x"), Err(8));
    assert_eq!(decode_base64(b"aGVsbA="), Err(7));
}

/// Go has no bound on nesting; these make a hostile template fail cleanly.
#[test]
fn nesting_in_the_text_is_bounded() {
    let parens = |n: usize| format!("{{{{{}1{}}}}}", "(".repeat(n), ")".repeat(n));
    assert_eq!(run(&parens(MAX_NESTING), &json!({})).as_deref(), Ok("1"));
    assert_eq!(
        run(&parens(MAX_NESTING + 1), &json!({})),
        Err(format!(
            "template: output:1: exceeded maximum nesting depth ({MAX_NESTING})"
        ))
    );
    let ifs = |n: usize| format!("{}x{}", "{{if 1}}".repeat(n), "{{end}}".repeat(n));
    assert_eq!(run(&ifs(MAX_NESTING), &json!({})).as_deref(), Ok("x"));
    assert!(
        run(&ifs(MAX_NESTING + 1), &json!({}))
            .is_err_and(|e| e.contains("exceeded maximum nesting depth"))
    );
    // Far beyond the bound: still an error, not a stack overflow.
    assert!(run(&parens(100_000), &json!({})).is_err());
}

#[test]
fn template_recursion_is_bounded() {
    assert_eq!(
        run(
            "{{define \"a\"}}{{template \"a\"}}{{end}}{{template \"a\"}}",
            &json!({})
        ),
        Err(format!(
            "template: output:1:25: executing \"a\" at <{{{{template \"a\"}}}}>: exceeded maximum template depth ({MAX_TEMPLATE_DEPTH})"
        ))
    );
    // Deep bodies times deep recursion hit the bound on total nesting first.
    let body = format!(
        "{}{{{{template \"a\" .}}}}{}",
        "{{with .}}".repeat(50),
        "{{end}}".repeat(50)
    );
    let template = format!("{{{{define \"a\"}}}}{body}{{{{end}}}}{{{{template \"a\" .}}}}");
    let err = run(&template, &json!({"x": 1})).expect_err("too deep");
    assert!(
        err.ends_with(&format!(
            "exceeded maximum nesting depth ({MAX_EXEC_NESTING})"
        )),
        "{err}"
    );
}

#[test]
fn work_and_output_are_bounded() {
    let items: Vec<Value> = (0..100).map(Value::from).collect();
    let data = json!({ "items": items });
    let mut t =
        Template::parse("{{range .items}}{{range $.items}}{{range $.items}}.{{end}}{{end}}{{end}}")
            .expect("parses");
    t.limits = Limits {
        steps: 100_000,
        output: 1 << 20,
    };
    let err = t.execute(&data).expect_err("too long");
    assert!(
        err.message
            .ends_with("exceeded maximum number of steps (100000)"),
        "{}",
        err.message
    );
    let mut t =
        Template::parse("{{range .items}}{{printf \"%1000000d\" 1}}{{end}}").expect("parses");
    t.limits = Limits {
        steps: 100_000,
        output: 4 << 20,
    };
    let err = t.execute(&data).expect_err("too big");
    assert_eq!(
        err.message,
        "template: output:1:18: executing \"output\" at <{{printf \"%1000000d\" 1}}>: exceeded maximum output size (4194304 bytes)"
    );
    assert_eq!(err.partial.len(), 4 * 1_000_000);
    // Go refuses widths of nine digits in the format itself (kubectl: "%!(NOVERB)").
    assert_eq!(
        run("{{printf \"%100000000d|\" 1}}", &json!({})).as_deref(),
        Ok("%!(NOVERB)%!(EXTRA int=1)")
    );
    // Large strings count as work even when nothing is printed.
    let mut t =
        Template::parse("{{range .items}}{{$x := printf \"%1000000d\" 1}}{{end}}").expect("parses");
    t.limits = Limits {
        steps: 100_000,
        output: 1 << 20,
    };
    let err = t.execute(&data).expect_err("too much work");
    assert!(
        err.message
            .ends_with("exceeded maximum number of steps (100000)"),
        "{}",
        err.message
    );
}

/// The deepest executions the bounds allow (recursion through parenthesised
/// pipelines, nested bodies, nested ranges) fit in a 2 MiB thread stack, a test
/// thread's default, even unoptimised (they need about 1 MiB there; the plugins
/// print on the 8 MiB main thread).
#[test]
fn deepest_execution_fits_the_stack() {
    let worker = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let recursive = |body: String| {
                format!("{{{{define \"a\"}}}}{body}{{{{end}}}}{{{{template \"a\" .}}}}")
            };
            let parens = "(".repeat(MAX_NESTING - 1) + "." + &")".repeat(MAX_NESTING - 1);
            let bodies = format!(
                "{}{{{{template \"a\" .}}}}{}",
                "{{with .}}{{if 1}}".repeat(5),
                "{{end}}{{end}}".repeat(5)
            );
            let ranges = format!(
                "{}{{{{template \"a\" $}}}}{}",
                "{{range $.l}}".repeat(9),
                "{{end}}".repeat(9)
            );
            let data = json!({"l": [1]});
            [
                run(
                    &recursive(format!("{{{{template \"a\" {parens}}}}}")),
                    &data,
                ),
                run(&recursive(bodies), &data),
                run(&recursive(ranges), &data),
            ]
        })
        .expect("thread");
    for result in worker.join().expect("no stack overflow") {
        assert!(
            result
                .as_ref()
                .is_err_and(|e| e.contains("exceeded maximum")),
            "{result:?}"
        );
    }
}

/// Random templates built from the grammar's pieces never panic, whatever the object.
#[test]
fn random_templates_never_panic() {
    const PIECES: &[&str] = &[
        "{{",
        "}}",
        "{{- ",
        " -}}",
        " ",
        ".",
        ".a",
        ".b",
        "$",
        "$x",
        ":=",
        "=",
        "|",
        "(",
        ")",
        ",",
        "\"s\"",
        "`r`",
        "'c'",
        "1",
        "-1",
        "1.5",
        "0x",
        "1e",
        "nil",
        "true",
        "if",
        "else",
        "end",
        "range",
        "with",
        "define",
        "template",
        "block",
        "break",
        "continue",
        "\"t\"",
        "index",
        "slice",
        "len",
        "printf",
        "print",
        "println",
        "eq",
        "lt",
        "and",
        "or",
        "not",
        "call",
        "html",
        "js",
        "urlquery",
        "exists",
        "base64decode",
        "\"%d%s%v%5.2f%x%q%[2]*d\"",
        "/*",
        "*/",
        "\n",
        "é",
        "\\",
        "\"",
        "x",
    ];
    let data =
        json!({"a": [1, {"a": "x", "b": null}, null, "str", 2.5], "b": {"a": [true]}, "n": null});
    for template in crate::random::templates(PIECES, 14, 20_000) {
        for allow in [true, false] {
            let _ = run_with(&template, &data, allow);
        }
    }
}
