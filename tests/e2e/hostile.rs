//! Odd input that kubectl accepts, created on the server by both: UTF-16
//! with a byte-order mark (what some Windows editors save) and invalid UTF-8. The
//! objects read back must be the same.

use tests::harness::cluster;

/// `manifest` for ConfigMap `name`, holding `value` as bytes after `a: `.
fn configmap(name: &str, value: &[u8]) -> Vec<u8> {
    let mut text =
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  a: ")
            .into_bytes();
    text.extend_from_slice(value);
    text.push(b'\n');
    text
}

/// How a case's manifest is written to bytes.
type Encoding = fn(&[u8]) -> Vec<u8>;

fn utf16le_with_bom(text: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(text);
    [0xFF, 0xFE]
        .into_iter()
        .chain(text.encode_utf16().flat_map(u16::to_le_bytes))
        .collect()
}

#[tokio::test]
async fn utf16_and_invalid_utf8_are_created_as_kubectl_creates_them() {
    let cluster = cluster();
    let ns = cluster.namespace("hostile-encodings").await;
    let cases: [(&str, Encoding, &[u8]); 2] = [
        ("utf16", utf16le_with_bom, "h\u{e9}llo \u{1f600}".as_bytes()),
        ("badutf8", |b: &[u8]| b.to_vec(), b"x\xff\xfey\xe2\x82z"),
    ];
    for (name, encode, value) in cases {
        let ours = format!("{name}-ours");
        let theirs = format!("{name}-kubectl");
        cluster
            .plugin("create-file")
            .args(["-f", "-", "-n", ns.as_str()])
            .stdin(encode(&configmap(&ours, value)))
            .run()
            .success();
        cluster
            .kubectl()
            .args(["create", "-f", "-", "-n", ns.as_str()])
            .stdin(encode(&configmap(&theirs, value)))
            .run()
            .success();
        let data = |object: &str| {
            let out = cluster
                .kubectl()
                .args(["get", "configmap", object, "-n", ns.as_str()])
                .args(["-o", "jsonpath={.data.a}"])
                .run();
            out.success();
            out.stdout
        };
        let created = data(&ours);
        assert!(
            created.contains('y') || created.contains("llo"),
            "{name}: {created:?}"
        );
        assert_eq!(created, data(&theirs), "{name}");
    }
}
