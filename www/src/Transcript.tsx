import { createContext, memo, useContext, useMemo, type ReactElement } from "react";
import type { AssistantPart, ChatMessage, ChatSnapshot, ItemView, SubagentGroup, ToolPart, ToolState, TurnSnapshot, UserMessage } from "forgestream";
import { formatTokens, prettyArguments, prettyResult, shortId, turnInputs } from "./format";
import { textChunks } from "./chunks";

/*
 * The conversation, rendered from `snapshot.messages` (the SDK's chat view: user messages,
 * assistant text / reasoning / tool parts with their state, subagent groups) — the way an app
 * built on forgestream renders it. The turns view is read only for what belongs to a turn as a
 * whole: its footer (status, usage, id), the user's decisions it carried, and which of its
 * calls it paused on (`actionRequired`), for the "waiting / approved · continued below" notice,
 * and the notices that are not conversation (MCP connected, sandbox created, unknown events, a
 * result for a call no message proposed).
 *
 * Rendering cost: `messages` is structurally shared — a message or part that did not change
 * keeps its object identity — so turns, messages and parts are memoised on identity. While a
 * message streams only its turn, that message and its last text chunk render again.
 */

/** What the tool card's state badge says, per {@link ToolState}. */
const STATE_LABEL: Record<ToolState, string> = {
  "streaming-arguments": "writing arguments",
  "awaiting-approval": "awaiting approval",
  "awaiting-answer": "awaiting answer",
  running: "running",
  done: "done",
  error: "error",
  denied: "denied",
  uncertain: "effect unknown",
};

type Local = Exclude<UserMessage, { state: "sent" }>;

/** `messages` by the turn they belong to (a subagent group follows its turn's messages). */
function byTurn(messages: readonly ChatMessage[]): { turns: Map<string, ChatMessage[]>; local: Local[] } {
  const turns = new Map<string, ChatMessage[]>();
  const local: Local[] = [];
  let current: string | null = null;
  for (const m of messages) {
    if (m.kind === "user" && m.state !== "sent") {
      local.push(m);
      continue;
    }
    if (m.kind !== "subagent") current = m.turnId;
    if (current === null) continue;
    let list = turns.get(current);
    if (!list) turns.set(current, (list = []));
    list.push(m);
  }
  return { turns, local };
}

const NONE: readonly ChatMessage[] = Object.freeze([]);
const NO_ITEMS: readonly ItemView[] = Object.freeze([]);

/** The part is still growing (text, reasoning, or a call's arguments): no typing dots beside it. */
function isStreaming(p: AssistantPart): boolean {
  return p.kind === "tool" ? p.state === "streaming-arguments" : p.kind !== "mcp-auth" && p.streaming;
}

/** Every `tool_call_id` some message proposed (main thread and subagents). */
function callIds(messages: readonly ChatMessage[]): Set<string> {
  const out = new Set<string>();
  const visit = (parts: readonly AssistantPart[], depth: number) => {
    for (const p of parts) {
      if (p.kind !== "tool") continue;
      if (p.toolCallId) out.add(p.toolCallId);
      if (depth < 16) for (const g of p.subagents) visit(g.parts, depth + 1);
    }
  };
  for (const m of messages) if (m.kind !== "user") visit(m.parts, 0);
  return out;
}

/** A turn's items that are not conversation: shown as notices (the messages view leaves them out). */
function noticeItems(turn: TurnSnapshot, calls: Set<string>): readonly ItemView[] {
  const out = turn.items.filter((i) => {
    const b = i.body;
    return b.kind === "mcpInitialize" || b.kind === "sandboxCreated" || b.kind === "unknown" || (b.kind === "toolResult" && !calls.has(b.toolCallId));
  });
  return out.length === 0 ? NO_ITEMS : out;
}

function sameList(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) return false;
  return true;
}

/**
 * Whether the turn being rendered is followed live (typing dots mean "more is on its way"): a
 * running turn whose stream is gone (`liveUnavailable`, after a server crash), stalled, failed or
 * not followed shows no dots — the connection banner says what is going on instead.
 */
const TurnLive = createContext(false);

/** Connection states in which a followed turn's output is arriving (or about to). */
const FOLLOWING = new Set(["connecting", "live", "reconnecting", "rebuilding"]);

/**
 * The transcript of the turns in the SDK's history window (`snapshot.messages` holds the newest
 * screenful and every turn after them; `olderTurns` counts the rest), with "Show older" above
 * them calling `onShowOlder` (`showOlder()`, told whether the keyboard pressed it: `detail` 0),
 * which keeps the reader's place.
 */
export function Transcript({ snapshot, onShowOlder }: { snapshot: ChatSnapshot; onShowOlder: (keyboard: boolean) => void }) {
  const { turns, local } = useMemo(() => byTurn(snapshot.messages), [snapshot.messages]);
  // Only the window's turns: the older ones' items are never read (they may not be in JS yet).
  const shown = useMemo(() => snapshot.turns.slice(snapshot.olderTurns), [snapshot.turns, snapshot.olderTurns]);
  // Turn id → whether a later turn continued it (`previousTurnId`): a paused turn it answered.
  const continued = useMemo(() => new Set(snapshot.turns.map((t) => t.previousTurnId).filter((id): id is string => !!id)), [snapshot.turns]);
  const calls = useMemo(() => callIds(snapshot.messages), [snapshot.messages]);
  if (snapshot.turns.length === 0 && local.length === 0) {
    return <p className="empty">No turns yet — send a message to start.</p>;
  }
  // Sends without a turn yet (pending, or failed with Retry) follow the turns in a list of their
  // own, so the live turn stays the last `.turn` (styles.css renders only that one eagerly).
  return (
    <>
      {snapshot.olderTurns > 0 && (
        <button type="button" className="show-older" data-testid="show-older" onClick={(e) => onShowOlder(e.detail === 0)}>
          Show older turns ({snapshot.olderTurns})
        </button>
      )}
      <ol className="turns">
        {shown.map((turn) => (
          <TurnBlock
            key={turn.turnId}
            turn={turn}
            messages={turns.get(turn.turnId) ?? NONE}
            notices={noticeItems(turn, calls)}
            continued={continued.has(turn.turnId)}
            live={snapshot.connection.turnId === turn.turnId && FOLLOWING.has(snapshot.connection.status) && !("stalled" in snapshot.connection && snapshot.connection.stalled)}
          />
        ))}
      </ol>
      {local.length > 0 && (
        <ol className="turns turns-local">
          {local.map((m) => (
            <li key={m.key} className="turn-local" data-testid="local-message" data-state={m.state}>
              <UserText message={m} unreachable={snapshot.connection.status === "reconnecting" ? snapshot.connection.attempt : null} />
            </li>
          ))}
        </ol>
      )}
    </>
  );
}

interface TurnProps {
  turn: TurnSnapshot;
  /** This turn's entries of `snapshot.messages`, compared entry by entry. */
  messages: readonly ChatMessage[];
  /** Its items shown as notices (see `noticeItems`), compared item by item. */
  notices: readonly ItemView[];
  continued: boolean;
  /** The connection follows this turn and its output is arriving (see `TurnLive`). */
  live: boolean;
}

const TurnBlock = memo(function TurnBlock({ turn, messages, notices, continued, live }: TurnProps) {
  const decisions = turnInputs(turn).filter((i) => i.kind !== "message");
  const running = turn.status === "running" && live;
  const streaming = messages.some((m) => m.kind === "assistant" && m.parts.some(isStreaming));
  return (
    <TurnLive.Provider value={live}>
      <li className="turn" data-testid="turn" data-turn-id={turn.turnId} data-status={turn.status}>
        {messages.map((m) => (m.kind === "user" ? <UserText key={m.key} message={m} /> : null))}
        {decisions.map((input, i) => (
          <div key={i} className={`user-input user-input-${input.kind}`} data-testid="user-input">
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
          {notices.map((item) => (
            <Notice key={item.key} item={item} />
          ))}
          {messages.map((m) =>
            m.kind === "assistant" ? <Parts key={m.key} parts={m.parts} threadId="main" continued={continued} /> : m.kind === "subagent" ? <ThreadBox key={m.key} group={m} continued={continued} /> : null,
          )}
          <ActionNotices turn={turn} messages={messages} continued={continued} />
          {running && !streaming && <Typing />}
        </div>
        <TurnFooter turn={turn} continued={continued} />
      </li>
    </TurnLive.Provider>
  );
}, (a, b) => a.turn === b.turn && a.continued === b.continued && a.live === b.live && sameList(a.messages, b.messages) && sameList(a.notices, b.notices));

function Notice({ item }: { item: ItemView }) {
  const body = item.body;
  switch (body.kind) {
    case "mcpInitialize":
      return <div className="notice">MCP connected: {body.servers.map((s) => s.name).join(", ")}</div>;
    case "sandboxCreated":
      return <div className="notice">Sandbox {shortId(body.sandboxId, 12)} created</div>;
    case "toolResult":
      return (
        <div className="notice notice-warn">
          Result for an unknown call <code>{shortId(body.toolCallId, 14)}</code>
          <pre className="tool-result">{prettyResult(body.content)}</pre>
        </div>
      );
    case "unknown":
      return (
        <div className="notice notice-muted">
          Unknown event <code>{body.eventType}</code>
        </div>
      );
    default:
      return null;
  }
}

/**
 * The user's own message (from the turn's input, or the local send before the turn exists).
 * `unreachable`: a pending send whose answer never came and whose check the SDK keeps retrying
 * (the server can't be reached); the SDK never posts it twice, so the message says so instead
 * of a bare "sending…" (a new user waited 40 s on that with the server down).
 */
function UserText({ message, unreachable = null }: { message: UserMessage; unreachable?: number | null }) {
  return (
    <div className="user-input user-input-message" data-testid="user-input" data-state={message.state}>
      <p className="user-text">{message.text}</p>
      {message.state === "pending" && (
        <p className="muted user-pending">
          {unreachable === null ? "sending…" : `not confirmed yet — the server can't be reached; checking again (attempt ${unreachable})`}
        </p>
      )}
      {(message.state === "failed" || message.state === "unknown") && (
        <p className="user-failed" role="alert">
          {message.state === "failed" ? "Not sent" : "Maybe not sent"}: {failureText(message.error)}{" "}
          <button type="button" className="link" onClick={() => void message.retry().catch(() => {})}>
            Retry
          </button>
        </p>
      )}
    </div>
  );
}

/** Every tool part of these messages, subagents' included (by `tool_call_id`). */
function toolParts(messages: readonly ChatMessage[]): Map<string, ToolPart> {
  const out = new Map<string, ToolPart>();
  const visit = (parts: readonly AssistantPart[], depth: number) => {
    for (const p of parts) {
      if (p.kind !== "tool") continue;
      if (p.toolCallId) out.set(p.toolCallId, p);
      if (depth < 16) for (const g of p.subagents) visit(g.parts, depth + 1);
    }
  };
  for (const m of messages) if (m.kind !== "user") visit(m.parts, 0);
  return out;
}

/**
 * What a turn that paused on approvals or questions says: waiting while any of the calls it
 * paused on (its `actionRequired` items) still awaits; once a later turn answered them, the
 * decision — read from each call's state in `messages` — and that the work went on below.
 */
function ActionNotices({ turn, messages, continued }: { turn: TurnSnapshot; messages: readonly ChatMessage[]; continued: boolean }) {
  const requests = turn.items.flatMap((i) => (i.body.kind === "actionRequired" ? [{ key: i.key, action: i.body.action, ids: i.body.toolCalls.map((c) => c.toolCallId) }] : []));
  if (requests.length === 0) return null;
  const parts = toolParts(messages);
  return (
    <>
      {requests.map(({ key, action, ids }) => {
        const count = `${ids.length} call${ids.length === 1 ? "" : "s"}`;
        const approval = action === "toolApproval";
        const states = ids.map((id) => parts.get(id)?.state);
        const waiting = !continued || states.some((s) => s === "awaiting-approval" || s === "awaiting-answer");
        let text = `${approval ? "Waiting for approval" : "Waiting for your answer"} · ${count}`;
        let deniedAll = false;
        if (!waiting) {
          let decision = "✓ Answered";
          if (approval) {
            const denied = states.filter((s) => s === "denied").length;
            if (denied === 0) decision = "✓ Approved";
            else if (denied === ids.length) {
              decision = "✕ Denied";
              deniedAll = true;
            } else decision = `Answered: ${ids.length - denied} approved, ${denied} denied`;
          }
          text = `${decision} · ${count} · continued below`;
        }
        // A denial is an answer too, but not a green one.
        return (
          <div key={key} className={`notice ${waiting ? "" : deniedAll ? "notice-denied" : "notice-answered"}`} data-testid="action-notice" data-state={waiting ? "waiting" : "answered"}>
            {text}
          </div>
        );
      })}
    </>
  );
}

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

/**
 * One thread's parts, a box per model message (consecutive parts of one `messageId`), MCP
 * authorization requests as notices between them.
 */
function Parts({ parts, threadId, continued }: { parts: readonly AssistantPart[]; threadId: string; continued: boolean }) {
  const out: ReactElement[] = [];
  let run: Exclude<AssistantPart, { kind: "mcp-auth" }>[] = [];
  const flush = () => {
    if (run.length > 0) out.push(<MessageBox key={run[0].key} parts={run} threadId={threadId} />);
    run = [];
  };
  for (const p of parts) {
    if (p.kind === "mcp-auth") {
      flush();
      const names = p.servers.map((s) => s.name).join(", ");
      const answered = continued && p.state === "done";
      out.push(
        <div key={p.key} className={`notice ${answered ? "notice-answered" : ""}`} data-testid="action-notice" data-state={answered ? "answered" : "waiting"}>
          {answered ? `Continued after authorizing ${names} · below` : `Authorization required: ${names}`}
        </div>,
      );
      continue;
    }
    if (run.length > 0 && run[0].messageId !== p.messageId) flush();
    run.push(p);
  }
  flush();
  return <>{out}</>;
}

/** One model message: reasoning, text, refusal and its tool calls, each memoised on identity. */
function MessageBox({ parts, threadId }: { parts: Exclude<AssistantPart, { kind: "mcp-auth" }>[]; threadId: string }) {
  const complete = parts.every((p) => p.kind === "tool" || !p.streaming);
  return (
    <div className="message" data-testid="message" data-message-id={parts[0].messageId} data-thread-id={threadId} data-complete={complete ? "true" : "false"}>
      {parts.map((p) => (p.kind === "tool" ? <ToolCard key={p.key} part={p} /> : <TextBlock key={p.key} part={p} />))}
    </div>
  );
}

const TextBlock = memo(function TextBlock({ part }: { part: Exclude<AssistantPart, { kind: "tool" | "mcp-auth" }> }) {
  // The caret says "more text is on its way": not for a message whose turn is no longer
  // followed (the session failed, the live stream is gone, the connection stalled), even though
  // the message itself is unfinished (a trial: a 404 after the emulator restarted left it blinking).
  const live = useContext(TurnLive);
  const stopped = part.interrupted && (
    <span className="stopped" data-testid="stopped" title="The turn stopped while this streamed: this is what arrived. A reload shows the server's history, which does not keep it.">
      stopped
    </span>
  );
  if (part.kind === "reasoning") {
    return (
      <details className="reasoning">
        <summary>Reasoning {stopped}</summary>
        <p>{part.text}</p>
      </details>
    );
  }
  if (part.kind === "refusal") return <p className="message-refusal">Refused: {part.text}</p>;
  return (
    <>
      <MessageText text={part.text} streaming={part.streaming && live} interrupted={part.interrupted} />
      {stopped}
    </>
  );
});

const ToolCard = memo(function ToolCard({ part }: { part: ToolPart }) {
  const server = part.toolInfo?.serverName;
  const result = part.state === "done" || part.state === "error" || part.state === "denied" ? part.result : null;
  // A client-side tool's "result" is the app's own answer: shown as the answer, not twice.
  const answer = part.state === "done" ? part.answer : null;
  const shownResult = result && result.eventId !== null && result.content !== "" ? result : null;
  return (
    <div className={`tool-call ${part.state === "uncertain" ? "tool-call-uncertain" : ""}`} data-testid="tool-call" data-tool-call-id={part.toolCallId} data-state={part.state}>
      <div className="tool-call-head">
        <span className="tool-name">{part.name || "…"}</span>
        {server && <span className="tag">MCP · {server}</span>}
        {!server && part.toolInfo?.kind && <span className="tag">{part.toolInfo.kind}</span>}
        <span className={`tool-state tool-state-${part.state}`}>{STATE_LABEL[part.state]}</span>
      </div>
      {part.state === "uncertain" && (
        <p className="uncertain" data-testid="uncertain">
          ⚠ The turn ended before this call was answered: its effect is unknown.
        </p>
      )}
      <details className="tool-args" open={!result && answer === null}>
        <summary>Arguments</summary>
        <pre>{prettyArguments(part.arguments, part.argumentsText) || "…"}</pre>
        {part.argumentsError && <p className="args-error">Arguments are not valid JSON: {part.argumentsError}</p>}
      </details>
      {part.state === "denied" && (
        <p className="tool-denied" data-testid="tool-denied">
          Denied{part.reason ? ` — “${part.reason}”` : ""}
        </p>
      )}
      {part.state === "error" && part.result === null && <p className="args-error">{part.error}</p>}
      {answer !== null && (
        <p className="tool-answer" data-testid="tool-answer">
          Answered: {answer}
        </p>
      )}
      {shownResult && (
        <details className="tool-result-box" open>
          <summary>Result</summary>
          <pre className="tool-result" data-testid="tool-result">{prettyResult(shownResult.content)}</pre>
        </details>
      )}
      {part.subagents.map((g) => (
        <ThreadBox key={g.key} group={g} continued={false} />
      ))}
    </div>
  );
});

const ThreadBox = memo(function ThreadBox({ group, continued }: { group: SubagentGroup; continued: boolean }) {
  const live = useContext(TurnLive);
  const running = group.status === "running" && live;
  const streaming = group.parts.some(isStreaming);
  return (
    <section className={`thread thread-${group.status}`} data-testid="thread" data-thread-id={group.threadId} data-status={group.status}>
      <header className="thread-head">
        <span className="thread-title">{group.title ?? group.agentName ?? "sub-agent"}</span>
        {group.agentName && group.title && group.title !== group.agentName && <span className="tag">{group.agentName}</span>}
        {group.parentToolCallId === null && <span className="tag tag-warn">unattached</span>}
        <span className={`thread-status thread-status-${group.status}`}>{group.status}</span>
      </header>
      <div className="thread-body">
        <Parts parts={group.parts} threadId={group.threadId} continued={continued} />
        {running && !streaming && <Typing />}
        {group.status === "error" && <p className="turn-error">Sub-agent failed.</p>}
      </div>
    </section>
  );
});

/**
 * A message's text in stable chunks (see `textChunks`): while it streams only the last chunk's
 * text changes, so React updates one small text node and the browser lays out one small block
 * instead of the whole message. Each chunk is a block ending at a line break, so the text flows
 * exactly as one pre-wrapped paragraph would; the element's `textContent` is the full text.
 */
function MessageText({ text, streaming, interrupted }: { text: string; streaming: boolean; interrupted: boolean }) {
  const chunks = textChunks(text);
  return (
    <p className="message-text" data-testid="message-text" data-interrupted={interrupted ? "true" : "false"}>
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

/**
 * Why a message was not sent, in the user's words where the SDK's message is meant for
 * developers: `turn-running` names `{ interrupt: true }` (a re-check showed it to a user who
 * pressed Enter while a reopened session's reply still streamed).
 */
function failureText(error: { code: string; message: string }): string {
  if (error.code === "turn-running") return "the agent was still answering. Retry once it is done, or cancel it first.";
  return error.message;
}
