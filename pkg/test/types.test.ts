/**
 * Type tests: they pin the public types of `forgestream`, `forgestream/react` and
 * `forgestream/vue`, so a change to the generated `.d.ts` or to the TS layer that alters what an
 * app compiles against fails `tsc --noEmit` (scripts/test's `tsc` step checks this folder). At
 * run time `expectTypeOf` does nothing; the assertions are the types.
 */
import { describe, expectTypeOf, it } from "vitest";
import type { AgentClient, AgentSession, ChatMessage, ChatSnapshot, ClientOptions, ConnectionState, Decision, ErrorCode, ForgestreamError, FrameLogEntry, InputItem, ItemBody, JsonValue, PendingAction, QuestionView, SessionSnapshot, SessionStatus, ShownTurns, ToolPart, ToolResult, ToolState, TurnStatus, Warning } from "../src/index.js";
import type { AgentSessionHandle, OpenSessionOptions } from "../src/react.js";
import type { AgentSessionRefs } from "../src/vue.js";
import type { approve, deny, answer, init } from "../src/index.js";
import type { ProtocolEvent, SessionEvent, UnknownEvent } from "../src/index.js";
import { isKnownEvent, KNOWN_EVENT_TYPES } from "../src/events.js";

describe("public types", () => {
  it("error codes are a closed union apps can switch on", () => {
    expectTypeOf<ErrorCode>().toEqualTypeOf<
      "network" | "outcome-unknown" | "http" | "auth" | "forbidden" | "not-found" | "conflict" | "protocol" | "turn-running" | "invalid-response" | "storage" | "aborted" | "invalid-input" | "not-initialized" | "internal"
    >();
    expectTypeOf<ForgestreamError["code"]>().toEqualTypeOf<ErrorCode>();
    expectTypeOf<ForgestreamError["retryable"]>().toEqualTypeOf<boolean>();
    expectTypeOf<ForgestreamError["status"]>().toEqualTypeOf<number | undefined>();
    expectTypeOf<ForgestreamError>().toExtend<Error>();
  });

  it("decisions are built by approve / deny / answer", () => {
    expectTypeOf<typeof approve>().toEqualTypeOf<(toolCallId: string) => Decision>();
    expectTypeOf<typeof deny>().parameters.toEqualTypeOf<[toolCallId: string, reason?: string]>();
    expectTypeOf<typeof answer>().parameters.toEqualTypeOf<[toolCallId: string, content: string]>();
    expectTypeOf<Decision["kind"]>().toEqualTypeOf<"allow" | "deny" | "answer" | "authDone">();
    expectTypeOf<typeof init>().returns.toEqualTypeOf<Promise<void>>();
  });

  it("the snapshot is read-only and typed to the turn and item level", () => {
    expectTypeOf<SessionSnapshot["turns"]>().toExtend<readonly unknown[]>();
    expectTypeOf<SessionSnapshot["error"]>().toEqualTypeOf<ForgestreamError | null>();
    expectTypeOf<SessionSnapshot["pending"]>().toEqualTypeOf<readonly PendingAction[]>();
    expectTypeOf<SessionSnapshot["turns"][number]["status"]>().toEqualTypeOf<TurnStatus>();
    expectTypeOf<TurnStatus>().toEqualTypeOf<"running" | "paused" | "done" | "cancelled" | "error">();
    expectTypeOf<ItemBody["kind"]>().toExtend<string>();
    // A message narrows to its text content.
    type Message = Extract<ItemBody, { kind: "message" }>;
    expectTypeOf<Message["toolCalls"]>().toExtend<unknown[]>();
    expectTypeOf<ConnectionState["status"]>().toEqualTypeOf<"idle" | "loading" | "connecting" | "live" | "rebuilding" | "offline" | "done" | "liveUnavailable" | "reconnecting" | "failed">();
    // Only `reconnecting` carries the attempt and the next wake-up.
    expectTypeOf<Extract<ConnectionState, { status: "reconnecting" }>>().toHaveProperty("nextAtMs").toEqualTypeOf<number>();
    // The states of a running turn say how long it has been silent, and whether it looks stalled (issue 14).
    expectTypeOf<Extract<ConnectionState, { status: "live" }>>().toHaveProperty("silentMs").toEqualTypeOf<number | null>();
    expectTypeOf<Extract<ConnectionState, { status: "live" }>>().toHaveProperty("silentSinceMs").toEqualTypeOf<number | null>();
    expectTypeOf<Extract<ConnectionState, { status: "reconnecting" }>>().toHaveProperty("stalled").toEqualTypeOf<boolean>();
    expectTypeOf<Warning>().toEqualTypeOf<{ code: string; message: string }>();
  });

  it("the generated boundary types keep their public shapes", () => {
    // Client options: the data part is generated from the core's `ClientOptions`.
    expectTypeOf<ClientOptions["flavor"]>().toEqualTypeOf<"trueforge" | "gateway" | undefined>();
    expectTypeOf<ClientOptions["transport"]>().toEqualTypeOf<"fetch" | "eventsource" | undefined>();
    expectTypeOf<ClientOptions["storage"]>().toEqualTypeOf<"local" | "session" | "memory" | undefined>();
    expectTypeOf<ClientOptions["credentials"]>().toEqualTypeOf<"omit" | "same-origin" | "include" | undefined>();
    expectTypeOf<NonNullable<ClientOptions["reconnect"]>>().toEqualTypeOf<{ baseDelayMs?: number; minDelayMs?: number; maxDelayMs?: number; idleTimeoutMs?: number; maxAttempts?: number; healthyAfterMs?: number; maxIdleTimeoutMs?: number; stalledAfterCycles?: number; createLookupBudgetMs?: number; outcomeRecheckMs?: number }>();
    expectTypeOf<ClientOptions["baseUrl"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<ClientOptions["onWarning"]>().toEqualTypeOf<((warning: Warning) => void) | undefined>();
    // Decisions, as `respond` takes them.
    expectTypeOf<Decision>().toEqualTypeOf<
      { kind: "allow"; toolCallId: string } | { kind: "deny"; toolCallId: string; reason?: string } | { kind: "answer"; toolCallId: string; content: string } | { kind: "authDone" }
    >();
    // The inspector's log entries.
    expectTypeOf<FrameLogEntry>().toEqualTypeOf<{ turnId: string; sequenceNumber: number | null; eventType: string; threadId: string | null; id: string | null; bytes: number; atMs: number }>();
    // Every badge names its turn (null before it is known).
    expectTypeOf<ConnectionState["turnId"]>().toEqualTypeOf<string | null>();
    // A turn of the snapshot has the header fields of the core's turn view, items as a read-only list.
    expectTypeOf<SessionSnapshot["turns"][number]["cancelReason"]>().toEqualTypeOf<string | null>();
    expectTypeOf<SessionSnapshot["turns"][number]["items"]>().toEqualTypeOf<readonly import("../src/index.js").ItemView[]>();
    expectTypeOf<SessionSnapshot["turns"][number]>().not.toHaveProperty("itemKeys");
  });

  it("session actions", () => {
    expectTypeOf<AgentSession["send"]>().toEqualTypeOf<(message: string | InputItem[], options?: { interrupt?: boolean }) => Promise<string>>();
    expectTypeOf<AgentSession["respond"]>().toEqualTypeOf<(decisions: Decision[]) => Promise<string>>();
    expectTypeOf<AgentSession["continueAfterAuth"]>().toEqualTypeOf<() => Promise<string>>();
    expectTypeOf<AgentSession["cancel"]>().toEqualTypeOf<() => Promise<void>>();
    expectTypeOf<AgentSession["subscribe"]>().toEqualTypeOf<(listener: () => void) => () => void>();
    expectTypeOf<AgentSession["getSnapshot"]>().toEqualTypeOf<() => ChatSnapshot>();
    expectTypeOf<ChatSnapshot>().toExtend<SessionSnapshot>();
    expectTypeOf<AgentClient["restore"]>().returns.toEqualTypeOf<Promise<AgentSession | null>>();
    expectTypeOf<AgentClient["restore"]>().parameters.toEqualTypeOf<[options?: { scope?: string; onOpen?: (session: AgentSession) => void }]>();
    expectTypeOf<AgentClient["session"]>().toEqualTypeOf<(id: string) => AgentSession>();
    // Handles are released explicitly (or with `using`); the last one frees the engine.
    expectTypeOf<AgentSession["close"]>().toEqualTypeOf<() => void>();
    expectTypeOf<AgentSession["closed"]>().toEqualTypeOf<boolean>();
    expectTypeOf<AgentSession>().toExtend<Disposable>();
  });

  it("the adapters return the same actions", () => {
    expectTypeOf<AgentSessionHandle["send"]>().toEqualTypeOf<AgentSession["send"]>();
    expectTypeOf<AgentSessionHandle["respond"]>().toEqualTypeOf<AgentSession["respond"]>();
    expectTypeOf<AgentSessionHandle["snapshot"]>().toEqualTypeOf<ChatSnapshot>();
    expectTypeOf<AgentSessionHandle["messages"]>().toEqualTypeOf<readonly ChatMessage[]>();
    expectTypeOf<AgentSessionHandle["status"]>().toEqualTypeOf<SessionStatus>();
    expectTypeOf<AgentSessionRefs["status"]["value"]>().toEqualTypeOf<SessionStatus>();
    expectTypeOf<AgentSessionRefs["error"]["value"]>().toEqualTypeOf<ForgestreamError | null>();
    expectTypeOf<AgentSessionHandle["error"]>().toEqualTypeOf<ForgestreamError | null>();
    expectTypeOf<AgentSessionRefs["send"]>().toEqualTypeOf<AgentSession["send"]>();
    expectTypeOf<OpenSessionOptions>().toEqualTypeOf<{ sessionId?: string; restore?: boolean; create?: import("../src/index.js").CreateSessionBody; scope?: string; shownTurns?: ShownTurns }>();
    // The history window: the same call and count through the handle and both adapters.
    expectTypeOf<ShownTurns>().toEqualTypeOf<number | "all">();
    expectTypeOf<AgentSession["showOlder"]>().toEqualTypeOf<(count?: ShownTurns) => void>();
    expectTypeOf<AgentSession["showTurns"]>().toEqualTypeOf<(count: ShownTurns) => void>();
    expectTypeOf<AgentSessionHandle["showOlder"]>().toEqualTypeOf<AgentSession["showOlder"]>();
    expectTypeOf<AgentSessionRefs["showOlder"]>().toEqualTypeOf<AgentSession["showOlder"]>();
    expectTypeOf<AgentSessionHandle["olderTurns"]>().toEqualTypeOf<number>();
    expectTypeOf<AgentSessionRefs["olderTurns"]["value"]>().toEqualTypeOf<number>();
    expectTypeOf<ChatSnapshot["olderTurns"]>().toEqualTypeOf<number>();
    expectTypeOf<AgentClient["forget"]>().toEqualTypeOf<(id: string, options?: import("../src/index.js").ScopeOptions) => void>();
  });

  it("one status, one error channel", () => {
    expectTypeOf<SessionStatus>().toEqualTypeOf<"loading" | "idle" | "submitting" | "streaming" | "paused" | "reconnecting" | "error">();
    expectTypeOf<ChatSnapshot["status"]>().toEqualTypeOf<SessionStatus>();
    expectTypeOf<ChatSnapshot["error"]>().toEqualTypeOf<ForgestreamError | null>();
  });

  it("chat messages narrow on kind and state to non-null fields", () => {
    expectTypeOf<ChatMessage["kind"]>().toEqualTypeOf<"user" | "assistant" | "subagent">();
    type User = Extract<ChatMessage, { kind: "user" }>;
    expectTypeOf<Extract<User, { state: "sent" }>["turnId"]>().toEqualTypeOf<string>();
    expectTypeOf<Extract<User, { state: "pending" }>["turnId"]>().toEqualTypeOf<null>();
    expectTypeOf<Extract<User, { state: "failed" }>["error"]>().toEqualTypeOf<ForgestreamError>();
    expectTypeOf<Extract<User, { state: "failed" }>["retry"]>().toEqualTypeOf<() => Promise<string>>();
    expectTypeOf<Extract<User, { state: "unknown" }>["retry"]>().toEqualTypeOf<() => Promise<string>>();
    expectTypeOf<User["input"]>().toEqualTypeOf<readonly InputItem[]>();

    expectTypeOf<ToolPart["state"]>().toEqualTypeOf<ToolState>();
    expectTypeOf<ToolState>().toEqualTypeOf<"streaming-arguments" | "awaiting-approval" | "awaiting-answer" | "running" | "done" | "error" | "denied" | "uncertain">();
    type Approval = Extract<ToolPart, { state: "awaiting-approval" }>;
    // No `!`: the pending action's call and thread are strings in this state.
    expectTypeOf<Approval["pending"]["toolCallId"]>().toEqualTypeOf<string>();
    expectTypeOf<Approval["pending"]["threadId"]>().toEqualTypeOf<string>();
    expectTypeOf<Approval["arguments"]>().toEqualTypeOf<JsonValue>();
    expectTypeOf<Extract<ToolPart, { state: "awaiting-answer" }>["question"]>().toEqualTypeOf<QuestionView | null>();
    expectTypeOf<Extract<ToolPart, { state: "done" }>["result"]>().toEqualTypeOf<ToolResult>();
    expectTypeOf<Extract<ToolPart, { state: "error" }>["error"]>().toEqualTypeOf<string>();
    expectTypeOf<Extract<ToolPart, { state: "denied" }>["reason"]>().toEqualTypeOf<string | null>();
    expectTypeOf<Extract<ToolPart, { state: "streaming-arguments" }>["arguments"]>().toEqualTypeOf<JsonValue | null>();
    expectTypeOf<ToolPart["argumentsText"]>().toEqualTypeOf<string>();
    // A `done` part has no `pending`; an approval has no `result`.
    expectTypeOf<Extract<ToolPart, { state: "done" }>>().not.toHaveProperty("pending");
    expectTypeOf<Approval>().not.toHaveProperty("result");

    type Assistant = Extract<ChatMessage, { kind: "assistant" }>;
    type Part = Assistant["parts"][number];
    expectTypeOf<Part["kind"]>().toEqualTypeOf<"text" | "reasoning" | "refusal" | "tool" | "mcp-auth">();
    expectTypeOf<Extract<Part, { kind: "text" }>["interrupted"]>().toEqualTypeOf<boolean>();
    expectTypeOf<Extract<Part, { kind: "tool" }>>().toEqualTypeOf<ToolPart>();
    expectTypeOf<Extract<ChatMessage, { kind: "subagent" }>["threadId"]>().toEqualTypeOf<string>();
  });
});

describe("protocol events", () => {
  it("exportEvents returns the timeline items, typed by the event union", () => {
    expectTypeOf<AgentSession["exportEvents"]>().returns.toEqualTypeOf<Promise<SessionEvent[]>>();
    expectTypeOf<SessionEvent["turn_id"]>().toEqualTypeOf<string>();
    expectTypeOf<SessionEvent["event"]>().toEqualTypeOf<ProtocolEvent | UnknownEvent>();
    expectTypeOf<ProtocolEvent["type"]>().toEqualTypeOf<(typeof KNOWN_EVENT_TYPES)[number]>();
    expectTypeOf<UnknownEvent["type"]>().toEqualTypeOf<string>();
  });

  it("narrowing on the event's type gives its wire fields", () => {
    const check = (item: SessionEvent) => {
      const event = item.event;
      if (!isKnownEvent(event)) {
        expectTypeOf(event).toEqualTypeOf<UnknownEvent>();
        return;
      }
      switch (event.type) {
        case "turn.created":
          expectTypeOf(event.turn_id).toEqualTypeOf<string>();
          expectTypeOf(event.previous_turn_id).toEqualTypeOf<string | null | undefined>();
          expectTypeOf(event.state.status).toEqualTypeOf<"running" | "done" | "cancelled" | "error">();
          expectTypeOf(event.input).toEqualTypeOf<InputItem[] | undefined>();
          break;
        case "turn.done":
          if (event.state.status === "cancelled") expectTypeOf(event.state.reason).toExtend<string>();
          if (event.state.status === "done") {
            expectTypeOf(event.state.required_actions).toEqualTypeOf<ProtocolEvent[] | undefined>();
            expectTypeOf(event.state.output?.type).toEqualTypeOf<"model.message" | undefined>();
          }
          break;
        case "model.message": {
          expectTypeOf(event.id).toEqualTypeOf<string>();
          const call = event.tool_calls?.[0];
          expectTypeOf(call?.function?.arguments).toEqualTypeOf<string | undefined>();
          if (call?.tool_info?.type === "mcp") expectTypeOf(call.tool_info.server_id).toEqualTypeOf<string>();
          if (typeof event.content !== "string" && event.content) {
            const part = event.content[0];
            if (part?.type === "text") expectTypeOf(part.text).toEqualTypeOf<string>();
          }
          break;
        }
        case "tool.response":
          expectTypeOf(event.tool_call_id).toEqualTypeOf<string>();
          expectTypeOf(event.content).toEqualTypeOf<unknown>();
          break;
        case "tool.approval_required":
        case "tool.response_required":
          expectTypeOf(event.tool_calls).toEqualTypeOf<{ id: string; source_event_id?: string }[] | undefined>();
          break;
        case "mcp.auth_required":
          expectTypeOf(event.mcp_servers?.[0]?.auth_url).toEqualTypeOf<string | undefined>();
          break;
        case "thread.created":
          expectTypeOf(event.parent?.tool_call_id).toEqualTypeOf<string | null | undefined>();
          break;
        case "thread.done":
          expectTypeOf(event.state.status).toEqualTypeOf<string | undefined>();
          break;
        case "model.message.delta":
        case "mcp.initialize":
        case "sandbox.created":
          break;
        default:
          // Every known type is handled above.
          expectTypeOf(event).toBeNever();
      }
    };
    void check;
  });

  it("isKnownEvent tells the known types from the rest at run time", () => {
    const known = { type: "sandbox.created", id: "e1", thread_id: null, sandbox_id: "sb" } as const;
    const unknown: UnknownEvent = { type: "x.future", id: "e2" };
    if (!isKnownEvent(known) || isKnownEvent(unknown)) throw new Error("isKnownEvent misclassified");
    if (KNOWN_EVENT_TYPES.length !== 12) throw new Error(`expected the 12 known types, got ${KNOWN_EVENT_TYPES.length}`);
  });
});
