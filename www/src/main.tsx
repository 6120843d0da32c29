import { StrictMode, useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
import { AgentClient, ForgestreamError, init, version, type ChatSnapshot, type ClientOptions, type Decision } from "forgestream";
import { useAgentSession } from "forgestream/react";
import { AGENTS, agentInfo } from "./agents";
import { LiveRegions, useAnnouncements } from "./announce";
import { formatSilence, shortId, silenceOf } from "./format";
import { type Layout, type PanelName, type TabSpec, PanelTabs, panelProps, useNarrow } from "./layout";
import { ConnectionBadge, Dismissible, Timeline, UsagePanel, useNow } from "./Panels";
import { PendingPanel } from "./Pending";
import { loadCurrent, loadSessions, onStorageChange, saveCurrent, saveSessions, type StoredSession } from "./sessions";
import { Transcript } from "./Transcript";
import "./styles.css";

/**
 * Testing hook: `?fault=<spec>` on the page URL is sent as the emulator's `x-forgestream-fault`
 * header on every SDK request (see crates/forgestream-server/src/fault.rs), e.g.
 * `?fault=force-412,on=subscribe`. A fault on session creation is stored on that session.
 */
const FAULT = new URLSearchParams(location.search).get("fault");

/**
 * Testing hook: `?reconnect=idleTimeoutMs:1500,healthyAfterMs:500` sets the SDK's `reconnect`
 * option (numbers in ms, see README "Recovery model"), so tests can scale the minutes of a real
 * silence down to seconds.
 */
function reconnectOption(): ClientOptions["reconnect"] | undefined {
  const spec = new URLSearchParams(location.search).get("reconnect");
  if (!spec) return undefined;
  const out: Record<string, number> = {};
  for (const part of spec.split(",")) {
    const [key, value] = part.split(":");
    if (key && value !== undefined && Number.isFinite(Number(value))) out[key.trim()] = Number(value);
  }
  return out as ClientOptions["reconnect"];
}

/**
 * Whether the session's error is a send's, shown on that send's message: its outcome is
 * unknown, or the lookup showed no turn was created (`network`, with a message that failed).
 */
function sendFailureOnItsMessage(snapshot: ChatSnapshot): boolean {
  const code = snapshot.error?.code;
  if (code === "outcome-unknown") return true;
  return code === "network" && snapshot.messages.some((m) => m.kind === "user" && m.state === "failed");
}

/** The last-opened session, if the sessions list still holds it (else none: it was forgotten). */
function listedCurrent(): string | null {
  const id = loadCurrent();
  return id !== null && loadSessions().some((s) => s.id === id) ? id : null;
}

function describe(e: unknown): string {
  const err = ForgestreamError.from(e);
  return `${err.code}${err.status ? ` ${err.status}` : ""}: ${err.message}`;
}

function App() {
  const [client, setClient] = useState<AgentClient | null>(null);
  const [coreVersion, setCoreVersion] = useState<string>();
  const [fatal, setFatal] = useState<string | null>(null);
  const [sessions, setSessions] = useState<StoredSession[]>(loadSessions);
  const [current, setCurrent] = useState<string | null>(listedCurrent);
  const [creating, setCreating] = useState<string | null>(null);
  // Below 720 px one panel shows at a time (layout.tsx); a first visit starts on the sessions.
  const narrow = useNarrow();
  const [tab, setTab] = useState<PanelName>(() => (listedCurrent() ? "chat" : "sessions"));
  const [waiting, setWaiting] = useState(0);

  useEffect(() => {
    init().then(
      () => {
        setCoreVersion(version());
        const options: ClientOptions = { baseUrl: "", flavor: "trueforge", inspect: true };
        if (FAULT) options.headers = { "x-forgestream-fault": FAULT };
        const reconnect = reconnectOption();
        if (reconnect) options.reconnect = reconnect;
        setClient(new AgentClient(options));
      },
      (e: unknown) => setFatal(`Could not load the wasm core: ${describe(e)}`),
    );
  }, []);
  useEffect(
    () =>
      onStorageChange(() => {
        const list = loadSessions();
        setSessions(list);
        // Forgotten in another tab: let it go here too (a trial: this tab kept the chat under a
        // "?" title with an empty list, and sent into a session no list showed).
        if (current !== null && !list.some((s) => s.id === current)) {
          setCurrent(null);
          setGoneNotice(`Session ${current} was forgotten in another tab.`);
        }
      }),
    [current],
  );

  const open = useCallback((id: string) => {
    saveCurrent(id);
    setCurrent(id);
    setTab("chat");
    setGoneNotice(null);
  }, []);

  const create = useCallback(
    async (agent: string) => {
      if (!client) return;
      setCreating(agent);
      try {
        const s = await client.createSession({ agent: { name: agent } });
        const entry: StoredSession = { id: s.id, agent, createdAt: Date.now() };
        const next = [entry, ...loadSessions().filter((x) => x.id !== s.id)];
        saveSessions(next);
        setSessions(next);
        open(s.id);
      } catch (e) {
        setFatal(`Could not create a ${agent} session: ${describe(e)}`);
      } finally {
        setCreating(null);
      }
    },
    [client, open],
  );

  const forget = (id: string) => {
    const next = sessions.filter((s) => s.id !== id);
    saveSessions(next);
    setSessions(next);
    setGoneNotice(null);
    // The last-opened key is the tabs' (another tab may have opened this one last): a reload
    // of any tab must not reopen it (a re-check: both reloaded into a "?" chat of it).
    if (loadCurrent() === id) saveCurrent(null);
    if (current === id) setCurrent(null);
  };

  // The server no longer has the session (an emulator restarted with `--db :memory:`, or a
  // deleted database): forget it instead of failing on every reload.
  const [goneNotice, setGoneNotice] = useState<string | null>(null);
  const gone = useCallback(
    (id: string) => {
      const next = loadSessions().filter((s) => s.id !== id);
      saveSessions(next);
      setSessions(next);
      saveCurrent(null);
      setCurrent(null);
      setGoneNotice(`The server no longer has session ${id} (was it restarted?). Start a new one.`);
    },
    [],
  );

  const stored = sessions.find((s) => s.id === current) ?? null;
  const hasSession = !!client && !!stored;
  const active: PanelName = tab === "inspector" && !hasSession ? "chat" : tab;
  const layout: Layout = { narrow, active };
  const tabs: TabSpec[] = [
    { name: "sessions", label: "Sessions" },
    { name: "chat", label: "Chat", ...(hasSession && active !== "chat" ? { waiting } : {}) },
    ...(hasSession ? [{ name: "inspector" as const, label: "Inspector" }] : []),
  ];

  return (
    <div className="app">
      <header className="topbar">
        <div className="brand">
          <span className="logo" aria-hidden="true">◆</span> forgestream
          <span className="muted small">
            core <span data-testid="core-version">{coreVersion ?? "loading…"}</span>
          </span>
        </div>
        {FAULT && (
          <span className="tag tag-warn" data-testid="fault" title="sent as x-forgestream-fault on every request">
            fault: {FAULT}
          </span>
        )}
        <a className="muted small" href="vue.html">
          Vue page
        </a>
      </header>
      {narrow && <PanelTabs tabs={tabs} active={active} onSelect={setTab} />}
      <aside className="sidebar" aria-label="Sessions" {...panelProps(layout, "sessions")}>
        <h2>New session</h2>
        <div className="agents">
          {AGENTS.map((a) => (
            <button type="button" key={a.name} className="agent-button" data-testid={`new-session-${a.name}`} disabled={!client || creating !== null} onClick={() => void create(a.name)} title={a.blurb}>
              <strong>{a.name}</strong>
              <span>{a.blurb}</span>
            </button>
          ))}
        </div>
        <h2>Sessions</h2>
        <ul className="session-list" data-testid="session-list">
          {sessions.length === 0 && <li className="muted">None yet.</li>}
          {sessions.map((s) => (
            <li key={s.id} className={s.id === current ? "active" : ""}>
              <button type="button" className="session-item" data-testid="session-item" data-session-id={s.id} onClick={() => open(s.id)} aria-current={s.id === current}>
                <strong>{s.agent}</strong>
                <code>{shortId(s.id, 12)}</code>
                <span className="muted small">{new Date(s.createdAt).toLocaleString()}</span>
              </button>
              <button type="button" className="forget" title="Forget this session (it stays on the server)" aria-label={`Forget ${s.agent} session ${shortId(s.id, 12)}`} onClick={() => forget(s.id)}>
                ×
              </button>
            </li>
          ))}
        </ul>
      </aside>
      {fatal && <Dismissible kind="error" testId="fatal" text={fatal} onDismiss={() => setFatal(null)} />}
      {client && stored ? (
        <SessionView key={stored.id} client={client} stored={stored} onGone={gone} layout={layout} onWaiting={setWaiting} />
      ) : (
        <main className="main welcome" {...panelProps(layout, "chat")}>
          <h1>A resumable agent client, in your browser</h1>
          {goneNotice && (
            <p className="banner banner-info" role="status" data-testid="session-gone">
              {goneNotice}
            </p>
          )}
          <p className="muted">
            Start a session with one of the emulator's agents {narrow ? "in the Sessions tab" : "on the left"}. Streams survive reloads, dropped connections and other tabs.
          </p>
          {narrow && (
            <button type="button" className="primary" onClick={() => setTab("sessions")}>
              Choose an agent
            </button>
          )}
        </main>
      )}
    </div>
  );
}

interface SessionViewProps {
  client: AgentClient;
  stored: StoredSession;
  onGone: (id: string) => void;
  layout: Layout;
  /** Told how many actions wait for the user (the narrow layout's Chat tab shows it). */
  onWaiting: (count: number) => void;
}

function SessionView({ client, stored, onGone, layout, onWaiting }: SessionViewProps) {
  const handle = useAgentSession(client, { sessionId: stored.id, restore: false });
  // The hook's `error` is the one error channel (opening, actions, the connection); only a
  // failure to open — no session to show — means the server no longer has this session.
  const openError = handle.session ? null : handle.error;
  const notFound = openError?.code === "not-found";
  useEffect(() => {
    if (notFound) onGone(stored.id);
  }, [notFound, onGone, stored.id]);
  const { session, snapshot } = handle;
  const [draft, setDraft] = useState("");
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<string | null>(null);
  // An action another tab did first (`conflict`): not an error, but the click did nothing here.
  const [actionNotice, setActionNotice] = useState<string | null>(null);
  const scroller = useRef<HTMLDivElement>(null);
  const content = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  /** `scrollTop` after the last scroll event or pin, to tell the user's scrolling up apart. */
  const lastTop = useRef(0);
  const info = agentInfo(stored.agent);
  const { expectTurn, ...announcements } = useAnnouncements(snapshot, stored.agent);
  const composer = useRef<HTMLTextAreaElement>(null);
  // After an action whose button goes away or is disabled (Send, Allow/Deny, an answer, Cancel),
  // focus moves on instead of falling back to the page: once the buttons are enabled again, to
  // the composer when it worked, to the first waiting card's first button when it failed.
  const [focusNext, setFocusNext] = useState<"composer" | "pending" | null>(null);
  useEffect(() => {
    if (busy || !focusNext) return;
    setFocusNext(null);
    const card = focusNext === "pending" ? scroller.current?.querySelector<HTMLElement>('[data-testid="pending"] button:not(:disabled)') : null;
    (card ?? composer.current)?.focus();
  }, [busy, focusNext]);
  useEffect(() => onWaiting(snapshot.pending.length), [snapshot.pending.length, onWaiting]);
  useEffect(() => () => onWaiting(0), [onWaiting]);

  // Turns that other tabs start on this session are followed by the SDK itself
  // (`followOtherTabs`, on by default), so this page needs no channel of its own.

  // Keep the transcript pinned to the bottom while the user has not scrolled up. A
  // ResizeObserver on the content runs after layout and before paint, so reading `scrollHeight`
  // there costs nothing and the write lands in the same frame — no layout is forced per delta.
  // (CSS scroll anchoring alone does not pin: browsers do not anchor a scroller at offset 0, so a
  // first turn that starts short never stuck, and it could not follow a turn that was added.)
  useEffect(() => {
    const el = scroller.current;
    const body = content.current;
    if (!el || !body) return;
    const observer = new ResizeObserver(() => {
      if (!stick.current) return;
      el.scrollTop = el.scrollHeight - el.clientHeight;
      lastTop.current = el.scrollTop;
    });
    observer.observe(body);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  // "Show older", or a scroll up to the transcript's top, adds turns above what the user reads:
  // their distance from the transcript's bottom is restored once the longer list rendered
  // (before paint), so nothing moves on screen. One widening at a time.
  // From the keyboard (Enter or Space on the button), the focus stays in view: the button, at the
  // top of the longer list, or the transcript once nothing older is left (a re-check: the
  // focused button went off-screen above, and focus fell to the page).
  const fromBottom = useRef<number | null>(null);
  const byKeyboard = useRef(false);
  const showOlder = useCallback(
    (keyboard = false) => {
      const el = scroller.current;
      if (fromBottom.current !== null) return;
      if (el) fromBottom.current = el.scrollHeight - el.scrollTop;
      byKeyboard.current = keyboard;
      handle.showOlder();
    },
    [handle],
  );
  useLayoutEffect(() => {
    const el = scroller.current;
    if (!el || fromBottom.current === null) return;
    el.scrollTop = el.scrollHeight - fromBottom.current;
    fromBottom.current = null;
    if (byKeyboard.current) {
      byKeyboard.current = false;
      const button = el.querySelector<HTMLElement>(".show-older");
      if (button) button.scrollIntoView({ block: "nearest" });
      else el.focus({ preventScroll: true });
    }
    lastTop.current = el.scrollTop;
  }, [snapshot.messages]);

  const run = useCallback(
    async (action: () => Promise<string | void>) => {
      setBusy(true);
      setActionError(null);
      setActionNotice(null);
      try {
        await action();
        return true;
      } catch (e) {
        // `conflict`: another tab of this page's origin did it first (the approval is answered,
        // its turn streams here too). Said as a notice: two trials clicked Deny, saw "Approved"
        // and no word of why.
        if ((e as { code?: unknown } | null)?.code === "conflict") setActionNotice("Another tab answered first, so this answer was not sent: the transcript shows what was decided there.");
        else setActionError(describe(e));
        return false;
      } finally {
        setBusy(false);
      }
    },
    [],
  );

  const last = snapshot.turns[snapshot.turns.length - 1];
  const status = snapshot.connection.status;
  // A turn the server still reports running but whose live stream is gone (412: expired, or a
  // crashed server) may never end; a new turn is the way on (the server cancels the stuck one).
  // Or a turn the session follows that the view does not show yet (a reload follows the live
  // turn before its history is in): the SDK's status reads `streaming` then.
  const turnRunning = last?.status === "running" || snapshot.status === "streaming";
  const runningTurn = snapshot.connection.turnId ?? last?.turnId ?? null;
  // A turn that has sent nothing through several watchdog cycles while the server still reports
  // it running (a crashed owner, or a very long silent tool call) may never end either: Send
  // stays enabled and sends a new turn, which interrupts it (the SDK keeps checking meanwhile).
  const silence = silenceOf(snapshot.connection);
  const stalled = turnRunning && silence.stalled;
  // Ticks like the badge's "no activity for …", so the banner and the badge show one duration.
  const now = useNow(stalled && silence.since !== null);
  const running = turnRunning && status !== "liveUnavailable" && !stalled;
  // The turn Cancel was pressed for, until it ends: the page says it is stopping — and, while
  // offline, that the stop goes once back online (a re-check: Stop pressed offline showed
  // nothing, the reply just kept its place). The SDK sends the cancel then; pressing again is
  // harmless.
  const [stopFor, setStopFor] = useState<string | null>(null);
  const stopping = turnRunning && stopFor === runningTurn;
  const stopHint = status === "offline" ? "Stopping once back online…" : "Stopping the reply…";
  const waitingTools = snapshot.pending.some((p) => p.kind !== "mcpAuth");
  const waitingAuth = snapshot.pending.some((p) => p.kind === "mcpAuth");
  const canDrop = status === "live" || status === "connecting";
  // Enter or Send while the session still opens (its newest turns being read) is kept and sent
  // once it is open, not dropped (a trial: on a slow server, Enter did nothing and said nothing).
  // Open but still `loading` counts too: whether a turn runs is not known yet (a re-check: a
  // reload whose tab took over the live turn just after opening sent into it — "Not sent").
  const [sendOnOpen, setSendOnOpen] = useState(false);
  const opening = (!session && !openError) || handle.status === "loading";
  const canSend = !!session && !opening && !busy && !running && !waitingTools && !waitingAuth && draft.trim() !== "";
  const canSubmit = canSend || (opening && !sendOnOpen && draft.trim() !== "");
  // Why Send is off: the composer's placeholder says it while empty, the hint beside Send once
  // there is text (the placeholder goes as the user types: a trial saw a greyed-out Send with
  // no reason).
  const blocked = waitingTools ? { hint: "Answer the card above first", placeholder: "Answer the card above to continue…" } : waitingAuth ? { hint: "Authorize, then continue first", placeholder: "Authorize, then continue…" } : stopping ? { hint: stopHint, placeholder: stopHint } : running ? { hint: "Wait for the reply, or cancel it", placeholder: "The agent is answering…" } : sendOnOpen ? { hint: "Sending once the session is open…", placeholder: "Opening the session…" } : null;
  const sendBlocked = draft.trim() === "" ? null : (blocked?.hint ?? null);

  const submit = async () => {
    const text = draft.trim();
    if (opening && text !== "") {
      setSendOnOpen(true);
      return;
    }
    if (!canSend) return;
    expectTurn();
    // Emptied as the message goes, not once it went: what the user types meanwhile is the next
    // message (a trial: on a slow network the new typing was appended to the sent text, then
    // erased with it). A send that fails stays in the transcript as the user's message, "Not
    // sent" / "Maybe not sent" with Retry, so the composer keeps no copy either way (one invited
    // a second Send of a message Retry may already have delivered), and the failure is not
    // repeated in a banner, which stayed after Retry succeeded (a new-user trial).
    setDraft("");
    const sent = await run(() => handle.send(text, stalled ? { interrupt: true } : {}));
    if (!sent) setActionError(null);
    setFocusNext("composer");
  };
  // A message waiting for the session: sent once it opened (or the page shows why it cannot go:
  // a card the history brought back, say); if it failed to open, it stays in the composer, no
  // longer "sending" (the page says why; a re-check saw the hint promise a send that never came).
  useEffect(() => {
    if (!sendOnOpen || opening) return;
    setSendOnOpen(false);
    // `submit` is this render's (it reads this render's `canSend`); only the opening matters.
    if (session) void submit();
  }, [session, opening, sendOnOpen]);
  const respond = async (action: () => Promise<string | void>) => {
    expectTurn();
    setFocusNext((await run(action)) ? "composer" : "pending");
  };

  return (
    <>
      <main className="main" aria-label={`Chat with ${stored.agent}`} {...panelProps(layout, "chat")}>
        <LiveRegions {...announcements} />
        <div className="session-head">
          <div>
            <h1>
              <span data-testid="agent-name">{stored.agent}</span>
              {info && <span className="muted subtitle">{info.blurb}</span>}
            </h1>
            <code className="muted small" data-testid="session-id">
              {stored.id}
            </code>
          </div>
          <div className="session-controls">
            {/* Opening failed: the badge says so too (a trial saw "idle" beside "Could not open
                the session"), and its Refresh opens the session again. */}
            <ConnectionBadge snapshot={openError ? { ...snapshot, connection: { status: "failed", turnId: null }, error: openError } : snapshot} onRefresh={openError ? handle.reopen : handle.refresh} />
            <button type="button" data-testid="drop-connection" disabled={!canDrop} onClick={() => session?.dropConnection()} title="Simulate a network failure; the SDK reconnects">
              Drop connection
            </button>
            {turnRunning && (
              <button
                type="button"
                className="danger"
                data-testid="cancel"
                onClick={() => {
                  const turn = runningTurn;
                  void respond(async () => {
                    await handle.cancel();
                    setStopFor(turn);
                  });
                }}
              >
                {stopping ? "Stopping…" : "Cancel"}
              </button>
            )}
          </div>
        </div>
        {openError && (
          <div className="banner banner-error" role="alert" data-testid="error">
            Could not open the session — {openError.code}
            {openError.status ? ` ${openError.status}` : ""}: {openError.message}{" "}
            <button type="button" className="link" data-testid="reopen" onClick={handle.reopen}>
              Try again
            </button>
          </div>
        )}
        {/* A send whose outcome is unknown, or that the server showed was never created, says so
            on its message ("Maybe not sent" / "Not sent", Retry): the same news as a red banner
            too read as a second failure (a session that is gone, `not-found`, still shows it). */}
        {snapshot.error && status === "failed" && !sendFailureOnItsMessage(snapshot) && (
          <div className="banner banner-error" role="alert" data-testid="connection-failure">
            Connection failed — {snapshot.error.code}
            {snapshot.error.status ? ` ${snapshot.error.status}` : ""}: {snapshot.error.message}
          </div>
        )}
        {status === "liveUnavailable" && (
          <div className="banner banner-info" data-testid="live-unavailable">
            The live stream of this turn is gone (412): showing what had arrived and what the server kept of it. Press Refresh to check again — nothing is re-sent — or send a new message, which cancels this turn.
          </div>
        )}
        {stalled && silence.since !== null && (
          <div className="banner banner-info" data-testid="stalled">
            No activity from this turn for {formatSilence(now - silence.since)}, though the server still reports it running: it may be in a long tool call, or its worker may have stopped. The SDK keeps checking — or send a new message, which stops this turn.
          </div>
        )}
        {status === "offline" && (
          <div className="banner banner-info">You are offline; the stream resumes when the network is back.</div>
        )}
        {actionNotice && <Dismissible kind="info" testId="action-conflict" text={actionNotice} onDismiss={() => setActionNotice(null)} />}
        {actionError && <Dismissible kind="error" testId="action-error" text={actionError} onDismiss={() => setActionError(null)} />}
        <div
          className="transcript"
          ref={scroller}
          data-testid="transcript"
          // Focusable, so keyboard users can scroll a transcript that holds no controls.
          tabIndex={0}
          role="region"
          aria-label="Transcript"
          onScroll={(e) => {
            // Growing content never lowers scrollTop, so only the user's own scroll up unpins (a
            // scroll event can arrive after more text was committed, so the gap alone can't tell).
            const el = e.currentTarget;
            const top = el.scrollTop;
            if (el.scrollHeight - top - el.clientHeight < 80) stick.current = true;
            else if (top < lastTop.current - 1) {
              stick.current = false;
              // Not when the scroll brought the focused "Show older" into view (Tab): that
              // button is the keyboard's way, one press one window. `:focus-visible`: after a
              // mouse click it keeps focus unseen, and a scroll to the top then loaded nothing.
              const active = document.activeElement;
              const focusedOlder = active instanceof HTMLElement && active.classList.contains("show-older") && active.matches(":focus-visible");
              if (top < 80 && snapshot.olderTurns > 0 && !focusedOlder) showOlder();
            }
            lastTop.current = top;
          }}
        >
          <div className="transcript-content" ref={content}>
            {session ? <Transcript snapshot={snapshot} onShowOlder={showOlder} /> : !openError && <p className="empty">Opening session…</p>}
            <PendingPanel pending={snapshot.pending} messages={snapshot.messages} busy={busy} onRespond={(d: Decision[]) => void respond(() => handle.respond(d))} onContinueAfterAuth={() => void respond(() => handle.continueAfterAuth())} />
          </div>
        </div>
        <form
          className="composer"
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <label htmlFor="composer-input" className="sr-only">
            Message to {stored.agent}
          </label>
          <textarea
            id="composer-input"
            ref={composer}
            data-testid="composer"
            value={draft}
            rows={2}
            placeholder={blocked?.placeholder ?? (info ? `e.g. ${info.example}` : "Message")}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
                e.preventDefault();
                void submit();
              }
            }}
          />
          <div className="composer-side">
            {info && !draft && !running && snapshot.pending.length === 0 && (
              <button type="button" className="link small" data-testid="use-example" onClick={() => setDraft(info.example)}>
                Use example
              </button>
            )}
            {sendBlocked && (
              <span className="composer-hint" id="composer-hint" data-testid="composer-hint">
                {sendBlocked}
              </span>
            )}
            <button type="submit" className="primary" data-testid="send" disabled={!canSubmit} aria-describedby={sendBlocked ? "composer-hint" : undefined}>
              Send
            </button>
          </div>
        </form>
      </main>
      <aside className="inspector" aria-label="Inspector" {...panelProps(layout, "inspector")}>
        <UsagePanel usage={snapshot.usage} />
        <Timeline session={session} />
      </aside>
    </>
  );
}

const root = document.getElementById("root");
if (root)
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
