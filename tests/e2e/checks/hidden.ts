import { test } from "@playwright/test";
import { expect } from "../expect";
import type { Check } from "./types";
import { lastTurnId, newSession, persistedText, sendMessage, shownText, watchErrors } from "../helpers";

/**
 * A hidden page streams at full speed (issue 14). An init script makes the page hidden the way
 * browsers do: `document.visibilityState` reads `hidden`, `requestAnimationFrame` callbacks do
 * not run, and every timer waits at least 1 s (Chromium's clamp for hidden documents). While
 * hidden, a storyteller turn streams ~3,000 deltas at one per 2 ms; a raw `fetch` reader of the
 * same turn in the same page is the reference, and the page's shown text is sampled at every
 * 50th delta the raw reader gets. Before the fix, snapshots in a hidden page were published only
 * through a timer — so here at most once a second, and the turn's end up to a second late.
 * Now the core notifies again while the view has not taken its changes (every 100 ms, and at
 * once when the status changes) and a hidden page publishes from a message task, which hidden
 * pages do not throttle.
 *
 * Run in Chromium by tests/e2e/hidden.spec.ts and in Firefox by tests/e2e/firefox.spec.ts.
 */

/**
 * Most a sample's oldest unshown delta may have waited while hidden (ms). Publishing through the
 * clamped timer gives ≥ 1,000 by construction; publishing every 100 ms measured 230–470 on a
 * loaded 2-core machine (the raw reader competes for the same main thread).
 */
const MAX_LAG_MS = 900;
/** Most the page may show `done` after the raw reader saw `turn.done` (ms); measured 30–440. */
const MAX_DONE_MS = 900;
/** Fewest renders per second of stream while hidden (one publish per 100 ms measured 4.9 on a loaded machine; the clamped timer 1.1). */
const MIN_RENDERS_PER_S = 2.5;

interface Measured {
  rawDeltas: number;
  rawMs: number;
  /** Renders of the turn while it streamed hidden. */
  renders: number;
  maxLagMs: number;
  samples: number;
  doneAfterMs: number;
  hiddenThroughout: boolean;
  framesHeld: number;
  error?: string;
}

/** A hidden page streams a turn in the network's time and shows done without becoming visible. */
export const hiddenPageKeepsUp: Check<"page" | "request"> = async ({ page, request }) => {
  const errors = watchErrors(page);
  await page.addInitScript(() => {
    const w = window as unknown as { __fsHidden: boolean; __fsFramesHeld: number; __fsSetHidden: (h: boolean) => void };
    w.__fsHidden = false;
    w.__fsFramesHeld = 0;
    const state = () => (w.__fsHidden ? "hidden" : "visible");
    Object.defineProperty(Document.prototype, "visibilityState", { configurable: true, get: state });
    Object.defineProperty(Document.prototype, "hidden", { configurable: true, get: () => w.__fsHidden });
    const raf = window.requestAnimationFrame.bind(window);
    const held: FrameRequestCallback[] = [];
    // A frame requested while visible does not run once hidden either (frames stop).
    const run = (cb: FrameRequestCallback) => (t: number) => {
      if (!w.__fsHidden) cb(t);
      else {
        w.__fsFramesHeld++;
        held.push(cb);
      }
    };
    window.requestAnimationFrame = (cb: FrameRequestCallback): number => {
      if (!w.__fsHidden) return raf(run(cb));
      w.__fsFramesHeld++;
      held.push(cb);
      return 0;
    };
    const timeout = window.setTimeout.bind(window);
    window.setTimeout = ((handler: TimerHandler, ms?: number, ...args: unknown[]) =>
      timeout(handler, w.__fsHidden ? Math.max(1000, ms ?? 0) : ms, ...args)) as typeof window.setTimeout;
    w.__fsSetHidden = (hidden: boolean) => {
      w.__fsHidden = hidden;
      document.dispatchEvent(new Event("visibilitychange"));
      if (!hidden) for (const cb of held.splice(0)) raf(cb);
    };
  });
  const sid = await newSession(page, "storyteller");
  await page.evaluate(() => (window as unknown as { __fsSetHidden: (h: boolean) => void }).__fsSetHidden(true));
  await sendMessage(page, "Tell a story, 7000 words, 2 ms");
  const turnId = await lastTurnId(page);

  const m = await page.evaluate(
    async ({ sid, turnId, maxWaitMs }): Promise<Measured> => {
      const w = window as unknown as { __fsHidden: boolean; __fsFramesHeld: number };
      const turn = document.querySelector(`[data-testid="turn"][data-turn-id="${CSS.escape(turnId)}"]`);
      if (!turn) return { rawDeltas: 0, rawMs: 0, renders: 0, maxLagMs: 0, samples: 0, doneAfterMs: -1, hiddenThroughout: false, framesHeld: 0, error: "turn not shown" };
      const shownLength = () => {
        let n = 0;
        turn.querySelectorAll('[data-testid="message"][data-thread-id="main"] [data-testid="message-text"]').forEach((el) => (n += [...(el.textContent ?? "")].length));
        return n;
      };
      // Running text length (code points) after each delta and when it arrived.
      const cumulative: number[] = [0];
      const arrived: number[] = [0];
      let maxLagMs = 0, samples = 0, rawDoneAt = 0;
      const t0 = performance.now();
      const sample = () => {
        const now = performance.now();
        const shown = shownLength();
        // The oldest delta the raw reader had and the page does not show yet.
        let lo = 0, hi = cumulative.length;
        while (lo < hi) {
          const mid = (lo + hi) >> 1;
          if (cumulative[mid] <= shown) lo = mid + 1; else hi = mid;
        }
        if (lo < cumulative.length) maxLagMs = Math.max(maxLagMs, now - arrived[lo]);
        samples++;
      };
      // Each publish the page rendered: a burst of DOM mutations (a new burst after ≥ 5 ms).
      let renders = 0, lastMutation = 0;
      new MutationObserver(() => {
        const now = performance.now();
        if (now - lastMutation >= 5) renders++;
        lastMutation = now;
      }).observe(turn, { subtree: true, characterData: true, childList: true });
      const res = await fetch(`/api/v1/sessions/${sid}/turns/${encodeURIComponent(turnId)}/subscribe?after_sequence_number=0`);
      if (!res.ok || !res.body) return { rawDeltas: 0, rawMs: 0, renders: 0, maxLagMs: 0, samples: 0, doneAfterMs: -1, hiddenThroughout: false, framesHeld: 0, error: `subscribe answered ${res.status}` };
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += value;
        let cut: number;
        while ((cut = text.indexOf("\n\n")) >= 0) {
          const frame = text.slice(0, cut);
          text = text.slice(cut + 2);
          const data = frame.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
          if (!data) continue;
          const event = JSON.parse(data) as { type: string; thread_id?: string | null; content?: unknown };
          if (event.type === "model.message.delta" && event.thread_id === "main" && typeof event.content === "string") {
            cumulative.push(cumulative[cumulative.length - 1] + [...event.content].length);
            arrived.push(performance.now());
            // A replay of what was sent before this reader subscribed arrives in one burst: only
            // live deltas are sampled.
            if (cumulative.length % 50 === 0 && performance.now() - t0 > 300) sample();
          }
          if (event.type === "turn.done") rawDoneAt = performance.now();
        }
      }
      const rawMs = performance.now() - t0;
      // Done while still hidden: polled from the raw reader's side (no timers, no frames).
      let doneAfterMs = -1;
      while (performance.now() - rawDoneAt < maxWaitMs) {
        if (turn.getAttribute("data-status") === "done" && shownLength() === cumulative[cumulative.length - 1]) {
          doneAfterMs = performance.now() - rawDoneAt;
          break;
        }
        await new Promise((r) => {
          const c = new MessageChannel();
          c.port1.onmessage = r;
          c.port2.postMessage(null);
        });
      }
      return { rawDeltas: cumulative.length - 1, rawMs, renders, maxLagMs, samples, doneAfterMs, hiddenThroughout: w.__fsHidden, framesHeld: w.__fsFramesHeld };
    },
    { sid, turnId, maxWaitMs: 10_000 },
  );
  expect(m.error).toBeUndefined();
  const rendersPerS = m.renders / (m.rawMs / 1000);
  const report = `${m.rawDeltas} deltas in ${m.rawMs.toFixed(0)} ms while hidden, rendered ${m.renders} times (${rendersPerS.toFixed(1)}/s) (${m.framesHeld} animation frame requests held); ${m.samples} samples, the oldest unshown delta at most ${m.maxLagMs.toFixed(0)} ms old; done shown ${m.doneAfterMs.toFixed(0)} ms after the raw reader's turn.done`;
  test.info().annotations.push({ type: "hidden", description: report });
  console.log(report);
  // The premise: hidden all along and a long live stream was sampled.
  expect(m.hiddenThroughout, report).toBe(true);
  expect(m.rawDeltas, report).toBeGreaterThan(1500);
  expect(m.samples, report).toBeGreaterThan(10);
  expect(rendersPerS, report).toBeGreaterThanOrEqual(MIN_RENDERS_PER_S);
  expect(m.maxLagMs, report).toBeLessThanOrEqual(MAX_LAG_MS);
  expect(m.doneAfterMs, report).toBeGreaterThanOrEqual(0);
  expect(m.doneAfterMs, report).toBeLessThanOrEqual(MAX_DONE_MS);
  // Nothing lost or doubled: what the page shows is what the server persisted.
  const persisted = await persistedText(request, sid, turnId);
  expect(await shownText(page, turnId)).toBe(persisted);
  // Becoming visible changes nothing on screen.
  await page.evaluate(() => (window as unknown as { __fsSetHidden: (h: boolean) => void }).__fsSetHidden(false));
  expect(await page.getByTestId("turn").last().getAttribute("data-status")).toBe("done");
  expect(await shownText(page, turnId)).toBe(persisted);
  expect(errors).toEqual([]);
};
