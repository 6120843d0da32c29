import type { ItemView, PendingAction, SessionSnapshot, ThreadView, ToolCallView, TurnSnapshot } from "forgestream";
import { contentText, formatTokens, prettyArguments, prettyResult, shortId, turnInputs } from "./format";
import { type Indexes, type MessageItem, isMainItem, isMessage } from "./indexes";

interface Ctx {
  ix: Indexes;
  pendingCalls: Map<string, PendingAction>;
  /** The turn is still streaming (typing indicators, "running" tool calls). */
  running: boolean;
}

export function Transcript({ snapshot, ix }: { snapshot: SessionSnapshot; ix: Indexes }) {
  const pendingCalls = new Map<string, PendingAction>();
  for (const p of snapshot.pending) if (p.toolCallId) pendingCalls.set(p.toolCallId, p);
  if (snapshot.turns.length === 0) {
    return <p className="empty">No turns yet — send a message to start.</p>;
  }
  return (
    <ol className="turns">
      {snapshot.turns.map((turn) => (
        <TurnBlock key={turn.turnId} turn={turn} ctx={{ ix, pendingCalls, running: turn.status === "running" }} />
      ))}
    </ol>
  );
}

function TurnBlock({ turn, ctx }: { turn: TurnSnapshot; ctx: Ctx }) {
  const inputs = turnInputs(turn);
  const main = turn.items.filter(isMainItem);
  // Threads first seen in this turn that no tool call claims (their thread.created was missed).
  const orphanThreads = [...ctx.ix.threads.values()].filter((t) => t.turnId === turn.turnId && !t.parentToolCallId);
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
          <Item key={item.key} item={item} ctx={ctx} />
        ))}
        {orphanThreads.map((t) => (
          <ThreadBox key={t.threadId} thread={t} ctx={ctx} />
        ))}
        {turn.status === "running" && !main.some((i) => isMessage(i) && !i.body.complete) && <Typing />}
      </div>
      <TurnFooter turn={turn} />
    </li>
  );
}

function TurnFooter({ turn }: { turn: TurnSnapshot }) {
  const usage = turn.usage;
  return (
    <div className={`turn-footer turn-${turn.status}`}>
      <span className="turn-status" data-testid="turn-status">{turn.status}</span>
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

function Item({ item, ctx }: { item: ItemView; ctx: Ctx }) {
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
    case "actionRequired":
      return (
        <div className="notice">
          {body.action === "toolApproval" ? "Waiting for approval" : "Waiting for your answer"} · {body.toolCalls.length} call{body.toolCalls.length === 1 ? "" : "s"}
        </div>
      );
    case "mcpAuthRequired":
      return <div className="notice">Authorization required: {body.servers.map((s) => s.name).join(", ")}</div>;
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
      {text && (
        <p className="message-text" data-testid="message-text">
          {text}
          {streaming && <span className="caret" aria-hidden="true" />}
        </p>
      )}
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
        {thread.agentName && thread.title && <span className="tag">{thread.agentName}</span>}
        {thread.placeholder && <span className="tag tag-warn">unattached</span>}
        <span className={`thread-status thread-status-${thread.status}`}>{thread.status}</span>
      </header>
      <div className="thread-body">
        {items.map((item) => (
          <Item key={item.key} item={item} ctx={{ ...ctx, running }} />
        ))}
        {running && items.every((i) => !isMessage(i) || i.body.complete) && <Typing />}
        {done && done.body.kind === "threadDone" && done.body.status === "error" && (
          <p className="turn-error">Sub-agent failed: {JSON.stringify(done.body.error)}</p>
        )}
      </div>
    </section>
  );
}

function Typing() {
  return (
    <span className="typing" aria-label="streaming">
      <span />
      <span />
      <span />
    </span>
  );
}
