/**
 * `openSession` (what both adapters call): concurrent openers of a new session — React
 * StrictMode's mount, unmount, mount — create one server session, and each gets its own handle.
 */
import { describe, expect, it } from "vitest";
import { openSession } from "../src/open.js";
import type { AgentClient, AgentSession } from "../src/index.js";

function fakeClient() {
  const calls = { create: 0, handles: [] as { id: string; closed: boolean }[], scopes: [] as string[] };
  const handle = (id: string) => {
    const h = { id, closed: false, close: () => void (h.closed = true) };
    calls.handles.push(h);
    return h;
  };
  const client = {
    restore: async (o: { scope?: string } = {}) => {
      calls.scopes.push(`restore:${o.scope ?? "-"}`);
      return null;
    },
    createSession: async (_body: unknown, o: { scope?: string } = {}) => {
      calls.scopes.push(`create:${o.scope ?? "-"}`);
      calls.create++;
      await new Promise((r) => setTimeout(r, 5));
      return handle(`s${calls.create}`);
    },
    session: (id: string) => handle(id),
  };
  return { client: client as unknown as AgentClient, calls };
}

describe("openSession", () => {
  it("joins a create that is in flight for the same body", async () => {
    const { client, calls } = fakeClient();
    const body = { agent: { name: "support" } };
    const [a, b] = await Promise.all([openSession(client, { create: body }), openSession(client, { create: body })]);
    expect(calls.create).toBe(1);
    expect(a.id).toBe("s1");
    expect(b.id).toBe("s1");
    expect(a).not.toBe(b);
    await new Promise((r) => setTimeout(r, 10));
    // The creating handle is released; the callers' handles stay open.
    expect(calls.handles.map((h) => h.closed)).toEqual([true, false, false]);
  });

  it("creates again once the first create settled, and for another body", async () => {
    const { client, calls } = fakeClient();
    await openSession(client, { create: { agent: { name: "support" } } });
    await openSession(client, { create: { agent: { name: "support" } } });
    await Promise.all([openSession(client, { create: { agent: { name: "a" } } }), openSession(client, { create: { agent: { name: "b" } } })]);
    expect(calls.create).toBe(4);
  });

  it("a failed create rejects every joined opener and is not cached", async () => {
    const { client, calls } = fakeClient();
    let fail = true;
    const real = client.createSession.bind(client);
    (client as unknown as { createSession: typeof real }).createSession = async (b) => {
      if (fail) {
        calls.create++;
        throw new Error("server down");
      }
      return real(b);
    };
    const body = { agent: { name: "support" } };
    const results = await Promise.allSettled([openSession(client, { create: body }), openSession(client, { create: body })]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    fail = false;
    await expect(openSession(client, { create: body })).resolves.toMatchObject({ id: "s2" });
  });

  it("restores and creates in the scope of the agent, or the one given", async () => {
    const { client, calls } = fakeClient();
    await openSession(client, { create: { agent: { name: "support" } } });
    await openSession(client, { create: { agent_name: "billing" } });
    await openSession(client, { create: { agent: { name: "support" } }, scope: "user-7/support" });
    expect(calls.scopes).toEqual(["restore:support", "create:support", "restore:billing", "create:billing", "restore:user-7/support", "create:user-7/support"]);
  });

  it("openers in different scopes do not join one create", async () => {
    const { client, calls } = fakeClient();
    const body = { agent: { name: "support" } };
    await Promise.all([openSession(client, { create: body, scope: "alice" }), openSession(client, { create: body, scope: "bob" })]);
    expect(calls.create).toBe(2);
  });

  it("hands over a restoring session before its history is in, and closes it when stale", async () => {
    const { client, calls } = fakeClient();
    const order: string[] = [];
    let stale = false;
    (client as unknown as { restore: AgentClient["restore"] }).restore = async (o = {}) => {
      const h = (client as unknown as { session: (id: string) => AgentSession }).session("s-old");
      o.onOpen?.(h);
      await new Promise((r) => setTimeout(r, 5));
      order.push("restored");
      if (stale) {
        h.close();
        return null;
      }
      return (client as unknown as { session: (id: string) => AgentSession }).session("s-old");
    };
    const opened = await openSession(client, { create: { agent: { name: "support" } } }, (s) => order.push(`early:${s.id}`));
    expect(order).toEqual(["early:s-old", "restored"]);
    expect(opened.id).toBe("s-old");

    stale = true;
    order.length = 0;
    const created = await openSession(client, { create: { agent: { name: "support" } } }, (s) => order.push(`early:${s.id}`));
    expect(order).toEqual(["early:s-old", "restored"]);
    expect(created.id).toBe("s1");
    expect(calls.handles.find((h) => h.id === "s-old" && h.closed)).toBeTruthy();
  });

  it("hands over a session opened by id before its load resolves", async () => {
    const { client } = fakeClient();
    const order: string[] = [];
    (client as unknown as { session: (id: string) => unknown }).session = (id: string) => ({
      id,
      close() {},
      flush() {},
      // The history, then the stored turn followed, as one engine step (no snapshot between).
      loadAndResume: async () => {
        await new Promise((r) => setTimeout(r, 5));
        order.push("loaded and resumed");
      },
    });
    const opened = await openSession(client, { sessionId: "s9" }, (s) => order.push(`early:${s.id}`));
    expect(order).toEqual(["early:s9", "loaded and resumed"]);
    expect(opened.id).toBe("s9");
  });
});
