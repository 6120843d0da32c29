import { memo, useMemo } from "react";
import type { ItemView, PendingAction, SessionSnapshot, ThreadView, ToolCallView, TurnSnapshot } from "forgestream";
import { contentText, formatTokens, prettyArguments, prettyResult, shortId, turnInputs } from "./format";
import { type Indexes, type MessageItem, isMainItem, isMessage } from "./indexes";
import { textChunks } from "./chunks";

interface Ctx {
  ix: Indexes;
  pendingCalls: Map<string, PendingAction>;
  /** The turn is still streaming (typing indicators, "running" tool calls). */
  running: boolean;
}

/*
 * Rendering cost. The SDK's snapshots share structure: an item that did not change keeps its
 * object identity, and so does its turn. Turns and items are therefore memoised on identity, plus
 * a list of the other things they read through `Ctx` (tool results, pending actions, answers,
 * sub-agent threads and their items — see `itemDeps`): `Ctx` itself is rebuilt with every
 * snapshot, so it cannot be compared. While a message streams, only its turn and that one item
 * render again; the rest of the transcript is skipped.
 */

/** Everything `Item` (and what it renders) reads from `Ctx` besides the item itself, in order. */
function itemDeps(item: ItemView, ctx: Ctx, out: unknown[] = [], seen = new Set<string>()): unknown[] {
  const body = item.body;
  if (body.kind === "toolResult") out.push(ctx.ix.calls.has(body.toolCallId));
  if (body.kind === "actionRequired" || body.kind === "mcpAuthRequired") {
    // Whether the request is still waiting, and how it was answered (all primitives).
    out.push(ctx.ix.continuedBy.get(item.turnId));
    if (body.kind === "actionRequired") {
      for (const c of body.toolCalls) out.push(ctx.pendingCalls.has(c.toolCallId), ctx.ix.approvals.get(c.toolCallId), ctx.ix.answers.get(c.toolCallId));
    }
  }
  if (body.kind !== "message") return out;
  for (const call of body.toolCalls) {
    const id = call.toolCallId;
    if (id) out.push(ctx.ix.results.get(id), ctx.pendingCalls.get(id), ctx.ix.answers.get(id));
    for (const t of collectThreads(call, ctx)) threadDeps(t, ctx, out, seen);
  }
  return out;
}

function threadDeps(thread: ThreadView, ctx: Ctx, out: unknown[], seen: Set<string>): void {
  // A malformed history could make a thread its own descendant: visit each thread once.
  if (seen.has(thread.threadId)) return;
  seen.add(thread.threadId);
  out.push(thread);
  for (const item of ctx.ix.threadItems.get(thread.threadId) ?? []) {
    out.push(item);
    itemDeps(item, ctx, out, seen);
  }
}

/** Threads first seen in this turn that no tool call claims (their thread.created was missed). */
function orphanThreads(turn: TurnSnapshot, ix: Indexes): ThreadView[] {
  const out: ThreadView[] = [];
  for (const t of ix.threads.values()) if (t.turnId === turn.turnId && !t.parentToolCallId) out.push(t);
  return out;
}

function turnDeps(turn: TurnSnapshot, ctx: Ctx): unknown[] {
  // The footer reads whether a later turn continued this one.
  const out: unknown[] = [ctx.ix.continuedBy.get(turn.turnId)];
  const seen = new Set<string>();
  for (const item of turn.items) if (isMainItem(item)) itemDeps(item, ctx, out, seen);
  for (const t of orphanThreads(turn, ctx.ix)) threadDeps(t, ctx, out, seen);
  return out;
}

function sameList(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

export function Transcript({ snapshot, ix }: { snapshot: SessionSnapshot; ix: Indexes }) {
  const pendingCalls = useMemo(() => {
    const map = new Map<string, PendingAction>();
    for (const p of snapshot.pending) if (p.toolCallId) map.set(p.toolCallId, p);
    return map;
  }, [snapshot.pending]);
  if (snapshot.turns.length === 0) {
    return <p className="empty">No turns yet — send a message to start.</p>;
  }
  return (
    <ol className="turns">
      {snapshot.turns.map((turn) => {
        const ctx = { ix, pendingCalls, running: turn.status === "running" };
        return <TurnBlock key={turn.turnId} turn={turn} ctx={ctx} deps={turnDeps(turn, ctx)} />;
      })}
    </ol>
  );
}

interface TurnProps {
  turn: TurnSnapshot;
  ctx: Ctx;
  /** What the turn reads from `ctx` (see `itemDeps`); `ctx` itself is not compared. */
  deps: unknown[];
}

const TurnBlock = memo(function TurnBlock({ turn, ctx }: TurnProps) {
  const inputs = turnInputs(turn);
  const main = turn.items.filter(isMainItem);
  const orphans = orphanThreads(turn, ctx.ix);
  return (
    <li className="turn" data-testid="turn" data-turn-id={turn.turnId} data-status={turn.status}>
      {inputs.map((input, i) => (
        <div key={i} className={`user-input user-input-${input.kind}`} data-testid="user-input">
          {input.kind === "message" && <p className="user-text">{input.text}</p>}
          {input.kind === "approval" && (
            <p className="user-decision">
              {input.allow ? "✓ Allowed" : "✕ Denied"} <code>{shortId(input.toolCallId, 14)}</code>
              {input.reason ? ` — “${input.reason}”` : ""}
            </p>
          )}
          {input.kind === "response" && (
            <p className="user-decision">
              Answered <code>{shortId(input.toolCallId, 14)}</code>: “{input.text}”
            </p>
          )}
          {input.kind === "continue" && <p className="user-decision">Continued after authorization</p>}
          {input.kind === "other" && <pre className="user-decision">{input.raw}</pre>}
        </div>
      ))}
      <div className="turn-body">
        {main.map((item) => (
          <Item key={item.key} item={item} ctx={ctx} running={ctx.running} deps={itemDeps(item, ctx)} />
        ))}
        {orphans.map((t) => (
          <ThreadBox key={t.threadId} thread={t} ctx={ctx} />
        ))}
        {turn.status === "running" && !main.some((i) => isMessage(i) && !i.body.complete) && <Typing />}
      </div>
      <TurnFooter turn={turn} continued={ctx.ix.continuedBy.has(turn.turnId)} />
    </li>
  );
}, (a, b) => a.turn === b.turn && sameList(a.deps, b.deps));

/**
 * A paused turn (done with required actions) stays `paused` in the SDK's view after the user
 * answered it; the answer is the next turn. Once that turn exists, the footer says `continued`.
 */
function TurnFooter({ turn, continued }: { turn: TurnSnapshot; continued: boolean }) {
  const usage = turn.usage;
  const status = turn.status === "paused" && continued ? "continued" : turn.status;
  return (
    <div className={`turn-footer turn-${status}`}>
      <span className="turn-status" data-testid="turn-status" title={status === "continued" ? "Paused for your input, then continued by the next turn" : undefined}>
        {status}
      </span>
      {turn.status === "cancelled" && turn.cancelReason && <span> · {turn.cancelReason}</span>}
      {turn.status === "error" && <span className="turn-error"> · {turn.errorMessage ?? "error"}</span>}
      {usage.totalTokens > 0 && (
        <span className="turn-usage">
          {" "}
          · {formatTokens(usage.inputTokens)} in / {formatTokens(usage.outputTokens)} out
        </span>
      )}
      <span className="turn-id" title={turn.turnId}> · {shortId(turn.turnId, 10)}</span>
    </div>
  );
}

interface ItemProps {
  item: ItemView;
  ctx: Ctx;
  /** `ctx.running`, compared (the rest of `ctx` is covered by `deps`). */
  running: boolean;
  /** What the item reads from `ctx` (see `itemDeps`). */
  deps: unknown[];
}

const Item = memo(function Item({ item, ctx }: ItemProps) {
  const body = item.body;
  switch (body.kind) {
    case "message":
      return <MessageBlock item={item as MessageItem} ctx={ctx} />;
    case "toolResult":
      // Bound results render inside their tool-call card.
      if (ctx.ix.calls.has(body.toolCallId)) return null;
      return (
        <div className="notice notice-warn">
          Result for an unknown call <code>{shortId(body.toolCallId, 14)}</code>
          <pre className="tool-result">{prettyResult(body.content)}</pre>
        </div>
      );
    case "actionRequired": {
      const { text, waiting, denied } = actionNotice(body.action, body.toolCalls, item.turnId, ctx);
      // A denial is an answer too, but not a green one.
      const answered = denied ? "notice-denied" : "notice-answered";
      return (
        <div className={`notice ${waiting ? "" : answered}`} data-testid="action-notice" data-state={waiting ? "waiting" : "answered"}>
          {text}
        </div>
      );
    }
    case "mcpAuthRequired": {
      const names = body.servers.map((s) => s.name).join(", ");
      const continued = ctx.ix.continuedBy.has(item.turnId);
      return (
        <div className={`notice ${continued ? "notice-answered" : ""}`} data-testid="action-notice" data-state={continued ? "answered" : "waiting"}>
          {continued ? `✓ Authorized: ${names} · continued below` : `Authorization required: ${names}`}
        </div>
      );
    }
    case "mcpInitialize":
      return <div className="notice">MCP connected: {body.servers.map((s) => s.name).join(", ")}</div>;
    case "sandboxCreated":
      return <div className="notice">Sandbox {shortId(body.sandboxId, 12)} created</div>;
    case "threadCreated":
    case "threadDone":
      return null; // shown by the thread box
    case "unknown":
      return (
        <div className="notice notice-muted">
          Unknown event <code>{body.eventType}</code>
        </div>
      );
  }
}, (a, b) => a.item === b.item && a.running === b.running && sameList(a.deps, b.deps));

/**
 * What a `tool.approval_required` / `tool.response_required` notice says: waiting while any of
 * its calls is pending; once a later turn answered them, the decision and that the work went on
 * in that turn.
 */
function actionNotice(action: PendingAction["kind"], calls: readonly { toolCallId: string }[], turnId: string, ctx: Ctx): { text: string; waiting: boolean; denied: boolean } {
  const count = `${calls.length} call${calls.length === 1 ? "" : "s"}`;
  const approval = action === "toolApproval";
  if (calls.some((c) => ctx.pendingCalls.has(c.toolCallId)) || !ctx.ix.continuedBy.has(turnId)) {
    return { text: `${approval ? "Waiting for approval" : "Waiting for your answer"} · ${count}`, waiting: true, denied: false };
  }
  let decision = "✓ Answered";
  let deniedAll = false;
  if (approval) {
    const allowed = calls.filter((c) => ctx.ix.approvals.get(c.toolCallId) === true).length;
    const denied = calls.filter((c) => ctx.ix.approvals.get(c.toolCallId) === false).length;
    if (allowed === calls.length) decision = "✓ Approved";
    else if (denied === calls.length) {
      decision = "✕ Denied";
      deniedAll = true;
    }
    else if (allowed + denied === calls.length) decision = `Answered: ${allowed} approved, ${denied} denied`;
  }
  return { text: `${decision} · ${count} · continued below`, waiting: false, denied: deniedAll };
}

function MessageBlock({ item, ctx }: { item: MessageItem; ctx: Ctx }) {
  const m = item.body;
  const text = contentText(m.content);
  const streaming = ctx.running && !m.complete;
  if (!text && !m.reasoning && !m.refusal && m.toolCalls.length === 0) {
    // The live placeholder before its first delta (or an orphan placeholder of a failed turn).
    return streaming ? <Typing /> : null;
  }
  return (
    <div className="message" data-testid="message" data-message-id={m.id} data-thread-id={item.threadId ?? ""} data-complete={m.complete ? "true" : "false"}>
      {m.reasoning && (
        <details className="reasoning">
          <summary>Reasoning</summary>
          <p>{m.reasoning}</p>
        </details>
      )}
      {text && <MessageText text={text} streaming={streaming} />}
      {m.refusal && <p className="message-refusal">Refused: {m.refusal}</p>}
      {m.toolCalls.map((call) => (
        <ToolCallCard key={call.index} call={call} ctx={ctx} />
      ))}
    </div>
  );
}

function ToolCallCard({ call, ctx }: { call: ToolCallView; ctx: Ctx }) {
  const result = call.toolCallId ? ctx.ix.results.get(call.toolCallId) : undefined;
  const pending = call.toolCallId ? ctx.pendingCalls.get(call.toolCallId) : undefined;
  const spawned = collectThreads(call, ctx);
  const answer = call.toolCallId ? ctx.ix.answers.get(call.toolCallId) : undefined;
  const state = result
    ? result.body.content.startsWith('{"error"')
      ? "error"
      : "done"
    : answer !== undefined
      ? "answered"
      : pending
      ? pending.kind === "toolApproval"
        ? "awaiting approval"
        : "awaiting answer"
      : call.uncertain
        ? "effect unknown"
        : ctx.running
          ? "running"
          : "no result";
  const server = call.toolInfo?.serverName;
  return (
    <div className={`tool-call ${call.uncertain ? "tool-call-uncertain" : ""}`} data-testid="tool-call" data-tool-call-id={call.toolCallId} data-state={state}>
      <div className="tool-call-head">
        <span className="tool-name">{call.name || "…"}</span>
        {server && <span className="tag">MCP · {server}</span>}
        {!server && call.toolInfo?.kind && <span className="tag">{call.toolInfo.kind}</span>}
        <span className={`tool-state tool-state-${state.replace(/\s+/g, "-")}`}>{state}</span>
      </div>
      {call.uncertain && (
        <p className="uncertain" data-testid="uncertain">
          ⚠ The turn ended before this call was answered: its effect is unknown.
        </p>
      )}
      <details className="tool-args" open={!result}>
        <summary>Arguments</summary>
        <pre>{prettyArguments(call.arguments, call.argumentsText) || "…"}</pre>
        {call.argumentsError && <p className="args-error">Arguments are not valid JSON: {call.argumentsError}</p>}
      </details>
      {answer !== undefined && !result && (
        <p className="tool-answer" data-testid="tool-answer">
          Answered: {answer}
        </p>
      )}
      {result && result.body.content !== "" && (
        <details className="tool-result-box" open>
          <summary>Result</summary>
          <pre className="tool-result" data-testid="tool-result">{prettyResult(result.body.content)}</pre>
        </details>
      )}
      {spawned.map((t) => (
        <ThreadBox key={t.threadId} thread={t} ctx={ctx} />
      ))}
    </div>
  );
}

function collectThreads(call: ToolCallView, ctx: Ctx): ThreadView[] {
  const out = new Map<string, ThreadView>();
  for (const id of call.spawnedThreadIds) {
    const t = ctx.ix.threads.get(id);
    if (t) out.set(id, t);
  }
  for (const t of call.toolCallId ? (ctx.ix.threadsByCall.get(call.toolCallId) ?? []) : []) out.set(t.threadId, t);
  return [...out.values()];
}

function ThreadBox({ thread, ctx }: { thread: ThreadView; ctx: Ctx }) {
  const items = ctx.ix.threadItems.get(thread.threadId) ?? [];
  const done = items.find((i) => i.body.kind === "threadDone");
  const running = thread.status === "running";
  return (
    <section className={`thread thread-${thread.status}`} data-testid="thread" data-thread-id={thread.threadId} data-status={thread.status}>
      <header className="thread-head">
        <span className="thread-title">{thread.title ?? thread.agentName ?? "sub-agent"}</span>
        {thread.agentName && thread.title && thread.title !== thread.agentName && <span className="tag">{thread.agentName}</span>}
        {thread.placeholder && <span className="tag tag-warn">unattached</span>}
        <span className={`thread-status thread-status-${thread.status}`}>{thread.status}</span>
      </header>
      <div className="thread-body">
        {items.map((item) => (
          <Item key={item.key} item={item} ctx={{ ...ctx, running }} running={running} deps={itemDeps(item, ctx)} />
        ))}
        {running && items.every((i) => !isMessage(i) || i.body.complete) && <Typing />}
        {done && done.body.kind === "threadDone" && done.body.status === "error" && (
          <p className="turn-error">Sub-agent failed: {JSON.stringify(done.body.error)}</p>
        )}
      </div>
    </section>
  );
}

/**
 * A message's text in stable chunks (see `textChunks`): while it streams only the last chunk's
 * text changes, so React updates one small text node and the browser lays out one small block
 * instead of the whole message. Each chunk is a block ending at a line break, so the text flows
 * exactly as one pre-wrapped paragraph would; the element's `textContent` is the full text.
 */
function MessageText({ text, streaming }: { text: string; streaming: boolean }) {
  const chunks = textChunks(text);
  return (
    <p className="message-text" data-testid="message-text">
      {chunks.map((chunk, i) => (
        <TextChunk key={i} text={chunk} caret={streaming && i === chunks.length - 1} />
      ))}
    </p>
  );
}

const TextChunk = memo(function TextChunk({ text, caret }: { text: string; caret: boolean }) {
  return (
    <span className="chunk">
      {text}
      {caret && <span className="caret" aria-hidden="true" />}
    </span>
  );
});

function Typing() {
  return (
    <span className="typing" aria-label="streaming">
      <span />
      <span />
      <span />
    </span>
  );
}
