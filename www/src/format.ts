import type { ContentView, SessionSnapshot, TurnSnapshot } from "forgestream";

/** Plain text of message content (strings and text/refusal parts; other parts are skipped). */
export function contentText(content: ContentView | null | undefined): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  return content
    .map((p) => (p.type === "text" ? p.text : p.type === "refusal" ? p.refusal : ""))
    .join("");
}

/** Pretty JSON when the value parsed, else the raw text (e.g. arguments still streaming). */
export function prettyArguments(parsed: unknown, raw: string | null | undefined): string {
  if (parsed !== undefined && parsed !== null) {
    try {
      return JSON.stringify(parsed, null, 2);
    } catch {
      /* fall through */
    }
  }
  return raw ?? "";
}

/** Pretty-prints a tool result when it is JSON text. */
export function prettyResult(content: string): string {
  const t = content.trim();
  if (t.startsWith("{") || t.startsWith("[")) {
    try {
      return JSON.stringify(JSON.parse(t), null, 2);
    } catch {
      /* not JSON */
    }
  }
  return content;
}

export function shortId(id: string | null | undefined, n = 8): string {
  if (!id) return "—";
  return id.length > n + 1 ? `${id.slice(0, n)}…` : id;
}

export function formatTokens(n: number): string {
  return n.toLocaleString("en-US");
}

/** Only http(s) URLs become links (an `auth_url` from the server is untrusted). */
export function safeHttpUrl(url: string): string | null {
  try {
    const u = new URL(url);
    return u.protocol === "https:" || u.protocol === "http:" ? u.href : null;
  } catch {
    return null;
  }
}

/** One user-side input of a turn, for the transcript. */
export type InputView =
  | { kind: "message"; text: string }
  | { kind: "approval"; toolCallId: string; allow: boolean; reason?: string }
  | { kind: "response"; toolCallId: string; text: string }
  | { kind: "continue" }
  | { kind: "other"; raw: string };

export function turnInputs(turn: TurnSnapshot): InputView[] {
  const input = turn.input;
  if (!input) return [];
  if (input.length === 0) return [{ kind: "continue" }];
  return input.map((raw): InputView => {
    const item = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
    switch (item.type) {
      case "user.message": {
        const c = item.content;
        const text = typeof c === "string" ? c : Array.isArray(c) ? c.map((p: { text?: unknown; name?: unknown }) => (typeof p.text === "string" ? p.text : typeof p.name === "string" ? `[file ${p.name}]` : "")).join("") : "";
        return { kind: "message", text };
      }
      case "user.tool_approval": {
        const approval = (item.approval ?? {}) as { status?: string; reason?: string };
        return { kind: "approval", toolCallId: String(item.tool_call_id ?? ""), allow: approval.status === "allow", ...(approval.reason ? { reason: approval.reason } : {}) };
      }
      case "user.tool_response":
        return { kind: "response", toolCallId: String(item.tool_call_id ?? ""), text: String(item.content ?? "") };
      default:
        return { kind: "other", raw: JSON.stringify(raw) };
    }
  });
}

/**
 * What the badge says: the connection status while a turn is followed; once the connection
 * rests (`idle` / `done`), what the last turn ended as — `done`, `paused` (it waits for input),
 * `cancelled` (stopped, or abandoned by a server shutting down), `error` — so the badge never
 * says `done` beside a turn that reads "cancelled · abandoned", nor `idle` beside a finished one.
 */
export function badgeStatus(snapshot: SessionSnapshot): string {
  const status = snapshot.connection.status;
  const last = snapshot.turns[snapshot.turns.length - 1];
  // Resting (nothing followed, or the followed turn ended): how the last turn ended. After a
  // reload of a finished session nothing is followed, and `idle` beside a `done` turn read as
  // if the session had never run (new-user trial, session 12).
  if ((status === "idle" || status === "done") && last !== undefined && last.status !== "running") return last.status;
  return status;
}

/**
 * How long the followed turn has been silent while it still reads running (issue 14): the SDK
 * sets `silentSinceMs` / `stalled` on the connection after its idle watchdog found the turn
 * running without a frame; both clear with the next frame.
 */
export function silenceOf(c: SessionSnapshot["connection"]): { since: number | null; stalled: boolean } {
  if ("stalled" in c) return { since: c.silentSinceMs, stalled: c.stalled };
  return { since: null, stalled: false };
}

/** "42 s", "3 min 5 s": a duration for "no activity for …". */
export function formatSilence(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}
