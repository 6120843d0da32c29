//! Scripted agents: the JSON scenario schema (documented in the crate README) and the
//! catalogue of built-in and user scenarios.

mod template;

pub use template::{render, render_value};

use regex::Regex;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// One scripted agent.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The agent name sessions pick it by (`{"agent":{"name":…}}`).
    pub name: String,
    /// Free text for humans.
    #[serde(default)]
    pub description: String,
    /// MCP servers: each turn starts with `mcp.initialize` listing them (unless the trigger
    /// says `"mcp_initialize": false`).
    #[serde(default)]
    pub mcp_servers: Vec<McpServer>,
    /// Variables taken from the user's message: name → regex (group 1 if any, else the match).
    #[serde(default)]
    pub extract: BTreeMap<String, String>,
    /// Variable values used when nothing set them.
    #[serde(default)]
    pub defaults: Map<String, Value>,
    /// Triggers, tried in order; the first whose `when` matches plays its steps.
    pub triggers: Vec<Trigger>,
}

/// An MCP server as `mcp.initialize` reports it.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct McpServer {
    /// Server id (`tool_info.server_id`).
    pub id: String,
    /// Display name (`tool_info.server_name`).
    pub name: String,
    /// Transport reported in `mcp.initialize`.
    #[serde(default = "default_transport")]
    pub transport_type: String,
}

fn default_transport() -> String {
    "streamable-http".into()
}

/// A condition and what to play when it holds.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Trigger {
    /// All present conditions must hold; an empty `when` always matches.
    #[serde(default)]
    pub when: When,
    /// Whether to emit `mcp.initialize` first (default: when the scenario has MCP servers).
    #[serde(default)]
    pub mcp_initialize: Option<bool>,
    /// Variables set when this trigger fires (kept for the session's later turns).
    #[serde(default)]
    pub set: Map<String, Value>,
    /// The steps, in order. A pausing step ends the turn.
    pub steps: Vec<Step>,
}

/// Trigger conditions.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct When {
    /// Regex over the `user.message` text.
    pub message: Option<String>,
    /// A continuation allowed a call of this tool (`*` = any).
    pub approved: Option<String>,
    /// A continuation denied a call of this tool (`*` = any).
    pub denied: Option<String>,
    /// A continuation answered a client-side call of this tool (`*` = any).
    pub answered: Option<String>,
    /// `true`: the turn has empty input (the resume after `mcp.auth_required`).
    pub resumed: Option<bool>,
    /// The named variable is unset (or false/null).
    pub unset: Option<String>,
}

/// One scripted action. Written as `{"say": {…}}`, `{"call": {…}}`, ….
#[derive(Deserialize, Debug, Clone)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Step {
    /// A streamed text answer.
    Say(Say),
    /// A model message with tool calls, then their results or a pause.
    Call(Call),
    /// A `create_sub_agent` call per agent; the children run interleaved.
    Subagents(Subagents),
    /// The model call fails: an orphan placeholder, then `turn.done` `error`.
    Error(ErrorStep),
    /// `mcp.auth_required`; the turn pauses until an empty-input turn.
    McpAuth(McpAuth),
    /// Wait (ms) without emitting anything.
    Sleep(u64),
    /// When a variable is set (e.g. `result.error` after a failed lookup), a streamed answer
    /// and the end of the turn (`done`); otherwise nothing.
    EndIf(EndIf),
}

/// `end_if`: `{"set": "result.error", "say": {…}}`.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct EndIf {
    /// The variable that ends the turn when set (not absent, `null` or `false`).
    pub set: String,
    /// What the agent answers before the turn ends.
    pub say: Say,
}

/// `say`: streamed text.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct Say {
    /// Text with `{{var}}` placeholders.
    pub text: Option<String>,
    /// Generated non-ASCII prose instead of (or after) `text`.
    pub generate: Option<Generate>,
    /// Characters per delta (default 12, like the recording).
    pub chunk_chars: Option<usize>,
}

/// Generated prose of a given size.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Generate {
    /// Number of words: a number or a `{{var}}` template.
    pub words: Value,
}

/// `call`: one model message proposing tool calls.
#[derive(Deserialize, Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct Call {
    /// Text streamed before the calls (optional).
    pub text: Option<String>,
    /// The calls, streamed in order with `index` 0, 1, ….
    pub calls: Vec<CallSpec>,
}

/// One tool call.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    /// Tool name (`function.name`).
    pub tool: String,
    /// Arguments object; strings may hold `{{var}}` (a lone `"{{var}}"` keeps the var's type).
    #[serde(default)]
    pub arguments: Value,
    /// MCP server id for `tool_info: {type:"mcp",…}`; absent = `truefoundry-system`.
    pub server: Option<String>,
    /// `none` (runs at once), `approval` (`tool.approval_required`) or `client`
    /// (`tool.response_required`, answered by `user.tool_response`).
    #[serde(default)]
    pub gate: Gate,
    /// How the result is produced when the call runs.
    pub result: Option<ResultSpec>,
    /// How long a call with gate `none` runs before its `tool.response` (ms: a number or a
    /// `{{var}}` template; default 0): nothing is written meanwhile, like a slow tool on
    /// TrueForge, which sends no heartbeats. A cancel ends the wait.
    #[serde(default)]
    pub runs_ms: Option<Value>,
}

/// Who must act before a call runs.
#[derive(Deserialize, Debug, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Gate {
    /// Runs immediately.
    #[default]
    None,
    /// Needs `user.tool_approval`.
    Approval,
    /// Needs `user.tool_response` (client-side tool).
    Client,
}

/// A tool result: one of `builtin`, `text`, `json`.
#[derive(Deserialize, Debug, Clone, Default, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct ResultSpec {
    /// `get_order` or `process_refund`, over the SQLite orders table.
    pub builtin: Option<String>,
    /// A literal result string (templated).
    pub text: Option<String>,
    /// A literal JSON result (templated; sent pretty-printed).
    pub json: Option<Value>,
}

/// `subagents`: parallel children.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Subagents {
    /// Text streamed before the `create_sub_agent` calls.
    pub text: Option<String>,
    /// The children (1–5).
    pub agents: Vec<SubagentSpec>,
}

/// One child thread.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct SubagentSpec {
    /// Name and title.
    pub name: String,
    /// Its input text (templated).
    pub input: String,
    /// Its steps: `say`, `call` with gate `none`, `sleep`.
    pub steps: Vec<Step>,
}

/// `error`: a failed model call.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ErrorStep {
    /// `state.message` (TrueForge: `Request failed (500): …`).
    pub message: String,
}

/// `mcp_auth`: servers needing OAuth.
#[derive(Deserialize, Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct McpAuth {
    /// `[{id, name, auth_url}]` as sent in `mcp.auth_required`.
    pub servers: Vec<Value>,
}

/// A scenario with its compiled regexes.
#[derive(Debug)]
pub struct Compiled {
    /// The scenario.
    pub scenario: Scenario,
    /// `extract` compiled.
    pub extract: Vec<(String, Regex)>,
    /// Per trigger, its `when.message` compiled.
    pub message_res: Vec<Option<Regex>>,
}

const BUILT_IN: &[(&str, &str)] = &[
    ("support", include_str!("../../scenarios/support.json")),
    (
        "researcher",
        include_str!("../../scenarios/researcher.json"),
    ),
    ("concierge", include_str!("../../scenarios/concierge.json")),
    ("github", include_str!("../../scenarios/github.json")),
    ("flaky", include_str!("../../scenarios/flaky.json")),
    (
        "storyteller",
        include_str!("../../scenarios/storyteller.json"),
    ),
];

fn check_steps(steps: &[Step], in_subagent: bool, name: &str) -> Result<(), String> {
    for step in steps {
        match step {
            Step::Call(call) => {
                if call.calls.is_empty() {
                    return Err(format!("{name}: a call step needs at least one call"));
                }
                for c in &call.calls {
                    if in_subagent && c.gate != Gate::None {
                        return Err(format!(
                            "{name}: subagent calls cannot pause (gate none only)"
                        ));
                    }
                    if c.gate == Gate::None && c.result.is_none() {
                        return Err(format!(
                            "{name}: call {} has gate none but no result",
                            c.tool
                        ));
                    }
                }
            }
            Step::Subagents(s) => {
                if in_subagent {
                    return Err(format!("{name}: subagents cannot nest"));
                }
                if s.agents.is_empty() || s.agents.len() > 5 {
                    return Err(format!("{name}: subagents needs 1 to 5 agents"));
                }
                for agent in &s.agents {
                    check_steps(&agent.steps, true, name)?;
                }
            }
            Step::Error(_) | Step::McpAuth(_) | Step::EndIf(_) if in_subagent => {
                return Err(format!(
                    "{name}: subagents support say, call and sleep only"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Parses and validates one scenario file's text.
pub fn compile(text: &str) -> Result<Compiled, String> {
    let scenario: Scenario = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut extract = Vec::new();
    for (var, pattern) in &scenario.extract {
        let re =
            Regex::new(pattern).map_err(|e| format!("{}: extract {var}: {e}", scenario.name))?;
        extract.push((var.clone(), re));
    }
    let mut message_res = Vec::new();
    for trigger in &scenario.triggers {
        check_steps(&trigger.steps, false, &scenario.name)?;
        message_res.push(match &trigger.when.message {
            Some(p) => {
                Some(Regex::new(p).map_err(|e| format!("{}: when.message: {e}", scenario.name))?)
            }
            None => None,
        });
    }
    if scenario.triggers.is_empty() {
        return Err(format!("{}: no triggers", scenario.name));
    }
    Ok(Compiled {
        scenario,
        extract,
        message_res,
    })
}

/// All scenarios by name.
#[derive(Debug, Default)]
pub struct Catalogue {
    by_name: BTreeMap<String, std::sync::Arc<Compiled>>,
}

impl Catalogue {
    /// The built-in scenarios plus every `*.json` in `dir` (same names override).
    pub fn load(dir: Option<&Path>) -> Result<Self, String> {
        let mut catalogue = Catalogue::default();
        for (file, text) in BUILT_IN {
            let compiled = compile(text).map_err(|e| format!("built-in {file}: {e}"))?;
            catalogue.insert(compiled);
        }
        if let Some(dir) = dir {
            let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            let mut paths: Vec<_> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect();
            paths.sort();
            for path in paths {
                let text = std::fs::read_to_string(&path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                let compiled = compile(&text).map_err(|e| format!("{}: {e}", path.display()))?;
                catalogue.insert(compiled);
            }
        }
        Ok(catalogue)
    }

    fn insert(&mut self, compiled: Compiled) {
        self.by_name.insert(
            compiled.scenario.name.clone(),
            std::sync::Arc::new(compiled),
        );
    }

    /// The scenario called `name`.
    pub fn get(&self, name: &str) -> Option<std::sync::Arc<Compiled>> {
        self.by_name.get(name).cloned()
    }

    /// All names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.by_name.keys().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_ins_compile() {
        let catalogue = Catalogue::load(None).unwrap();
        assert_eq!(
            catalogue.names(),
            [
                "concierge",
                "flaky",
                "github",
                "researcher",
                "storyteller",
                "support"
            ]
        );
    }

    #[test]
    fn invalid_scenarios_are_refused() {
        assert!(compile(r#"{"name":"x","triggers":[]}"#).is_err());
        assert!(compile(r#"{"name":"x","triggers":[{"steps":[{"dance":{}}]}]}"#).is_err());
        let pausing_child = r#"{"name":"x","triggers":[{"steps":[{"subagents":{"agents":[
            {"name":"a","input":"i","steps":[{"call":{"calls":[{"tool":"t","gate":"approval"}]}}]}]}}]}]}"#;
        assert!(compile(pausing_child).unwrap_err().contains("cannot pause"));
    }
}
