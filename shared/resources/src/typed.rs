//! Typed models decoded from (and encoded to) JSON values the way kube does it: through
//! text.
//!
//! kube decodes every answer with `serde_json::from_str`, and a model's decoder is
//! compiled once per kind of input; decoding `Value`s through text too lets every
//! typed decode of the plugins (the `--validate` models, `--overrides`' round trip,
//! rolling-update's `-f`) share kube's copy instead of carrying a second one for
//! `Value` (binary size). A bottom module: `generate` and `resource` use it.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// `serde_json::from_value`, through JSON text (see the module). The error reads as
/// `from_value`'s did: the message without the position in a text the user never saw.
pub fn from_value_as_text<K: DeserializeOwned>(value: &Value) -> Result<K, serde_json::Error> {
    let text = serde_json::to_string(value)?;
    serde_json::from_str(&text).map_err(|e| {
        let message = e.to_string();
        let position = format!(" at line {} column {}", e.line(), e.column());
        <serde_json::Error as serde::de::Error>::custom(
            message.strip_suffix(&position).unwrap_or(&message),
        )
    })
}

/// `serde_json::to_value`, through JSON text: a model's encoder for `Value` would be a
/// second copy beside the one kube's requests use (`serde_json::to_vec`).
pub fn to_value_as_text<K: serde::Serialize>(typed: &K) -> Result<Value, serde_json::Error> {
    serde_json::from_slice(&serde_json::to_vec(typed)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The detour through text decodes as `from_value` does and fails with its words.
    #[test]
    fn decoding_through_text_is_from_value() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let good = serde_json::json!({"metadata": {"name": "a"}, "data": {"k": "v"}});
        let through_text: ConfigMap = from_value_as_text(&good).expect("decodes");
        let direct: ConfigMap = serde_json::from_value(good).expect("decodes");
        assert_eq!(through_text, direct);
        let bad = serde_json::json!({"metadata": {"name": "a"}, "data": {"k": 5}});
        let through_text = from_value_as_text::<ConfigMap>(&bad).expect_err("a number");
        let direct = serde_json::from_value::<ConfigMap>(bad).expect_err("a number");
        assert_eq!(through_text.to_string(), direct.to_string());
    }

    #[test]
    fn encoding_through_text_is_to_value() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let cm: ConfigMap = serde_json::from_value(
            serde_json::json!({"metadata": {"name": "a"}, "data": {"k": "v"}}),
        )
        .expect("decodes");
        assert_eq!(
            to_value_as_text(&cm).expect("encodes"),
            serde_json::to_value(&cm).expect("encodes")
        );
    }
}
