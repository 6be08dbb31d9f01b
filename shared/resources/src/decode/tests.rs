//! Unit tests of decoding: multi-document YAML, concatenated JSON, binary and
//! badly encoded input.

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
        "ERR error parsing f.yaml: error converting YAML to JSON: yaml: line 2: mapping values are not allowed in this context"
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
            "ERR error parsing f.json: json: offset 29: invalid character ',' looking for beginning of object key string"
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
    // go-yaml's set: C0 controls but tab/LF/CR, DEL, C1 controls, a BOM inside the text.
    for text in [
        "kind: A\nx: \u{1b}[0m\n",
        "kind: A\nx: a\u{85}b\u{9c}\n",
        "kind: A\n\u{feff}x: 1\n",
    ] {
        assert_eq!(
            kinds(&decode_stream("t.yaml", text.as_bytes())),
            [
                "ERR error parsing t.yaml: not a YAML or JSON text file (control character at line 2)"
            ],
            "{text:?}"
        );
    }
    assert_eq!(
        kinds(&decode_stream("t.yaml", b"kind: A\r\nx:\t1\n")),
        ["A:@1"]
    );
}

/// kubectl's decoder reads through Go's UTF-8 decoder: invalid bytes become U+FFFD
/// (one for a truncated sequence), and the object is created with them.
#[test]
fn invalid_utf8_becomes_replacement_characters_as_in_kubectl() {
    let entries = decode_stream(
        "f.yaml",
        b"kind: A\ndata:\n  a: x\xff\xfey\n  b: x\xe2\x82y\n",
    );
    let info = entries[0].as_ref().expect("decoded");
    assert_eq!(info.object["data"]["a"], "x\u{fffd}\u{fffd}y");
    assert_eq!(info.object["data"]["b"], "x\u{fffd}y");
}

/// What some Windows editors save: UTF-16 with a byte-order mark. kubectl transcodes it.
#[test]
fn utf16_with_a_bom_is_transcoded() {
    let text = "kind: A\nmetadata:\n  name: \u{e9}t\u{e9}\u{1f600}\n";
    let le: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
        .collect();
    let be: Vec<u8> = [0xFE, 0xFF]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_be_bytes))
        .collect();
    for bytes in [le, be] {
        assert_eq!(
            kinds(&decode_stream("w.yaml", &bytes)),
            ["A:\u{e9}t\u{e9}\u{1f600}@1"]
        );
    }
    // Without a BOM it is a stream of NULs, refused as kubectl refuses it.
    let bare: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
    assert!(kinds(&decode_stream("w.yaml", &bare))[0].contains("control character"));
    // An unpaired surrogate and an odd last byte are U+FFFD, not a panic.
    let broken = [0xFF, 0xFE, b'k', 0, 0x00, 0xD8, b'x'];
    let entries = decode_stream("w.yaml", &broken);
    assert_eq!(entries.len(), 1);
    assert_eq!(
        entries[0].as_ref().expect("a scalar").object,
        "k\u{fffd}\u{fffd}"
    );
}

/// Nine levels of nine aliases (a "billion laughs"): refused early, in go-yaml's words,
/// never with a `Debug` value.
#[test]
fn alias_bombs_are_refused_in_go_yaml_s_words() {
    let mut text = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..9 {
        let refs = vec![format!("*a{}", i - 1); 9].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    text.push_str("kind: A\n");
    assert_eq!(
        kinds(&decode_stream("bomb.yaml", text.as_bytes())),
        [
            "ERR error parsing bomb.yaml: error converting YAML to JSON: yaml: document contains excessive aliasing"
        ]
    );
    // Few aliases of one large scalar: bounded by the expanded bytes.
    let mut text = format!("kind: A\nbig: &big \"{}\"\nrefs:\n", "x".repeat(1 << 20));
    for _ in 0..64 {
        text.push_str("- *big\n");
    }
    let out = kinds(&decode_stream("bytes.yaml", text.as_bytes()));
    assert!(
        out[0].ends_with(": document contains excessive aliasing"),
        "{out:?}"
    );
    // A few aliases of a small anchor are fine.
    let text = "kind: A\nx: &x {a: 1}\ny: [*x, *x, *x]\n";
    assert_eq!(kinds(&decode_stream("ok.yaml", text.as_bytes())), ["A:@1"]);
}

/// Run on a thread with the main thread's 8 MiB stack, where the plugins decode: a
/// debug build's deserializer needs more than a test thread's 2 MiB for 128 levels.
#[test]
fn deep_nesting_is_refused_with_its_limit() {
    std::thread::Builder::new()
        .stack_size(8 << 20)
        .spawn(deep_nesting)
        .expect("spawn")
        .join()
        .expect("no panic");
}

fn deep_nesting() {
    let depth = MAX_YAML_DEPTH + 10;
    let block: String = (0..depth)
        .map(|i| format!("{}- \n", "  ".repeat(i)))
        .collect();
    let out = kinds(&decode_stream(
        "deep.yaml",
        format!("kind: A\nx:\n{block}").as_bytes(),
    ));
    assert!(
        out[0].ends_with(&format!(": exceeded max depth of {MAX_YAML_DEPTH}")),
        "{out:?}"
    );
    let flow = format!(
        "kind: A\nx: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let out = kinds(&decode_stream("deep.yaml", flow.as_bytes()));
    assert_eq!(
        out,
        [format!(
            "ERR error parsing deep.yaml: error converting YAML to JSON: yaml: exceeded max depth of {MAX_YAML_DEPTH}"
        )]
    );
    let json = format!(
        "{{\"kind\":\"A\",\"x\":{}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let out = kinds(&decode_stream("deep.json", json.as_bytes()));
    assert_eq!(
        out,
        ["ERR error parsing deep.json: line 1: recursion limit exceeded"]
    );
}

/// Big honest inputs pass: a List of 50,000 items (350,000 nodes, more than
/// serde-saphyr's default budget) and a 10 MB string.
#[test]
fn large_documents_without_aliases_are_not_limited() {
    let mut text = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for i in 0..50_000 {
        text.push_str(&format!(
            "- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: c{i}}}}}\n"
        ));
    }
    let entries = decode_stream("list.yaml", text.as_bytes());
    let list = entries[0].as_ref().expect("decoded");
    assert_eq!(list.object["items"].as_array().map(Vec::len), Some(50_000));
    let text = format!("kind: A\ndata:\n  a: \"{}\"\n", "x".repeat(10_000_000));
    let entries = decode_stream("big.yaml", text.as_bytes());
    let big = entries[0].as_ref().expect("decoded");
    assert_eq!(
        big.object["data"]["a"].as_str().map(str::len),
        Some(10_000_000)
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

/// go-yaml keeps a float beyond `f64` as the text it was (`strconv.ParseFloat` fails),
/// and integers beyond 64 bits become floats.
#[test]
fn numbers_json_cannot_hold_stay_text() {
    let entries = decode_stream("n.yaml", b"kind: A\nx: 1e400\n");
    assert_eq!(entries[0].as_ref().expect("decoded").object["x"], "1e400");
    let entries = decode_stream("n.yaml", b"kind: A\nx: 99999999999999999999999\n");
    assert_eq!(entries[0].as_ref().expect("decoded").object["x"], 1e23);
}

/// Every prefix of every fidelity manifest (a file cut short anywhere), and each with
/// bytes changed, decodes to objects or errors, never a panic: the reader's error
/// paths on real shapes.
#[test]
fn truncated_manifests_never_panic() {
    const MARKS: &[u8] = b":[{&*\t\"!-<%|>'#?,}]";
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fidelity/cases");
    let mut files = 0;
    for entry in std::fs::read_dir(dir).expect("fidelity cases") {
        let bytes = std::fs::read(entry.expect("entry").path()).expect("read");
        for end in (0..bytes.len().min(1500)).step_by(3) {
            let _ = decode_stream("cut.yaml", &bytes[..end]);
        }
        // And with one byte replaced by a character YAML gives a meaning to.
        for (i, at) in (0..bytes.len().min(1500)).step_by(7).enumerate() {
            let mut changed = bytes.clone();
            changed[at] = MARKS[i % MARKS.len()];
            let _ = decode_stream("changed.yaml", &changed);
        }
        files += 1;
    }
    assert!(files >= 150, "{files} files");
}
