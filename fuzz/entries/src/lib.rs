//! The entry points of the fuzz targets in `fuzz/` (cargo-fuzz), in a crate of the
//! root workspace so that the saved corpora also run as ordinary tests on stable Rust
//! (`tests` below): every input in `fuzz/corpus/<target>/` goes through the same
//! function the fuzzer calls. No production crate depends on this one.
//!
//! Each function takes arbitrary bytes and must neither panic nor hang; what it
//! returns is ignored (an error is a fine answer to a bad input).

use serde_json::{Value, json};

use resources::generate::OverrideType;
use resources::{Builder, RestMapper, Validation};

/// The object templates and overrides are applied to: a small Pod with the shapes the
/// printers and patches meet (nested maps, a list of maps, numbers, booleans, null).
fn sample() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web",
            "namespace": "default",
            "labels": {"app": "web", "tier": "front"},
            "annotations": {"a.b/c": "1"}
        },
        "spec": {
            "containers": [
                {"name": "c", "image": "nginx:1.27", "ports": [{"containerPort": 80}],
                 "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}}},
                {"name": "sidecar", "image": "busybox", "args": ["sleep", "1"]}
            ],
            "restartPolicy": "Always",
            "hostNetwork": false,
            "nodeSelector": null
        },
        "status": {"phase": "Running", "podIPs": [{"ip": "10.0.0.1"}]}
    })
}

fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// `-f` input: decoding (YAML, JSON, encodings, budgets) and the Builder's stages
/// (flatten, validation, namespace, offline mapping).
pub fn manifest(data: &[u8]) {
    let builder = Builder::new()
        .schema(Validation::Strict)
        .continue_on_error()
        .namespace_param("fuzz")
        .default_namespace()
        .stream("fuzz", data.to_vec())
        .flatten();
    let mut mapper = RestMapper::offline();
    if let Ok(visited) = futures::executor::block_on(builder.build(&mut mapper)) {
        for entry in visited.entries() {
            // Errors are rendered too: their messages are built from the input.
            let _ = entry.map_err(|e| e.to_string());
        }
    }
}

/// A resource quantity (`--requests`, `--limits`, overrides): validation and the
/// canonical form.
pub fn quantity(data: &[u8]) {
    let s = text(data);
    let _ = resources::generate::validate_quantity(&s);
    let _ = resources::generate::canonical_quantity(&s);
}

/// An image reference (`--image`).
pub fn image_reference(data: &[u8]) {
    let _ = resources::generate::is_valid_image_reference(&text(data));
}

/// A label selector (`-l`).
pub fn label_selector(data: &[u8]) {
    let _ = resources::parse_selector(&text(data));
}

/// A Go duration (`--timeout`, `--request-timeout`, `--update-period`), with and
/// without bare seconds.
pub fn go_duration(data: &[u8]) {
    let s = text(data);
    let _ = cli::flags::parse_go_duration(&s, true);
    let _ = cli::flags::parse_go_duration(&s, false);
}

/// A JSONPath template (`-o jsonpath=…`), parsed and run on a sample object in each
/// of its output modes.
pub fn jsonpath(data: &[u8]) {
    let Ok(path) = gotext::jsonpath::JsonPath::parse(&text(data)) else {
        return;
    };
    let object = sample();
    let _ = path.clone().execute(&object);
    let _ = path
        .allow_missing_keys(false)
        .json_output(true)
        .execute(&object);
}

/// A Go template (`-o go-template=…`), parsed and run on a sample object.
pub fn go_template(data: &[u8]) {
    let Ok(template) = gotext::gotemplate::Template::parse(&text(data)) else {
        return;
    };
    let object = sample();
    let _ = template.clone().execute(&object);
    let _ = template.allow_missing_keys(false).execute(&object);
}

/// `--overrides` on a generated object: the first byte picks the patch type, the
/// rest is the patch.
pub fn overrides(data: &[u8]) {
    let Some((&kind, patch)) = data.split_first() else {
        return;
    };
    let kind = match kind % 3 {
        0 => OverrideType::Merge,
        1 => OverrideType::Json,
        _ => OverrideType::Strategic,
    };
    if let Ok(patched) = resources::generate::apply_overrides(sample(), &text(patch), kind) {
        let _ = resources::generate::normalize(patched);
    }
}

/// The entry function of a target.
pub type Target = fn(&[u8]);

/// Every target by its directory name under `fuzz/corpus/`.
pub const TARGETS: &[(&str, Target)] = &[
    ("manifest", manifest),
    ("quantity", quantity),
    ("image_reference", image_reference),
    ("label_selector", label_selector),
    ("go_duration", go_duration),
    ("jsonpath", jsonpath),
    ("go_template", go_template),
    ("overrides", overrides),
];

#[cfg(test)]
mod tests;
