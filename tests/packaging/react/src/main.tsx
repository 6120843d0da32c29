// A minimal consumer of the published package: the React adapter, a storyteller session, one
// message, the streamed text and the connection status (data-testid hooks for check.mjs).
import { StrictMode, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { AgentClient, init, version, type ContentView, type SessionSnapshot } from "forgestream";
import { useAgentSession } from "forgestream/react";

function plain(content: ContentView | null | undefined): string {
  if (content === undefined || content === null) return "";
  return typeof content === "string" ? content : content.map((p) => (p.type === "text" ? p.text : "")).join("");
}

/** The message text of the newest turn. */
function lastText(snapshot: SessionSnapshot): string {
  const turn = snapshot.turns.at(-1);
  return turn ? turn.items.map((item) => (item.body.kind === "message" ? plain(item.body.content) : "")).join("") : "";
}

function Chat({ client }: { client: AgentClient }) {
  const { session, snapshot, error, send } = useAgentSession(client, { restore: false, create: { agent: { name: "storyteller" } } });
  const [sendError, setSendError] = useState<string | null>(null);
  const turn = snapshot.turns.at(-1);
  return (
    <main>
      <p>
        session <code data-testid="session-id">{session?.id ?? ""}</code> — connection{" "}
        <strong data-testid="connection">{snapshot.connection.status}</strong> — turn{" "}
        <strong data-testid="turn-status">{turn?.status ?? "none"}</strong>
      </p>
      {error && <p data-testid="error">{`${error.code}: ${error.message}`}</p>}
      {sendError && <p data-testid="error">{sendError}</p>}
      <button
        type="button"
        data-testid="send"
        disabled={!session || turn?.status === "running"}
        onClick={() => send("Tell a story, 120 words, 8 ms").catch((e: unknown) => setSendError(String(e)))}
      >
        Send
      </button>
      <p data-testid="text">{lastText(snapshot)}</p>
    </main>
  );
}

function App() {
  const [client, setClient] = useState<AgentClient | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  useEffect(() => {
    init().then(
      () => setClient(new AgentClient({ baseUrl: "", flavor: "trueforge", storage: "memory" })),
      (e: unknown) => setFailure(String(e)),
    );
  }, []);
  if (failure) return <p data-testid="error">{failure}</p>;
  if (!client) return <p>loading…</p>;
  return (
    <>
      <h1>
        forgestream <span data-testid="core-version">{version()}</span> (React)
      </h1>
      <Chat client={client} />
    </>
  );
}

createRoot(document.getElementById("app")!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
