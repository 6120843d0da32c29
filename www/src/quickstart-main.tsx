/**
 * The README's React quickstart, as a page the e2e tests drive (tests/e2e/chat-*.spec.ts): the
 * same component, in `<StrictMode>` as Vite's template renders it, with `data-testid`s added and
 * the agent taken from `?agent=` (default `support`) and the history window's size from
 * `?turns=` (default 20, the SDK's). Keep it in step with the README.
 */
import { StrictMode, useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { createRoot } from "react-dom/client";
import { AgentClient, approve, deny, init, type AssistantPart, type ChatMessage } from "forgestream";
import { useAgentSession } from "forgestream/react";

const params = new URLSearchParams(location.search);
const agent = params.get("agent") ?? "support";
const turns = params.get("turns");
const shownTurns = turns ? Number(turns) : undefined;

function Part({ part, respond }: { part: AssistantPart; respond: ReturnType<typeof useAgentSession>["respond"] }) {
  switch (part.kind) {
    case "text":
      return <p data-testid="text" data-interrupted={part.interrupted} style={{ whiteSpace: "pre-wrap" }}>{part.text}</p>;
    case "reasoning":
      return <details><summary>thinking</summary>{part.text}</details>;
    case "tool":
      return (
        <div data-testid="tool" data-state={part.state}>
          {part.name}: {part.state}
          {part.state === "awaiting-approval" && (
            <>
              <button onClick={() => void respond([approve(part.toolCallId)]).catch(() => {})}>Allow</button>
              <button onClick={() => void respond([deny(part.toolCallId, "not now")]).catch(() => {})}>Deny</button>
            </>
          )}
        </div>
      );
    default:
      return null;
  }
}

function Message({ m, respond }: { m: ChatMessage; respond: ReturnType<typeof useAgentSession>["respond"] }) {
  if (m.kind === "user") {
    return (
      <p data-testid="user-message" data-state={m.state}>
        You: {m.text}
        {m.state === "pending" && <em> (sending…)</em>}
        {m.state === "failed" && <em> (not sent: {m.error.message})</em>}
        {m.state === "unknown" && <em> (may not have been sent: {m.error.message})</em>}
        {(m.state === "failed" || m.state === "unknown") && <button onClick={() => void m.retry().catch(() => {})}>Retry</button>}
      </p>
    );
  }
  if (m.kind === "assistant") {
    return (
      <div data-testid="assistant-message">
        {m.parts.map((p) => <Part key={p.key} part={p} respond={respond} />)}
        {m.interrupted && <em data-testid="stopped">stopped</em>}
      </div>
    );
  }
  return null;
}

/**
 * Shows older messages above what the user reads, keeping it in place on screen (the distance
 * from the page's bottom is restored once React rendered the longer list): on "Show older", and
 * when the user scrolls up to within 80 px of the page's top while older turns remain. One
 * widening at a time: a scroll and a click in the same moment add one window, not two.
 */
function useShowOlder(messages: readonly ChatMessage[], olderTurns: number, showOlder: () => void): () => void {
  const fromBottom = useRef<number | null>(null);
  // A session opens at its newest message, the end of the page (once: later it is the user's;
  // a trial found a reloaded long session at the top, the newest turn out of sight below).
  const opened = useRef(false);
  useLayoutEffect(() => {
    if (!opened.current && messages.length > 0) {
      opened.current = true;
      window.scrollTo(0, document.documentElement.scrollHeight);
    }
    if (fromBottom.current === null) return;
    window.scrollTo(0, document.documentElement.scrollHeight - fromBottom.current);
    fromBottom.current = null;
  }, [messages]);
  const older = useCallback(() => {
    if (fromBottom.current !== null) return;
    fromBottom.current = document.documentElement.scrollHeight - window.scrollY;
    showOlder();
  }, [showOlder]);
  useEffect(() => {
    if (olderTurns === 0) return;
    let lastY = window.scrollY;
    const onScroll = () => {
      // Not when Tab brought the focused "Show older" into view: pressing it is the keyboard's way.
      // `:focus-visible`, not focus: a button clicked with the mouse keeps focus, unseen, and
      // scrolling to the top after a click loaded nothing more (a new-user trial).
      const active = document.activeElement;
      const tabbed = active instanceof HTMLElement && active.dataset.older !== undefined && active.matches(":focus-visible");
      if (window.scrollY < lastY && window.scrollY < 80 && !tabbed) older();
      lastY = window.scrollY;
    };
    window.addEventListener("scroll", onScroll, { passive: true });
    return () => window.removeEventListener("scroll", onScroll);
  }, [olderTurns, older]);
  return older;
}

function Chat({ client }: { client: AgentClient }) {
  // The newest turns first (a screenful, `shownTurns`); `showOlder()` adds older ones above
  // (on "Show older" or a scroll to the top).
  const { messages, olderTurns, showOlder, status, error, send, cancel, respond } = useAgentSession(client, { create: { agent: { name: agent } }, shownTurns });
  const [draft, setDraft] = useState("");
  const older = useShowOlder(messages, olderTurns, showOlder);
  return (
    <main>
      <p>status: <span data-testid="status">{status}</span></p>
      {error && <p role="alert" data-testid="error">{error.code}: {error.message}</p>}
      {olderTurns > 0 && <button data-testid="show-older" data-older onClick={older}>Show older ({olderTurns})</button>}
      {messages.map((m) => <Message key={m.key} m={m} respond={respond} />)}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          // A failure shows in `error` and on the message (with Retry); the promise rejects too.
          void send(draft).catch(() => {});
          setDraft("");
        }}
      >
        <input aria-label="Message" data-testid="composer" value={draft} onChange={(e) => setDraft(e.target.value)} />
        <button data-testid="send" disabled={!draft || (status !== "idle" && status !== "error")}>Send</button>
        {status === "streaming" && <button type="button" data-testid="stop" onClick={() => void cancel().catch(() => {})}>Stop</button>}
      </form>
    </main>
  );
}

await init(); // loads the wasm core once
const client = new AgentClient({ baseUrl: "" }); // "" = same origin
createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <Chat client={client} />
  </StrictMode>,
);
