/**
 * Type tests: they pin the public types of `forgestream`, `forgestream/react` and
 * `forgestream/vue`, so a change to the generated `.d.ts` or to the TS layer that alters what an
 * app compiles against fails `tsc --noEmit` (scripts/test's `tsc` step checks this folder). At
 * run time `expectTypeOf` does nothing; the assertions are the types.
 */
import { describe, expectTypeOf, it } from "vitest";
import type { AgentClient, AgentSession, ClientOptions, ConnectionState, Decision, ErrorCode, ForgestreamError, FrameLogEntry, InputItem, ItemBody, PendingAction, SessionSnapshot, TurnStatus, Warning } from "../src/index.js";
import type { AgentSessionHandle, OpenSessionOptions } from "../src/react.js";
import type { AgentSessionRefs } from "../src/vue.js";
import type { approve, deny, answer, init } from "../src/index.js";

describe("public types", () => {
  it("error codes are a closed union apps can switch on", () => {
    expectTypeOf<ErrorCode>().toEqualTypeOf<
      "network" | "http" | "auth" | "forbidden" | "not-found" | "conflict" | "protocol" | "turn-running" | "invalid-response" | "storage" | "aborted" | "invalid-input" | "not-initialized" | "internal"
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
    expectTypeOf<ConnectionState["status"]>().toEqualTypeOf<"idle" | "connecting" | "live" | "rebuilding" | "offline" | "done" | "liveUnavailable" | "reconnecting" | "failed">();
    // Only `reconnecting` carries the attempt and the next wake-up.
    expectTypeOf<Extract<ConnectionState, { status: "reconnecting" }>>().toHaveProperty("nextAtMs").toEqualTypeOf<number>();
    expectTypeOf<Warning>().toEqualTypeOf<{ code: string; message: string }>();
  });

  it("the generated boundary types keep their public shapes", () => {
    // Client options: the data part is generated from the core's `ClientOptions`.
    expectTypeOf<ClientOptions["flavor"]>().toEqualTypeOf<"trueforge" | "gateway" | undefined>();
    expectTypeOf<ClientOptions["transport"]>().toEqualTypeOf<"fetch" | "eventsource" | undefined>();
    expectTypeOf<ClientOptions["storage"]>().toEqualTypeOf<"local" | "session" | "memory" | undefined>();
    expectTypeOf<ClientOptions["credentials"]>().toEqualTypeOf<"omit" | "same-origin" | "include" | undefined>();
    expectTypeOf<NonNullable<ClientOptions["reconnect"]>>().toEqualTypeOf<{ baseDelayMs?: number; minDelayMs?: number; maxDelayMs?: number; idleTimeoutMs?: number; maxAttempts?: number }>();
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
    expectTypeOf<AgentSession["getSnapshot"]>().toEqualTypeOf<() => SessionSnapshot>();
    expectTypeOf<AgentClient["restore"]>().returns.toEqualTypeOf<Promise<AgentSession | null>>();
    expectTypeOf<AgentClient["session"]>().toEqualTypeOf<(id: string) => AgentSession>();
    // Handles are released explicitly (or with `using`); the last one frees the engine.
    expectTypeOf<AgentSession["close"]>().toEqualTypeOf<() => void>();
    expectTypeOf<AgentSession["closed"]>().toEqualTypeOf<boolean>();
    expectTypeOf<AgentSession>().toExtend<Disposable>();
  });

  it("the adapters return the same actions", () => {
    expectTypeOf<AgentSessionHandle["send"]>().toEqualTypeOf<AgentSession["send"]>();
    expectTypeOf<AgentSessionHandle["respond"]>().toEqualTypeOf<AgentSession["respond"]>();
    expectTypeOf<AgentSessionHandle["snapshot"]>().toEqualTypeOf<SessionSnapshot>();
    expectTypeOf<AgentSessionHandle["error"]>().toEqualTypeOf<ForgestreamError | null>();
    expectTypeOf<AgentSessionRefs["send"]>().toEqualTypeOf<AgentSession["send"]>();
    expectTypeOf<OpenSessionOptions>().toEqualTypeOf<{ sessionId?: string; restore?: boolean; create?: import("../src/index.js").CreateSessionBody }>();
  });
});
