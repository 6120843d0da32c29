/**
 * Public types. Every shape that crosses between the wasm core and JS — the view types
 * (`TurnView`, `ItemView`, `PendingAction`, …), the options' data, decisions, error codes,
 * connection state, warnings, frame log entries — is generated from the Rust core by tsify, so
 * the `.d.ts` cannot drift from what the core produces. What is written here composes them
 * (snapshots, the options' callbacks) or types what never crosses as a Rust type (the create
 * body, the digest).
 */
import type {
  ClientOptions as CoreClientOptions,
  ConnectionState,
  InputItem as WireInputItem,
  ItemView,
  LoggedFrame,
  PendingAction,
  ReportedWarning,
  SessionEventItem,
  ThreadView,
  TurnHeader,
  UsageView,
} from "../wasm/forgestream_web.js";
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
  ConnectionState,
  Decision,
  Credentials,
  Flavor,
  ReconnectOptions,
  StorageKind,
  Transport,
} from "../wasm/forgestream_web.js";

/** The protocol's events (PROTOCOL §5), generated from the core's wire types; see `events.ts`. */
export type {
  ProtocolEvent,
  UnknownEvent,
  TurnCreated,
  TurnDone,
  ModelMessage,
  MessageDelta,
  ToolResponse,
  ToolCallsRequired,
  RequiredToolCall,
  McpAuthRequired,
  McpAuthServer,
  McpInitialize,
  McpServer,
  SandboxCreated,
  ThreadCreated,
  ThreadDone,
  ThreadParent,
  ThreadState,
  AgentInfo,
  TurnState,
  DoneState,
  CancelledState,
  ErrorState,
  Metrics,
  CancelReason,
  Content,
  ContentPart,
  ToolCall,
  ToolCallDelta,
  FunctionCall,
  FunctionDelta,
  ToolInfo,
  FinishReason,
  Usage,
  InputTokensBreakdown,
  UserContent,
  InputPart,
  Approval,
} from "../wasm/forgestream_web.js";

/**
 * `AgentClient` options: the data the engine reads (generated from the core's `ClientOptions`:
 * `baseUrl`, `flavor`, `credentials`, `transport`, `storage`, `storageNamespace`, `reconnect`,
 * `maxFrameBytes`, `inspect`; checked there, `invalid-input` when wrong) plus the app's callbacks,
 * which are functions and stay on the JS side.
 */
export interface ClientOptions extends CoreClientOptions {
  /** Headers for every request, or a provider called before every attempt (tokens can refresh). */
  headers?: HeadersInit | (() => HeadersInit | Promise<HeadersInit>);
  /**
   * Follow turns that another tab of this origin starts in the same session (BroadcastChannel;
   * default true): the other tab's turn streams into this tab's view too.
   */
  followOtherTabs?: boolean;
  /** Non-fatal findings: protocol oddities, storage fallbacks, dropped orphan deltas. */
  onWarning?: (warning: Warning) => void;
}

/** `createSession` body: TrueForge `{agent:{name}}` / `{agent:{spec}}`, gateway `{agent_name}`. */
export type CreateSessionBody = { agent: { name: string } | { spec: Record<string, unknown> } } | { agent_name: string };

/** A user input item (PROTOCOL §7), as sent on the wire (generated: the core's `InputItem`). */
export type InputItem = WireInputItem;

/** One item of `session.exportEvents()` (generated: the core's `SessionEventItem`). */
export type SessionEvent = SessionEventItem;

/** A non-fatal finding reported to `onWarning` (generated: the core's `ReportedWarning`). */
export type Warning = ReportedWarning;

/** One turn in a snapshot: its header and its items in stream order. */
export interface TurnSnapshot extends Omit<TurnHeader, "itemKeys"> {
  /**
   * The turn's items in stream order. With `turnItems: "onRead"` (the default) they cross from
   * the wasm the first time this is read (a getter; the array is then cached on this object and
   * the turn's later changes arrive like any other): reading costs O(the turn's items) once,
   * never notifies and never changes `getSnapshot()`. An object first read after a newer object
   * of the same turn was published shows the newest object's items, and one first read after
   * the session's last handle closed has none (see `snapshot.ts`).
   */
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

/** One received frame, as `session.eventLog()` lists it (generated: the core's `LoggedFrame`). */
export type FrameLogEntry = LoggedFrame;

/**
 * What `session.exportDigest()` returns (see there); item shapes are documented in the core's
 * `SessionView::summary`. Typed here, not generated: the digest is built as a `serde_json::Value`
 * (a canonical form for evaluators, compared as JSON), so there is no Rust type to derive from.
 */
export interface SessionDigest {
  turns: { id: string; previousTurnId: string | null; status: string; items: Record<string, unknown>[]; usage: Record<string, unknown> }[];
  threads: { main: unknown[]; detached: unknown[] };
  pending: Record<string, unknown>[];
  unmatchedToolResults: string[];
  usage: Record<string, unknown>;
  diagnostics: { lastSequenceNumbers: Record<string, number>; warnings: number };
}
