//! `-o kyaml` (kubectl 1.34+): cli-runtime's `KYAMLPrinter`, which hands the object's
//! `json.Marshal` to sigs.k8s.io/yaml's KYAML encoder ([`goyaml::kyaml`]). Every
//! object starts with `---`, the first included.

use std::io::{self, Write};

use serde_json::Value;

use super::{Printer, go_fmt, gojson, strip_managed_fields};

/// `-o kyaml`.
#[derive(Debug, Default)]
pub struct KyamlPrinter {
    /// Keep `metadata.managedFields` (`--show-managed-fields`).
    pub show_managed_fields: bool,
    /// Write the objects in their Go struct's field order ([`gojson`]), as kubectl
    /// writes the ones it holds typed; else with the keys sorted, as it writes maps.
    pub typed: Option<gojson::Structs>,
}

impl Printer for KyamlPrinter {
    fn print(&self, obj: &Value, out: &mut dyn Write) -> io::Result<()> {
        let obj = strip_managed_fields(obj, self.show_managed_fields);
        // The key order is the JSON's: kyaml reads `json.Marshal`'s text with go-yaml
        // v3, which keeps it.
        let json = match self.typed {
            Some(structs) => gojson::json(obj.as_ref(), None, structs),
            None => go_fmt::json(obj.as_ref(), None),
        };
        let text = goyaml::kyaml::from_json(&json)
            .map_err(|e| io::Error::other(format!("error decoding: yaml: {}", e.message)))?;
        out.write_all(text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_object_starts_a_document() {
        let pod = serde_json::json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "labels": {"run": "web"}, "managedFields": [{}]},
        });
        let printer = KyamlPrinter::default();
        let mut out = Vec::new();
        printer
            .print(&pod, &mut out)
            .unwrap_or_else(|e| panic!("{e}"));
        printer
            .print(&pod, &mut out)
            .unwrap_or_else(|e| panic!("{e}"));
        let one = "---\n{\n  apiVersion: \"v1\",\n  kind: \"Pod\",\n  metadata: {\n    labels: {\n      run: \"web\",\n    },\n    name: \"web\",\n  },\n}\n";
        assert_eq!(String::from_utf8_lossy(&out), format!("{one}{one}"));
    }
}
