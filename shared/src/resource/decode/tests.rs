use super::*;

fn kinds(entries: &[Entry]) -> Vec<String> {
    entries
        .iter()
        .map(|e| match e {
            Ok(info) => format!("{}:{}@{}", info.gvk.kind, info.name(), info.origin.line),
            Err(err) => format!("ERR {err}"),
        })
        .collect()
}

#[test]
fn multi_document_yaml_skips_empty_and_null_documents() {
    let text = "---\n# leading comment\n---\nkind: A\nmetadata: {name: a}\n---\n\n---\nnull\n---\n# c\nkind: B\nmetadata:\n  name: b\n...\n";
    let entries = decode_stream("f.yaml", text.as_bytes());
    assert_eq!(kinds(&entries), ["A:a@4", "B:b@12"]);
    let origin = &entries[1].as_ref().expect("second document").origin;
    assert_eq!((origin.document, origin.documents), (2, 2));
}

#[test]
fn separator_must_be_alone_on_its_line() {
    let text = "kind: A\nmetadata:\n  name: \"---x\"\n---   \nkind: B\n";
    assert_eq!(
        kinds(&decode_stream("f", text.as_bytes())),
        ["A:---x@1", "B:@5"]
    );
}

#[test]
fn a_broken_yaml_document_does_not_hide_its_neighbours() {
    let text = "kind: A\n---\nkind: B\n bad: indent\n---\nkind: C\n";
    let out = kinds(&decode_stream("f.yaml", text.as_bytes()));
    assert_eq!(out[0], "A:@1");
    assert_eq!(
        out[1],
        "ERR error parsing f.yaml: line 4: mapping values are not allowed in this context"
    );
    assert_eq!(out[2], "C:@6");
}

#[test]
fn concatenated_json_objects() {
    let text = "{\"kind\":\"A\"}\n\n  {\"kind\":\"B\"} null\n{\"kind\":\"C\"}";
    assert_eq!(
        kinds(&decode_stream("f.json", text.as_bytes())),
        ["A:@1", "B:@3", "C:@4"]
    );
}

#[test]
fn json_syntax_error_names_the_line_and_stops() {
    let text = "{\"kind\":\"A\"}\n{\"kind\":\n  \"B\",,}\n{\"kind\":\"C\"}";
    let out = kinds(&decode_stream("f.json", text.as_bytes()));
    assert_eq!(
        out,
        [
            "A:@1",
            "ERR error parsing f.json: line 3: key must be a string"
        ]
    );
}

#[test]
fn binary_input_is_rejected_clearly() {
    let out = kinds(&decode_stream("bin.yaml", b"\x7fELF\x02\x01\x00\x00"));
    assert_eq!(
        out,
        ["ERR error parsing bin.yaml: not a YAML or JSON text file (control character at line 1)"]
    );
    let out = kinds(&decode_stream("bin.yaml", b"kind: \xff\xfe"));
    assert_eq!(
        out,
        ["ERR error parsing bin.yaml: not a YAML or JSON text file (invalid UTF-8 at byte 6)"]
    );
}

#[test]
fn empty_stream_has_no_documents() {
    assert!(decode_stream("f", b"").is_empty());
    assert!(decode_stream("f", b"\n# nothing\n---\n").is_empty());
}

#[test]
fn utf8_bom_is_ignored() {
    assert_eq!(
        kinds(&decode_stream("f", b"\xEF\xBB\xBFkind: A\n")),
        ["A:@1"]
    );
}

#[test]
fn windows_line_endings_split_and_parse() {
    let text = "kind: A\r\nmetadata:\r\n  name: a\r\n---\r\nkind: B\r\n";
    assert_eq!(
        kinds(&decode_stream("f.yaml", text.as_bytes())),
        ["A:a@1", "B:@5"]
    );
}
