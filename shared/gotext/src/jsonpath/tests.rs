//! client-go's `jsonpath_test.go` and `parser_test.go` cases as tables, on JSON input
//! (client-go's Go-struct inputs become the JSON they marshal to; struct field order
//! becomes key order, since a decoded object has no other).

use serde_json::{Value, json};

use super::*;

/// Runs `template` on `input`: the output, or the parse / execution error text.
fn run(template: &str, input: &Value, allow_missing_keys: bool) -> Result<String, String> {
    let path = JsonPath::parse(template).map_err(|e| format!("parse: {e}"))?;
    path.allow_missing_keys(allow_missing_keys).execute(input)
}

fn check(cases: &[(&str, &str, &str)], input: &Value, allow_missing_keys: bool) {
    for (name, template, expected) in cases {
        assert_eq!(
            run(template, input, allow_missing_keys).as_deref(),
            Ok(*expected),
            "{name}: {template}"
        );
    }
}

fn check_err(cases: &[(&str, &str, &str)], input: &Value, allow_missing_keys: bool) {
    for (name, template, expected) in cases {
        assert_eq!(
            run(template, input, allow_missing_keys),
            Err(expected.to_string()),
            "{name}: {template}"
        );
    }
}

fn types() -> Value {
    json!({
        "bools": [true, false, true, false],
        "integers": [1, 2, 3, 4],
        "floats": [1.0, 2.2, 3.3, 4.0],
        "strings": ["one", "two", "three", "four"],
        "interfaces": [true, "one", 1, 1.1],
        "maps": [
            {"name": "one", "value": 1},
            {"name": "two", "value": 2.02},
            {"name": "three", "value": 3.03},
            {"name": "four", "value": 4.04}
        ]
    })
}

#[test]
fn types_input() {
    check(
        &[
            ("boolSlice", "{ .bools }", "[true,false,true,false]"),
            ("boolSliceIndex", "{ .bools[0] }", "true"),
            ("boolSliceIndex", "{ .bools[-1] }", "false"),
            ("boolSubSlice", "{ .bools[0:2] }", "true false"),
            ("boolSubSliceFirst2", "{ .bools[:2] }", "true false"),
            ("boolSubSliceStep2", "{ .bools[:4:2] }", "true true"),
            ("integerSlice", "{ .integers }", "[1,2,3,4]"),
            ("integerSliceIndex", "{ .integers[0] }", "1"),
            ("integerSliceIndexReverse", "{ .integers[-2] }", "3"),
            ("integerSubSliceFirst2", "{ .integers[0:2] }", "1 2"),
            ("integerSubSliceFirst2Alt", "{ .integers[:2] }", "1 2"),
            ("integerSubSliceStep2", "{ .integers[:4:2] }", "1 3"),
            ("floatSlice", "{ .floats }", "[1,2.2,3.3,4]"),
            ("floatSliceIndex", "{ .floats[0] }", "1"),
            ("floatSliceIndexReverse", "{ .floats[-2] }", "3.3"),
            ("floatSubSliceFirst2", "{ .floats[0:2] }", "1 2.2"),
            ("floatSubSliceStep2", "{ .floats[:4:2] }", "1 3.3"),
            (
                "stringSlice",
                "{ .strings }",
                r#"["one","two","three","four"]"#,
            ),
            ("stringSliceIndex", "{ .strings[0] }", "one"),
            ("stringSliceIndexReverse", "{ .strings[-2] }", "three"),
            ("stringSubSliceFirst2", "{ .strings[0:2] }", "one two"),
            ("stringSubSliceStep2", "{ .strings[:4:2] }", "one three"),
            ("interfaceSlice", "{ .interfaces }", r#"[true,"one",1,1.1]"#),
            ("interfaceSliceIndex", "{ .interfaces[0] }", "true"),
            ("interfaceSliceIndexReverse", "{ .interfaces[-2] }", "1"),
            (
                "interfaceSubSliceFirst2",
                "{ .interfaces[0:2] }",
                "true one",
            ),
            ("interfaceSubSliceStep2", "{ .interfaces[:4:2] }", "true 1"),
            (
                "mapSlice",
                "{ .maps }",
                r#"[{"name":"one","value":1},{"name":"two","value":2.02},{"name":"three","value":3.03},{"name":"four","value":4.04}]"#,
            ),
            (
                "mapSliceIndex",
                "{ .maps[0] }",
                r#"{"name":"one","value":1}"#,
            ),
            (
                "mapSliceIndexReverse",
                "{ .maps[-2] }",
                r#"{"name":"three","value":3.03}"#,
            ),
            (
                "mapSubSliceFirst2",
                "{ .maps[0:2] }",
                r#"{"name":"one","value":1} {"name":"two","value":2.02}"#,
            ),
            (
                "mapSubSliceStepOdd",
                "{ .maps[::2] }",
                r#"{"name":"one","value":1} {"name":"three","value":3.03}"#,
            ),
            (
                "mapSubSliceStepEven",
                "{ .maps[1::2] }",
                r#"{"name":"two","value":2.02} {"name":"four","value":4.04}"#,
            ),
        ],
        &types(),
        false,
    );
}

fn store() -> Value {
    json!({
        "Name": "jsonpath",
        "Book": [
            {"Category": "reference", "Author": "Nigel Rees", "Title": "Sayings of the Centurey", "Price": 8.95},
            {"Category": "fiction", "Author": "Evelyn Waugh", "Title": "Sword of Honour", "Price": 12.99},
            {"Category": "fiction", "Author": "Herman Melville", "Title": "Moby Dick", "Price": 8.99}
        ],
        "Bicycle": [
            {"Color": "red", "Price": 19.95, "IsNew": true},
            {"Color": "green", "Price": 20.01, "IsNew": false}
        ],
        "Labels": {"engieer": 10, "web/html": 15, "k8s-app": 20},
        "Employees": {"jason": "manager", "dan": "clerk"}
    })
}

#[test]
fn small_inputs() {
    check(
        &[("plain", "hello jsonpath", "hello jsonpath")],
        &Value::Null,
        false,
    );
    check(
        &[("recursive", "{..}", "[1,2,3]")],
        &json!([1, 2, 3]),
        false,
    );
    check(
        &[("filter", "{[?(@<5)]}", "2 3")],
        &json!([2, 6, 3, 7]),
        false,
    );
    check(&[("quote", "{\"{\"}", "{")], &Value::Null, false);
    check(
        &[("union", "{[1,3,4]}", "1 3 4")],
        &json!([0, 1, 2, 3, 4]),
        false,
    );
    check(
        &[("array", "{[0:2]}", "Monday Tudesday")],
        &json!(["Monday", "Tudesday"]),
        false,
    );
}

#[test]
fn store_input() {
    check(
        &[
            ("variable", "hello {.Name}", "hello jsonpath"),
            ("dict/", "{$.Labels.web/html}", "15"),
            ("dict/", "{$.Employees.jason}", "manager"),
            ("dict/", "{$.Employees.dan}", "clerk"),
            ("dict-", "{.Labels.k8s-app}", "20"),
            ("nest", "{.Bicycle[*].Color}", "red green"),
            (
                "allarray",
                "{.Book[*].Author}",
                "Nigel Rees Evelyn Waugh Herman Melville",
            ),
            // Map values in key order: Color, IsNew, Price.
            (
                "allfields",
                r#"{range .Bicycle[*]}{ "{" }{ @.* }{ "} " }{end}"#,
                "{red true 19.95} {green false 20.01} ",
            ),
            // Key order: Bicycle before Book (client-go's struct had Book first).
            ("recurfields", "{..Price}", "19.95 20.01 8.95 12.99 8.99"),
            (
                "recurdotfields",
                "{...Price}",
                "19.95 20.01 8.95 12.99 8.99",
            ),
            (
                "allstructsSlice",
                "{.Bicycle}",
                r#"[{"Color":"red","IsNew":true,"Price":19.95},{"Color":"green","IsNew":false,"Price":20.01}]"#,
            ),
            (
                "allstructs",
                r#"{range .Bicycle[*]}{ @ }{ " " }{end}"#,
                r#"{"Color":"red","IsNew":true,"Price":19.95} {"Color":"green","IsNew":false,"Price":20.01} "#,
            ),
            (
                "lastarray",
                "{.Book[-1:]}",
                r#"{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}"#,
            ),
            (
                "recurarray",
                "{..Book[2]}",
                r#"{"Author":"Herman Melville","Category":"fiction","Price":8.99,"Title":"Moby Dick"}"#,
            ),
            (
                "bool",
                "{.Bicycle[?(@.IsNew==true)]}",
                r#"{"Color":"red","IsNew":true,"Price":19.95}"#,
            ),
        ],
        &store(),
        false,
    );
}

#[test]
fn store_input_with_missing_keys_allowed() {
    check(
        &[
            ("nonexistent field", "{.hello}", ""),
            (
                "nonexistent field 2",
                "before-{.hello}after",
                "before-after",
            ),
        ],
        &store(),
        true,
    );
}

#[test]
fn store_input_errors() {
    let data = store();
    assert!(
        run(
            "{............................................................Price}",
            &data,
            false
        )
        .is_err()
    );
    check_err(
        &[
            (
                "invalid identifier",
                "{hello}",
                "unrecognized identifier hello",
            ),
            ("nonexistent field", "{.hello}", "hello is not found"),
            (
                "invalid array",
                "{.Labels[0]}",
                "map[string]interface {} is not array or slice",
            ),
            (
                "invalid filter operator",
                "{.Book[?(@.Price<>10)]}",
                "unrecognized filter operator <>",
            ),
            (
                "redundant end",
                "{range .Labels.*}{@}{end}{end}",
                "not in range, nothing to end",
            ),
        ],
        &data,
        false,
    );
}

#[test]
fn json_input() {
    let points = json!([
        {"id": "i1", "x": 4, "y": -5},
        {"id": "i2", "x": -2, "y": -5, "z": 1},
        {"id": "i3", "x": 8, "y": 3},
        {"id": "i4", "x": -6, "y": -1},
        {"id": "i5", "x": 0, "y": 2, "z": 1},
        {"id": "i6", "x": 1, "y": 4}
    ]);
    check(
        &[
            ("exists filter", "{[?(@.z)].id}", "i2 i5"),
            ("bracket key", "{[0]['id']}", "i1"),
        ],
        &points,
        false,
    );
}

fn nodes() -> Value {
    json!({
        "kind": "List",
        "items": [
            {
                "kind": "None",
                "metadata": {"name": "127.0.0.1", "labels": {"kubernetes.io/hostname": "127.0.0.1"}},
                "status": {
                    "capacity": {"cpu": "4"},
                    "ready": true,
                    "addresses": [{"type": "LegacyHostIP", "address": "127.0.0.1"}]
                }
            },
            {
                "kind": "None",
                "metadata": {"name": "127.0.0.2", "labels": {"kubernetes.io/hostname": "127.0.0.2"}},
                "status": {
                    "capacity": {"cpu": "8"},
                    "ready": false,
                    "addresses": [
                        {"type": "LegacyHostIP", "address": "127.0.0.2"},
                        {"type": "another", "address": "127.0.0.3"}
                    ]
                }
            }
        ],
        "users": [
            {"name": "myself", "user": {}},
            {"name": "e2e", "user": {"username": "admin", "password": "secret"}}
        ]
    })
}

#[test]
fn kubernetes() {
    check(
        &[
            (
                "range item",
                "{range .items[*]}{.metadata.name}, {end}{.kind}",
                "127.0.0.1, 127.0.0.2, List",
            ),
            (
                "range item with quote",
                r#"{range .items[*]}{.metadata.name}{"\t"}{end}"#,
                "127.0.0.1\t127.0.0.2\t",
            ),
            (
                "range addresss",
                "{.items[*].status.addresses[*].address}",
                "127.0.0.1 127.0.0.2 127.0.0.3",
            ),
            (
                "double range",
                "{range .items[*]}{range .status.addresses[*]}{.address}, {end}{end}",
                "127.0.0.1, 127.0.0.2, 127.0.0.3, ",
            ),
            (
                "item name",
                "{.items[*].metadata.name}",
                "127.0.0.1 127.0.0.2",
            ),
            (
                "union nodes capacity",
                "{.items[*]['metadata.name', 'status.capacity']}",
                r#"127.0.0.1 127.0.0.2 {"cpu":"4"} {"cpu":"8"}"#,
            ),
            (
                "range nodes capacity",
                "{range .items[*]}[{.metadata.name}, {.status.capacity}] {end}",
                r#"[127.0.0.1, {"cpu":"4"}] [127.0.0.2, {"cpu":"8"}] "#,
            ),
            (
                "user password",
                r#"{.users[?(@.name=="e2e")].user.password}"#,
                "secret",
            ),
            (
                "hostname",
                r"{.items[0].metadata.labels.kubernetes\.io/hostname}",
                "127.0.0.1",
            ),
            (
                "hostname filter",
                r#"{.items[?(@.metadata.labels.kubernetes\.io/hostname=="127.0.0.1")].kind}"#,
                "None",
            ),
            (
                "bool item",
                "{.items[?(@..ready==true)].metadata.name}",
                "127.0.0.1",
            ),
        ],
        &nodes(),
        false,
    );
    // client-go sorts this output because Go's map order is random; ours is key order.
    let mut names: Vec<String> = run("{..name}", &nodes(), false)
        .unwrap_or_default()
        .split(' ')
        .map(str::to_string)
        .collect();
    names.sort();
    assert_eq!(names, ["127.0.0.1", "127.0.0.2", "e2e", "myself"]);
}

#[test]
fn empty_range() {
    let empty = json!({"items": []});
    check(
        &[
            ("empty range", "{range .items[*]}{.metadata.name}{end}", ""),
            (
                "empty nested range",
                r#"{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}"#,
                "",
            ),
        ],
        &empty,
        true,
    );
}

#[test]
fn nested_ranges() {
    let data = json!({"items": [
        {"metadata": {"name": "pod1"}, "spec": {"containers": [
            {"name": "foo", "another": [{"name": "value1"}, {"name": "value2"}]},
            {"name": "bar", "another": [{"name": "value1"}, {"name": "value2"}]}
        ]}},
        {"metadata": {"name": "pod2"}, "spec": {"containers": [
            {"name": "baz", "another": [{"name": "value1"}, {"name": "value2"}]}
        ]}}
    ]});
    check(
        &[
            (
                "nested range with a trailing newline",
                r#"{range .items[*]}{.metadata.name}{":"}{range @.spec.containers[*]}{.name}{","}{end}{"+"}{end}"#,
                "pod1:foo,bar,+pod2:baz,+",
            ),
            (
                "nested range with a trailing character within another nested range",
                r##"{range .items[*]}{.metadata.name}{"~"}{range @.spec.containers[*]}{.name}{":"}{range @.another[*]}{.name}{","}{end}{"+"}{end}{"#"}{end}"##,
                "pod1~foo:value1,value2,+bar:value1,value2,+#pod2~baz:value1,value2,+#",
            ),
            (
                "two nested ranges at the same level",
                r#"{range .items[*]}{.metadata.name}{"\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\t"}{range @.spec.containers[*]}{.name}{" "}{end}{"\n"}{end}"#,
                "pod1\tfoo bar \tfoo bar \npod2\tbaz \tbaz \n",
            ),
        ],
        &data,
        false,
    );
}

#[test]
fn filter_tolerates_missing_keys_only_when_allowed() {
    let data = json!({"kind": "List", "items": [
        {"kind": "Pod", "metadata": {"name": "pod1", "annotations": {"color": "blue"}}},
        {"kind": "Pod", "metadata": {"name": "pod2"}},
        {"kind": "Pod", "metadata": {"name": "pod3", "annotations": {"color": "green"}}},
        {"kind": "Pod", "metadata": {"name": "pod4", "annotations": {"color": "blue"}}}
    ]});
    let template = r#"{.items[?(@.metadata.annotations.color=="blue")].metadata.name}"#;
    assert_eq!(run(template, &data, true).as_deref(), Ok("pod1 pod4"));
    assert_eq!(
        run(template, &data, false),
        Err("annotations is not found".to_string())
    );

    let running = json!({"kind": "List", "items": [
        {"kind": "Pod", "metadata": {"name": "pod1"}, "status": {"phase": "Running"}},
        {"kind": "Pod", "metadata": {"name": "pod2"}, "status": {"phase": "Running"}},
        {"kind": "Pod", "metadata": {"name": "pod3"}, "status": {"phase": "Running"}},
        {"resourceVersion": "", "selfLink": ""}
    ]});
    assert_eq!(
        run(
            r#"{range .items[?(.status.phase=="Running")]}{.metadata.name}{" is Running\n"}{end}"#,
            &running,
            true
        )
        .as_deref(),
        Ok("pod1 is Running\npod2 is Running\npod3 is Running\n")
    );
}

fn containers(n: usize) -> Value {
    let list: Vec<Value> = (0..n)
        .map(|i| json!({"image": "radial/busyboxplus:curl", "name": format!("fake{i}")}))
        .collect();
    json!({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": list}})
}

#[test]
fn negative_index() {
    let data = containers(4);
    check(
        &[
            ("[0]", "{.spec.containers[0].name}", "fake0"),
            ("[0:0]", "{.spec.containers[0:0].name}", ""),
            (
                "[0:-1]",
                "{.spec.containers[0:-1].name}",
                "fake0 fake1 fake2",
            ),
            ("[-1]", "{.spec.containers[-1].name}", "fake3"),
            ("[-1:]", "{.spec.containers[-1:].name}", "fake3"),
            ("[-2]", "{.spec.containers[-2].name}", "fake2"),
            ("[-2:]", "{.spec.containers[-2:].name}", "fake2 fake3"),
            ("[-3]", "{.spec.containers[-3].name}", "fake1"),
            ("[-4]", "{.spec.containers[-4].name}", "fake0"),
            (
                "[-4:]",
                "{.spec.containers[-4:].name}",
                "fake0 fake1 fake2 fake3",
            ),
            ("[5:5]", "{.spec.containers[5:5].name}", ""),
            ("[-5:-5]", "{.spec.containers[-5:-5].name}", ""),
        ],
        &data,
        false,
    );
    check_err(
        &[
            (
                "[-1:0]",
                "{.spec.containers[-1:0].name}",
                "starting index 3 is greater than ending index 0",
            ),
            (
                "[-5]",
                "{.spec.containers[-5].name}",
                "array index out of bounds: index -1, length 4",
            ),
            (
                "[3:1]",
                "{.spec.containers[3:1].name}",
                "starting index 3 is greater than ending index 1",
            ),
            (
                "[-1:-2]",
                "{.spec.containers[-1:-2].name}",
                "starting index 3 is greater than ending index 2",
            ),
            (
                "[9]",
                "{.spec.containers[9].name}",
                "array index out of bounds: index 9, length 4",
            ),
        ],
        &data,
        false,
    );
}

#[test]
fn step() {
    let data = containers(6);
    check(
        &[
            (
                "[0:]",
                "{.spec.containers[0:].name}",
                "fake0 fake1 fake2 fake3 fake4 fake5",
            ),
            (
                "[0:6:]",
                "{.spec.containers[0:6:].name}",
                "fake0 fake1 fake2 fake3 fake4 fake5",
            ),
            (
                "[0:6:1]",
                "{.spec.containers[0:6:1].name}",
                "fake0 fake1 fake2 fake3 fake4 fake5",
            ),
            ("[1:4:2]", "{.spec.containers[1:4:2].name}", "fake1 fake3"),
            ("[1:4:3]", "{.spec.containers[1:4:3].name}", "fake1"),
            ("[1:4:4]", "{.spec.containers[1:4:4].name}", "fake1"),
            (
                "[0:6:2]",
                "{.spec.containers[0:6:2].name}",
                "fake0 fake2 fake4",
            ),
            ("[0:6:3]", "{.spec.containers[0:6:3].name}", "fake0 fake3"),
            ("[0:6:5]", "{.spec.containers[0:6:5].name}", "fake0 fake5"),
            ("[0:6:6]", "{.spec.containers[0:6:6].name}", "fake0"),
        ],
        &data,
        false,
    );
    check_err(
        &[
            (
                "[0:6:0]",
                "{.spec.containers[0:6:0].name}",
                "step must be > 0",
            ),
            (
                "[0:6:-1]",
                "{.spec.containers[0:6:-1].name}",
                "step must be > 0",
            ),
        ],
        &data,
        false,
    );
}

fn field(s: &str) -> Node {
    Node::Field(s.to_string())
}

fn text(s: &str) -> Node {
    Node::Text(s.to_string())
}

/// An array index `[from:to]`, `to` derived when the template gave a single index.
fn idx(from: i64, to: Option<i64>, derived: bool) -> Node {
    Node::Array([
        Param {
            value: from,
            known: true,
            derived: false,
        },
        Param {
            value: to.unwrap_or(0),
            known: to.is_some(),
            derived,
        },
        Param::default(),
    ])
}

/// Each `(name, template, nodes)`: the template parses to the nodes.
fn check_parses(cases: Vec<(&str, &str, Vec<Node>)>) {
    for (name, template, expected) in cases {
        assert_eq!(
            parse(template).as_ref(),
            Ok(&expected),
            "{name}: {template}"
        );
    }
}

/// parser_test.go: templates that must parse, with the nodes they give; text, fields,
/// indexes and wildcards.
#[test]
fn parser_accepts_paths() {
    use Node::*;
    check_parses(vec![
        ("plain", "hello jsonpath", vec![text("hello jsonpath")]),
        (
            "variable",
            "hello {.jsonpath}",
            vec![text("hello "), List(vec![field("jsonpath")])],
        ),
        (
            "arrayfiled",
            "{.book[2]}",
            vec![List(vec![field("book"), idx(2, Some(3), true)])],
        ),
        ("quote", r#"{"{"}"#, vec![List(vec![text("{")])]),
        ("array", "{[1:3]}", vec![List(vec![idx(1, Some(3), false)])]),
        (
            "allarray",
            "{.book[*]}",
            vec![List(vec![field("book"), Array([Param::default(); 3])])],
        ),
        (
            "wildcard",
            "{.bicycle.*}",
            vec![List(vec![field("bicycle"), Wildcard])],
        ),
        ("recursive", "{..}", vec![List(vec![Recursive])]),
        (
            "recurField",
            "{..price}",
            vec![List(vec![Recursive, field("price")])],
        ),
        (
            "arraydict",
            "{['book.price']}",
            vec![List(vec![field("book"), field("price")])],
        ),
        ("dotted key", r"{.a\.b}", vec![List(vec![field("a.b")])]),
    ]);
}

/// parser_test.go: templates that must parse, with the nodes they give; filters,
/// unions, ranges and literals.
#[test]
fn parser_accepts_actions() {
    use Node::*;
    check_parses(vec![
        (
            "filter",
            "{.book[?(@.price<10)]}",
            vec![List(vec![
                field("book"),
                Filter {
                    left: vec![field("price")],
                    right: vec![Int(10)],
                    op: "<".into(),
                },
            ])],
        ),
        (
            "union",
            "{['book']['author','price']}",
            vec![List(vec![
                field("book"),
                Union(vec![vec![field("author")], vec![field("price")]]),
            ])],
        ),
        (
            "range",
            "{range .items}{.name}{end}",
            vec![
                List(vec![Identifier("range".into()), field("items")]),
                List(vec![field("name")]),
                List(vec![Identifier("end".into())]),
            ],
        ),
        (
            "paired parentheses in quotes",
            r#"{.test[?(@.a=="bar(")]}"#,
            vec![List(vec![
                field("test"),
                Filter {
                    left: vec![field("a")],
                    right: vec![text("bar(")],
                    op: "==".into(),
                },
            ])],
        ),
        ("escaped quote", r#"{"\""}"#, vec![List(vec![text("\"")])]),
        ("bool", "{true}", vec![List(vec![Bool(true)])]),
        ("float", "{1.5}", vec![List(vec![Float(1.5)])]),
    ]);
    // A union of bracket keys: each alternative is the key's path.
    assert_eq!(
        parse("{['book']['author','price']}").map(|n| n.len()),
        Ok(1)
    );
}

/// parser_test.go's failing templates, with client-go's messages.
#[test]
fn parser_rejects() {
    let cases = [
        ("unclosed action", "{.apple", "unclosed action"),
        (
            "unrecognized character",
            "{*}",
            "unrecognized character in action: U+002A '*'",
        ),
        ("invalid number", "{+12.3.0}", "cannot parse number +12.3.0"),
        ("unterminated array", "{[1}", "unterminated array"),
        ("unterminated filter", "{[?(.price]}", "unterminated filter"),
        (
            "invalid multiple recursive descent",
            "{........}",
            "invalid multiple recursive descent",
        ),
        ("invalid array index", "{[a,b]}", "invalid array index a"),
        ("invalid slice", "{[1:x]}", "invalid array index 1:x"),
        ("not a number", "{[-]}", "array index - is not a number"),
        (
            "unterminated quote",
            r#"{"abc}"#,
            "unterminated quoted string",
        ),
        ("unclosed filter", "{[?(@.a)x]}", "unclosed array expect ]"),
        ("tab", "{.a\t}", "unrecognized character in action: U+0009"),
        ("newline", "{.a\n}", "unclosed action"),
        // client-go looks only at the byte before a quote, so `\\"` does not close.
        (
            "escaped backslash",
            r#"{" \\"}"#,
            "unterminated quoted string",
        ),
        (
            "bad escape",
            r#"{"\q"}"#,
            r#"unquote string "\q" error invalid syntax"#,
        ),
    ];
    for (name, template, expected) in cases {
        assert_eq!(
            parse(template).map_err(|e| e.to_string()),
            Err(expected.to_string()),
            "{name}: {template}"
        );
    }
}

#[test]
fn output_formatting() {
    let pod = json!({
        "metadata": {"name": "web", "creationTimestamp": null,
                     "annotations": {"h": "<a&b>", "n": "l1\nl2"}},
        "spec": {"grace": 1_000_000, "ratio": 0.000_01, "big": 1e21, "stdin": true}
    });
    check(
        &[
            (
                "null prints as null",
                "{.metadata.creationTimestamp}",
                "null",
            ),
            ("int64 stays whole", "{.spec.grace}", "1000000"),
            ("float as Go %v", "{.spec.ratio} {.spec.big}", "1e-05 1e+21"),
            ("bool", "{.spec.stdin}", "true"),
            (
                "maps as HTML-safe JSON",
                "{.metadata.annotations}",
                r#"{"h":"\u003ca\u0026b\u003e","n":"l1\nl2"}"#,
            ),
            ("string raw", "{.metadata.annotations.n}", "l1\nl2"),
            (
                "string wildcard gives bytes",
                "{.metadata.name.*}",
                "119 101 98",
            ),
            ("whole object via @", "{@.metadata.name}", "web"),
            ("empty field", "{.}", ""),
            ("missing under null", "{.metadata.creationTimestamp.x}", ""),
            ("literal with int", "{.metadata.name}{\" \"}{5}", "web 5"),
        ],
        &pod,
        true,
    );
    let as_json = JsonPath::parse("{.metadata.name}{.metadata.annotations.h}")
        .map(|p| p.json_output(true).execute(&pod));
    assert_eq!(
        as_json,
        Ok(Ok(
            "[\n    \"web\"\n]\n[\n    \"\\u003ca\\u0026b\\u003e\"\n]\n".to_string()
        ))
    );
}

#[test]
fn filter_comparisons_follow_go_templates() {
    let data = json!({"items": [
        {"n": "a", "v": 1, "f": 1.5, "s": "x"},
        {"n": "b", "v": 5, "f": 2.5, "s": "y"},
        {"n": "c", "v": 10, "f": 3.5, "s": "z"}
    ]});
    check(
        &[
            ("==", "{.items[?(@.v==5)].n}", "b"),
            ("!=", "{.items[?(@.v!=5)].n}", "a c"),
            ("<", "{.items[?(@.v<5)].n}", "a"),
            (">", "{.items[?(@.v>5)].n}", "c"),
            ("<=", "{.items[?(@.v<=5)].n}", "a b"),
            (">=", "{.items[?(@.v>=5)].n}", "b c"),
            ("float", "{.items[?(@.f>2.0)].n}", "b c"),
            ("string", "{.items[?(@.s>'x')].n}", "b c"),
            ("spaces", "{.items[?(@.s == \"y\")].n}", "b"),
        ],
        &data,
        false,
    );
    check_err(
        &[
            (
                "int vs float",
                "{.items[?(@.v==1.5)].n}",
                "incompatible types for comparison",
            ),
            (
                "int vs string",
                "{.items[?(@.v=='1')].n}",
                "incompatible types for comparison",
            ),
            (
                "map",
                "{[?(@.items=='1')]}",
                "map[items:[map[f:1.5 n:a s:x v:1] map[f:2.5 n:b s:y v:5] map[f:3.5 n:c s:z v:10]]] is not array or slice and cannot be filtered",
            ),
        ],
        &data,
        false,
    );
}

#[test]
fn deeply_nested_ranges_are_an_error_not_a_crash() {
    let template = "{range @}".repeat(100_000);
    assert_eq!(
        run(&template, &json!({"a": 1}), true),
        Err("more than 256 nested ranges".to_string())
    );
    let deep: String = "{range .items[*]}".repeat(3) + "{.a}" + &"{end}".repeat(3);
    let data = json!({"items": [{"items": [{"items": [{"a": 1}]}]}]});
    assert_eq!(run(&deep, &data, false).as_deref(), Ok("1"));
}

/// Random templates built from the grammar's pieces never panic, whatever the object.
#[test]
fn random_templates_never_panic() {
    const PIECES: &[&str] = &[
        "{",
        "}",
        ".",
        "..",
        "[",
        "]",
        "*",
        "@",
        "$",
        "?(",
        ")",
        "==",
        "<",
        "!",
        ",",
        ":",
        "-1",
        "0",
        "2",
        "'",
        "\"",
        "\\",
        "range",
        "end",
        "true",
        " ",
        "a",
        "items",
        "\n",
        "\t",
        "é",
        "[?(@.a",
        "{range .items[*]}",
        "{end}",
        "[::-1]",
        "[1:0]",
        "1.5",
        "+",
    ];
    let data =
        json!({"a": [1, {"a": "x"}, null, "str"], "items": [{"a": 1}, {"a": [2]}], "n": null});
    for template in crate::random::templates(PIECES, 12, 20_000) {
        for allow in [true, false] {
            let _ = run(&template, &data, allow);
            if let Ok(path) = JsonPath::parse(&template) {
                let _ = path.json_output(true).execute(&data);
            }
        }
    }
}
