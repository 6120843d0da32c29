import { useEffect, useRef, useState } from "react";
import type { AgentSession, FrameLogEntry, SessionSnapshot, UsageView } from "forgestream";
import { badgeStatus, formatTokens, shortId } from "./format";

const BADGE_LABEL: Record<string, string> = {
  idle: "Idle",
  connecting: "Connecting",
  live: "Live",
  reconnecting: "Reconnecting",
  rebuilding: "Replaying history",
  offline: "Offline",
  done: "Done",
  paused: "Paused — waiting for you",
  liveUnavailable: "Live stream unavailable",
  failed: "Failed",
};

/** The connection badge: `data-testid="connection"` holds the bare status; details sit beside it. */
export function ConnectionBadge({ snapshot, onRefresh }: { snapshot: SessionSnapshot; onRefresh: () => void }) {
  const status = badgeStatus(snapshot);
  const c = snapshot.connection;
  return (
    <div className={`badge badge-${status}`} title={BADGE_LABEL[status] ?? status}>
      <span className="dot" aria-hidden="true" />
      <span className="sr-label">{BADGE_LABEL[status] ?? status}</span>
      <span className="badge-status" data-testid="connection">
        {status}
      </span>
      {c.status === "reconnecting" && (
        <span className="badge-detail" data-testid="connection-attempt">
          attempt {c.attempt}
        </span>
      )}
      {c.status === "failed" && (
        <span className="badge-detail" data-testid="connection-error">
          {snapshot.error?.code ?? "error"}
          {snapshot.error?.status ? ` ${snapshot.error.status}` : ""}
        </span>
      )}
      {(c.status === "liveUnavailable" || c.status === "failed") && (
        <button type="button" className="small" data-testid="refresh" onClick={onRefresh}>
          Refresh
        </button>
      )}
    </div>
  );
}

const SEGMENTS: { key: keyof UsageView["breakdown"]; label: string }[] = [
  { key: "harness", label: "Harness" },
  { key: "instructions", label: "Instructions" },
  { key: "skills", label: "Skills" },
  { key: "toolDefinitions", label: "Tool definitions" },
  { key: "messages", label: "Messages" },
];

export function UsagePanel({ usage }: { usage: UsageView | null }) {
  const b = usage?.breakdown;
  const total = b ? SEGMENTS.reduce((s, seg) => s + b[seg.key], 0) : 0;
  return (
    <section className="panel usage" data-testid="usage">
      <h2>Token usage</h2>
      {!usage || usage.totalTokens === 0 ? (
        <p className="muted">No model calls yet.</p>
      ) : (
        <>
          <dl className="usage-totals">
            <div>
              <dt>Input</dt>
              <dd data-testid="usage-input">{formatTokens(usage.inputTokens)}</dd>
            </div>
            <div>
              <dt>Output</dt>
              <dd data-testid="usage-output">{formatTokens(usage.outputTokens)}</dd>
            </div>
            <div>
              <dt>Total</dt>
              <dd data-testid="usage-total">{formatTokens(usage.totalTokens)}</dd>
            </div>
            {usage.cacheReadTokens > 0 && (
              <div>
                <dt>Cache read</dt>
                <dd>{formatTokens(usage.cacheReadTokens)}</dd>
              </div>
            )}
            {usage.costUsd !== undefined && usage.costUsd !== null && (
              <div>
                <dt>Cost</dt>
                <dd>${usage.costUsd.toFixed(4)}</dd>
              </div>
            )}
          </dl>
          {b && total > 0 && (
            <>
              <h3>Input breakdown</h3>
              <div className="stack" role="img" aria-label="input token breakdown">
                {SEGMENTS.map((seg) =>
                  b[seg.key] > 0 ? <span key={seg.key} className={`seg seg-${seg.key}`} style={{ width: `${(100 * b[seg.key]) / total}%` }} title={`${seg.label}: ${b[seg.key]}`} /> : null,
                )}
              </div>
              <ul className="bars">
                {SEGMENTS.map((seg) => (
                  <li key={seg.key} data-testid={`usage-${seg.key}`}>
                    <span className="bar-label">
                      <i className={`swatch seg-${seg.key}`} />
                      {seg.label}
                    </span>
                    <span className="bar-track">
                      <span className={`bar-fill seg-${seg.key}`} style={{ width: `${(100 * b[seg.key]) / total}%` }} />
                    </span>
                    <span className="bar-value">{formatTokens(b[seg.key])}</span>
                  </li>
                ))}
              </ul>
            </>
          )}
        </>
      )}
    </section>
  );
}

const TIMELINE_ROWS = 250;

/**
 * The frame inspector. `session.eventLog()` copies the log out of wasm, so it is read at most every
 * 250 ms while the snapshot changes (trailing read included, so the last frame always shows).
 */
export function Timeline({ session, snapshot }: { session: AgentSession | null; snapshot: SessionSnapshot }) {
  const [open, setOpen] = useState(true);
  const [log, setLog] = useState<FrameLogEntry[]>([]);
  const lastRead = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => {
    if (!session || !open) return;
    const read = () => {
      timer.current = null;
      lastRead.current = performance.now();
      setLog(session.eventLog());
    };
    const wait = 250 - (performance.now() - lastRead.current);
    if (wait <= 0) read();
    else timer.current ??= setTimeout(read, wait);
  }, [session, open, snapshot]);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  const rows = log.slice(-TIMELINE_ROWS).reverse();
  return (
    <section className="panel timeline" data-testid="timeline">
      <h2>
        <button type="button" className="link" onClick={() => setOpen(!open)} aria-expanded={open}>
          {open ? "▾" : "▸"} Event timeline
        </button>
        <span className="muted count" data-testid="timeline-count">
          {log.length} frames
        </span>
      </h2>
      {open &&
        (rows.length === 0 ? (
          <p className="muted">No frames received yet.</p>
        ) : (
          <div className="timeline-scroll">
            <table>
              <thead>
                <tr>
                  <th>seq</th>
                  <th>type</th>
                  <th>thread</th>
                  <th>id</th>
                  <th className="num">bytes</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((f, i) => (
                  <tr key={`${f.turnId}:${f.sequenceNumber ?? "x"}:${i}`} className={`ev ev-${f.eventType.split(".")[0]}`} data-testid="timeline-row">
                    <td className="num">{f.sequenceNumber ?? "—"}</td>
                    <td title={f.eventType}>{f.eventType}</td>
                    <td title={f.threadId ?? ""}>{f.threadId === null ? "—" : shortId(f.threadId, 4)}</td>
                    <td title={f.id ?? ""}>
                      <code>{f.id ? f.id.slice(-6) : "—"}</code>
                    </td>
                    <td className="num">{f.bytes}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
    </section>
  );
}
