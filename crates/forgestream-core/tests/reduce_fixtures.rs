//! The reducer golden corpus: every `tests/fixtures/reduce/*.json` is
//! `{"name","source","steps":[…],"expected":{…}}` (optionally `"config"` and `"equivalent"`: a
//! list of other step lists that must reduce to the same view). `expected` is matched as a
//! subset of `{…summary(), "errors":[kinds], "responses":[…], "warningKinds":[…]}`.
mod support;

use forgestream_core::reduce::ReducerConfig;
use serde_json::Value;
use support::{content_summary, run_steps, subset_mismatch};

fn config_of(fixture: &Value) -> ReducerConfig {
    let mut config = ReducerConfig::default();
    if let Some(cap) = fixture
        .pointer("/config/max_events_per_turn")
        .and_then(Value::as_u64)
    {
        config.max_events_per_turn = cap as usize;
    }
    config
}

#[test]
fn reduce_corpus() {
    let names = support::reduce_fixture_paths();
    assert!(names.len() >= 30, "corpus has only {} cases", names.len());
    let mut failures = Vec::new();
    for path in &names {
        let fixture: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let name = fixture["name"].as_str().unwrap_or("?").to_string();
        assert!(fixture["source"].is_string(), "{name}: source missing");
        let steps = fixture["steps"].as_array().cloned().unwrap_or_default();
        let out = run_steps("s", config_of(&fixture), &steps);
        let mut actual = support::checked_summary(&out.view);
        let warnings: Vec<Value> = out
            .view
            .warnings()
            .iter()
            .map(|w| serde_json::to_value(w).unwrap()["kind"].clone())
            .collect();
        actual["errors"] = serde_json::to_value(&out.errors).unwrap();
        actual["responses"] = Value::Array(out.responses.clone());
        actual["warningKinds"] = Value::Array(warnings);
        let expected = &fixture["expected"];
        assert!(
            expected.as_object().is_some_and(|o| !o.is_empty()),
            "{name}: empty expected"
        );
        if let Some(m) = subset_mismatch(expected, &actual, "") {
            failures.push(format!("{name}: {m}"));
        }
        for (i, other) in fixture["equivalent"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let alt = run_steps("s", config_of(&fixture), other.as_array().unwrap());
            if content_summary(&alt.view) != content_summary(&out.view) {
                failures.push(format!(
                    "{name}: equivalent[{i}] differs:\n{}\nvs\n{}",
                    content_summary(&alt.view),
                    content_summary(&out.view)
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
