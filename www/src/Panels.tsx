import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { AgentSession, FrameLogEntry, SessionSnapshot, UsageView } from "forgestream";
import { badgeStatus, formatSilence, formatTokens, shortId, silenceOf } from "./format";

const BADGE_LABEL: Record<string, string> = {
  idle: "Idle",
  connecting: "Connecting",
  live: "Live",
  reconnecting: "Reconnecting",
  rebuilding: "Replaying history",
  offline: "Offline",
  done: "Done",
  paused: "Paused — waiting for you",
  cancelled: "Turn cancelled",
  error: "Turn failed",
  liveUnavailable: "Live stream unavailable",
  failed: "Failed",
};

/**
 * The badge's visible word for a status, where the SDK's name is not one a reader knows
 * (`liveUnavailable`, camel case, was shown raw to a new user); the others read as they are.
 */
const BADGE_TEXT: Record<string, string> = {
  liveUnavailable: "live stream unavailable",
};

/** Re-renders every `ms` while `on`, returning `Date.now()` (for ticking durations). */
export function useNow(on: boolean, ms = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!on) return;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(timer);
  }, [on, ms]);
  return now;
}

/** A banner the user can dismiss: an error is an alert, a notice a status message. */
export function Dismissible({ kind, testId, text, onDismiss }: { kind: "error" | "info"; testId: string; text: string; onDismiss: () => void }) {
  return (
    <div className={`banner banner-${kind}`} role={kind === "error" ? "alert" : "status"} data-testid={testId}>
      {text}
      <button type="button" className="link" onClick={onDismiss}>
        dismiss
      </button>
    </div>
  );
}

/**
 * The connection badge: `data-testid="connection"` holds the status as a word (`data-status` the
 * bare status); details sit beside it.
 */
export function ConnectionBadge({ snapshot, onRefresh }: { snapshot: SessionSnapshot; onRefresh: () => void }) {
  const status = badgeStatus(snapshot);
  const c = snapshot.connection;
  const silence = silenceOf(c);
  const now = useNow(silence.since !== null);
  return (
    <div className={`badge badge-${status}`} title={BADGE_LABEL[status] ?? status} data-testid="connection-badge" data-tab-role={"role" in c ? String(c.role) : "solo"}>
      <span className="dot" aria-hidden="true" />
      <span className="sr-label">{BADGE_LABEL[status] ?? status}</span>
      <span className="badge-status" data-testid="connection" data-status={status}>
        {BADGE_TEXT[status] ?? status}
      </span>
      {c.status === "reconnecting" && (
        <span className="badge-detail" data-testid="connection-attempt">
          attempt {c.attempt}
        </span>
      )}
      {silence.since !== null && (
        <span className="badge-detail" data-testid="connection-silent" title="The SDK keeps checking the turn; it still reads running on the server">
          no activity for {formatSilence(now - silence.since)}
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

/** Memoised: the SDK keeps `usage`'s identity until usage changes, so streaming skips this. */
export const UsagePanel = memo(function UsagePanel({ usage }: { usage: UsageView | null }) {
  const b = usage?.breakdown;
  const total = b ? SEGMENTS.reduce((s, seg) => s + b[seg.key], 0) : 0;
  return (
    <section className="panel usage" data-testid="usage">
      <h2>Token usage</h2>
      {!usage || usage.totalTokens === 0 ? (
        <p className="muted">No usage reported yet: a model call reports its tokens when it finishes.</p>
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
});

const TIMELINE_ROWS = 250;
/** How often the log is read while frames arrive, ms. */
const TIMELINE_EVERY_MS = 250;

/**
 * The frame inspector. `session.eventLog()` copies the log out of wasm, so it is read at most every
 * 250 ms, and only the rows shown (`{ last: TIMELINE_ROWS }`: the newest frames; older ones never
 * cross from wasm), while the session changes (trailing read included, so the last frame always shows). The
 * panel subscribes to the session itself instead of taking the snapshot as a prop, so it renders
 * only when it has read the log — not with every snapshot — and rows that are still shown keep
 * their elements (keyed by turn and sequence number, memoised on their values).
 */
export const Timeline = memo(function Timeline({ session }: { session: AgentSession | null }) {
  const [open, setOpen] = useState(true);
  const [log, setLog] = useState<readonly FrameLogEntry[]>([]);
  useEffect(() => {
    if (!session || !open) return;
    let lastRead = 0;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const read = () => {
      timer = null;
      // Closing a handle notifies its listeners once more (so a UI re-reads the final snapshot);
      // nothing new can arrive in a closed handle's log.
      if (session.closed) return;
      lastRead = performance.now();
      setLog(session.eventLog({ last: TIMELINE_ROWS }));
    };
    const changed = () => {
      const wait = TIMELINE_EVERY_MS - (performance.now() - lastRead);
      if (wait <= 0) read();
      else timer ??= setTimeout(read, wait);
    };
    const unsubscribe = session.subscribe(changed);
    read();
    return () => {
      unsubscribe();
      if (timer) clearTimeout(timer);
    };
  }, [session, open]);
  const rows = useMemo(() => {
    const shown = log.slice().reverse();
    const seen = new Map<string, number>();
    return shown.map((f) => {
      // A frame seen twice (a replay after a reconnect) keeps a distinct key.
      const base = `${f.turnId}:${f.sequenceNumber ?? "x"}:${f.eventType}`;
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      return { key: n === 0 ? base : `${base}#${n}`, f };
    });
  }, [log]);
  return (
    <section className="panel timeline" data-testid="timeline">
      <h2>
        <button type="button" className="link" onClick={() => setOpen(!open)} aria-expanded={open}>
          {open ? "▾" : "▸"} Event timeline
        </button>
        <span className="muted count" data-testid="timeline-count">
          {log.length === TIMELINE_ROWS ? `last ${TIMELINE_ROWS}` : log.length} frames
        </span>
      </h2>
      {open &&
        (rows.length === 0 ? (
          <p className="muted">No frames received on this page yet: the timeline lists live frames as they arrive; history loaded from the server is not listed.</p>
        ) : (
          <TimelineTable rows={rows} />
        ))}
    </section>
  );
});

/** Height of one timeline row, px (`.timeline tbody tr` in styles.css says the same). */
const ROW_PX = 20;
/** Rows rendered beyond each edge of the visible part. */
const OVERSCAN = 8;

/**
 * The rows of the timeline, windowed: only the rows in (or near) the scroller's view are in the
 * DOM, with spacer rows for the rest. While frames stream in, each read replaces most of the 250
 * rows; rendering about twenty keeps that to a small table layout instead of a large one.
 */
function TimelineTable({ rows }: { rows: readonly { key: string; f: FrameLogEntry }[] }) {
  const scroller = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: 0 });
  const pending = useRef(false);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const measure = () => setView({ top: el.scrollTop, height: el.clientHeight });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  const onScroll = () => {
    // One state update per frame, read after the browser has scrolled.
    if (pending.current) return;
    pending.current = true;
    requestAnimationFrame(() => {
      pending.current = false;
      const el = scroller.current;
      if (el) setView({ top: el.scrollTop, height: el.clientHeight });
    });
  };
  // Before the first measurement, assume a tall view: a few rows too many, never too few.
  const height = view.height || 1000;
  const first = Math.max(0, Math.floor(view.top / ROW_PX) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((view.top + height) / ROW_PX) + OVERSCAN);
  return (
    // Focusable, so keyboard users can scroll it (it holds no controls of its own).
    <div className="timeline-scroll" ref={scroller} onScroll={onScroll} tabIndex={0} role="region" aria-label="Received frames">
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
          {first > 0 && <Spacer rows={first} />}
          {rows.slice(first, last).map(({ key, f }) => (
            <TimelineRow key={key} seq={f.sequenceNumber} type={f.eventType} thread={f.threadId} id={f.id} bytes={f.bytes} />
          ))}
          {last < rows.length && <Spacer rows={rows.length - last} />}
        </tbody>
      </table>
    </div>
  );
}

/** Stands in for `rows` rows that are not rendered. */
function Spacer({ rows }: { rows: number }) {
  return (
    <tr className="spacer" aria-hidden="true">
      <td colSpan={5} style={{ height: rows * ROW_PX }} />
    </tr>
  );
}

/** One frame; props are primitives so an unchanged row is skipped although each read makes new entries. */
const TimelineRow = memo(function TimelineRow({ seq, type, thread, id, bytes }: { seq: number | null; type: string; thread: string | null; id: string | null; bytes: number }) {
  return (
    <tr className={`ev ev-${type.split(".")[0]}`} data-testid="timeline-row">
      <td className="num">{seq ?? "—"}</td>
      <td title={type}>{type}</td>
      <td title={thread ?? ""}>{thread === null ? "—" : shortId(thread, 4)}</td>
      <td title={id ?? ""}>
        <code>{id ? id.slice(-6) : "—"}</code>
      </td>
      <td className="num">{bytes}</td>
    </tr>
  );
});
