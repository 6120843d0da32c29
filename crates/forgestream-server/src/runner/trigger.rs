//! Which trigger of a scenario a turn plays, and the variables it starts with.

use crate::continuation::{Decision, TurnInput};
use crate::scenario::Compiled;
use crate::store::PendingItem;
use serde_json::{Map, Value};

/// Variables of a new turn: scenario defaults, then the parent turn's, then what `extract`
/// finds in the message (numbers stay numbers).
pub fn initial_vars(
    scenario: &Compiled,
    parent_vars: Option<&Map<String, Value>>,
    input: &TurnInput,
) -> Map<String, Value> {
    let mut vars = scenario.scenario.defaults.clone();
    if let Some(parent) = parent_vars {
        for (k, v) in parent {
            if !k.starts_with("result") {
                vars.insert(k.clone(), v.clone());
            }
        }
    }
    if let TurnInput::Message(text) = input {
        for (name, re) in &scenario.extract {
            if let Some(caps) = re.captures(text) {
                let found = caps
                    .get(1)
                    .or_else(|| caps.get(0))
                    .map(|m| m.as_str())
                    .unwrap_or_default();
                let value = if let Ok(n) = found.parse::<u64>() {
                    Value::from(n)
                } else {
                    found
                        .parse::<f64>()
                        .ok()
                        .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
                        .unwrap_or_else(|| Value::String(found.to_owned()))
                };
                vars.insert(name.clone(), value);
            }
        }
    }
    vars
}

fn tool_matches(want: &str, item: &PendingItem) -> bool {
    want == "*" || item.tool.as_deref() == Some(want)
}

/// The variable `name` holds something (not absent, `null` or `false`).
pub(super) fn var_is_set(vars: &Map<String, Value>, name: &str) -> bool {
    !matches!(
        vars.get(name),
        None | Some(Value::Null) | Some(Value::Bool(false))
    )
}

/// The first trigger of `scenario` whose `when` holds for this input.
pub fn pick_trigger(
    scenario: &Compiled,
    input: &TurnInput,
    vars: &Map<String, Value>,
) -> Option<usize> {
    scenario
        .scenario
        .triggers
        .iter()
        .enumerate()
        .position(|(i, trigger)| {
            let when = &trigger.when;
            let answers: &[(PendingItem, Decision)] = match input {
                TurnInput::Answers(a) => a,
                _ => &[],
            };
            if let Some(re) = &scenario.message_res[i] {
                match input {
                    TurnInput::Message(text) if re.is_match(text) => {}
                    _ => return false,
                }
            }
            if let Some(tool) = &when.approved {
                if !answers
                    .iter()
                    .any(|(p, d)| *d == Decision::Allow && tool_matches(tool, p))
                {
                    return false;
                }
            }
            if let Some(tool) = &when.denied {
                if !answers
                    .iter()
                    .any(|(p, d)| matches!(d, Decision::Deny(_)) && tool_matches(tool, p))
                {
                    return false;
                }
            }
            if let Some(tool) = &when.answered {
                if !answers
                    .iter()
                    .any(|(p, d)| matches!(d, Decision::Answer(_)) && tool_matches(tool, p))
                {
                    return false;
                }
            }
            if let Some(resumed) = when.resumed {
                if resumed != (*input == TurnInput::Empty) {
                    return false;
                }
            }
            if let Some(name) = &when.unset {
                if var_is_set(vars, name) {
                    return false;
                }
            }
            true
        })
}
