//! Planning of a `subagents` step: one `create_sub_agent` call per child, each child's thread
//! (`thread.created`, its steps, the spawning call's `tool.response`, `thread.done`), the
//! children's events interleaved in a seeded order as if they ran in parallel.

use super::plan::{Item, Planner};
use crate::event::{Event, EventBody};
use crate::scenario::{render, Step, Subagents};
use crate::tools;
use crate::wire;
use serde_json::{json, Value};
use std::collections::VecDeque;

impl Planner<'_> {
    pub(super) fn thread_steps(
        &mut self,
        thread: &str,
        steps: &[Step],
    ) -> (Vec<Item>, Option<Event>) {
        let mut items = Vec::new();
        let mut last_message = None;
        for step in steps {
            match step {
                Step::Say(say) => {
                    let (mut planned, merged) = self.say(thread, say);
                    items.append(&mut planned);
                    last_message = Some(merged);
                }
                Step::Call(call) => {
                    let (mut planned, _) = self.call(thread, call);
                    items.append(&mut planned);
                }
                Step::Sleep(ms) => {
                    if let Some(next) = items.last_mut() {
                        next.delay_us += ms.saturating_mul(1000);
                    }
                }
                // Refused for subagents when the scenario is compiled.
                Step::Subagents(_) | Step::Error(_) | Step::McpAuth(_) | Step::EndIf(_) => {}
            }
        }
        (items, last_message)
    }

    pub(super) fn subagents(&mut self, step: &Subagents) -> Vec<Item> {
        let text = step
            .text
            .as_deref()
            .map(|t| render(t, &self.vars))
            .unwrap_or_default();
        let mut wire_calls = Vec::new();
        let mut children = Vec::new();
        for agent in &step.agents {
            let id = self.rng.tool_call_id();
            let input = render(&agent.input, &self.vars);
            let arguments = json!({"name": agent.name, "input": input});
            wire_calls.push((
                id.clone(),
                "create_sub_agent".to_owned(),
                tools::arguments_text(&arguments),
                self.tool_info("create_sub_agent", None),
            ));
            children.push((id, input, agent));
        }
        let (mut items, _) = self.message("main", &text, &wire_calls, 12);
        let mut queues: Vec<VecDeque<Item>> = Vec::new();
        for (call_id, input, agent) in children {
            let thread = self.rng.thread_uuid();
            let parent = json!({"tool_call_id": call_id, "thread_id": "main"});
            let created = Event::new(
                self.id(),
                None,
                Some(&thread),
                EventBody::ThreadCreated {
                    agent_info: json!({"type": "dynamic", "name": agent.name, "input": input}),
                    parent: parent.clone(),
                    title: agent.name.clone(),
                },
            );
            let mut queue = VecDeque::from([Item::standalone(created)]);
            self.grow(&thread, wire::estimate_tokens(&input));
            let (planned, last_message) = self.thread_steps(&thread, &agent.steps);
            // The spawning call's result on the wire is `""`, but the child's answer is what
            // the main thread's model reads next.
            let answer = last_message
                .as_ref()
                .and_then(Event::message)
                .and_then(|m| m.content.as_deref())
                .map(wire::estimate_tokens)
                .unwrap_or(0);
            self.grow("main", answer);
            queue.extend(planned);
            queue.push_back(self.tool_response("main", &call_id, String::new()));
            let done = Event::new(
                self.id(),
                None,
                Some(&thread),
                EventBody::ThreadDone {
                    parent,
                    title: agent.name.clone(),
                    state: json!({
                        "status": "done",
                        "output": last_message.map(|m| m.to_value()).unwrap_or(Value::Null)
                    }),
                },
            );
            queue.push_back(Item::standalone(done));
            queues.push(queue);
        }
        // Children run in parallel: their events interleave in a seeded order.
        loop {
            let open: Vec<usize> = (0..queues.len())
                .filter(|i| !queues[*i].is_empty())
                .collect();
            if open.is_empty() {
                break;
            }
            let pick = open[self.rng.below(open.len())];
            if let Some(item) = queues[pick].pop_front() {
                items.push(item);
            }
        }
        items
    }
}
