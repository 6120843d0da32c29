import { test } from "@playwright/test";
import { expect } from "../expect";
import type { Check } from "./types";
import { openSdk, type Sdk } from "./engine";

// 200 open/close cycles of a session with a listener leave nothing of it alive, shown without
// CDP so that it runs in every engine (Chromium by tests/e2e/engine.spec.ts, which also has the
// CDP heap-size version; Firefox by tests/e2e/firefox.spec.ts). A page cannot force a collection
// in Firefox, so the check observes one: each cycle's session handle and its listener (a closure
// over the handle, as an app's render callback is) are registered with a `FinalizationRegistry`;
// after the cycles the page allocates and drops garbage until the collector has run and reported
// them. A handle anything still reaches (the engine registry, a listener list, a pending
// promise) is never reported, so a leak shows as a count that stays short, however long we wait.
// wasm memory (`wasmMemoryBytes`, which never shrinks) must not grow by 1 MB over the cycles:
// the engines behind the handles were freed in the wasm heap too, not only unreachable from JS.

/** Cycles of open → subscribe → load → close. */
const CYCLES = 200;
/** How long the page may take to see the collector report them (ms). */
const COLLECT_WITHIN_MS = 30_000;

interface Observed {
  /** Handles and listeners the collector reported freed, of `CYCLES` each. */
  handles: number;
  listeners: number;
  /** Garbage the page allocated (MB) before the last report, and how long that took (ms). */
  pressureMb: number;
  waitedMs: number;
  wasmBefore: number;
  wasmAfter: number;
}

export const cyclesLeaveSessionsCollectable: Check<"page"> = async ({ page }) => {
  test.setTimeout(120_000);
  await openSdk(page);
  const seen: Observed = await page.evaluate(
    async ({ cycles, withinMs }): Promise<Observed> => {
      const { AgentClient, wasmMemoryBytes } = window.forgestream as Sdk;
      const client = new AgentClient({ baseUrl: "", storage: "memory" });
      const first = await client.createSession({ agent: { name: "storyteller" } });
      await first.send("Tell a story, 1500 words, 0 ms");
      for (let i = 0; i < 400 && first.getSnapshot().connection.status !== "done"; i++) await new Promise((r) => setTimeout(r, 50));
      const id = first.id;
      window.release(first);

      const freed = { handle: 0, listener: 0 };
      const registry = new FinalizationRegistry<"handle" | "listener">((kind) => void freed[kind]++);
      // Each cycle in its own function, so that no local of the loop keeps the last handle.
      const cycle = async (tracked: boolean) => {
        const s = client.session(id);
        const listener = () => void s.getSnapshot();
        s.subscribe(listener);
        await s.load();
        window.release(s);
        if (tracked) {
          registry.register(s, "handle");
          registry.register(listener, "listener");
        }
      };
      for (let i = 0; i < 20; i++) await cycle(false); // warm-up: allocator pools, JIT, the first growth of wasm memory
      const wasmBefore = wasmMemoryBytes();
      for (let i = 0; i < cycles; i++) await cycle(true);

      // Allocation pressure: 8 MB of short-lived objects per round, then a task boundary, where
      // finalization callbacks run; until every handle and listener was reported or time is up.
      const t0 = performance.now();
      let pressureMb = 0;
      while ((freed.handle < cycles || freed.listener < cycles) && performance.now() - t0 < withinMs) {
        let junk: unknown[] = [];
        for (let i = 0; i < 8 * 1024; i++) junk.push(new Array(128).fill(i));
        junk = [];
        pressureMb += 8;
        await new Promise((r) => setTimeout(r, 10));
      }
      return { handles: freed.handle, listeners: freed.listener, pressureMb, waitedMs: Math.round(performance.now() - t0), wasmBefore, wasmAfter: wasmMemoryBytes() };
    },
    { cycles: CYCLES, withinMs: COLLECT_WITHIN_MS },
  );
  const report = `${seen.handles}/${CYCLES} handles and ${seen.listeners}/${CYCLES} listeners collected after ${seen.pressureMb} MB of garbage in ${seen.waitedMs} ms; wasm ${seen.wasmBefore} → ${seen.wasmAfter}`;
  console.log(report);
  expect(seen.handles, report).toBe(CYCLES);
  expect(seen.listeners, report).toBe(CYCLES);
  expect(seen.wasmAfter - seen.wasmBefore, report).toBeLessThan(1_000_000);
};
