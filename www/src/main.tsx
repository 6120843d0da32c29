import { StrictMode, useEffect, useState } from "react";
import { createRoot } from "react-dom/client";
import { init, version } from "forgestream";

function App() {
  const [coreVersion, setCoreVersion] = useState<string>();
  useEffect(() => {
    void init().then(() => setCoreVersion(version()));
  }, []);
  return (
    <main>
      <h1>forgestream</h1>
      <p>
        core: <span data-testid="core-version">{coreVersion ?? "loading…"}</span>
      </p>
    </main>
  );
}

const root = document.getElementById("root");
if (root) createRoot(root).render(<StrictMode><App /></StrictMode>);
