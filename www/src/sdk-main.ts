/**
 * A bare page for the e2e tests of the SDK itself (tests/e2e/engine.spec.ts): the package,
 * initialised, on `window.forgestream`. No UI: the tests drive the public API and read what an
 * app would read (snapshots, promise results).
 */
import * as forgestream from "forgestream";

declare global {
  interface Window {
    forgestream: typeof forgestream;
    /** Releases a session handle: `close()` (builds before it had only `disconnect()`). */
    release: (session: unknown) => void;
  }
}

await forgestream.init();
window.forgestream = forgestream;
window.release = (session) => {
  const s = session as { close?: () => void; disconnect: () => void } | null;
  if (s?.close) s.close();
  else s?.disconnect();
};
document.getElementById("status")!.textContent = "ready";
