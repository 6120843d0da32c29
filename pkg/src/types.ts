/**
 * Public types. The view types (`TurnView`, `ItemView`, `PendingAction`, …) are generated from
 * the Rust core by tsify, so the `.d.ts` cannot drift from what the core produces.
 */
import type { ItemView, PendingAction, ThreadView, TurnView, UsageView } from "../wasm/forgestream_web.js";
import type { ForgestreamError } from "./errors.js";

export type {
  ContentPartView,
  ContentView,
  ItemBody,
  ItemView,
  McpAuthServerView,
  McpServerView,
  PendingAction,
  PendingKind,
  QuestionView,
  ThreadStatus,
  ThreadView,
  ToolCallView,
  ToolInfoView,
  TurnStatus,
  TurnView,
  UsageView,
  BreakdownView,
  MessageView,
  ToolResultView,
  RequiredCallView,
} from "../wasm/forgestream_web.js";

/** `AgentClient` options. */
export interface ClientOptions {
  /** Server origin (+ tenant path for the gateway); `""` = same origin. */
  baseUrl?: string;
  /** Server family: open-source TrueForge (default) or the TrueFoundry gateway. */
  flavor?: "trueforge" | "gateway";
  /** Headers for every request, or a provider called before every attempt (tokens can refresh). */
  headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
  /** `fetch` credentials mode (default `"same-origin"`); `"include"` also sets EventSource `withCredentials`. */
  credentials?: RequestCredentials;
  /** `"fetch"` (default; any method, custom headers) or `"eventsource"` (GET + cookies, TrueForge only). */
  transport?: "fetch" | "eventsource";
  /** Where resume checkpoints live (default `"local"`). Only IDs and cursors are stored. */
  storage?: "local" | "session" | "memory";
  /** Key namespace of the checkpoints (default `"forgestream"`), for several clients per origin. */
  storageNamespace?: string;
  /** Reconnect policy (ms): full-jitter exponential backoff between `minDelayMs` (default 250) and `maxDelayMs` (default 30 000), base `baseDelayMs` (500), idle watchdog. */
  reconnect?: { baseDelayMs?: number; minDelayMs?: number; maxDelayMs?: number; idleTimeoutMs?: number; maxAttempts?: number };
  /** Per-frame byte cap of the SSE parser (default 16 MiB). */
  maxFrameBytes?: number;
  /**
   * Follow turns that another tab of this origin starts in the same session (BroadcastChannel;
   * default true): the other tab's turn streams into this tab's view too.
   */
  followOtherTabs?: boolean;
  /** Keep a bounded log of received frames for `session.eventLog()` (inspectors, demos). */
  inspect?: boolean;
  /** Non-fatal findings: protocol oddities, storage fallbacks, dropped orphan deltas. */
  onWarning?: (warning: Warning) => void;
}

/** `createSession` body: TrueForge `{agent:{name}}` / `{agent:{spec}}`, gateway `{agent_name}`. */
export type CreateSessionBody = { agent: { name: string } | { spec: Record<string, unknown> } } | { agent_name: string };

/** A user input item (PROTOCOL §7), as sent on the wire. */
export type InputItem =
  | { type: "user.message"; content: string | ({ type: "text"; text: string } | { type: "file"; name: string; data: string })[] }
  | { type: "user.tool_approval"; thread_id: string; tool_call_id: string; approval: { status: "allow" } | { status: "deny"; reason?: string } }
  | { type: "user.tool_response"; thread_id: string; tool_call_id: string; content: string };

/** One decision of a `respond` batch (see `approve`, `deny`, `answer`). */
export type Decision =
  | { kind: "allow"; toolCallId: string }
  | { kind: "deny"; toolCallId: string; reason?: string }
  | { kind: "answer"; toolCallId: string; content: string }
  | { kind: "authDone" };

/** A non-fatal finding reported to `onWarning`. */
export interface Warning {
  code: string;
  message: string;
}

/** The connection badge. */
export type ConnectionState =
  | { status: "idle" | "connecting" | "live" | "rebuilding" | "offline" | "done" | "liveUnavailable"; turnId: string | null }
  | { status: "reconnecting"; attempt: number; nextAtMs: number; turnId: string | null }
  | { status: "failed"; turnId: string | null };

/** One turn in a snapshot: its header and its items in stream order. */
export interface TurnSnapshot extends Omit<TurnView, "items"> {
  readonly items: readonly ItemView[];
}

/** The immutable view of a session. Unchanged turns and items keep their identity. */
export interface SessionSnapshot {
  readonly sessionId: string;
  /** Turns in chain order. */
  readonly turns: readonly TurnSnapshot[];
  /** What the app must answer before the session continues (newest turn only). */
  readonly pending: readonly PendingAction[];
  /** Subagent threads. */
  readonly threads: readonly ThreadView[];
  /** Session totals. */
  readonly usage: UsageView | null;
  readonly connection: ConnectionState;
  /** Why the connection stopped, when it failed. */
  readonly error: ForgestreamError | null;
}

/** One received frame, as `session.eventLog()` lists it. */
export interface FrameLogEntry {
  turnId: string;
  sequenceNumber: number | null;
  eventType: string;
  threadId: string | null;
  id: string | null;
  /** Size of the frame's data, bytes. */
  bytes: number;
  /** Wall-clock ms when applied. */
  atMs: number;
}

/** What `session.exportEvents()` returns (see there); item shapes are documented in the core's
 * `SessionView::summary`. */
export interface SessionDigest {
  turns: { id: string; previousTurnId: string | null; status: string; items: Record<string, unknown>[]; usage: Record<string, unknown> }[];
  threads: { main: unknown[]; detached: unknown[] };
  pending: Record<string, unknown>[];
  unmatchedToolResults: string[];
  usage: Record<string, unknown>;
  diagnostics: { lastSequenceNumbers: Record<string, number>; warnings: number };
}
