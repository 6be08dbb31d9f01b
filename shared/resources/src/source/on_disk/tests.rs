//! A file read from disk at every walk gives exactly the entries of its bytes in
//! memory; anything the in-memory decoder reads as a whole stays in memory.

use std::path::Path;

use crate::decode::{decode_lazily, decode_on_disk};
use crate::source::{Body, MAX_LOCAL_BYTES, read_file_streaming_above};

/// Plain YAML streams, the splitter's corner cases among them.
const YAML: [&str; 14] = [
    "",
    "\n\n",
    "kind: A\nmetadata: {name: a}\n",
    "kind: A\nmetadata: {name: a}",
    "---\n# leading comment\n---\nkind: A\nmetadata: {name: a}\n---\n\n---\nnull\n---\n# c\nkind: B\nmetadata:\n  name: b\n...\n",
    "kind: A\nmetadata:\n  name: \"---x\"\n---   \nkind: B\n",
    "kind: A\n---\nkind: B\n bad: indent\n---\nkind: C\n",
    "kind: A\n--- # a comment\nkind: B\n---\n",
    "kind: A\n---x\nkind: B\n",
    "kind: A\n----\nkind: B\n",
    "kind: A\r\nmetadata:\r\n  name: a\r\n---\r\nkind: B\r\n",
    "apiVersion: v1\nkind: List\nitems:\n- kind: A\n  apiVersion: v1\n",
    "  \n\n# only a comment\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: é\ndata:\n  k: |\n    ---\n    x\n",
];

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write");
    path
}

#[test]
fn documents_read_from_disk_are_those_of_the_bytes_in_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (i, text) in YAML.iter().enumerate() {
        let path = write(dir.path(), &format!("{i}.yaml"), text.as_bytes());
        let (name, body) = read_file_streaming_above(&path, MAX_LOCAL_BYTES, 0).expect("read");
        let Body::OnDisk(file) = &body else {
            panic!("{text:?} is plain YAML: read from disk");
        };
        assert_eq!(file.len(), text.len() as u64);
        assert_eq!(file.mentions_list, text.contains("List"), "{text:?}");
        for documents in [0, 7] {
            let on_disk: Vec<String> = decode_on_disk(&name, file, documents)
                .map(|e| format!("{e:?}"))
                .collect();
            let in_memory: Vec<String> = decode_lazily(&name, text.as_bytes(), documents)
                .map(|e| format!("{e:?}"))
                .collect();
            assert_eq!(on_disk, in_memory, "{text:?}");
        }
    }
}

#[test]
fn what_the_decoder_reads_whole_stays_in_memory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [&[u8]; 6] = [
        b"  \n {\"kind\": \"A\"}\n",
        b"\xEF\xBB\xBFkind: A\n",
        b"\xFF\xFEk\0i\0n\0d\0",
        b"kind: A\nmetadata: {name: \xFF}\n",
        b"kind: A\n---\nkind: \x07\n",
        b"kind: A\nname: \xC2\x85\xC2\x80\n",
    ];
    for (i, bytes) in cases.into_iter().enumerate() {
        let path = write(dir.path(), &format!("{i}.yaml"), bytes);
        let (_, body) = read_file_streaming_above(&path, MAX_LOCAL_BYTES, 0).expect("read");
        let Body::Bytes(read) = body else {
            panic!("{bytes:?} needs the in-memory decoder");
        };
        assert_eq!(read, bytes);
    }
    // Small files stay in memory whatever they hold.
    let path = write(dir.path(), "small.yaml", b"kind: A\n");
    let (_, body) = read_file_streaming_above(&path, MAX_LOCAL_BYTES, 9).expect("read");
    assert!(matches!(body, Body::Bytes(_)));
}

#[test]
fn the_bound_and_its_words_are_those_of_reading_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "big.yaml", b"kind: A\n---\nkind: B\n");
    let err = read_file_streaming_above(&path, 10, 0).expect_err("over the bound");
    assert!(
        err.to_string()
            .ends_with(": the document is larger than the limit of 10 bytes"),
        "{err}"
    );
}

#[test]
fn a_file_that_changed_since_the_scan_is_an_error_of_the_walk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = write(dir.path(), "a.yaml", b"kind: A\n---\nkind: B\n");
    let (name, body) = read_file_streaming_above(&path, MAX_LOCAL_BYTES, 0).expect("read");
    let Body::OnDisk(file) = &body else {
        panic!("plain YAML is read from disk");
    };
    std::fs::write(&path, b"kind: A\n---\nkind: B\n---\nkind: C\n").expect("rewrite");
    let entries: Vec<_> = decode_on_disk(&name, file, 0).collect();
    assert_eq!(entries.len(), 1);
    let err = entries[0].as_ref().expect_err("changed");
    assert_eq!(
        err.to_string(),
        format!("unable to read \"{name}\": the file changed while it was read")
    );
    std::fs::remove_file(&path).expect("remove");
    let entries: Vec<_> = decode_on_disk(&name, file, 0).collect();
    assert!(entries[0].is_err());
}
