//! Built-in tool implementations and the argument text format of the recorded model.

use crate::scenario::{render, render_value, ResultSpec};
use crate::store::Store;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::io;

/// JSON the way the recorded fake model wrote tool arguments (Python's `json.dumps`; keys
/// come out sorted, as `serde_json::Map` keeps them):
/// `", "` and `": "` separators and non-ASCII escaped as `\uXXXX` (surrogate pairs above
/// U+FFFF), so argument fragments split inside `\u` escapes exactly as clients will meet them.
struct PythonStyle;

impl serde_json::ser::Formatter for PythonStyle {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        for ch in fragment.chars() {
            if ch.is_ascii() {
                w.write_all(&[ch as u8])?;
            } else {
                let mut units = [0u16; 2];
                for unit in ch.encode_utf16(&mut units) {
                    write!(w, "\\u{unit:04x}")?;
                }
            }
        }
        Ok(())
    }
}

/// Arguments as the JSON text streamed in `function.arguments`.
pub fn arguments_text(arguments: &Value) -> String {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonStyle);
    if arguments.serialize(&mut ser).is_err() {
        return "{}".into();
    }
    String::from_utf8(out).unwrap_or_else(|_| "{}".into())
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

fn number(value: Option<&Value>) -> Option<f64> {
    match value? {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Runs a call whose result is `spec`, returning the `tool.response` content: pretty JSON
/// for structured results (as the recorded MCP server answered), the text for `text`.
/// Tool-level failures are results (`{"error": …}`), never errors of the turn.
pub fn run(
    store: &Store,
    tool_call_id: &str,
    spec: &ResultSpec,
    arguments: &Value,
    vars: &Map<String, Value>,
) -> String {
    if let Some(text) = &spec.text {
        return render(text, vars);
    }
    if let Some(value) = &spec.json {
        return pretty(&render_value(value, vars));
    }
    let order_id = arguments
        .get("order_id")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let result = match spec.builtin.as_deref() {
        Some("get_order") => match store.order(order_id) {
            Ok(Some(order)) => order,
            Ok(None) => json!({"error": format!("Order not found: {order_id}")}),
            Err(_) => json!({"error": "orders store unavailable"}),
        },
        Some("process_refund") => {
            let reason = arguments
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or("customer request");
            // No amount given: refund what is left on the order.
            let amount = number(arguments.get("amount")).or_else(|| {
                let order = store.order(order_id).ok().flatten()?;
                let total = number(order.get("total"))?;
                Some(total - number(order.get("refunded")).unwrap_or(0.0))
            });
            match amount {
                Some(amount) => store
                    .process_refund(tool_call_id, order_id, amount, reason)
                    .unwrap_or_else(|_| json!({"error": "orders store unavailable"})),
                None => json!({"error": format!("Order not found: {order_id}")}),
            }
        }
        other => json!({"error": format!("Unknown built-in tool: {}", other.unwrap_or("(none)"))}),
    };
    pretty(&result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_look_like_the_recorded_model() {
        let args = json!({"order_id": "ORD-2031", "amount": 49.5, "reason": "damaged — cassé 🚀", "tags": [1, 2]});
        assert_eq!(
            arguments_text(&args),
            r#"{"amount": 49.5, "order_id": "ORD-2031", "reason": "damaged \u2014 cass\u00e9 \ud83d\ude80", "tags": [1, 2]}"#
        );
        let back: Value = serde_json::from_str(&arguments_text(&args)).unwrap();
        assert_eq!(back, args);
    }

    #[test]
    fn builtins_read_and_write_orders() {
        let store = Store::open(":memory:").unwrap();
        let vars = Map::new();
        let get = ResultSpec {
            builtin: Some("get_order".into()),
            ..Default::default()
        };
        let text = run(&store, "c1", &get, &json!({"order_id": "ORD-2031"}), &vars);
        assert!(text.starts_with("{\n  \"currency\": \"EUR\""), "{text}");
        assert!(text.contains("\"order_id\": \"ORD-2031\""));
        assert!(text.contains("\"total\": 1240.0"));
        let refund = ResultSpec {
            builtin: Some("process_refund".into()),
            ..Default::default()
        };
        let text = run(
            &store,
            "c2",
            &refund,
            &json!({"order_id": "ORD-4821"}),
            &vars,
        );
        assert!(text.contains("\"refunded\": 89.9"), "{text}");
        let again = run(
            &store,
            "c3",
            &refund,
            &json!({"order_id": "ORD-4821", "amount": "1"}),
            &vars,
        );
        assert!(again.contains("exceeds"), "{again}");
    }
}
