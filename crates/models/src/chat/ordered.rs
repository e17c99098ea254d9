//! JSON text with each schema's properties in the order of its `required` list.
//!
//! `serde_json::Value` keeps object keys sorted, so a schema built in the order a model should
//! write its fields (`op`, `kind`, ... `confidence` last) would reach the server alphabetically,
//! and constrained decoding (llama.cpp's grammar, vLLM's guided decoding) generates fields in
//! the order the schema lists them. Strict schemas name every property in `required`, which is
//! an array and keeps its order: that order is the one sent.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value};

/// `value` as compact JSON text, every object holding both `properties` and `required` writing
/// its properties in the order of `required` (any others after, sorted).
pub(crate) fn to_string(value: &Value) -> String {
    serde_json::to_string(&InOrder(value)).unwrap_or_else(|_| value.to_string())
}

struct InOrder<'a>(&'a Value);

impl Serialize for InOrder<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&InOrder(item))?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let order: Vec<&str> = match (map.get("properties"), map.get("required")) {
                    (Some(Value::Object(_)), Some(Value::Array(required))) => {
                        required.iter().filter_map(Value::as_str).collect()
                    }
                    _ => Vec::new(),
                };
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("properties", Value::Object(props)) if !order.is_empty() => {
                            out.serialize_entry(key, &Properties { props, order: &order })?;
                        }
                        _ => out.serialize_entry(key, &InOrder(value))?,
                    }
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

struct Properties<'a> {
    props: &'a Map<String, Value>,
    order: &'a [&'a str],
}

impl Serialize for Properties<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_map(Some(self.props.len()))?;
        let listed = self.order.iter().filter_map(|k| self.props.get_key_value(*k));
        let rest = self.props.iter().filter(|(k, _)| !self.order.contains(&k.as_str()));
        for (key, value) in listed.chain(rest) {
            out.serialize_entry(key, &InOrder(value))?;
        }
        out.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    #[test]
    fn properties_follow_required_at_every_depth_and_nothing_is_lost() {
        let schema = json!({
            "type": "object",
            "required": ["zeta", "alpha"],
            "properties": {
                "alpha": {"type": "string"},
                "zeta": {
                    "type": "array",
                    "items": {"type": "object", "required": ["op", "kind", "confidence"],
                              "properties": {"confidence": {}, "kind": {}, "op": {}, "extra": {}}},
                },
            },
        });
        let text = super::to_string(&schema);
        let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle} in {text}"));
        assert!(at("\"zeta\"") < at("\"alpha\""), "{text}");
        assert!(at("\"op\"") < at("\"kind\"") && at("\"kind\"") < at("\"confidence\""), "{text}");
        assert!(at("\"confidence\"") < at("\"extra\""), "unlisted properties come last: {text}");
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, schema, "the same document, only in another order");
        assert_eq!(super::to_string(&json!({"properties": {"b": 1, "a": 2}})), r#"{"properties":{"a":2,"b":1}}"#);
    }
}
