import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { expect } from "../expect";
import type { Check } from "./types";
import { lastTurnId, sendMessage, shot } from "../helpers";

// A graceful shutdown (SIGTERM) of the TrueForge server mid-stream (issue 17): the stream ends
// with `turn.done` `cancelled`/`abandoned`, and the page shows it. The check starts an emulator
// of its own, so that it can stop it. Run in Chromium by tests/e2e/lifecycle.spec.ts and in
// Firefox by tests/e2e/firefox.spec.ts.

const root = join(__dirname, "..", "..", "..");

/** The emulator binary scripts/test built (honours CARGO_TARGET_DIR like scripts/test). */
function serverBinary(): string {
  const target = process.env.CARGO_TARGET_DIR ?? "target";
  return join(isAbsolute(target) ? target : join(root, target), "debug", "forgestream-server");
}

/**
 * A private emulator serving the demo, on a free loopback port, with a database file; `extra`
 * are more flags (e.g. `--token T`).
 */
export async function startEmulator(dbDir: string, extra: string[] = []): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    serverBinary(),
    ["--addr", "127.0.0.1:0", "--db", join(dbDir, "db.sqlite"), "--www", join(root, "www", "dist"), "--pace-ms", "2", ...extra],
    { stdio: ["ignore", "pipe", "inherit"], env: { ...process.env, RUST_LOG: "warn" } },
  );
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`emulator exited (${code})`)));
    lines.once("line", (line) => resolve(line.replace(/^listening on /, "").trim()));
  });
  return { url, child };
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once("exit", (code) => resolve(code));
  });
}

/** A graceful shutdown mid-stream shows the turn abandoned. */
export const gracefulShutdownShowsAbandoned: Check<"page"> = async ({ page }) => {
  const dbDir = mkdtempSync(join(tmpdir(), "forgestream-e2e-"));
  const { url, child } = await startEmulator(dbDir);
  try {
    await page.goto(`${url}/`);
    await page.getByTestId("new-session-storyteller").click();
    await expect(page.getByTestId("agent-name")).toHaveText("storyteller");
    await sendMessage(page, "Tell a story, 2000 words, 20 ms");
    await expect(page.getByTestId("connection")).toHaveText("live");
    await expect(page.getByTestId("message-text").last()).toHaveText(/.{60,}/s);
    const turnId = await lastTurnId(page);

    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
    // The stream ended with `turn.done` cancelled/abandoned before the server went away.
    const turn = page.locator(`[data-testid="turn"][data-turn-id="${turnId}"]`);
    await expect(turn).toHaveAttribute("data-status", "cancelled", { timeout: 10_000 });
    await expect(turn.getByTestId("turn-status")).toHaveText("cancelled");
    await expect(turn).toContainText("abandoned");
    // The badge agrees with the turn: not `done` beside "cancelled · abandoned".
    await expect(page.getByTestId("connection")).toHaveText("cancelled");
    await shot(page, "shutdown-abandoned");
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dbDir, { recursive: true, force: true });
  }
};
