import { expect } from "../expect";
import { openSdk } from "./engine";
import type { Check } from "./types";

// `session.exportEvents()` (issue 13, typed events) where the app sees it: the array the SDK
// hands over after a refund (a turn paused on its approval, then the approved continuation),
// against the server's own session-timeline listing. Run in Chromium by tests/e2e/events.spec.ts
// and in Firefox by tests/e2e/firefox.spec.ts.

type Item = { turn_id: string; event: Record<string, unknown> & { type: string } };

/** Every page of the server's `GET /sessions/{sid}/events` (newest first), read here by hand. */
async function serverTimeline(request: Parameters<Check>[0]["request"], sid: string): Promise<Item[]> {
  const items: Item[] = [];
  let token: string | undefined;
  for (let page = 0; page < 50; page++) {
    const url = `/api/v1/sessions/${sid}/events?limit=100${token ? `&page_token=${encodeURIComponent(token)}` : ""}`;
    const body = (await (await request.get(url)).json()) as { data: Item[]; pagination: { next_page_token?: string } };
    items.push(...body.data);
    token = body.pagination.next_page_token;
    if (!token) break;
  }
  return items.reverse();
}

/** `field` of every key the SDK's event has: the SDK keeps a known type's fields as received. */
function withoutExtras(server: Record<string, unknown>, sdk: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(sdk).map((k) => [k, server[k]]));
}

export const refundEventsExported: Check = async ({ page, request }) => {
  await openSdk(page);
  const result = await page.evaluate(async () => {
    const { AgentClient, approve, isKnownEvent } = window.forgestream;
    const client = new AgentClient({ baseUrl: "", storage: "memory" });
    const s = await client.createSession({ agent: { name: "support" } });
    const wait = async (ok: () => boolean) => {
      for (let i = 0; i < 400 && !ok(); i++) await new Promise((r) => setTimeout(r, 25));
    };
    const paused = await s.send("Refund €49.50 on ORD-2031, it arrived broken");
    await wait(() => s.getSnapshot().pending.some((p) => p.kind === "toolApproval"));
    const call = s.getSnapshot().pending.find((p) => p.kind === "toolApproval")?.toolCallId;
    if (!call) return { error: "no approval pending" };
    const continued = await s.respond([approve(call)]);
    await wait(() => s.getSnapshot().turns.at(-1)?.status === "done");
    const items = await s.exportEvents();
    // What an app's code does with them: narrow on the type, read the wire fields.
    const read = items.map(({ turn_id, event }) => {
      if (!isKnownEvent(event)) return { turn_id, type: event.type, known: false };
      switch (event.type) {
        case "turn.created":
          return { turn_id, type: event.type, known: true, turnId: event.turn_id, status: event.state.status, input: event.input?.[0]?.type ?? null };
        case "turn.done":
          return { turn_id, type: event.type, known: true, status: event.state.status };
        case "tool.response":
          return { turn_id, type: event.type, known: true, toolCallId: event.tool_call_id };
        case "model.message":
          return { turn_id, type: event.type, known: true, calls: (event.tool_calls ?? []).map((c) => c.function?.name ?? "") };
        default:
          return { turn_id, type: event.type, known: true };
      }
    });
    const sid = s.id;
    window.release(s);
    return { sid, paused, continued, items, read };
  });
  expect(result.error).toBeUndefined();
  const { sid, paused, continued, items, read } = result as Required<typeof result>;
  const server = await serverTimeline(request, sid);

  // The same events as the server's listing, in its order (oldest first), field for field.
  expect(items.map((i) => [i.turn_id, i.event.type, i.event.id])).toEqual(server.map((i) => [i.turn_id, i.event.type, i.event.id]));
  items.forEach((item, n) => expect(item.event).toEqual(withoutExtras(server[n].event, item.event as Record<string, unknown>)));

  // Two turns, each from turn.created to turn.done, typed as the union says.
  expect(read.every((r) => r.known)).toBe(true);
  for (const turn of [paused, continued]) {
    const own = read.filter((r) => r.turn_id === turn);
    expect(own[0]).toMatchObject({ type: "turn.created", turnId: turn, status: "running" });
    expect(own.at(-1)).toMatchObject({ type: "turn.done", status: "done" });
  }
  expect(read.filter((r) => r.turn_id === paused)[0]).toMatchObject({ input: "user.message" });
  expect(read.filter((r) => r.turn_id === continued)[0]).toMatchObject({ input: "user.tool_approval" });
  expect(read.some((r) => r.type === "model.message" && (r.calls as string[] | undefined)?.includes("process_refund"))).toBe(true);
  expect(read.some((r) => r.type === "tool.response" && r.turn_id === continued)).toBe(true);
  expect(read.map((r) => r.type)).not.toContain("model.message.delta");
};

/**
 * `close()` while `exportEvents()` reads the timeline: the export is the engine's own request
 * (issue 12), so the close aborts it and its promise rejects with code `aborted` — it neither
 * resolves later nor keeps a request of a closed session going. Closed mid-turn, too; a new
 * handle on the session then exports its events as usual.
 */
export const closeAbortsExport: Check<"page"> = async ({ page }) => {
  await openSdk(page);
  const result = await page.evaluate(async () => {
    const { AgentClient } = window.forgestream;
    const client = new AgentClient({ baseUrl: "", storage: "memory" });
    const s = await client.createSession({ agent: { name: "support" } });
    const sid = s.id;
    const turn = await s.send("What is the status of order ORD-2031?");
    const exporting = s.exportEvents();
    s.close();
    const outcome = await exporting.then(
      (items: unknown[]) => ({ settled: "resolved", count: items.length }),
      (e: { code?: string; retryable?: boolean }) => ({ settled: "rejected", code: e.code, retryable: e.retryable }),
    );
    // The turn went on on the server; once it finished, a new handle exports it.
    type Turn = { data: { state: { status: string } } };
    for (let i = 0; i < 400; i++) {
      const t = (await (await fetch(`/api/v1/sessions/${sid}/turns/${encodeURIComponent(turn)}`)).json()) as Turn;
      if (t.data.state.status !== "running") break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const again = client.session(sid);
    const items = await again.exportEvents();
    again.close();
    return { outcome, turn, turns: [...new Set(items.map((i) => i.turn_id))] };
  });
  expect(result.outcome).toEqual({ settled: "rejected", code: "aborted", retryable: false });
  expect(result.turns).toEqual([result.turn]);
};
