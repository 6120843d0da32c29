import type { ItemView, MessageView, SessionSnapshot, ThreadView, ToolResultView } from "forgestream";

export type MessageItem = ItemView & { body: { kind: "message" } & MessageView };
export type ResultItem = ItemView & { body: { kind: "toolResult" } & ToolResultView };

/** Lookups the transcript needs, rebuilt when the snapshot changes (cheap: one pass). */
export interface Indexes {
  /** Messages by event id (for `sourceEventId`). */
  messages: Map<string, MessageItem>;
  /** Tool results by `toolCallId`. */
  results: Map<string, ResultItem>;
  /** Tool call ids that some message proposed. */
  calls: Set<string>;
  /** Threads by id. */
  threads: Map<string, ThreadView>;
  /** Threads by the tool call that spawned them. */
  threadsByCall: Map<string, ThreadView[]>;
  /** Items of each subagent thread, across turns, in order. */
  threadItems: Map<string, ItemView[]>;
  /** Client-side tool calls answered by a later turn's input (`user.tool_response`): id → answer. */
  answers: Map<string, string>;
  /** Approvals decided by a later turn's input (`user.tool_approval`): id → allowed. */
  approvals: Map<string, boolean>;
  /** Turn id → the id of the turn chained after it (`previousTurnId`): for a paused turn, the
   * turn that answered it and continued the work. */
  continuedBy: Map<string, string>;
}

export function isMessage(item: ItemView): item is MessageItem {
  return item.body.kind === "message";
}

export function buildIndexes(snapshot: SessionSnapshot): Indexes {
  const ix: Indexes = {
    messages: new Map(),
    results: new Map(),
    calls: new Set(),
    threads: new Map(),
    threadsByCall: new Map(),
    threadItems: new Map(),
    answers: new Map(),
    approvals: new Map(),
    continuedBy: new Map(),
  };
  for (const t of snapshot.threads) {
    ix.threads.set(t.threadId, t);
    if (t.parentToolCallId) {
      const list = ix.threadsByCall.get(t.parentToolCallId) ?? [];
      list.push(t);
      ix.threadsByCall.set(t.parentToolCallId, list);
    }
  }
  for (const turn of snapshot.turns) {
    if (turn.previousTurnId) ix.continuedBy.set(turn.previousTurnId, turn.turnId);
    for (const input of (turn.input ?? []) as { type?: unknown; tool_call_id?: unknown; content?: unknown; approval?: { status?: unknown } }[]) {
      if (input?.type === "user.tool_response" && typeof input.tool_call_id === "string" && typeof input.content === "string") {
        ix.answers.set(input.tool_call_id, input.content);
      } else if (input?.type === "user.tool_approval" && typeof input.tool_call_id === "string") {
        ix.approvals.set(input.tool_call_id, input.approval?.status === "allow");
      }
    }
    for (const item of turn.items) {
      const body = item.body;
      if (body.kind === "message") {
        ix.messages.set(body.id, item as MessageItem);
        for (const c of body.toolCalls) if (c.toolCallId) ix.calls.add(c.toolCallId);
      } else if (body.kind === "toolResult") {
        ix.results.set(body.toolCallId, item as ResultItem);
      }
      const tid = item.threadId;
      if (tid && tid !== "main") {
        const list = ix.threadItems.get(tid) ?? [];
        list.push(item);
        ix.threadItems.set(tid, list);
      }
    }
  }
  return ix;
}

/** Where an item belongs: the main transcript, or a subagent thread box. */
export function isMainItem(item: ItemView): boolean {
  return !item.threadId || item.threadId === "main";
}

export function threadLabel(ix: Indexes, threadId: string | null | undefined): string {
  if (!threadId || threadId === "main") return "main agent";
  const t = ix.threads.get(threadId);
  return t?.title ?? t?.agentName ?? `thread ${threadId.slice(0, 8)}`;
}
