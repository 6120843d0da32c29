import { test, expect, type Page } from "@playwright/test";
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { lastTurnId, newSession, sendMessage, shot } from "./helpers";

// What an app meets when the TrueForge server dies under it (issue 17), shown by the demo:
// - a crash (`kill -9`; here the emulator's `crash-after-events` fault, which leaves exactly
//   what a crash leaves: the turn `running` forever, its live stream gone, subscribe 412) —
//   the SDK says live updates are unavailable, and a new turn cancels the stuck one;
// - a graceful shutdown (SIGTERM) mid-stream: the stream ends with `turn.done`
//   `cancelled`/`abandoned`, and the page shows it.

const root = join(__dirname, "..", "..");

/** The emulator binary scripts/test built (honours CARGO_TARGET_DIR like scripts/test). */
function serverBinary(): string {
  const target = process.env.CARGO_TARGET_DIR ?? "target";
  return join(isAbsolute(target) ? target : join(root, target), "debug", "forgestream-server");
}

/** A private emulator serving the demo, on a free loopback port, with a database file. */
async function startEmulator(dbDir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    serverBinary(),
    ["--addr", "127.0.0.1:0", "--db", join(dbDir, "db.sqlite"), "--www", join(root, "www", "dist"), "--pace-ms", "2"],
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

/** The demo's "Send" as a user sees it. */
function sendButton(page: Page) {
  return page.getByTestId("send");
}

test.describe("a turn stuck running after a crash", () => {
  // `?fault=` rides on every request as `x-forgestream-fault` and is stored on the session:
  // the session's first turn "crashes" after 8 frames (`once`), later turns behave.
  const fault = "?fault=crash-after-events=8,once";

  test("the SDK shows live updates unavailable and the turn running", async ({ page, request }) => {
    const refused: string[] = [];
    page.on("response", (r) => {
      if (r.status() === 412) refused.push(new URL(r.url()).pathname);
    });
    const sid = await newSession(page, "storyteller", fault);
    await sendMessage(page, "Tell a story, 400 words, 20 ms");
    const stuck = await lastTurnId(page);
    // The stream was cut; the SDK checks the turn (running), resubscribes, gets 412, rebuilds
    // from the listings and settles: no loop, a banner, the turn still running.
    await expect(page.getByTestId("connection")).toHaveText("liveUnavailable", { timeout: 20_000 });
    await expect(page.getByTestId("live-unavailable")).toBeVisible();
    await expect(page.locator(`[data-testid="turn"][data-turn-id="${stuck}"]`)).toHaveAttribute("data-status", "running");
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((p) => p.endsWith("/subscribe"))).toBe(true);
    // What the server says: running, with no worker left to finish it.
    const res = await request.get(`/api/v1/sessions/${sid}/turns/${encodeURIComponent(stuck)}`);
    expect(((await res.json()) as { data: { state: unknown } }).data.state).toEqual({ status: "running" });
    await shot(page, "crash-live-unavailable");
  });

  test("the user can send a new turn, which cancels the stuck one", async ({ page, request }) => {
    const sid = await newSession(page, "storyteller", fault);
    await sendMessage(page, "Tell a story, 400 words, 20 ms");
    const stuck = await lastTurnId(page);
    await expect(page.getByTestId("connection")).toHaveText("liveUnavailable", { timeout: 20_000 });

    // The only way on with TrueForge is a new turn: the demo keeps Send enabled for a turn
    // without a live stream, and the SDK sends it (no `turn-running`: the stuck turn can never
    // finish, and the new turn is what cancels it on the server).
    await page.getByTestId("composer").fill("Tell a story, 20 words");
    await expect(sendButton(page)).toBeEnabled();
    await sendButton(page).click();
    await expect(page.getByTestId("action-error")).toHaveCount(0);
    await expect(page.getByTestId("turn")).toHaveCount(2);
    await expect(page.getByTestId("turn-status").last()).toHaveText("done", { timeout: 30_000 });
    // The stuck turn is shown as the server now has it: cancelled for the next turn.
    const stuckTurn = page.locator(`[data-testid="turn"][data-turn-id="${stuck}"]`);
    await expect(stuckTurn).toHaveAttribute("data-status", "cancelled");
    await expect(stuckTurn).toContainText("cancelled-for-next-turn");
    await expect(page.getByTestId("live-unavailable")).toHaveCount(0);
    const res = await request.get(`/api/v1/sessions/${sid}/turns/${encodeURIComponent(stuck)}`);
    const state = ((await res.json()) as { data: { state: { status: string; reason?: string } } }).data.state;
    expect(state).toMatchObject({ status: "cancelled", reason: "cancelled-for-next-turn" });
    await shot(page, "crash-new-turn-cancels-stuck");
  });

  test("Cancel ends the stuck turn and the user can go on", async ({ page, request }) => {
    const sid = await newSession(page, "storyteller", fault);
    await sendMessage(page, "Tell a story, 400 words, 20 ms");
    const stuck = await lastTurnId(page);
    await expect(page.getByTestId("connection")).toHaveText("liveUnavailable", { timeout: 20_000 });
    await page.getByTestId("cancel").click();
    const stuckTurn = page.locator(`[data-testid="turn"][data-turn-id="${stuck}"]`);
    await expect
      .poll(async () => {
        const res = await request.get(`/api/v1/sessions/${sid}/turns/${encodeURIComponent(stuck)}`);
        return ((await res.json()) as { data: { state: { reason?: string } } }).data.state.reason;
      })
      .toBe("client-cancelled");
    // No stream brings this turn's `turn.done`: once the cancel returned, the SDK reads the turn
    // again and shows it as the server has it.
    await expect(stuckTurn).toHaveAttribute("data-status", "cancelled", { timeout: 10_000 });
    await expect(stuckTurn).toContainText("client-cancelled");
    await expect(page.getByTestId("live-unavailable")).toHaveCount(0);
    await sendMessage(page, "Tell a story, 20 words");
    await expect(page.getByTestId("turn")).toHaveCount(2);
    await expect(page.getByTestId("turn-status").last()).toHaveText("done", { timeout: 30_000 });
    await shot(page, "crash-cancel-then-go-on");
  });
});

test("a graceful shutdown mid-stream shows the turn abandoned", async ({ page }) => {
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
    await expect(page.getByTestId("connection")).toHaveText("done");
    await shot(page, "shutdown-abandoned");
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dbDir, { recursive: true, force: true });
  }
});
