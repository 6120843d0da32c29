//! `{{var}}` substitution in scenario texts and argument objects.

use serde_json::{Map, Value};

fn var_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Replaces each `{{name}}` with the variable's text; unknown names become empty.
pub fn render(text: &str, vars: &Map<String, Value>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find("}}") {
            Some(end) => {
                let name = after[..end].trim();
                if let Some(value) = vars.get(name) {
                    out.push_str(&var_text(value));
                }
                rest = &after[end + 2..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Renders every string inside `value`; a string that is exactly `{{name}}` takes the
/// variable's own JSON value (so `"amount": "{{amount}}"` stays a number).
pub fn render_value(value: &Value, vars: &Map<String, Value>) -> Value {
    match value {
        Value::String(s) => {
            let trimmed = s.trim();
            if let Some(name) = trimmed
                .strip_prefix("{{")
                .and_then(|t| t.strip_suffix("}}"))
                .filter(|n| !n.contains("{{"))
            {
                if let Some(v) = vars.get(name.trim()) {
                    return v.clone();
                }
            }
            Value::String(render(s, vars))
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| render_value(v, vars)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), render_value(v, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn renders_text_and_typed_values() {
        let vars = json!({"order_id": "ORD-1", "amount": 49.5})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(
            render("Refund {{ order_id }}: {{amount}} {{missing}}!", &vars),
            "Refund ORD-1: 49.5 !"
        );
        assert_eq!(
            render("open {{ never closed", &vars),
            "open {{ never closed"
        );
        let args = render_value(
            &json!({"id": "{{order_id}}", "amount": "{{amount}}"}),
            &vars,
        );
        assert_eq!(args, json!({"id": "ORD-1", "amount": 49.5}));
    }
}
