// Field cases on the default turn-items path (turnItems: "onRead"): what an app reads from
// `turn.items` (before, during, after a stream; after reloads, rebuilds and faults) against the
// engine's digest at each publication, the full path ("all") and what the server persisted.
import { test, type APIRequestContext, type Page } from "@playwright/test";
import { expect } from "./expect";
import { join } from "node:path";

const HARNESS = join(__dirname, "field", "harness.js");

async function open(page: Page): Promise<void> {
  await page.addInitScript({ path: HARNESS });
  await page.goto("/sdk.html");
  await expect(page.locator("#status")).toHaveText("ready");
}

/** Creates a session of `agent` on a lazy client (fault header `fault`) and watches it as window.__s. */
async function createWatched(page: Page, agent: string, fault?: string, opts: { pNow?: number; pLater?: number } = {}): Promise<string> {
  return page.evaluate(
    async ({ agent, fault, opts }) => {
      const fh = (window as any).__fh;
      const c = fh.client(undefined, fault);
      const s = await c.createSession({ agent: { name: agent } });
      (window as any).__c = c;
      (window as any).__s = s;
      fh.watch(s, "main", opts);
      return s.id as string;
    },
    { agent, fault, opts },
  );
}

async function send(page: Page, text: string): Promise<string> {
  return page.evaluate((text) => (window as any).__s.send(text), text);
}

async function waitConn(page: Page, statuses: string[], timeout = 60_000): Promise<void> {
  await page.waitForFunction((st) => st.includes((window as any).__s.getSnapshot().connection.status), statuses, { timeout, polling: 50 });
}

/** Everything compared at the end: lazy view read now vs the digest, vs a fresh "all" client's load, vs a fresh lazy load. */
/** Waits until the server's turn listing says `turnId` is done (its worker finished after a 412). */
async function serverSaysDone(request: APIRequestContext, sid: string, turnId: string): Promise<void> {
  await expect(async () => {
    const res = await request.get(`/api/v1/sessions/${sid}/turns/${encodeURIComponent(turnId)}`);
    expect(((await res.json()) as any).data.state.status).toBe("done");
  }).toPass({ timeout: 40_000 });
}

async function finalChecks(page: Page, sid: string): Promise<void> {
  const r = await page.evaluate(async (sid) => {
    const fh = (window as any).__fh;
    const s = (window as any).__s;
    const snap = s.getSnapshot();
    const lazy = fh.final(snap);
    const lazyRaw = fh.finalRaw(snap);
    const digest = fh.digestFinal(s);
    const messages = fh.messages(snap);
    const all = fh.client("all", undefined, "field-all-" + Math.random());
    const a = all.session(sid);
    await a.load();
    const allSnap = a.getSnapshot();
    const fresh = fh.client(undefined, undefined, "field-fresh-" + Math.random());
    const f = fresh.session(sid);
    await f.load();
    const freshSnap = f.getSnapshot();
    const out = {
      lazy, lazyRaw, digest, messages,
      all: fh.final(allSnap), allRaw: fh.finalRaw(allSnap), allMessages: fh.messages(allSnap),
      fresh: fh.final(freshSnap), freshMessages: fh.messages(freshSnap),
      mismatches: fh.mismatches, reads: fh.reads, published: fh.published,
    };
    a.close();
    f.close();
    return out;
  }, sid);
  console.log(`published ${r.published}, checked reads ${r.reads}, mismatches ${r.mismatches.length}`);
  if (r.mismatches.length) console.log(JSON.stringify(r.mismatches.slice(0, 3), null, 1));
  expect(r.mismatches, "reads during the stream equal the engine's digest").toEqual([]);
  expect(r.lazy, "lazy final = digest").toEqual(r.digest);
  expect(r.lazy, "lazy final = persisted (all client load)").toEqual(r.all);
  expect(r.fresh, "fresh lazy load = fresh all load").toEqual(r.all);
  expect(r.freshMessages, "messages fresh lazy = all").toEqual(r.allMessages);
}

test.describe("field cases, turnItems onRead", () => {
  test.beforeEach(async ({ page }) => {
    await open(page);
  });

  test("plain stream, two turns; earlier turn read before, during and after", async ({ page }) => {
    const sid = await createWatched(page, "storyteller");
    await send(page, "Tell a story, 200 words, 5 ms");
    await waitConn(page, ["done"]);
    // Read turn 1 before turn 2 starts, then again during it.
    await page.evaluate(() => void (window as any).__s.getSnapshot().turns[0].items);
    await send(page, "Tell a story, 300 words, 10 ms");
    await waitConn(page, ["done"]);
    await finalChecks(page, sid);
  });

  for (const [name, fault] of [
    ["drop after events (reconnect after the last sequence number)", "drop-after-events=15,times=3"],
    ["drop mid-frame", "drop-at-byte=900,times=2"],
    ["split frames", "split=1..7"],
    ["duplicate frames (server ignores the cursor)", "ignore-cursor,drop-after-events=20,times=2"],
    ["end without done", "end-without-done,once"],
  ] as const) {
    test(`fault: ${name}`, async ({ page }) => {
      const sid = await createWatched(page, "storyteller", fault);
      await send(page, "Tell a story, 250 words, 5 ms");
      await waitConn(page, ["done"]);
      await send(page, "Tell a story, 150 words, 5 ms");
      await waitConn(page, ["done"]);
      await finalChecks(page, sid);
    });
  }

  test("paused turn continued (approval), items read while paused and after", async ({ page }) => {
    const sid = await createWatched(page, "support", undefined, { pNow: 1, pLater: 1 });
    await send(page, "Refund €49.50 on ORD-2031, it arrived broken");
    await page.waitForFunction(() => (window as any).__s.getSnapshot().pending.length > 0, null, { timeout: 30_000 });
    const pendingCall = await page.evaluate(() => {
      const s = (window as any).__s.getSnapshot();
      void s.turns.map((t: any) => t.items);
      return s.pending[0].toolCallId as string;
    });
    await page.evaluate((id) => (window as any).__s.respond([(window as any).forgestream.approve(id)]), pendingCall);
    await waitConn(page, ["done"]);
    await finalChecks(page, sid);
  });

  test("interrupted turn (cancel) and interrupt by a newer turn", async ({ page }) => {
    const sid = await createWatched(page, "storyteller");
    await send(page, "Tell a story, 2000 words, 20 ms");
    await page.waitForFunction(() => ((window as any).__s.getSnapshot().turns[0]?.items[0]?.body.content ?? "").length > 100);
    await page.evaluate(() => (window as any).__s.cancel());
    await waitConn(page, ["done", "idle", "cancelled"]);
    await page.waitForTimeout(300);
    const stopped = await page.evaluate(() => (window as any).__fh.messages((window as any).__s.getSnapshot()));
    console.log("after cancel:", stopped.slice(0, 300));
    await send(page, "Tell a story, 2000 words, 20 ms");
    await page.waitForFunction(() => ((window as any).__s.getSnapshot().turns[1]?.items[0]?.body.content ?? "").length > 100);
    await page.evaluate(() => (window as any).__s.send("Tell a story, 100 words, 5 ms", { interrupt: true }));
    await waitConn(page, ["done"]);
    await page.waitForTimeout(300);
    // The stopped text stays in the live view (interrupted): the lazy path must show it too.
    const live = await page.evaluate(() => {
      const s = (window as any).__s.getSnapshot();
      return s.turns.map((t: any) => t.items.filter((i: any) => i.body.kind === "message").map((i: any) => ({ n: (i.body.content ?? "").length, interrupted: i.body.interrupted })));
    });
    console.log("live items:", JSON.stringify(live));
    expect(live[0][0].interrupted).toBe(true);
    expect(live[1][0].interrupted).toBe(true);
    const msgs = await page.evaluate(() => (window as any).__s.getSnapshot().messages.filter((m: any) => m.kind === "assistant").map((m: any) => m.interrupted));
    expect(msgs).toEqual([true, true, false]);
    const r = await page.evaluate(() => (window as any).__fh.mismatches);
    expect(r).toEqual([]);
    void sid;
  });

  /** Reads some turns' items now (an app rendering part of the view). */
  async function readSome(page: Page): Promise<void> {
    await page.evaluate(() => {
      const snap = (window as any).__s.getSnapshot();
      for (const t of snap.turns) if (Math.random() < 0.7) void t.items;
    });
  }

  /** Reloads the page and restores the session as {@link restoreWatched} does. */
  async function reloadAndRestore(page: Page): Promise<void> {
    await page.reload();
    await expect(page.locator("#status")).toHaveText("ready");
    await restoreWatched(page);
  }

  /** After a reload: restore the session on a lazy client, watching the early handle (history as it loads). */
  async function restoreWatched(page: Page, fault?: string): Promise<void> {
    await page.evaluate(async (fault) => {
      const fh = (window as any).__fh;
      const c = fh.client(undefined, fault);
      (window as any).__c = c;
      const s = await c.restore({
        onOpen: (h: any) => {
          (window as any).__s = h;
          fh.watch(h, "early", { pNow: 0.7, pLater: 0.7 });
        },
      });
      if (!s) throw new Error("nothing restored");
      (window as any).__restored = s;
    }, fault);
  }

  test("reload mid-stream: items read before, during the history load and after", async ({ page }) => {
    const sid = await createWatched(page, "storyteller");
    await send(page, "Tell a story, 100 words, 5 ms");
    await waitConn(page, ["done"]);
    await send(page, "Tell a story, 700 words, 30 ms");
    await page.waitForFunction(() => ((window as any).__s.getSnapshot().turns[1]?.items[0]?.body.content ?? "").length > 150);
    await readSome(page);
    await reloadAndRestore(page);
    await waitConn(page, ["done"], 60_000);
    await finalChecks(page, sid);
  });

  test("reload while paused, approve after the reload", async ({ page }) => {
    const sid = await createWatched(page, "support");
    await send(page, "Refund €49.50 on ORD-2031, it arrived broken");
    await page.waitForFunction(() => (window as any).__s.getSnapshot().pending.length > 0, null, { timeout: 30_000 });
    await reloadAndRestore(page);
    const id = await page.evaluate(() => {
      const s = (window as any).__s.getSnapshot();
      return s.pending[0].toolCallId as string;
    });
    const parts = await page.evaluate(() => (window as any).__fh.messages((window as any).__s.getSnapshot()));
    console.log("paused after reload:", parts);
    expect(parts).toContain("awaiting-approval");
    await page.evaluate((id) => (window as any).__s.respond([(window as any).forgestream.approve(id)]), id);
    await waitConn(page, ["done"]);
    await finalChecks(page, sid);
  });

  test("412 after reload: rebuild, live unavailable, refresh", async ({ page, request }) => {
    const sid = await createWatched(page, "storyteller", "force-412,on=subscribe");
    await send(page, "Tell a story, 400 words, 30 ms");
    await page.waitForFunction(() => ((window as any).__s.getSnapshot().turns[0]?.items[0]?.body.content ?? "").length > 100);
    await readSome(page);
    await reloadAndRestore(page);
    await waitConn(page, ["liveUnavailable", "done"], 30_000);
    const mid = await page.evaluate(() => (window as any).__fh.final((window as any).__s.getSnapshot()));
    console.log("after 412 rebuild:", JSON.stringify(mid).slice(0, 300));
    const turnId = mid[0].turnId;
    await serverSaysDone(request, sid, turnId);
    await page.evaluate(() => (window as any).__s.refresh());
    await waitConn(page, ["done"], 30_000);
    await finalChecks(page, sid);
  });

  test("412 without a reload: a held (read) turn rebuilt from the listings", async ({ page, request }) => {
    const sid = await createWatched(page, "storyteller", "force-412,on=subscribe", { pNow: 1, pLater: 1 });
    await send(page, "Tell a story, 400 words, 30 ms");
    await page.waitForFunction(() => ((window as any).__s.getSnapshot().turns[0]?.items[0]?.body.content ?? "").length > 100);
    await readSome(page);
    await page.evaluate(() => (window as any).__s.dropConnection());
    await waitConn(page, ["liveUnavailable", "done"], 30_000);
    const mid = await page.evaluate(() => ({ lazy: (window as any).__fh.final((window as any).__s.getSnapshot()), digest: (window as any).__fh.digestFinal((window as any).__s) }));
    expect(mid.lazy).toEqual(mid.digest);
    const turnId = mid.lazy[0].turnId;
    await serverSaysDone(request, sid, turnId);
    await page.evaluate(() => (window as any).__s.refresh());
    await waitConn(page, ["done"], 30_000);
    await finalChecks(page, sid);
  });

  test("crashed worker (turn left running), then a new turn", async ({ page }) => {
    const sid = await createWatched(page, "storyteller", "crash-after-events=10,once", { pNow: 1, pLater: 1 });
    await send(page, "Tell a story, 300 words, 10 ms");
    await waitConn(page, ["liveUnavailable", "stalled", "failed", "done"], 40_000);
    const st = await page.evaluate(() => (window as any).__s.getSnapshot().connection.status);
    console.log("after crash:", st);
    await readSome(page);
    await send(page, "Tell a story, 100 words, 5 ms");
    await waitConn(page, ["done"], 40_000);
    await finalChecks(page, sid);
  });

  test("two tabs on one session: the follower reads relayed items; the leader closes mid-stream", async ({ page, context }) => {
    const sid = await createWatched(page, "storyteller");
    await send(page, "Tell a story, 100 words, 5 ms");
    await waitConn(page, ["done"]);
    await send(page, "Tell a story, 900 words, 25 ms");
    await page.waitForFunction(() => ((window as any).__s.getSnapshot().turns[1]?.items[0]?.body.content ?? "").length > 100);
    const b = await context.newPage();
    await open(b);
    await restoreWatched(b);
    const role = await b.evaluate(() => (window as any).__s.getSnapshot().connection.role);
    console.log("tab B role:", role);
    await b.waitForFunction(() => ((window as any).__s.getSnapshot().turns[1]?.items[0]?.body.content ?? "").length > 400, null, { timeout: 30_000 });
    await readSome(b);
    await page.close();
    await b.waitForFunction(() => (window as any).__s.getSnapshot().connection.status === "done", null, { timeout: 60_000 });
    const roleAfter = await b.evaluate(() => (window as any).__s.getSnapshot().connection.role);
    console.log("tab B role after A closed:", roleAfter);
    await finalChecks(b, sid);
  });

  test("two tabs, both open through the stream; each checked against persisted", async ({ page, context }) => {
    const sid = await createWatched(page, "storyteller", undefined, { pNow: 0.3, pLater: 0.3 });
    const b = await context.newPage();
    await open(b);
    await restoreWatched(b);
    await send(page, "Tell a story, 500 words, 10 ms");
    await waitConn(page, ["done"]);
    await b.waitForFunction(() => (window as any).__s.getSnapshot().connection.status === "done" || (window as any).__s.getSnapshot().turns[0]?.status === "done", null, { timeout: 60_000 });
    await b.waitForTimeout(300);
    await finalChecks(page, sid);
    await finalChecks(b, sid);
  });

  test("server restart mid-stream (SIGTERM drains the turn; same port and database)", async ({ page }) => {
    test.skip(!process.env.FIELD_SERVER_PID_FILE, "needs FIELD_SERVER_PID_FILE and FIELD_SERVER_CMD");
    const { readFileSync, writeFileSync, openSync } = await import("node:fs");
    const { spawn } = await import("node:child_process");
    const sid = await createWatched(page, "storyteller", undefined, { pNow: 1, pLater: 1 });
    await send(page, "Tell a story, 100 words, 5 ms");
    await waitConn(page, ["done"]);
    await send(page, "Tell a story, 900 words, 25 ms");
    await page.waitForFunction(() => ((window as any).__s.getSnapshot().turns[1]?.items[0]?.body.content ?? "").length > 150);
    await readSome(page);
    const pidFile = process.env.FIELD_SERVER_PID_FILE!;
    const old = Number(readFileSync(pidFile, "utf8").trim());
    process.kill(old, "SIGTERM");
    for (let i = 0; i < 100; i++) {
      try {
        process.kill(old, 0);
        await new Promise((r) => setTimeout(r, 100));
      } catch {
        break;
      }
    }
    await page.waitForTimeout(500);
    const cmd = JSON.parse(process.env.FIELD_SERVER_CMD!) as string[];
    const out = openSync("/tmp/field/server.out", "a");
    const child = spawn(cmd[0]!, cmd.slice(1), { detached: true, stdio: ["ignore", out, out] });
    child.unref();
    writeFileSync(pidFile, String(child.pid));
    await waitConn(page, ["done", "idle", "failed"], 60_000);
    const st = await page.evaluate(() => ({ c: (window as any).__s.getSnapshot().connection.status, t: (window as any).__s.getSnapshot().turns.map((t: any) => t.status + "/" + (t.cancelReason ?? "")) }));
    console.log("after restart:", JSON.stringify(st));
    await finalChecks(page, sid);
    // A new turn after the restart.
    await send(page, "Tell a story, 100 words, 5 ms");
    await waitConn(page, ["done"]);
    await finalChecks(page, sid);
  });

  for (const [agent, text, fault] of [
    ["researcher", "Research the history of lanterns", undefined],
    ["researcher", "Research the history of lanterns", "drop-after-events=12,times=3,split=1..9"],
    ["flaky", "hello", undefined],
    ["flaky", "hello", "drop-after-events=3,once"],
    ["support", "Where is ORD-4821?", "ignore-cursor,drop-after-events=6,times=2"],
  ] as const) {
    test(`agent ${agent}${fault ? ` with ${fault}` : ""}: reads at every publication and later`, async ({ page }) => {
      const sid = await createWatched(page, agent, fault, { pNow: 1, pLater: 1 });
      await send(page, text);
      await waitConn(page, ["done", "failed", "idle"], 60_000);
      await page.waitForTimeout(200);
      await send(page, agent === "flaky" ? "ok now" : text);
      await waitConn(page, ["done", "failed", "idle"], 60_000);
      await page.waitForTimeout(200);
      await finalChecks(page, sid);
    });
  }

  test("concierge question answered; github auth continued", async ({ page }) => {
    const sid = await createWatched(page, "concierge", undefined, { pNow: 1, pLater: 1 });
    await send(page, "Book me a table");
    await page.waitForFunction(() => (window as any).__s.getSnapshot().pending.length > 0, null, { timeout: 30_000 });
    const p = await page.evaluate(() => (window as any).__s.getSnapshot().pending[0]);
    console.log("question:", JSON.stringify(p).slice(0, 300));
    await page.evaluate((p) => (window as any).__s.respond([(window as any).forgestream.answer(p.toolCallId, p.question?.options?.[0] ?? "yes")]), p);
    await waitConn(page, ["done"], 30_000);
    await finalChecks(page, sid);
  });
});
