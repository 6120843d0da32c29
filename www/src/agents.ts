/** The emulator's agents (crates/forgestream-server/scenarios), with a prompt that exercises each. */
export interface AgentInfo {
  name: string;
  title: string;
  blurb: string;
  example: string;
}

export const AGENTS: readonly AgentInfo[] = [
  { name: "support", title: "Refund desk", blurb: "Looks up orders; refunds wait for your approval.", example: "Refund €49.50 on ORD-2031, it arrived broken" },
  { name: "researcher", title: "Researcher", blurb: "Spawns three parallel sub-agents.", example: "Research order ORD-2031 for a damaged-goods refund" },
  { name: "concierge", title: "Concierge", blurb: "Asks you a question before planning.", example: "Plan a weekend trip for me" },
  { name: "github", title: "GitHub", blurb: "Needs MCP authorization first.", example: "List the open issues of forgestream/demo" },
  { name: "flaky", title: "Flaky", blurb: "Its model call fails (say “ok” to succeed).", example: "Hello there" },
  { name: "storyteller", title: "Storyteller", blurb: "A long streamed story (“N words”, “N ms”).", example: "Tell a story, 300 words, 30 ms" },
];

export function agentInfo(name: string): AgentInfo | undefined {
  return AGENTS.find((a) => a.name === name);
}
