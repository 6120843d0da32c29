import { test } from "@playwright/test";
import { expect } from "../expect";
import type { Check } from "./types";
import { lastTurnId, newSession, sendMessage, watchErrors } from "../helpers";

/**
 * The view keeps up with the network (issue 19). A storyteller turn streams one delta per write
 * every 2 ms (~500 frames/s, faster than the ~60 animation frames a second a paced reader
 * consumed); a raw `fetch` reader of the same turn in the same page is the reference. Both are
 * sampled in the same `requestAnimationFrame` callback: the raw reader's delta count, and what
 * the page shows (the message text the SDK's snapshot rendered, turned into a delta count through
 * the raw reader's running text length). Lag is counted in animation frames, not in ms or stream
 * frames, so a loaded machine (long frames, more arriving per frame for both readers alike) does
 * not fail the test. With reads paced to one per animation frame (the code before issue 19) the
 * view fell 34–112 animation frames behind and showed `done` 72–605 frames late; reading
 * everything queued keeps it at 1–3 and 1–2.
 *
 * Run in Chromium by tests/e2e/lag.spec.ts and in Firefox by tests/e2e/firefox.spec.ts.
 */

/** Most animation frames the view may trail the raw reader at any sample. */
const MAX_BEHIND_FRAMES = 6;
/** Most animation frames between the raw reader's `turn.done` and the page showing `done`. */
const MAX_DONE_FRAMES = 6;

interface Sample {
  raw: number;
  shown: number;
}

interface Measured {
  samples: Sample[];
  rawDeltas: number;
  rawMs: number;
  /** rAF ticks: raw reader saw `turn.done` / the page showed the turn `done`. */
  rawDoneTick: number;
  shownDoneTick: number;
  rawDoneAt: number;
  shownDoneAt: number;
  error?: string;
}

/** the view stays within a few frames of a raw reader at ~500 frames/s and shows done right after it. */
export const viewKeepsUp: Check<"page"> = async ({ page }) => {
  const errors = watchErrors(page);
  const sid = await newSession(page, "storyteller");
  // Long enough (~7 s of stream) that most of it is still to come when the raw reader below
  // subscribes on a loaded machine: a reader that starts late gets the start as one replay,
  // leaving too few animation frames to compare (seen: 2 samples with 3,000 words at load 8).
  await sendMessage(page, "Tell a story, 8000 words, 2 ms");
  const turnId = await lastTurnId(page);

  const m = await page.evaluate(
    async ({ sid, turnId }): Promise<Measured> => {
      const turn = document.querySelector(`[data-testid="turn"][data-turn-id="${CSS.escape(turnId)}"]`);
      if (!turn) return { samples: [], rawDeltas: 0, rawMs: 0, rawDoneTick: -1, shownDoneTick: -1, rawDoneAt: 0, shownDoneAt: 0, error: "turn not shown" };
      // Running length (code points) of the main thread's text after each delta, as read raw.
      const cumulative: number[] = [0];
      let rawDoneTick = -1, rawDoneAt = 0, tick = 0;
      const t0 = performance.now();
      let rawEnd = t0;
      const raw = (async () => {
        const res = await fetch(`/api/v1/sessions/${sid}/turns/${encodeURIComponent(turnId)}/subscribe?after_sequence_number=0`);
        if (!res.ok || !res.body) throw new Error(`subscribe answered ${res.status}`);
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
            }
            if (event.type === "turn.done") {
              rawDoneTick = tick;
              rawDoneAt = performance.now();
            }
          }
        }
        rawEnd = performance.now();
      })();
      const shownLength = () => {
        let n = 0;
        turn.querySelectorAll('[data-testid="message"][data-thread-id="main"] [data-testid="message-text"]').forEach((el) => (n += [...(el.textContent ?? "")].length));
        return n;
      };
      // Stream frames whose text the page shows: the deltas up to the shown length.
      const framesShown = (length: number) => {
        let lo = 0, hi = cumulative.length - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >> 1;
          if (cumulative[mid] <= length) lo = mid; else hi = mid - 1;
        }
        return lo;
      };
      const samples: Sample[] = [];
      let shownDoneTick = -1, shownDoneAt = 0;
      await new Promise<void>((resolve) => {
        const deadline = t0 + 60_000;
        const frame = () => {
          tick++;
          if (rawDoneTick < 0) samples.push({ raw: cumulative.length - 1, shown: framesShown(shownLength()) });
          if (shownDoneTick < 0 && turn.getAttribute("data-status") === "done") {
            shownDoneTick = tick;
            shownDoneAt = performance.now();
          }
          if ((rawDoneTick >= 0 && shownDoneTick >= 0) || performance.now() > deadline) resolve();
          else requestAnimationFrame(frame);
        };
        requestAnimationFrame(frame);
      });
      await raw.catch(() => {});
      return { samples, rawDeltas: cumulative.length - 1, rawMs: rawEnd - t0, rawDoneTick, shownDoneTick, rawDoneAt, shownDoneAt };
    },
    { sid, turnId },
  );

  expect(m.error).toBeUndefined();
  expect(m.rawDoneTick).toBeGreaterThanOrEqual(0);
  expect(m.shownDoneTick).toBeGreaterThanOrEqual(0);
  // The premise: the stream came faster than one frame per animation frame could take it.
  const rate = m.rawDeltas / (m.rawMs / 1000);
  expect(m.rawDeltas).toBeGreaterThan(1200);
  expect(rate).toBeGreaterThan(150);
  expect(m.samples.length).toBeGreaterThan(20);
  // Stream frames the view trails the raw reader sampled at the same moment (reported: it
  // includes whatever arrived since the snapshot was last published, once per animation frame).
  const sameMoment = Math.max(...m.samples.map((s) => s.raw - s.shown));
  // Age, in animation frames, of the oldest stream frame the raw reader had and the view did
  // not show: i − the first sample k ≤ i whose raw count exceeds what the view shows at i (0 when
  // none). Animation frames, not stream frames: on a loaded machine a long frame lets more
  // arrive for both readers alike, which is not the view falling behind.
  let maxBehind = 0;
  for (let i = 0, k = 0; i < m.samples.length; i++) {
    while (k < i && m.samples[k].raw <= m.samples[i].shown) k++;
    if (m.samples[k].raw > m.samples[i].shown) maxBehind = Math.max(maxBehind, i - k);
  }
  const doneFrames = m.shownDoneTick - m.rawDoneTick;
  const report = `${m.rawDeltas} deltas at ${rate.toFixed(0)}/s; ${m.samples.length} samples; the view showed what the raw reader had at most ${maxBehind} animation frames earlier (at most ${sameMoment} stream frames behind at the same moment); done shown ${doneFrames} animation frames (${(m.shownDoneAt - m.rawDoneAt).toFixed(0)} ms) after the raw reader's`;
  test.info().annotations.push({ type: "lag", description: report });
  console.log(report);
  expect(maxBehind, report).toBeLessThanOrEqual(MAX_BEHIND_FRAMES);
  expect(doneFrames, report).toBeLessThanOrEqual(MAX_DONE_FRAMES);
  expect(errors).toEqual([]);
};
