import { expect, test } from "@playwright/test";
import { cyclesLeaveSessionsCollectable } from "./checks/collect";
import { interruptShowsCancelled, concurrentRestoresShareOneSubscribe, joinedRestoreShowsTheHistoryEarly, stalePointerRestoresNull, respondRightAfterRestore, reconnectGapsAboveFloor, twoHandlesOneStream, disconnectShowsIdleAtOnce, reactHandleCloseLeavesNoLiveBadge, openSdk, type Sdk } from "./checks/engine";

// The defects of issue 12, checked where the user sees it (tests/e2e/checks/engine.ts, also run in
// Firefox by firefox.spec.ts). That closed sessions are freed is shown twice: in every engine by
// the collector reporting each handle and listener (checks/collect.ts), and here also by the JS
// heap size after forced collections, which needs CDP (Chromium only).

test("interrupt: the old turn shows cancelled / cancelled-for-next-turn at once, its late deltas ignored", ({ page }) => interruptShowsCancelled({ page }));
test("two restores at once: one session, one subscribe", ({ page }) => concurrentRestoresShareOneSubscribe({ page }));
test("a restore that joins one in flight (StrictMode's remount) shows the history while it loads", ({ page }) => joinedRestoreShowsTheHistoryEarly({ page }));
test("a stale or corrupt last-session pointer: restore() resolves null and the pointer is cleared; the adapter creates", ({ page }) => stalePointerRestoresNull({ page }));
test("respond immediately after restore onto a paused turn works", ({ page }) => respondRightAfterRestore({ page }));
test("reconnect gaps never go below the 250 ms floor", ({ page }) => reconnectGapsAboveFloor({ page }));
test("two handles on one session stream each turn once", ({ page }) => twoHandlesOneStream({ page }));
test("disconnect() shows the connection idle at once", ({ page }) => disconnectShowsIdleAtOnce({ page }));
test("closing the React hook's own handle leaves no live badge on the page", ({ page }) => reactHandleCloseLeavesNoLiveBadge({ page }));

test("200 open/close cycles of sessions with listeners leave every handle and listener collectable", ({ page }) => cyclesLeaveSessionsCollectable({ page }));

test("200 open/close cycles of sessions with listeners leave the JS heap and wasm memory flat", async ({ page }) => {
  test.setTimeout(120_000);
  await openSdk(page);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("HeapProfiler.enable");
  const id = await page.evaluate(async () => {
    const { AgentClient } = window.forgestream;
    const client = new AgentClient({ baseUrl: "", storage: "memory" });
    const s = await client.createSession({ agent: { name: "storyteller" } });
    await s.send("Tell a story, 1500 words, 0 ms");
    for (let i = 0; i < 400 && s.getSnapshot().connection.status !== "done"; i++) await new Promise((r) => setTimeout(r, 50));
    window.cycleClient = client;
    const sid = s.id;
    window.release(s);
    return sid;
  });
  const cycles = (n: number) =>
    page.evaluate(
      async ({ id, n }) => {
        const client = window.cycleClient as InstanceType<Sdk["AgentClient"]>;
        for (let i = 0; i < n; i++) {
          const s = client.session(id);
          // A listener that reaches the session, as every app's render callback does.
          s.subscribe(() => void s.getSnapshot());
          await s.load();
          window.release(s);
        }
      },
      { id, n },
    );
  const measure = async () => {
    for (let i = 0; i < 3; i++) await cdp.send("HeapProfiler.collectGarbage");
    const heap = (await cdp.send("Runtime.getHeapUsage")) as { usedSize: number };
    const wasm = await page.evaluate(() => window.forgestream.wasmMemoryBytes?.() ?? 0);
    return { heap: heap.usedSize, wasm };
  };
  await cycles(20); // warm-up: allocator pools, JIT, the first growth of wasm memory
  const before = await measure();
  await cycles(200);
  const after = await measure();
  console.log(`heap ${before.heap} → ${after.heap}, wasm ${before.wasm} → ${after.wasm}`);
  expect(after.heap - before.heap).toBeLessThan(1_000_000);
  expect(after.wasm - before.wasm).toBeLessThan(1_000_000);
});
