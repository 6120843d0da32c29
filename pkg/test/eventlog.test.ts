/**
 * `AgentSession.eventLog()` and `eventLog({ last })` over a stand-in engine whose
 * `eventLogSince(seen, limit)` behaves as the core's ring (a small capacity here): what each
 * call returns, how many frames cross from "wasm", and that entries keep their identity.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import { AgentSession, type FrameLogEntry } from "../src/index.js";

const CAPACITY = 10;

function fakeShared() {
  let total = 0;
  const crossed: number[] = [];
  const shared = {
    handles: 0,
    log: [] as unknown[],
    logTotal: 0,
    logGap: false,
    inner: {
      id: "s1",
      engineId: 1,
      eventLogSince(seen: number, limit?: number | null) {
        const kept = Math.min(total, CAPACITY);
        let n = Math.min(Math.max(0, total - seen), kept);
        if (limit !== undefined && limit !== null) n = Math.min(n, limit);
        // Packed as the core packs it: seven numbers per frame, strings by index.
        const frames = Array.from({ length: n }, (_, i) => [0, total - n + i + 1, 1, -1, -1, 10, 1000]).flat();
        crossed.push(n);
        return { total, capacity: CAPACITY, strings: ["t1", "model.message.delta"], frames };
      },
    },
    chat: { getSnapshot: () => ({ status: "idle", connection: { status: "idle", turnId: null } }), subscribe: () => () => {} },
    release() {},
  };
  return { shared, crossed, log: (n: number) => (total += n) };
}

const seqs = (log: readonly FrameLogEntry[]) => log.map((f) => f.sequenceNumber);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("AgentSession.eventLog", () => {
  it("the option is optional and typed", () => {
    expectTypeOf<AgentSession["eventLog"]>().parameter(0).toEqualTypeOf<{ readonly last?: number } | undefined>();
    expectTypeOf<ReturnType<AgentSession["eventLog"]>>().toEqualTypeOf<FrameLogEntry[]>();
  });

  it("without options: every kept frame, only new ones crossing, entries keeping identity", () => {
    const { shared, crossed, log } = fakeShared();
    const h = new AgentSession(shared);
    log(4);
    const a = h.eventLog();
    expect(seqs(a)).toEqual([1, 2, 3, 4]);
    log(3);
    const b = h.eventLog();
    expect(seqs(b)).toEqual(range(1, 7));
    expect(b[0]).toBe(a[0]);
    log(20);
    expect(seqs(h.eventLog())).toEqual(range(18, 27));
    expect(crossed).toEqual([4, 3, 10]);
  });

  it("{ last: n }: the newest n, only the newest n new frames crossing", () => {
    const { shared, crossed, log } = fakeShared();
    const h = new AgentSession(shared);
    log(2);
    expect(seqs(h.eventLog({ last: 3 }))).toEqual([1, 2]);
    log(6);
    const a = h.eventLog({ last: 3 });
    expect(seqs(a)).toEqual([6, 7, 8]);
    log(1);
    const b = h.eventLog({ last: 3 });
    expect(seqs(b)).toEqual([7, 8, 9]);
    expect(b[0]).toBe(a[1]);
    expect(h.eventLog({ last: 0 })).toEqual([]);
    expect(seqs(h.eventLog({ last: 2.7 }))).toEqual([8, 9]);
    expect(crossed).toEqual([2, 3, 1, 0, 0]);
    // No limit: as without options (the frames skipped before are read again).
    expect(seqs(h.eventLog({ last: Infinity }))).toEqual(range(1, 9));
    expect(crossed.at(-1)).toBe(9);
  });

  it("a call without last after a skipping one reads the skipped frames again, keeping identity", () => {
    const { shared, crossed, log } = fakeShared();
    const h = new AgentSession(shared);
    log(8);
    const a = h.eventLog({ last: 2 });
    expect(seqs(a)).toEqual([7, 8]);
    log(1);
    const all = h.eventLog();
    expect(seqs(all)).toEqual(range(1, 9));
    expect(all[6]).toBe(a[0]);
    expect(crossed).toEqual([2, 9]);
    log(1);
    expect(seqs(h.eventLog())).toEqual(range(1, 10));
    expect(crossed.at(-1)).toBe(1);
  });

  it("after close: the last log, also with last", () => {
    const { shared, log } = fakeShared();
    const h = new AgentSession(shared);
    log(5);
    h.eventLog({ last: 1 });
    h.close();
    expect(seqs(h.eventLog())).toEqual(range(1, 5));
    expect(seqs(h.eventLog({ last: 2 }))).toEqual([4, 5]);
  });
});
