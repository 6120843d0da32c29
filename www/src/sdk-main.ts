/**
 * A bare page for the e2e tests of the SDK itself (tests/e2e/engine.spec.ts): the package,
 * initialised, on `window.forgestream`. No UI: the tests drive the public API and read what an
 * app would read (snapshots, promise results).
 */
import * as forgestream from "forgestream";
import { useAgentSession } from "forgestream/react";
import * as React from "react";
import { createRoot } from "react-dom/client";

declare global {
  interface Window {
    forgestream: typeof forgestream;
    /** Releases a session handle: `close()` (builds before it had only `disconnect()`). */
    release: (session: unknown) => void;
    /** The React adapter and what it needs to render a component (tests of `useAgentSession`). */
    forgestreamReact: { React: typeof React; createRoot: typeof createRoot; useAgentSession: typeof useAgentSession };
  }
}

await forgestream.init();
window.forgestream = forgestream;
window.forgestreamReact = { React, createRoot, useAgentSession };
window.release = (session) => {
  const s = session as { close?: () => void; disconnect: () => void } | null;
  if (s?.close) s.close();
  else s?.disconnect();
};
document.getElementById("status")!.textContent = "ready";
