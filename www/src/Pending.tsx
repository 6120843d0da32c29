import { useEffect, useRef, useState } from "react";
import { answer, approve, deny, type AssistantPart, type ChatMessage, type Decision, type PendingAction, type SubagentGroup } from "forgestream";
import { prettyArguments, safeHttpUrl, shortId } from "./format";

type Choice = { kind: "allow" } | { kind: "deny" } | { kind: "answer"; content: string };

interface Props {
  pending: readonly PendingAction[];
  /** `snapshot.messages`: who asks (a subagent's title) and the text that proposed the call. */
  messages: readonly ChatMessage[];
  busy: boolean;
  onRespond: (decisions: Decision[]) => void;
  onContinueAfterAuth: () => void;
}

/**
 * Everything the paused turn waits for. Approvals and questions are answered in one batch
 * (PROTOCOL §7): with a single item a click submits; with several, each card records a choice and
 * one button sends them all. MCP authorization continues with an empty-input turn.
 */
export function PendingPanel({ pending, messages, busy, onRespond, onContinueAfterAuth }: Props) {
  const tools = pending.filter((p) => (p.kind === "toolApproval" || p.kind === "toolResponse") && p.toolCallId);
  const auths = pending.filter((p) => p.kind === "mcpAuth");
  const [choices, setChoices] = useState<Record<string, Choice>>({});
  const [reasons, setReasons] = useState<Record<string, string>>({});
  const single = tools.length === 1;
  const section = useRef<HTMLElement>(null);
  // In a batch, a choice moves focus to the next undecided card, then to the send button.
  const [chosen, setChosen] = useState(0);
  useEffect(() => {
    if (chosen === 0) return;
    const root = section.current;
    const next = root?.querySelector<HTMLElement>('[data-decided="false"] .actions button:not(:disabled), [data-decided="false"] [data-testid="question-option"]') ?? root?.querySelector<HTMLElement>('[data-testid="batch-submit"]');
    next?.focus();
  }, [chosen]);

  const decisionFor = (p: PendingAction, c: Choice): Decision => {
    const id = p.toolCallId ?? "";
    if (c.kind === "allow") return approve(id);
    if (c.kind === "answer") return answer(id, c.content);
    const reason = (reasons[p.key] ?? "").trim();
    return deny(id, reason === "" ? undefined : reason);
  };
  const choose = (p: PendingAction, c: Choice) => {
    if (single) onRespond([decisionFor(p, c)]);
    else {
      setChoices((prev) => ({ ...prev, [p.key]: c }));
      setChosen((n) => n + 1);
    }
  };
  const complete = tools.every((p) => choices[p.key] !== undefined);
  const submitBatch = () => onRespond(tools.map((p) => decisionFor(p, choices[p.key] as Choice)));

  if (pending.length === 0) return null;
  return (
    <section className="pending" aria-label="Waiting for you" data-testid="pending" ref={section}>
      {tools.map((p) =>
        p.kind === "toolApproval" ? (
          <ApprovalCard key={p.key} action={p} messages={messages} busy={busy} choice={choices[p.key]} reason={reasons[p.key] ?? ""} onReason={(r) => setReasons((prev) => ({ ...prev, [p.key]: r }))} onChoose={(c) => choose(p, c)} />
        ) : (
          <QuestionCard key={p.key} action={p} messages={messages} busy={busy} choice={choices[p.key]} onChoose={(c) => choose(p, c)} />
        ),
      )}
      {!single && tools.length > 0 && (
        <div className="batch-bar">
          <span>
            {Object.keys(choices).filter((k) => tools.some((p) => p.key === k)).length} of {tools.length} decided
          </span>
          <button type="button" className="primary" data-testid="batch-submit" disabled={!complete || busy} onClick={submitBatch}>
            Send {tools.length} decisions
          </button>
        </div>
      )}
      {auths.length > 0 && <AuthCard actions={auths} busy={busy} onContinue={onContinueAfterAuth} />}
    </section>
  );
}

/** Calls `visit` on every part of `messages`, subagent groups' parts included (depth-bounded). */
function eachPart(messages: readonly ChatMessage[], visit: (p: AssistantPart) => void, onGroup: (g: SubagentGroup) => void = () => {}): void {
  const walk = (parts: readonly AssistantPart[], depth: number) => {
    for (const p of parts) {
      visit(p);
      if (p.kind === "tool" && depth < 16) for (const g of p.subagents) (onGroup(g), walk(g.parts, depth + 1));
    }
  };
  for (const m of messages) {
    if (m.kind === "subagent") onGroup(m);
    if (m.kind !== "user") walk(m.parts, 0);
  }
}

/** Who asks: the main agent, or the subagent thread's title / agent name. */
function threadLabel(messages: readonly ChatMessage[], threadId: string | null | undefined): string {
  if (!threadId || threadId === "main") return "main agent";
  let label: string | null = null;
  eachPart(messages, () => {}, (g) => {
    if (g.threadId === threadId) label = g.title ?? g.agentName;
  });
  return label ?? `thread ${threadId.slice(0, 8)}`;
}

function Proposer({ action, messages }: { action: PendingAction; messages: readonly ChatMessage[] }) {
  let text = "";
  eachPart(messages, (p) => {
    if (p.kind === "text" && p.messageId === action.sourceEventId) text += p.text;
  });
  return (
    <div className="proposer">
      <span className="label">Proposed by</span>{" "}
      <code title={action.sourceEventId ?? ""}>{shortId(action.sourceEventId, 12)}</code>
      {text && <blockquote data-testid="proposer-text">{text.length > 280 ? `${text.slice(0, 280)}…` : text}</blockquote>}
    </div>
  );
}

interface CardProps {
  action: PendingAction;
  messages: readonly ChatMessage[];
  busy: boolean;
  choice: Choice | undefined;
  onChoose: (c: Choice) => void;
}

function ApprovalCard({ action, messages, busy, choice, onChoose, reason, onReason }: CardProps & { reason: string; onReason: (r: string) => void }) {
  return (
    <article className="card approval-card" data-testid="approval-card" data-tool-call-id={action.toolCallId} data-decided={choice ? "true" : "false"} aria-labelledby={`approve-${action.key}`}>
      <header>
        <h3 id={`approve-${action.key}`}>Approve tool call?</h3>
        {choice && <span className={`tag choice-${choice.kind}`}>{choice.kind === "allow" ? "will allow" : "will deny"}</span>}
      </header>
      <dl className="facts">
        <dt>Tool</dt>
        <dd>
          <code data-testid="approval-tool">{action.toolName ?? action.toolInfo?.name ?? "(unknown)"}</code>
        </dd>
        {action.toolInfo?.serverName && (
          <>
            <dt>MCP server</dt>
            <dd data-testid="approval-server">{action.toolInfo.serverName}</dd>
          </>
        )}
        <dt>Thread</dt>
        <dd>{threadLabel(messages, action.threadId)}</dd>
        <dt>Call</dt>
        <dd>
          <code>{action.toolCallId}</code>
        </dd>
      </dl>
      <pre className="args" data-testid="approval-arguments">{prettyArguments(action.arguments, action.argumentsText) || "(no arguments)"}</pre>
      <Proposer action={action} messages={messages} />
      <div className="actions">
        <button type="button" className="primary" data-testid="approve" disabled={busy} onClick={() => onChoose({ kind: "allow" })}>
          Allow
        </button>
        <input type="text" data-testid="deny-reason" aria-label="Reason for denying (optional)" placeholder="Reason (optional)" value={reason} onChange={(e) => onReason(e.target.value)} disabled={busy} maxLength={500} />
        <button type="button" className="danger" data-testid="deny" disabled={busy} onClick={() => onChoose({ kind: "deny" })}>
          Deny
        </button>
      </div>
    </article>
  );
}

function QuestionCard({ action, messages, busy, choice, onChoose }: CardProps) {
  const [text, setText] = useState("");
  const q = action.question;
  return (
    <article className="card question-card" data-testid="question-card" data-tool-call-id={action.toolCallId} data-decided={choice ? "true" : "false"} aria-labelledby={`question-${action.key}`}>
      <header>
        <h3 id={`question-${action.key}`}>{q?.question ?? `${action.toolName ?? "A tool"} needs your answer`}</h3>
        {choice?.kind === "answer" && <span className="tag choice-allow">answer: {choice.content}</span>}
      </header>
      <p className="muted">Asked by {threadLabel(messages, action.threadId)}</p>
      {q && q.options.length > 0 && (
        <div className="options">
          {q.options.map((o) => (
            <button type="button" key={o} data-testid="question-option" disabled={busy} onClick={() => onChoose({ kind: "answer", content: o })}>
              {o}
            </button>
          ))}
        </div>
      )}
      <form
        className="actions"
        onSubmit={(e) => {
          e.preventDefault();
          if (text.trim()) onChoose({ kind: "answer", content: text.trim() });
        }}
      >
        <input type="text" data-testid="question-answer" aria-label="Your answer" placeholder="Or type your own answer" value={text} onChange={(e) => setText(e.target.value)} disabled={busy} maxLength={2000} />
        <button type="submit" className="primary" data-testid="question-submit" disabled={busy || !text.trim()}>
          Answer
        </button>
      </form>
    </article>
  );
}

function AuthCard({ actions, busy, onContinue }: { actions: PendingAction[]; busy: boolean; onContinue: () => void }) {
  return (
    <article className="card auth-card" data-testid="auth-card">
      <header>
        <h3>Authorization required</h3>
      </header>
      <p className="muted">Authorize each server in a new tab, then continue.</p>
      <ul className="auth-servers">
        {actions.map((a) => {
          const server = a.mcpServer;
          const href = server ? safeHttpUrl(server.authUrl) : null;
          return (
            <li key={a.key}>
              <strong>{server?.name ?? a.key}</strong>{" "}
              {href ? (
                <a href={href} target="_blank" rel="noopener noreferrer" data-testid="auth-link">
                  Authorize {server?.name} ↗
                </a>
              ) : (
                <span className="turn-error">unsafe authorization URL not linked: <code>{server?.authUrl ?? "(none)"}</code></span>
              )}
            </li>
          );
        })}
      </ul>
      <div className="actions">
        <button type="button" className="primary" data-testid="continue-after-auth" disabled={busy} onClick={onContinue}>
          I've authorized — continue
        </button>
      </div>
    </article>
  );
}
