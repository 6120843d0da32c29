import type { BrowserContext, Page } from "@playwright/test";
import { expect } from "../expect";
import type { Check } from "./types";
import { newSession, persistedText, sendMessage, watchErrors } from "../helpers";
import { openSdk } from "./engine";

// One action at a time per session across tabs (issue 14). Run in Chromium by
// tests/e2e/actions.spec.ts and in Firefox by tests/e2e/firefox.spec.ts.

type Digest = { turns: { id: string; status: string; items: { kind: string; thread?: string; text?: string | null }[] }[]; pending: unknown[]; diagnostics?: unknown };

/** Opens the SDK page in a new tab of `context`, collecting its errors into `errors`. */
async function sdkTab(context: BrowserContext, errors: string[]): Promise<Page> {
  const page = await context.newPage();
  errors.push(...watchErrors(page));
  await openSdk(page);
  return page;
}

/**
 * Two tabs on one session show the same pending approval (the `support` agent's refund), and the
 * user clicks Allow in both within a few ms: the tabs take turns on the session's action lock,
 * so the server sees exactly one continuation POST; the tab that waited finds the approval
 * answered and its promise rejects with `conflict` (or, had it seen the continuation first, the
 * same); both views end `done` with the same text, the persisted one.
 */
export const twoTabsApproveAtOnce: Check<"context" | "request"> = async ({ context, request }) => {
  const errors: string[] = [];
  const first = await sdkTab(context, errors);
  const second = await sdkTab(context, errors);
  // The paused turn, created in the first tab.
  const { sid, call } = await first.evaluate(async () => {
    const { AgentClient } = window.forgestream;
    const client = new AgentClient({ baseUrl: "", storage: "memory" });
    const s = await client.createSession({ agent: { name: "support" } });
    window.s = s;
    // A small amount: the emulator keeps refunds per server run, and other checks refund ORD-2031 too.
    await s.send("Refund €1.25 on ORD-2031, it arrived broken");
    for (let i = 0; i < 400 && s.getSnapshot().pending.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    return { sid: s.id, call: s.getSnapshot().pending[0]?.toolCallId ?? "" };
  });
  expect(call).not.toBe("");
  // The second tab opens the same session and shows the same approval.
  const shown = await second.evaluate(async (sid) => {
    const { AgentClient } = window.forgestream;
    const client = new AgentClient({ baseUrl: "", storage: "memory" });
    const s = client.session(sid);
    window.s = s;
    await s.load();
    for (let i = 0; i < 400 && s.getSnapshot().pending.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    return s.getSnapshot().pending.map((p) => p.toolCallId);
  }, sid);
  expect(shown).toEqual([call]);

  // Every continuation POST either tab sends.
  const posts: string[] = [];
  for (const [name, page] of [["first", first], ["second", second]] as const) {
    page.on("request", (r) => {
      if (r.method() === "POST" && new URL(r.url()).pathname === `/api/v1/sessions/${sid}/turns`) posts.push(name);
    });
  }
  // Both click Allow on one signal: a `BroadcastChannel` message reaches both tabs at once (a
  // timer would not do: a background tab's timers are throttled, to 1 s and more in Firefox).
  type Outcome = { turn?: string; code?: string; status: string; chat: string; error: string | null; pending: number; digest: Digest; clickedAt: number };
  for (const page of [first, second]) {
    await page.evaluate((call) => {
      const { approve } = window.forgestream;
      const s = window.s as import("../../../pkg/src/index").AgentSession;
      const go = new BroadcastChannel("e2e-approve-at-once");
      window.outcome = new Promise<Outcome>((resolve) => {
        go.onmessage = async () => {
          go.close();
          const clickedAt = Date.now();
          let turn: string | undefined;
          let code: string | undefined;
          try {
            turn = await s.respond([approve(call)]);
          } catch (e) {
            code = (e as { code?: string }).code ?? String(e);
          }
          const ended = () => {
            const snap = s.getSnapshot();
            return snap.connection.status === "done" && snap.turns.length === 2 && snap.turns[1]!.status === "done";
          };
          for (let i = 0; i < 1200 && !ended(); i++) await new Promise((r) => setTimeout(r, 25));
          const snap = s.getSnapshot();
          const digest = s.exportDigest() as unknown as Digest;
          delete digest.diagnostics;
          resolve({ ...(turn === undefined ? {} : { turn }), ...(code === undefined ? {} : { code }), status: snap.connection.status, chat: snap.status, error: snap.error?.code ?? null, pending: snap.pending.length, digest, clickedAt });
        };
      });
    }, call);
  }
  // Sent from a channel of its own (a channel never hears itself), in the first tab.
  await first.evaluate(() => {
    const go = new BroadcastChannel("e2e-approve-at-once");
    go.postMessage("allow");
    go.close();
  });
  const [a, b] = await Promise.all([first, second].map((page) => page.evaluate(() => window.outcome as Promise<Outcome>)));
  if (!a || !b) throw new Error("no outcome");
  // The test's premise, not a speed: the two clicks overlap (a continuation POST takes longer).
  expect(Math.abs(a.clickedAt - b.clickedAt)).toBeLessThan(250);

  // The server saw one continuation POST.
  expect(posts).toHaveLength(1);
  const turns = (await (await request.get(`/api/v1/sessions/${sid}/turns?limit=25`)).json()) as { data: { id: string; state: { status: string } }[] };
  expect(turns.data).toHaveLength(2);
  const continuation = turns.data[1]!;
  expect(continuation.state.status).toBe("done");
  // One tab's promise has the continuation; the other's says `conflict` (never a second turn).
  const outcomes = [a, b].map((o) => o.turn ?? o.code);
  expect(outcomes.filter((o) => o === continuation.id)).toHaveLength(1);
  expect(outcomes.filter((o) => o === "conflict")).toHaveLength(1);
  // Both views end `done` with nothing pending and the same, persisted text.
  const persisted = await persistedText(request, sid, continuation.id);
  expect(persisted.length).toBeGreaterThan(20);
  for (const o of [a, b]) {
    expect(o.status).toBe("done");
    // The refused tab shows nothing bad: a conflict is not the session's error.
    expect({ chat: o.chat, error: o.error }).toEqual({ chat: "idle", error: null });
    expect(o.pending).toBe(0);
    expect(o.digest.turns.map((t) => t.id)).toEqual([turns.data[0]!.id, continuation.id]);
    expect(o.digest.turns[1]!.status).toBe("done");
    const shownText = o.digest.turns[1]!.items
      .filter((i) => i.kind === "message" && i.thread === "main")
      .map((i) => i.text ?? "")
      .join("");
    expect(shownText).toBe(persisted);
  }
  expect(JSON.stringify(a.digest)).toBe(JSON.stringify(b.digest));
  for (const page of [first, second]) await page.evaluate(() => window.release(window.s));
  expect(errors).toEqual([]);
};

/**
 * The same race in the demo: Allow in one tab and Deny in the other at once. One answer is sent;
 * the tab whose click lost says so (a notice, not an error) — two trials clicked Deny, then saw
 * "Approved" with no word of why. Both tabs end with the same turn statuses.
 */
export const demoAnswerRaceSaysWhoWon: Check<"context" | "request"> = async ({ context }) => {
  const first = await context.newPage();
  const errors = watchErrors(first);
  await newSession(first, "support");
  await sendMessage(first, "Refund €1.10 on ORD-2031, it arrived broken");
  await expect(first.getByTestId("approval-card")).toBeVisible();
  const second = await context.newPage();
  errors.push(...watchErrors(second));
  await second.goto("/");
  await expect(second.getByTestId("approval-card")).toBeVisible();
  // One signal to both tabs (a timer would be throttled in the background tab).
  for (const [page, button] of [[first, "approve"], [second, "deny"]] as const) {
    await page.evaluate((button) => {
      const go = new BroadcastChannel("e2e-demo-answer-race");
      go.onmessage = () => {
        go.close();
        document.querySelector<HTMLButtonElement>(`[data-testid="${button}"]`)?.click();
      };
    }, button);
  }
  await first.evaluate(() => {
    const go = new BroadcastChannel("e2e-demo-answer-race");
    go.postMessage("go");
    go.close();
  });
  for (const page of [first, second]) {
    await expect(page.getByTestId("turn")).toHaveCount(2);
    await expect(page.getByTestId("turn").last()).toHaveAttribute("data-status", "done");
    await expect(page.getByTestId("action-error")).toHaveCount(0);
  }
  const notices = await Promise.all([first, second].map((p) => p.getByTestId("action-conflict").count()));
  expect([...notices].sort()).toEqual([0, 1]);
  const loser = notices[0] === 1 ? first : second;
  await expect(loser.getByTestId("action-conflict")).toHaveText(/Another tab answered first/);
  expect(errors).toEqual([]);
};
