/**
 * `snapshot.messages`: the session as a chat renders it — one flat list across turns of the
 * user's messages and the assistant's replies, with typed parts. Derived from the turns/items
 * view (which stays the source of truth) and structurally shared: a message, part or nested
 * group that did not change keeps its object identity from one snapshot to the next, so
 * `React.memo` / Vue's `shallowRef` skip it.
 *
 * Joins it makes for the app (PROTOCOL §5–§8):
 * - the user's text comes from the turn's input (`user.message` items of `turn.created.input`);
 * - a tool call is joined with its `tool.response` (by `tool_call_id`, in any turn — a denial's
 *   result arrives on the continuation turn), its pending approval or question, the decision
 *   the next turn's input carried, and the subagent threads it spawned;
 * - each tool part carries one {@link ToolState}.
 */
import type { ForgestreamError } from "./errors.js";
import type { InputItem, ItemView, McpAuthServerView, PendingAction, QuestionView, SessionSnapshot, ThreadStatus, ThreadView, ToolCallView, ToolInfoView, TurnSnapshot, TurnStatus } from "./types.js";

/** A parsed JSON value (tool arguments, structured results). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * Where a tool call is, in the order it moves:
 * `streaming-arguments` → (`awaiting-approval` | `awaiting-answer`) → `running` → `done` |
 * `error` | `denied` | `uncertain`.
 * - `streaming-arguments`: the model is still writing the call (`argumentsText` grows);
 * - `awaiting-approval` / `awaiting-answer`: the turn paused on it (`tool.approval_required` /
 *   `tool.response_required`); answer with `respond([approve(id)])` / `answer(id, text)`;
 * - `running`: dispatched (or approved), no result yet;
 * - `done`: its result arrived (or, for a client-side tool, the app's answer was sent);
 * - `error`: the result is an `{"error": …}` object, or the turn stopped before the call was
 *   complete (`interrupted`);
 * - `denied`: the user denied it (the model sees the reason);
 * - `uncertain`: the turn ended in error / cancelled with this call neither answered nor
 *   pending — whether its effect happened is unknown (PROTOCOL §8, problem 3).
 */
export type ToolState = "streaming-arguments" | "awaiting-approval" | "awaiting-answer" | "running" | "done" | "error" | "denied" | "uncertain";

/** A tool's result as the chat shows it. */
export interface ToolResult {
  /** The result text (JSON text for structured results; `""` for a subagent's spawning call). */
  readonly content: string;
  /** `content` parsed as JSON; `undefined` when it is not JSON. */
  readonly json: JsonValue | undefined;
  /** The `tool.response` event id; `null` for a client-side tool answered by the app. */
  readonly eventId: string | null;
}

/** A pending approval / question, with the fields its kind guarantees. */
export type PendingToolAction = PendingAction & { readonly kind: "toolApproval" | "toolResponse"; readonly toolCallId: string; readonly threadId: string };

interface ToolPartBase {
  readonly kind: "tool";
  /** Stable key: `<turnId>:<messageId>:<index>`. */
  readonly key: string;
  /** `tool_call_id` (empty only while the first fragments stream without it). */
  readonly toolCallId: string;
  /** Tool name. */
  readonly name: string;
  /** The turn and model message that proposed the call. */
  readonly turnId: string;
  readonly messageId: string;
  /** Owner thread (`main` or a subagent's UUID). */
  readonly threadId: string;
  /** Raw arguments text, exactly as streamed. */
  readonly argumentsText: string;
  /** Tool family (MCP server for MCP tools). */
  readonly toolInfo: ToolInfoView | null;
  /** Subagent threads this call spawned, with their own parts. */
  readonly subagents: readonly SubagentGroup[];
}

/** Arguments once the call is complete: parsed JSON, or `null` with `argumentsError` set. */
interface CompleteArguments {
  readonly arguments: JsonValue;
  /** Set when the finished text is not valid JSON (`arguments` is then `null`). */
  readonly argumentsError: string | null;
}

/** A tool call, by state; narrowing on `state` gives the fields that state guarantees. */
export type ToolPart =
  | (ToolPartBase & { readonly state: "streaming-arguments"; readonly arguments: JsonValue | null; readonly argumentsError: null })
  | (ToolPartBase & CompleteArguments & { readonly state: "awaiting-approval"; readonly pending: PendingToolAction })
  | (ToolPartBase & CompleteArguments & { readonly state: "awaiting-answer"; readonly pending: PendingToolAction; readonly question: QuestionView | null })
  | (ToolPartBase & CompleteArguments & { readonly state: "running" })
  | (ToolPartBase & CompleteArguments & { readonly state: "done"; readonly result: ToolResult; readonly answer: string | null })
  | (ToolPartBase & CompleteArguments & { readonly state: "error"; readonly error: string; readonly result: ToolResult | null; readonly interrupted: boolean })
  | (ToolPartBase & CompleteArguments & { readonly state: "denied"; readonly reason: string | null; readonly result: ToolResult | null })
  | (ToolPartBase & CompleteArguments & { readonly state: "uncertain" });

/** Assistant text (`text`), its reasoning (`reasoning`) or a refusal (`refusal`) of one model message. */
interface TextLike<K extends string> {
  readonly kind: K;
  /** Stable key: `<turnId>:<messageId>:<kind>`. */
  readonly key: string;
  readonly messageId: string;
  readonly text: string;
  /** Still growing. */
  readonly streaming: boolean;
  /**
   * The turn was stopped (cancel, interrupted by a newer turn, or failed) while this streamed:
   * the text is what arrived. Only this page has it — a reload shows the server's history,
   * which drops unfinished messages.
   */
  readonly interrupted: boolean;
}

/** The assistant's answer text of one model message. */
export type TextPart = TextLike<"text">;
/** The model's reasoning (`reasoning_content`) of one model message. */
export type ReasoningPart = TextLike<"reasoning">;
/** A refusal of one model message. */
export type RefusalPart = TextLike<"refusal">;

/** An MCP server login the turn is waiting for (`mcp.auth_required`). */
export interface McpAuthPart {
  readonly kind: "mcp-auth";
  readonly key: string;
  /** `awaiting-auth` while pending (open each `authUrl`, then `continueAfterAuth()`), else `done`. */
  readonly state: "awaiting-auth" | "done";
  readonly servers: readonly McpAuthServerView[];
}

/** One part of an assistant message or subagent group. */
export type AssistantPart = TextPart | ReasoningPart | RefusalPart | ToolPart | McpAuthPart;

/** A subagent thread's messages, under the call that spawned it (or on their own if unknown). */
export interface SubagentGroup {
  readonly kind: "subagent";
  /** `subagent:<threadId>`. */
  readonly key: string;
  readonly threadId: string;
  readonly title: string | null;
  readonly agentName: string | null;
  /** The spawning call; `null` when its `thread.created` was not seen. */
  readonly parentToolCallId: string | null;
  /**
   * `running` until the thread's `thread.done`, then `done` or `error`; `interrupted` when its
   * turn was cancelled or failed first (it will not go on; only a pause carries a thread into the
   * next turn, PROTOCOL §7).
   */
  readonly status: ThreadStatus;
  readonly parts: readonly AssistantPart[];
}

interface UserBase {
  readonly kind: "user";
  /** Stable across the optimistic → sent change (the local key is kept once reconciled). */
  readonly key: string;
  /** The text of the `user.message` items (text parts joined by newlines). */
  readonly text: string;
  /** The input items as sent (PROTOCOL §7). */
  readonly input: readonly InputItem[];
}

/**
 * The user's message. `pending` appears at once on `send`; `sent` once the turn exists;
 * `failed` when creating the turn definitely failed (`retry()` sends it again); `unknown` when
 * the outcome could not be established (check before sending again, PROTOCOL §8 problem 3).
 */
export type UserMessage =
  | (UserBase & { readonly state: "sent"; readonly turnId: string; readonly error: null })
  | (UserBase & { readonly state: "pending"; readonly turnId: null; readonly error: null })
  | (UserBase & { readonly state: "failed"; readonly turnId: null; readonly error: ForgestreamError; readonly retry: () => Promise<string> })
  | (UserBase & { readonly state: "unknown"; readonly turnId: null; readonly error: ForgestreamError; readonly retry: () => Promise<string> });

/** The assistant's reply in one turn (main thread), in stream order. */
export interface AssistantMessage {
  readonly kind: "assistant";
  /** `assistant:<turnId>`. */
  readonly key: string;
  readonly turnId: string;
  readonly status: TurnStatus;
  /** The turn was stopped or failed while a message streamed (see {@link TextPart.interrupted}). */
  readonly interrupted: boolean;
  /** The turn's `error` message, when it failed. */
  readonly error: string | null;
  readonly parts: readonly AssistantPart[];
}

/** One entry of `snapshot.messages`. */
export type ChatMessage = UserMessage | AssistantMessage | SubagentGroup;

/** A local, not yet reconciled send (owned by the chat store). */
export interface OutboxEntry {
  readonly key: string;
  readonly input: readonly InputItem[];
  readonly state: "pending" | "sent" | "failed" | "unknown";
  readonly turnId: string | null;
  readonly error: ForgestreamError | null;
  readonly retry: (() => Promise<string>) | null;
}

type Decision = { kind: "allow" } | { kind: "deny"; reason: string | null } | { kind: "answer"; content: string };

/** What all turns say about calls and threads, looked up while deriving any one turn. */
interface Index {
  results: Map<string, ItemView>;
  decisions: Map<string, Decision>;
  pending: Map<string, PendingToolAction>;
  mcpPending: boolean;
  threads: Map<string, ThreadView>;
  /** Items of each subagent thread, in chain then stream order. */
  threadItems: Map<string, ItemView[]>;
}

/** What one turn adds to the {@link Index}, kept per turn object (turns are immutable). */
interface Contribution {
  decisions: [string, Decision][];
  results: [string, ItemView][];
  threadItems: [string, ItemView][];
  /** Subagent threads its tool calls spawned. */
  spawned: string[];
}

/**
 * One index lookup a turn's derivation made, and what it found. A turn is derived again only
 * when its object changed or one of these lookups finds something else now.
 */
type Dep = readonly [map: "results" | "decisions" | "pending" | "threads" | "threadItems" | "mcpPending", key: string, value: unknown];

/** A turn's derived messages, kept per turn object, with what they were derived from. */
interface Derived {
  deps: readonly Dep[];
  /** The outbox entry whose key the user message took (identity), if any. */
  local: OutboxEntry | undefined;
  /** The detached subagent threads shown after the turn. */
  detached: readonly string[];
  messages: readonly ChatMessage[];
  /** The turn's `input` (identity) the user message was derived from. */
  input?: unknown;
  /** The user message among `messages` (`null`: the turn has none). */
  user?: UserMessage | null;
}

// Both caches are keyed by the snapshot's turn objects, which the store replaces whenever
// anything in a turn changes (structural sharing): an entry is never stale for its key, and it
// goes when the turn object does.
const contributions = new WeakMap<TurnSnapshot, Contribution>();
const derived = new WeakMap<TurnSnapshot, Derived>();
/** A derived message → the object `shareStructure` put in its place (see `share`). */
const sharedAs = new WeakMap<object, unknown>();

const MAIN = "main";
const isMain = (threadId: string | null) => threadId === null || threadId === MAIN;

function parseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

function textOfUser(input: readonly InputItem[]): string {
  const out: string[] = [];
  for (const item of input) {
    if (item.type !== "user.message") continue;
    if (typeof item.content === "string") out.push(item.content);
    else for (const p of item.content) if (p.type === "text") out.push(p.text);
  }
  return out.join("\n");
}

/** Input items of a turn, keeping only well-formed ones (the echo is `unknown[]` on the wire). */
function inputOf(turn: TurnSnapshot): InputItem[] | null {
  if (!Array.isArray(turn.input)) return null;
  return turn.input.filter((i): i is InputItem => typeof i === "object" && i !== null && typeof (i as { type?: unknown }).type === "string");
}

function contributionOf(turn: TurnSnapshot): Contribution {
  const cached = contributions.get(turn);
  if (cached) return cached;
  const c: Contribution = { decisions: [], results: [], threadItems: [], spawned: [] };
  const input: readonly unknown[] = Array.isArray(turn.input) ? turn.input : NONE;
  for (const x of input) {
    // The well-formed ones (`inputOf`), without its filtered copy.
    if (typeof x !== "object" || x === null) continue;
    const item = x as InputItem;
    if (item.type === "user.tool_approval") {
      c.decisions.push([item.tool_call_id, item.approval.status === "allow" ? { kind: "allow" } : { kind: "deny", reason: item.approval.reason ?? null }]);
    } else if (item.type === "user.tool_response") {
      c.decisions.push([item.tool_call_id, { kind: "answer", content: item.content }]);
    }
  }
  for (const item of turn.items) {
    if (item.body.kind === "toolResult") c.results.push([item.body.toolCallId, item]);
    else if (item.body.kind === "message") for (const call of item.body.toolCalls) c.spawned.push(...call.spawnedThreadIds);
    if (!isMain(item.threadId)) c.threadItems.push([item.threadId as string, item]);
  }
  contributions.set(turn, c);
  return c;
}

/** The index, from each turn's cached contribution: O(calls and thread items), not O(text). */
function buildIndex(snapshot: SessionSnapshot): Index {
  const index: Index = { results: new Map(), decisions: new Map(), pending: new Map(), mcpPending: false, threads: new Map(), threadItems: new Map() };
  for (const t of snapshot.threads) index.threads.set(t.threadId, t);
  for (const p of snapshot.pending) {
    if (p.kind === "mcpAuth") index.mcpPending = true;
    else if (p.toolCallId && p.threadId) index.pending.set(p.toolCallId, p as PendingToolAction);
  }
  for (const turn of snapshot.turns) {
    const c = contributionOf(turn);
    for (const [id, d] of c.decisions) index.decisions.set(id, d);
    for (const [id, item] of c.results) index.results.set(id, item);
    for (const [id, item] of c.threadItems) {
      let list = index.threadItems.get(id);
      if (!list) index.threadItems.set(id, (list = []));
      list.push(item);
    }
  }
  return index;
}

/** The index as one turn's derivation reads it: every lookup is recorded as a {@link Dep}. */
class Reader {
  readonly deps: Dep[] = [];
  constructor(readonly index: Index) {}
  result(id: string): ItemView | undefined {
    return this.#get("results", this.index.results, id);
  }
  decision(id: string): Decision | undefined {
    return this.#get("decisions", this.index.decisions, id);
  }
  pending(id: string): PendingToolAction | undefined {
    return this.#get("pending", this.index.pending, id);
  }
  thread(id: string): ThreadView | undefined {
    return this.#get("threads", this.index.threads, id);
  }
  threadItems(id: string): ItemView[] | undefined {
    return this.#get("threadItems", this.index.threadItems, id);
  }
  get mcpPending(): boolean {
    this.deps.push(["mcpPending", "", this.index.mcpPending]);
    return this.index.mcpPending;
  }
  #get<V>(name: Dep[0], map: Map<string, V>, key: string): V | undefined {
    const v = map.get(key);
    this.deps.push([name, key, v]);
    return v;
  }
}

/** Whether every lookup in `deps` finds the same thing in `index` (thread item lists by element). */
function depsHold(deps: readonly Dep[], index: Index): boolean {
  for (const [name, key, was] of deps) {
    const now = name === "mcpPending" ? index.mcpPending : index[name].get(key);
    if (now === was) continue;
    if (name !== "threadItems" || !Array.isArray(now) || !Array.isArray(was) || now.length !== was.length) return false;
    for (let i = 0; i < now.length; i++) if (now[i] !== was[i]) return false;
  }
  return true;
}

const sameList = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

function resultOf(item: ItemView): ToolResult {
  const content = item.body.kind === "toolResult" ? item.body.content : "";
  return { content, json: content === "" ? undefined : parseJson(content), eventId: item.key };
}

/** The `error` of an `{"error": …}` result (how a tool failure or a denial reads, §5). */
function resultError(r: ToolResult): string | null {
  const j = r.json;
  if (j && typeof j === "object" && !Array.isArray(j) && "error" in j) {
    const e = j.error;
    return typeof e === "string" ? e : JSON.stringify(e);
  }
  return null;
}

function toolPart(turnId: string, messageId: string, threadId: string, call: ToolCallView, complete: boolean, interrupted: boolean, index: Reader, depth: number): ToolPart {
  const id = call.toolCallId;
  const base: ToolPartBase = {
    kind: "tool",
    key: `${turnId}:${messageId}:${call.index}`,
    toolCallId: id,
    name: call.name,
    turnId,
    messageId,
    threadId,
    argumentsText: call.argumentsText,
    toolInfo: call.toolInfo,
    subagents: depth > 16 ? [] : call.spawnedThreadIds.map((t) => subagentGroup(t, index, depth + 1)).filter((g): g is SubagentGroup => g !== null),
  };
  const parsed = (call.arguments ?? null) as JsonValue | null;
  if (!complete && !interrupted) return { ...base, state: "streaming-arguments", arguments: parsed, argumentsError: null };
  const args: CompleteArguments = { arguments: call.argumentsError ? null : (parsed as JsonValue), argumentsError: call.argumentsError };
  const pending = id ? index.pending(id) : undefined;
  if (pending?.kind === "toolApproval") return { ...base, ...args, state: "awaiting-approval", pending };
  if (pending?.kind === "toolResponse") return { ...base, ...args, state: "awaiting-answer", pending, question: pending.question };
  const decision = id ? index.decision(id) : undefined;
  const resultItem = id ? index.result(id) : undefined;
  const result = resultItem ? resultOf(resultItem) : null;
  if (decision?.kind === "deny") return { ...base, ...args, state: "denied", reason: decision.reason, result };
  if (decision?.kind === "answer") {
    return { ...base, ...args, state: "done", result: result ?? { content: decision.content, json: parseJson(decision.content), eventId: null }, answer: decision.content };
  }
  if (result) {
    const error = resultError(result);
    return error === null ? { ...base, ...args, state: "done", result, answer: null } : { ...base, ...args, state: "error", error, result, interrupted: false };
  }
  if (interrupted) return { ...base, ...args, state: "error", error: "the turn stopped before this call was complete; it never ran", result: null, interrupted: true };
  if (call.uncertain) return { ...base, ...args, state: "uncertain" };
  return { ...base, ...args, state: "running" };
}

function contentText(content: unknown): { text: string; refusal: string } {
  if (typeof content === "string") return { text: content, refusal: "" };
  let text = "";
  let refusal = "";
  if (Array.isArray(content)) {
    for (const p of content as { type: string; text?: string; refusal?: string }[]) {
      if (p.type === "text" && typeof p.text === "string") text += p.text;
      else if (p.type === "refusal" && typeof p.refusal === "string") refusal += p.refusal;
    }
  }
  return { text, refusal };
}

/** The parts of a run of items of one thread. */
function partsOf(items: readonly ItemView[], index: Reader, depth: number): AssistantPart[] {
  const parts: AssistantPart[] = [];
  for (const item of items) {
    const body = item.body;
    if (body.kind === "message") {
      const messageId = body.id;
      const streaming = !body.complete && !body.interrupted;
      const interrupted = body.interrupted;
      const k = `${item.turnId}:${messageId}`;
      const { text, refusal } = contentText(body.content);
      // Literals with every field named (a spread of shared fields took V8's generic copy path).
      if (body.reasoning) parts.push({ kind: "reasoning", key: `${k}:reasoning`, text: body.reasoning, messageId, streaming, interrupted });
      if (text) parts.push({ kind: "text", key: `${k}:text`, text, messageId, streaming, interrupted });
      const refusalText = (body.refusal ?? "") + refusal;
      if (refusalText) parts.push({ kind: "refusal", key: `${k}:refusal`, text: refusalText, messageId, streaming, interrupted });
      for (const call of body.toolCalls) parts.push(toolPart(item.turnId, body.id, item.threadId ?? MAIN, call, body.complete, body.interrupted, index, depth));
    } else if (body.kind === "mcpAuthRequired") {
      const waiting = index.mcpPending && body.servers.length > 0;
      parts.push({ kind: "mcp-auth", key: `${item.turnId}:${item.key}`, state: waiting ? "awaiting-auth" : "done", servers: body.servers });
    }
  }
  return parts;
}

function subagentGroup(threadId: string, index: Reader, depth: number): SubagentGroup | null {
  const thread = index.thread(threadId);
  const items = index.threadItems(threadId) ?? [];
  if (!thread && items.length === 0) return null;
  return {
    kind: "subagent",
    key: `subagent:${threadId}`,
    threadId,
    title: thread?.title ?? null,
    agentName: thread?.agentName ?? null,
    parentToolCallId: thread?.parentToolCallId ?? null,
    status: thread?.status ?? "running",
    parts: partsOf(items, index, depth),
  };
}

/** Subagent threads no call claims (their `thread.created` was missed), by the turn first seeing them. */
function detachedThreads(snapshot: SessionSnapshot, index: Index): Map<string, string[]> {
  const claimed = new Set<string>();
  for (const turn of snapshot.turns) for (const t of contributionOf(turn).spawned) claimed.add(t);
  const byTurn = new Map<string, string[]>();
  const firstTurn = new Map<string, string>();
  for (const [id, items] of index.threadItems) if (items[0]) firstTurn.set(id, items[0].turnId);
  for (const t of index.threads.values()) if (!firstTurn.has(t.threadId)) firstTurn.set(t.threadId, t.turnId);
  for (const [id, turnId] of firstTurn) {
    if (claimed.has(id)) continue;
    let list = byTurn.get(turnId);
    if (!list) byTurn.set(turnId, (list = []));
    list.push(id);
  }
  return byTurn;
}

/**
 * The messages of one turn: the user's, the assistant's, then detached subagent groups. `user`,
 * when given, is the turn's user message (`null`: none) as derived before from the same `input`
 * and outbox entry — it depends on nothing else, so it is taken as it is.
 */
function deriveTurn(turn: TurnSnapshot, local: OutboxEntry | undefined, detached: readonly string[], index: Reader, user?: UserMessage | null): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (user !== undefined) {
    if (user) out.push(user);
  } else {
    const input = inputOf(turn) ?? (local ? [...local.input] : []);
    if (input.some((i) => i.type === "user.message")) {
      out.push({ kind: "user", key: local?.key ?? `user:${turn.turnId}`, state: "sent", turnId: turn.turnId, error: null, text: textOfUser(input), input });
    }
  }
  const mainItems: ItemView[] = [];
  for (const item of turn.items) if (isMain(item.threadId)) mainItems.push(item);
  const parts = partsOf(mainItems, index, 0);
  let interrupted = false;
  for (const p of parts) if (p.kind !== "tool" && p.kind !== "mcp-auth" && p.interrupted) interrupted = true;
  if (parts.length > 0 || turn.status === "running" || turn.status === "error") {
    out.push({ kind: "assistant", key: `assistant:${turn.turnId}`, turnId: turn.turnId, status: turn.status, interrupted, error: turn.errorMessage, parts });
  }
  for (const threadId of detached) {
    const g = subagentGroup(threadId, index, 0);
    if (g) out.push(g);
  }
  return out;
}

/**
 * Derives the chat list. `outbox` holds local sends: a `sent` entry names its turn (whose user
 * message then keeps the entry's key); the others are shown after the last turn.
 */
export function deriveMessages(snapshot: SessionSnapshot, outbox: readonly OutboxEntry[]): ChatMessage[] {
  const index = buildIndex(snapshot);
  const localKey = new Map<string, OutboxEntry>();
  for (const e of outbox) if (e.turnId) localKey.set(e.turnId, e);
  const detached = detachedThreads(snapshot, index);
  const out: ChatMessage[] = [];
  const none: readonly string[] = [];
  for (const turn of snapshot.turns) {
    const local = localKey.get(turn.turnId);
    const mine = detached.get(turn.turnId) ?? none;
    // A turn whose object, outbox entry, detached threads and every index lookup are the same
    // as last time keeps its messages: the cost of a snapshot is that of the turns it changed.
    const cached = derived.get(turn);
    if (cached && cached.local === local && sameList(cached.detached, mine) && depsHold(cached.deps, index)) {
      for (const m of cached.messages) out.push((sharedAs.get(m) as ChatMessage | undefined) ?? m);
      continue;
    }
    const reader = new Reader(index);
    const messages = deriveTurn(turn, local, mine, reader);
    derived.set(turn, { deps: reader.deps, local, detached: mine, messages });
    out.push(...messages);
  }
  const shown = new Set(snapshot.turns.map((t) => t.turnId));
  for (const e of outbox) {
    if (e.turnId && shown.has(e.turnId)) continue;
    const base = { kind: "user" as const, key: e.key, text: textOfUser(e.input), input: e.input, turnId: null };
    if ((e.state === "failed" || e.state === "unknown") && e.error && e.retry) out.push({ ...base, state: e.state, error: e.error, retry: e.retry });
    else out.push({ ...base, state: "pending", error: null });
  }
  return out;
}

/**
 * `next` with every subtree that deep-equals the same place in `prev` replaced by `prev`'s
 * object (arrays by position; messages and parts by their `key`, so an inserted message does
 * not break the sharing of the ones after it). Functions and class instances (errors) compare
 * by identity. Returns `prev` itself when nothing changed.
 */
export function shareStructure<T>(prev: T, next: T): T {
  return share(prev, next, 0) as T;
}

function isPlain(v: unknown): v is Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

function keyOf(v: unknown): string | undefined {
  return isPlain(v) && typeof v.key === "string" ? v.key : undefined;
}

function share(prev: unknown, next: unknown, depth: number): unknown {
  if (prev === next || depth > 64) return next;
  if (Array.isArray(prev) && Array.isArray(next)) {
    // Keyed entries by key (keys are unique in a list), made only when one moved: usually each
    // entry's previous version is at its own position.
    let byKey: Map<string, unknown> | undefined;
    let same = prev.length === next.length;
    const out = next.map((n, i) => {
      const k = keyOf(n);
      let p: unknown = prev[i];
      if (k !== undefined && keyOf(p) !== k) {
        if (!byKey) {
          byKey = new Map();
          for (const x of prev) {
            const xk = keyOf(x);
            if (xk !== undefined) byKey.set(xk, x);
          }
        }
        if (byKey.has(k)) p = byKey.get(k);
      }
      const v = p === n ? n : share(p, n, depth + 1);
      if (v !== prev[i]) same = false;
      // The message list's entries: remember what stands for a derived message, so the next
      // derivation of an unchanged turn hands back this very object (and sharing is O(1)).
      if (depth === 0 && v !== n && typeof n === "object" && n !== null) sharedAs.set(n, v);
      return v;
    });
    return same ? prev : Object.freeze(out);
  }
  if (isPlain(prev) && isPlain(next)) {
    const keys = Object.keys(next);
    let same = keys.length === Object.keys(prev).length;
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      // Most fields are the very same value (a call less each).
      const p = prev[k];
      const n = next[k];
      const v = p === n ? n : share(p, n, depth + 1);
      if (v !== p || !(k in prev)) same = false;
      out[k] = v;
    }
    return same ? prev : Object.freeze(out);
  }
  if (isPlain(next) || Array.isArray(next)) return freezeDeep(next, depth);
  return next;
}

function freezeDeep(v: unknown, depth: number): unknown {
  if (depth > 64 || Object.isFrozen(v)) return v;
  if (Array.isArray(v)) return Object.freeze(v.map((x) => freezeDeep(x, depth + 1)));
  if (isPlain(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = freezeDeep(x, depth + 1);
    return Object.freeze(out);
  }
  return v;
}

/**
 * The messages of turn `now`, given those of `was` (the same turn as derived before, with the same
 * input, outbox entry, detached threads and index lookups), when the two differ only by the text
 * of main-thread messages (each text part still there or still absent; no tool call changed):
 * `messages` with those parts' `text` replaced — what deriving `now` and sharing it with
 * `messages` gives. `undefined` when anything else differs.
 */
function withGrownText(was: TurnSnapshot, now: TurnSnapshot, messages: readonly ChatMessage[]): readonly ChatMessage[] | undefined {
  if (was.turnId !== now.turnId || was.status !== now.status || was.errorMessage !== now.errorMessage) return undefined;
  const a = was.items;
  const b = now.items;
  if (a.length !== b.length) return undefined;
  const texts = new Map<string, string>();
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (x.key !== y.key || x.turnId !== y.turnId || !isMain(x.threadId) || !isMain(y.threadId)) return undefined;
    const p = x.body;
    const q = y.body;
    if (p.kind !== "message" || q.kind !== "message" || p.id !== q.id || p.complete !== q.complete || p.interrupted !== q.interrupted) return undefined;
    if (p.toolCalls !== q.toolCalls && (p.toolCalls.length > 0 || q.toolCalls.length > 0)) return undefined;
    // Plain-text content only (content parts are joined by `contentText`).
    if ((p.content !== null && typeof p.content !== "string") || (q.content !== null && typeof q.content !== "string")) return undefined;
    const k = `${y.turnId}:${q.id}`;
    for (const [kind, before, after] of [
      ["reasoning", p.reasoning, q.reasoning],
      ["text", p.content, q.content],
      ["refusal", p.refusal, q.refusal],
    ] as const) {
      if (!before !== !after) return undefined;
      if (after && after !== before) texts.set(`${k}:${kind}`, after);
    }
  }
  if (texts.size === 0) return messages;
  return messages.map((m) => {
    if (m.kind !== "assistant") return m;
    let changed = false;
    const parts = m.parts.map((part) => {
      if (part.kind === "tool" || part.kind === "mcp-auth") return part;
      const text = texts.get(part.key);
      if (text === undefined || text === part.text) return part;
      changed = true;
      return Object.freeze({ ...part, text });
    });
    return changed ? Object.freeze({ ...m, parts: Object.freeze(parts) }) : m;
  });
}

/** Whether the turns from `k` on have the same ids in `old` and `now` and add the same to the index. */
function sameContributions(old: readonly TurnSnapshot[], now: readonly TurnSnapshot[], k: number): boolean {
  for (let p = k; p < now.length; p++) {
    if (old[p]!.turnId !== now[p]!.turnId) return false;
    const a = contributionOf(old[p]!);
    const b = contributionOf(now[p]!);
    if (!samePairs(a.results, b.results) || !samePairs(a.threadItems, b.threadItems) || !sameList(a.spawned, b.spawned)) return false;
    if (a.decisions.length !== b.decisions.length) return false;
    for (let i = 0; i < a.decisions.length; i++) {
      const [ida, da] = a.decisions[i]!;
      const [idb, db] = b.decisions[i]!;
      if (ida !== idb || !sameDecision(da, db)) return false;
    }
  }
  return true;
}

/** Same ids with the very same items, in the same order. */
function samePairs(a: readonly (readonly [string, ItemView])[], b: readonly (readonly [string, ItemView])[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i]![0] !== b[i]![0] || a[i]![1] !== b[i]![1]) return false;
  return true;
}

/** Decisions are made afresh from a turn's input each time: equal by value. */
function sameDecision(a: Decision, b: Decision): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === "deny") return a.reason === (b as typeof a).reason;
  if (a.kind === "answer") return a.content === (b as typeof a).content;
  return true;
}

const NO_REDO: ReadonlySet<number> = new Set();

const emptyIndex = (): Index => ({ results: new Map(), decisions: new Map(), pending: new Map(), mcpPending: false, threads: new Map(), threadItems: new Map() });
const depKey = (name: Dep[0], key: string) => `${name}\u0000${key}`;
const NONE: readonly string[] = Object.freeze([]);

/** One turn's place in {@link MessageDeriver}'s list. */
interface Slot {
  turn: TurnSnapshot;
  derived: Derived;
}

/**
 * `snapshot.messages`, kept up to date from one snapshot to the next (the chat store holds one).
 * It keeps the cross-turn index and each turn's derived, shared messages, and on each snapshot
 * updates them from what changed: the turns after the first one whose object changed (turn
 * objects are structurally shared), the pending actions and threads when their arrays changed,
 * and the outbox. A turn before that point is derived again only when an index entry it looked
 * up (its `Dep`s) now holds something else, its outbox entry or its detached threads changed.
 * So a snapshot in which only the streaming turn changed costs O(that turn) plus one identity
 * comparison per turn and one array copy of the list. The result always equals a full
 * derivation ({@link deriveMessages} on the same snapshot); a message that deep-equals its
 * previous version (same `key`) keeps that object, and the list keeps its identity when
 * nothing changed. Cases the update cannot undo exactly (one `tool_call_id` answered in two
 * turns being removed) derive everything again.
 */
export class MessageDeriver {
  #turns: readonly TurnSnapshot[] | undefined;
  #pendingFrom: readonly PendingAction[] | undefined;
  #threadsFrom: readonly ThreadView[] | undefined;
  #outbox: readonly OutboxEntry[] = [];
  #localKey = new Map<string, OutboxEntry>();
  #index: Index = emptyIndex();
  /** How many turns contribute each result / decision key (the index keeps the last). */
  #counts = { results: new Map<string, number>(), decisions: new Map<string, number>() };
  /** Subagent threads claimed by a call, with how many calls claim each. */
  #claimed = new Map<string, number>();
  /** Detached threads by the turn showing them. */
  #detached = new Map<string, string[]>();
  /** Position of each turn id in `#turns`. */
  #pos = new Map<string, number>();
  #slots: Slot[] = [];
  /** Offset of each slot's messages in `#out` (one more entry: where the turns' messages end). */
  #starts: number[] = [0];
  /** Index lookup (`depKey`) → positions of the turns whose derivation made it. */
  #dependents = new Map<string, Set<number>>();
  #out: readonly ChatMessage[] = Object.freeze([]);
  /**
   * An unfrozen twin of `#out`, updated in place, which each published list is copied from:
   * V8 copies a frozen array ~10× slower than a plain one (2 ms against 0.2 ms for 30,000
   * messages).
   */
  #plain: ChatMessage[] = [];

  /** The messages of `snapshot` with `outbox`'s local sends. */
  update(snapshot: SessionSnapshot, outbox: readonly OutboxEntry[]): readonly ChatMessage[] {
    const old = this.#turns;
    const turns = snapshot.turns;
    if (!old) return this.#rebuild(snapshot, outbox);
    let k = 0;
    const common = Math.min(old.length, turns.length);
    while (k < common && old[k] === turns[k]) k++;
    // The usual snapshot while a reply streams: the turns from `k` on are new objects, but what
    // they add to the index (results, decisions, subagent items, spawned threads) is the same,
    // and nothing else changed. Then the index, the detached threads and every other turn's
    // messages stay as they are (no lookup can find anything else), and only those turns are
    // derived again — what the steps below would conclude, without rebuilding their sets.
    if (old.length === turns.length && snapshot.pending === this.#pendingFrom && snapshot.threads === this.#threadsFrom && outbox === this.#outbox && sameContributions(old, turns, k)) {
      this.#turns = turns;
      return this.#emit(snapshot, outbox, k, NO_REDO, k);
    }
    const changed = new Set<string>();
    const idx = this.#index;

    // 1. The index: take the old turns from `k` on out, put the new ones in.
    const threadDrop = new Map<string, ItemView[]>();
    for (let p = k; p < old.length; p++) {
      const c = contributionOf(old[p]!);
      if (!this.#take("results", c.results, changed) || !this.#take("decisions", c.decisions, changed)) return this.#rebuild(snapshot, outbox);
      for (const [id, item] of c.threadItems) {
        let l = threadDrop.get(id);
        if (!l) threadDrop.set(id, (l = []));
        l.push(item);
      }
      for (const t of c.spawned) {
        const n = (this.#claimed.get(t) ?? 0) - 1;
        if (n > 0) this.#claimed.set(t, n);
        else this.#claimed.delete(t);
      }
      this.#pos.delete(old[p]!.turnId);
      this.#forget(p);
    }
    const threadAdd = new Map<string, ItemView[]>();
    for (let p = k; p < turns.length; p++) {
      const turn = turns[p]!;
      const c = contributionOf(turn);
      for (const [id, d] of c.decisions) this.#put("decisions", id, d, changed);
      for (const [id, item] of c.results) this.#put("results", id, item, changed);
      for (const [id, item] of c.threadItems) {
        let l = threadAdd.get(id);
        if (!l) threadAdd.set(id, (l = []));
        l.push(item);
      }
      for (const t of c.spawned) this.#claimed.set(t, (this.#claimed.get(t) ?? 0) + 1);
      this.#pos.set(turn.turnId, p);
    }
    for (const id of threadDrop.size + threadAdd.size === 0 ? NONE : new Set([...threadDrop.keys(), ...threadAdd.keys()])) {
      const was = idx.threadItems.get(id) ?? [];
      const drop = threadDrop.get(id) ?? [];
      const keep = was.length - drop.length;
      // The dropped turns are the last ones, so their items end each list.
      for (let i = 0; i < drop.length; i++) if (was[keep + i] !== drop[i]) return this.#rebuild(snapshot, outbox);
      const now = [...was.slice(0, keep), ...(threadAdd.get(id) ?? [])];
      if (now.length > 0) idx.threadItems.set(id, now);
      else idx.threadItems.delete(id);
      changed.add(depKey("threadItems", id));
    }
    this.#turns = turns;
    this.#readViews(snapshot, changed);

    // 2. Turns before `k` whose lookups, outbox entry or detached threads may have changed.
    const suspects = new Set<number>();
    for (const key of changed) for (const p of this.#dependents.get(key) ?? []) if (p < k) suspects.add(p);
    const byTurn = this.#detachedNow();
    for (const id of this.#detached.size + byTurn.size === 0 ? NONE : new Set([...this.#detached.keys(), ...byTurn.keys()])) {
      if (!sameList(this.#detached.get(id) ?? NONE, byTurn.get(id) ?? NONE)) this.#suspect(id, k, suspects);
    }
    this.#detached = byTurn;
    if (outbox !== this.#outbox) {
      const localKey = new Map<string, OutboxEntry>();
      for (const e of outbox) if (e.turnId) localKey.set(e.turnId, e);
      for (const id of new Set([...this.#localKey.keys(), ...localKey.keys()])) if (this.#localKey.get(id) !== localKey.get(id)) this.#suspect(id, k, suspects);
      this.#localKey = localKey;
    }
    const redo = new Set<number>();
    let from = k;
    for (const p of suspects) {
      const slot = this.#slots[p]!;
      const d = slot.derived;
      if (d.local === this.#localKey.get(slot.turn.turnId) && sameList(d.detached, byTurn.get(slot.turn.turnId) ?? NONE) && depsHold(d.deps, idx)) continue;
      redo.add(p);
      from = Math.min(from, p);
    }
    return this.#emit(snapshot, outbox, from, redo, k);
  }

  /**
   * Takes a dropped turn's results or decisions out of the index (marking them in `changed`);
   * `false` when another turn contributes one of them too (the update cannot undo that).
   */
  #take(name: "results" | "decisions", list: readonly (readonly [string, unknown])[], changed: Set<string>): boolean {
    for (const [id] of list) {
      const n = this.#counts[name].get(id) ?? 0;
      if (n > 1) return false;
      this.#counts[name].delete(id);
      (this.#index[name] as Map<string, unknown>).delete(id);
      changed.add(depKey(name, id));
    }
    return true;
  }

  /** Derives everything again (the first snapshot, or a change the update cannot undo). */
  #rebuild(snapshot: SessionSnapshot, outbox: readonly OutboxEntry[]): readonly ChatMessage[] {
    const idx = (this.#index = emptyIndex());
    this.#counts = { results: new Map(), decisions: new Map() };
    this.#claimed = new Map();
    this.#pos = new Map();
    this.#slots = [];
    this.#dependents = new Map();
    this.#pendingFrom = undefined;
    this.#threadsFrom = undefined;
    const unused = new Set<string>();
    snapshot.turns.forEach((turn, p) => {
      const c = contributionOf(turn);
      for (const [id, d] of c.decisions) this.#put("decisions", id, d, unused);
      for (const [id, item] of c.results) this.#put("results", id, item, unused);
      for (const [id, item] of c.threadItems) {
        let list = idx.threadItems.get(id);
        if (!list) idx.threadItems.set(id, (list = []));
        list.push(item);
      }
      for (const t of c.spawned) this.#claimed.set(t, (this.#claimed.get(t) ?? 0) + 1);
      this.#pos.set(turn.turnId, p);
    });
    this.#turns = snapshot.turns;
    this.#readViews(snapshot, unused);
    this.#detached = this.#detachedNow();
    this.#localKey = new Map();
    for (const e of outbox) if (e.turnId) this.#localKey.set(e.turnId, e);
    return this.#emit(snapshot, outbox, 0, new Set(), 0);
  }

  /** Sets a result / decision (a later turn's wins, as in {@link buildIndex}). */
  #put(name: "results" | "decisions", id: string, value: ItemView | Decision, changed: Set<string>): void {
    this.#counts[name].set(id, (this.#counts[name].get(id) ?? 0) + 1);
    (this.#index[name] as Map<string, unknown>).set(id, value);
    changed.add(depKey(name, id));
  }

  /** The pending actions and threads, again when their arrays changed. */
  #readViews(snapshot: SessionSnapshot, changed: Set<string>): void {
    const idx = this.#index;
    if (snapshot.pending !== this.#pendingFrom) {
      for (const id of idx.pending.keys()) changed.add(depKey("pending", id));
      idx.pending = new Map();
      let mcp = false;
      for (const p of snapshot.pending) {
        if (p.kind === "mcpAuth") mcp = true;
        else if (p.toolCallId && p.threadId) idx.pending.set(p.toolCallId, p as PendingToolAction);
      }
      for (const id of idx.pending.keys()) changed.add(depKey("pending", id));
      if (mcp !== idx.mcpPending) changed.add(depKey("mcpPending", ""));
      idx.mcpPending = mcp;
      this.#pendingFrom = snapshot.pending;
    }
    if (snapshot.threads !== this.#threadsFrom) {
      for (const id of idx.threads.keys()) changed.add(depKey("threads", id));
      idx.threads = new Map();
      for (const t of snapshot.threads) idx.threads.set(t.threadId, t);
      for (const id of idx.threads.keys()) changed.add(depKey("threads", id));
      this.#threadsFrom = snapshot.threads;
    }
  }

  /**
   * As {@link detachedThreads}, over the threads only (O(subagent threads), not O(turns)), in
   * the same order: in each turn, the threads with items by where their first item is in it,
   * then the others in `snapshot.threads` order (the index's map order can differ from a full
   * build's once a thread's items went and came back).
   */
  #detachedNow(): Map<string, string[]> {
    const idx = this.#index;
    const byTurn = new Map<string, [string, number][]>();
    const add = (turnId: string, id: string, rank: number) => {
      if (this.#claimed.has(id)) return;
      let list = byTurn.get(turnId);
      if (!list) byTurn.set(turnId, (list = []));
      list.push([id, rank]);
    };
    for (const [id, items] of idx.threadItems) {
      const first = items[0];
      if (!first) continue;
      const p = this.#pos.get(first.turnId);
      const turn = p === undefined ? undefined : this.#turns?.[p];
      add(first.turnId, id, turn ? turn.items.indexOf(first) : -1);
    }
    let n = 0;
    for (const t of idx.threads.values()) {
      n += 1;
      if (!idx.threadItems.get(t.threadId)?.length) add(t.turnId, t.threadId, Number.MAX_SAFE_INTEGER / 2 + n);
    }
    const out = new Map<string, string[]>();
    for (const [turnId, list] of byTurn) out.set(turnId, list.sort((a, b) => a[1] - b[1]).map(([id]) => id));
    return out;
  }

  #suspect(turnId: string, k: number, suspects: Set<number>): void {
    const p = this.#pos.get(turnId);
    if (p !== undefined && p < k) suspects.add(p);
  }

  /** Drops what slot `p` recorded in `#dependents`. */
  #forget(p: number): void {
    const slot = this.#slots[p];
    if (!slot) return;
    for (const [name, key] of slot.derived.deps) {
      const set = this.#dependents.get(depKey(name, key));
      set?.delete(p);
      if (set?.size === 0) this.#dependents.delete(depKey(name, key));
    }
  }

  /**
   * Writes the list: `#out` up to slot `from` as it was, then each turn's messages (derived
   * again from `from` on where new — every slot from `fresh` on, whose turn changed — or in
   * `redo`), then the unsent outbox.
   */
  #emit(snapshot: SessionSnapshot, outbox: readonly OutboxEntry[], from: number, redo: ReadonlySet<number>, fresh: number): readonly ChatMessage[] {
    const turns = snapshot.turns;
    const prev = this.#out;
    const cut = this.#starts[Math.min(from, this.#starts.length - 1)] ?? prev.length;
    // What the replaced part held, by key: a message that deep-equals its previous version keeps it.
    const was = new Map<string, ChatMessage>();
    for (let i = cut; i < this.#plain.length; i++) was.set(this.#plain[i]!.key, this.#plain[i]!);
    // `#plain` is cut and extended in place; `same` compares against the published list.
    const out = this.#plain;
    out.length = cut;
    this.#starts.length = from;
    let same = true;
    for (let p = from; p < turns.length; p++) {
      this.#starts[p] = out.length;
      let slot = this.#slots[p];
      if (!slot || p >= fresh || redo.has(p)) {
        this.#forget(p);
        const turn = turns[p]!;
        const reader = new Reader(this.#index);
        const local = this.#localKey.get(turn.turnId);
        const detached = this.#detached.get(turn.turnId) ?? NONE;
        // A turn streaming text changes its object every snapshot but not its input: its user
        // message (what deriving and sharing it again would give) is the one shown before.
        const before = slot?.turn.turnId === turn.turnId ? slot.derived : undefined;
        const user = before && before.input === turn.input && before.local === local ? before.user : undefined;
        // Only text grew (the common snapshot of a streaming reply), and nothing the turn looked
        // up changed: the messages shown before with those parts' text replaced.
        const grown = before && user !== undefined && sameList(before.detached, detached) && depsHold(before.deps, this.#index) ? withGrownText(slot!.turn, turn, before.messages) : undefined;
        let deps: readonly Dep[];
        if (grown) {
          deps = before!.deps;
          slot = { turn, derived: { ...before!, messages: grown } };
        } else {
          const messages = deriveTurn(turn, local, detached, reader, user).map((m) => share(was.get(m.key), m, 1) as ChatMessage);
          const first = messages[0];
          deps = reader.deps;
          slot = { turn, derived: { deps, local, detached, messages, input: turn.input, user: first?.kind === "user" ? first : null } };
        }
        this.#slots[p] = slot;
        for (const [name, key] of deps) {
          const k = depKey(name, key);
          let set = this.#dependents.get(k);
          if (!set) this.#dependents.set(k, (set = new Set()));
          set.add(p);
        }
      }
      for (const m of slot.derived.messages) {
        if (prev[out.length] !== m) same = false;
        out.push(m);
      }
    }
    this.#starts[turns.length] = out.length;
    this.#slots.length = turns.length;
    for (const e of outbox) {
      if (e.turnId && this.#pos.has(e.turnId)) continue;
      const base = { kind: "user" as const, key: e.key, text: textOfUser(e.input), input: e.input, turnId: null };
      const m: ChatMessage = (e.state === "failed" || e.state === "unknown") && e.error && e.retry ? { ...base, state: e.state, error: e.error, retry: e.retry } : { ...base, state: "pending", error: null };
      const v = share(was.get(m.key), m, 1) as ChatMessage;
      if (prev[out.length] !== v) same = false;
      out.push(v);
    }
    this.#outbox = outbox;
    if (same && out.length === prev.length) return prev;
    return (this.#out = Object.freeze(out.slice()));
  }
}
