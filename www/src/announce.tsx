import { useCallback, useEffect, useRef, useState } from "react";
import type { ChatMessage, ChatSnapshot, PendingAction, TurnSnapshot } from "forgestream";

/**
 * Screen-reader announcements of a session (WAI-ARIA live regions). A streamed reply is not read
 * out delta by delta — a polite region changing dozens of times a second is noise that screen
 * readers queue or drop — so the reply is announced once, when its turn stops running; new
 * pending actions (approval, question, authorization cards) get their own region, so a reply that
 * pauses on an approval announces both.
 */
export interface Announcements {
  /** The finished reply of a turn this page watched run ("" until one finished). */
  reply: string;
  /** What the newest pending actions ask for ("" when nothing waits). */
  pending: string;
}

export interface AnnouncementState extends Announcements {
  /**
   * Call before the page starts a turn (send, respond, continue): every turn that appears after
   * it is announced when it ends, even one that ends before a snapshot showed it running (a fast
   * turn can start and pause within one published frame).
   */
  expectTurn: () => void;
}

/** The longest reply read out, characters (the transcript has the whole text). */
const MAX_REPLY = 1200;

/** The main thread's text parts of the turn's reply in `messages`. */
function replyText(messages: readonly ChatMessage[], turn: TurnSnapshot): string {
  const parts: string[] = [];
  for (const m of messages) if (m.kind === "assistant" && m.turnId === turn.turnId) for (const p of m.parts) if (p.kind === "text") parts.push(p.text);
  const text = parts.join(" ").replace(/\s+/g, " ").trim();
  return text.length > MAX_REPLY ? `${text.slice(0, MAX_REPLY)}…` : text;
}

function finished(agent: string, turn: TurnSnapshot, messages: readonly ChatMessage[]): string {
  const text = replyText(messages, turn);
  switch (turn.status) {
    case "done":
    case "paused":
      return text ? `${agent} replied: ${text}` : "";
    case "cancelled":
      return text ? `Reply cancelled after: ${text}` : "Reply cancelled.";
    case "error":
      return `The reply failed${turn.errorMessage ? `: ${turn.errorMessage}` : "."}`;
    default:
      return "";
  }
}

function describePending(p: PendingAction): string {
  if (p.kind === "mcpAuth") return `Authorization needed for ${p.mcpServer?.name ?? "an MCP server"}.`;
  if (p.kind === "toolResponse") return `Question: ${p.question?.question ?? `${p.toolName ?? "a tool"} needs your answer`}`;
  const server = p.toolInfo?.serverName ? ` on ${p.toolInfo.serverName}` : "";
  return `Approval needed: ${p.toolName ?? p.toolInfo?.name ?? "a tool call"}${server}. Allow or deny it in the card below.`;
}

export function useAnnouncements(snapshot: ChatSnapshot, agent: string): AnnouncementState {
  const [reply, setReply] = useState("");
  const [pending, setPending] = useState("");
  const latest = useRef(snapshot);
  latest.current = snapshot;
  /**
   * Turns whose end is announced: those seen running here, and those new since `expectTurn()`
   * (the turn ids known then) — not the finished turns of the history loaded on open.
   */
  const watched = useRef(new Set<string>());
  const knownBefore = useRef<Set<string> | null>(null);
  const ended = useRef(new Set<string>());
  const announced = useRef(new Set<string>());

  useEffect(() => {
    for (const turn of snapshot.turns) {
      const id = turn.turnId;
      if (turn.status === "running") watched.current.add(id);
      else if ((watched.current.has(id) || (knownBefore.current !== null && !knownBefore.current.has(id))) && !ended.current.has(id)) {
        watched.current.delete(id);
        ended.current.add(id);
        const text = finished(agent, turn, snapshot.messages);
        if (text) setReply(text);
      }
    }
  }, [snapshot.turns, agent]);

  useEffect(() => {
    const fresh = snapshot.pending.filter((p) => !announced.current.has(p.key));
    for (const p of fresh) announced.current.add(p.key);
    if (snapshot.pending.length === 0) setPending("");
    else if (fresh.length > 0) setPending(fresh.map(describePending).join(" "));
  }, [snapshot.pending]);

  const expectTurn = useCallback(() => {
    knownBefore.current = new Set(latest.current.turns.map((t) => t.turnId));
  }, []);

  return { reply, pending, expectTurn };
}

/**
 * Visually hidden polite live regions. They are rendered from the start (a region inserted
 * together with its text is not announced) and only their text changes.
 */
export function LiveRegions({ reply, pending }: Announcements) {
  return (
    <div className="sr-only">
      <div role="status" aria-live="polite" aria-atomic="true" data-testid="live-reply">
        {reply}
      </div>
      <div role="status" aria-live="polite" aria-atomic="true" data-testid="live-pending">
        {pending}
      </div>
    </div>
  );
}
