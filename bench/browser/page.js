// The browser side of bench/browser.mjs: every contender runs in this one page, driven by
// `page.evaluate(() => __bench.run(name))` from Node, alternated run by run.
//
//   sdk-net   forgestream (AgentClient → createSession → send) over the local HTTP server
//   base-net  the baseline (bench/browser/baseline.ts) over the same server
//   sdk-mem / base-mem   the same two, with `fetch` answered from bytes already in the page
//             (a ReadableStream of 64 KiB chunks), to take the network out
//   floor     JSON.parse of every frame's data, already split (W1) / of every page (W2)
//
// The in-page mode is a bench-page-only hook: `globalThis.fetch` is wrapped here, and the SDK's
// wasm glue calls the global `fetch`, so nothing in the SDK changes.
import { BaselineSession } from "/build/baseline.js";

// `?pkg=pkgnamed` loads the same TS layer with a wasm that keeps its name section (profiling only).
const PKG = new URLSearchParams(location.search).get("pkg") ?? "pkg";
// `?cmp=1`: a second build of the SDK (BENCH_COMPARE_PKG, served at /pkgcmp/) loads beside the
// first, as its own module graph and wasm instance, for the `w1-sdk-cmp` contender.
const CMP = new URLSearchParams(location.search).get("cmp") === "1";
let AgentClient, init, wasmInit, CmpClient;

const CHUNK = 64 * 1024;
const status = (s) => (document.getElementById("status").textContent = s);

// ---- data (loaded once, untimed) ----------------------------------------------------------------
let w1 = null; // { meta, bytes, frames: string[] }
let w2 = null; // { meta, pages: string[], byToken: Map }
const enc = new TextEncoder();

async function loadW1() {
  if (w1) return;
  const meta = await (await fetch("/data/w1.json")).json();
  const bytes = new Uint8Array(await (await fetch("/data/w1.sse")).arrayBuffer());
  const text = new TextDecoder().decode(bytes);
  const frames = [];
  for (const block of text.split("\n\n")) {
    for (const line of block.split("\n")) if (line.startsWith("data: ")) frames.push(line.slice(6));
  }
  w1 = { meta, bytes, frames };
}

async function loadW2() {
  if (w2) return;
  const meta = await (await fetch("/data/w2.json")).json();
  const text = await (await fetch("/data/w2-pages.json")).text();
  const pages = [];
  const byToken = new Map();
  for (let line of text.split("\n")) {
    if (!line.startsWith("{")) continue;
    if (line.endsWith(",")) line = line.slice(0, -1);
    const m = /"next_page_token":"([^"]+)"/.exec(line.slice(-400));
    if (pages.length === 0) byToken.set("", 0);
    pages.push(line);
    if (m) byToken.set(m[1], pages.length);
  }
  w2 = { meta, pages, byToken, bytes: pages.reduce((n, p) => n + enc.encode(p).length, 0) };
}

// ---- in-page fetch (mode "mem") -----------------------------------------------------------------
const realFetch = globalThis.fetch.bind(globalThis);
let inPage = false;
let served = 0;

function streamOf(bytes) {
  let off = 0;
  return new ReadableStream({
    pull(c) {
      if (off >= bytes.length) return c.close();
      c.enqueue(bytes.slice(off, off + CHUNK)); // a fresh buffer per chunk, as the network gives
      off += CHUNK;
    },
  });
}

globalThis.fetch = function (input, init) {
  if (inPage) {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url, location.href);
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    if (method === "POST" && /\/sessions\/[^/]+\/turns$/.test(url.pathname)) {
      served++;
      return Promise.resolve(new Response(streamOf(w1.bytes), { status: 200, headers: { "content-type": "text/event-stream" } }));
    }
    if (method === "GET" && /\/sessions\/[^/]+\/events$/.test(url.pathname)) {
      const i = w2.byToken.get(url.searchParams.get("page_token") ?? "");
      if (i === undefined) return Promise.resolve(new Response('{"error":{"message":"bad token"}}', { status: 400 }));
      served++;
      return Promise.resolve(new Response(w2.pages[i], { status: 200, headers: { "content-type": "application/json" } }));
    }
    if (method === "GET" && /\/sessions\/[^/]+\/turns$/.test(url.pathname)) {
      return Promise.resolve(new Response('{"data":[],"pagination":{"limit":25}}', { status: 200, headers: { "content-type": "application/json" } }));
    }
  }
  return realFetch(input, init);
};

// ---- verification (untimed) ---------------------------------------------------------------------
const utf8Len = (s) => enc.encode(s).length;

function sdkText(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content.map((p) => p.text ?? p.refusal ?? "").join("");
}

/**
 * Bytes V8 needs for `text` as one flat string: one a UTF-16 unit when every unit fits in Latin-1,
 * else two (a "two-byte" string) — the least any JS client holding the text once can retain.
 */
function jsStringBytes(text) {
  return text.length * (/[^\u0000-\u00ff]/.test(text) ? 2 : 1);
}

function checkSdkW1(snap) {
  const turn = snap.turns.at(-1);
  let messages = 0, textBytes = 0, calls = 0, args = 0, textJsBytes = 0;
  for (const item of turn?.items ?? []) {
    if (item.body.kind !== "message") continue;
    messages++;
    const content = item.body.content;
    for (const part of typeof content === "string" ? [{ text: content }] : content ?? []) textJsBytes += jsStringBytes(part.text ?? part.refusal ?? "");
    textBytes += utf8Len(sdkText(item.body.content));
    for (const c of item.body.toolCalls ?? []) {
      calls++;
      args += utf8Len(c.argumentsText);
    }
  }
  return { status: turn?.status, messages, textBytes, calls, args, textJsBytes };
}

function checkBaseW1(snap) {
  const turn = snap.turns.at(-1);
  let messages = 0, textBytes = 0, calls = 0, args = 0;
  for (const item of turn?.items ?? []) {
    if (item.kind !== "message") continue;
    messages++;
    textBytes += utf8Len(item.content);
    for (const c of item.toolCalls) {
      calls++;
      args += utf8Len(c.arguments);
    }
  }
  return { status: turn?.status, messages, textBytes, calls, args, lastSeq: snap.lastSeq };
}

function expectW1() {
  const m = w1.meta;
  return { status: "done", messages: m.model_messages, textBytes: m.total_text_bytes, calls: m.tool_calls, args: m.messages.reduce((n, x) => n + x.tool_calls.reduce((k, c) => k + c.arguments_bytes, 0), 0) };
}

function verified(got, want) {
  return Object.keys(want).every((k) => got[k] === want[k]);
}

/** W2-first-screen: how many of the newest turns make the screen a UI opens on (issue 16). */
const FIRST_SCREEN_TURNS = 20;

function countW2(turns, kindOf) {
  let items = 0, messages = 0;
  for (const t of turns) {
    items += t.items.length;
    for (const it of t.items) if (kindOf(it) === "message") messages++;
  }
  return { turns: turns.length, items, messages };
}

// ---- helpers ------------------------------------------------------------------------------------
/** Resolves with performance.now() at the first notification whose snapshot satisfies `pred`. */
function when(session, pred) {
  let frames = 0;
  return new Promise((resolve) => {
    const unsubscribe = session.subscribe(() => {
      frames++;
      const snap = session.getSnapshot(); // what a UI does once per frame
      if (pred(snap)) {
        const t = performance.now();
        unsubscribe();
        resolve({ t, frames, snap });
      }
    });
  });
}

let client = null;
let sdkSessions = 0;
let baseSessions = 0;

// ---- contenders ---------------------------------------------------------------------------------
let cmpClient = null;

/** W1 with one SDK build's client: createSession (untimed), send → first snapshot with the turn done. */
async function sdkW1(c) {
  const session = await c.createSession({ agent: { name: "bench" } });
  sdkSessions++;
  const done = when(session, (s) => s.turns.at(-1)?.status === "done");
  const t0 = performance.now();
  await session.send("go");
  const { t, frames, snap } = await done;
  const got = checkSdkW1(snap);
  globalThis.__keep = session;
  return { ms: t - t0, frames, bytes: w1.bytes.length, events: w1.meta.events, got, ok: verified(got, expectW1()) };
}

/**
 * W2 with one SDK build's client: load() → the snapshot with the whole history. What the run
 * reads is what an app showing the newest screen reads: every turn header, the newest
 * FIRST_SCREEN_TURNS turns' items (checked against the final snapshot). The whole view (every
 * item, for the turn and message counts) is verified after the timer, or — when
 * `__bench.deferVerify` is set (the memory figure) — only by `__bench.verifyKept()`, after the
 * heap has been measured, so reading every turn's items does not count in the retained memory.
 */
async function sdkW2(c) {
  // A new engine each run: the last run's (kept for the memory figures) would be adopted,
  // and its view already holds every turn.
  globalThis.__keep?.close?.();
  const session = c.session(w2.meta.session_id);
  const firstScreen = when(session, (s) => s.turns.length >= FIRST_SCREEN_TURNS);
  const done = when(session, (s) => s.turns.length > 0 && s.connection.status !== "loading");
  const t0 = performance.now();
  await session.load();
  const { t, frames, snap } = await done;
  const first = await firstScreen;
  const shown = first.snap.turns.slice(-FIRST_SCREEN_TURNS);
  const newest = snap.turns.slice(-FIRST_SCREEN_TURNS);
  const firstComplete = shown.every((turn, i) => turn.turnId === newest[i].turnId && turn.items.length === newest[i].items.length);
  globalThis.__keep = session;
  kept = { snap, firstComplete };
  const base = { ms: t - t0, firstMs: first.t - t0, firstComplete, frames, bytes: w2.bytes, events: w2.meta.events };
  if (__bench.deferVerify) return { ...base, got: { turns: snap.turns.length }, ok: false, deferred: true };
  return { ...base, ...verifyW2() };
}

/** The last W2 run's final snapshot, for `verifyKept`. */
let kept = null;

/** Counts every turn's items of the kept W2 snapshot (reads them all) against w2.json. */
function verifyW2() {
  const got = countW2(kept.snap.turns, (it) => it.body.kind);
  return { got, ok: got.turns === w2.meta.turns && got.messages === w2.meta.model_messages && kept.firstComplete };
}

const contenders = {
  async "w1-sdk"() {
    client ??= new AgentClient({ baseUrl: "" });
    return sdkW1(client);
  },
  async "w1-sdk-cmp"() {
    cmpClient ??= new CmpClient({ baseUrl: "" });
    return sdkW1(cmpClient);
  },
  async "w1-base"() {
    const session = new BaselineSession(`b${++baseSessions}`, { baseUrl: "", storage: localStorage });
    const done = when(session, (s) => s.turns.at(-1)?.status === "done");
    const t0 = performance.now();
    await session.send("go");
    const { t, frames, snap } = await done;
    const got = checkBaseW1(snap);
    globalThis.__keep = session;
    return { ms: t - t0, frames, bytes: w1.bytes.length, events: w1.meta.events, got, ok: verified(got, expectW1()) && got.lastSeq === w1.meta.last_seq };
  },
  async "w1-floor"() {
    const frames = w1.frames;
    let sink = 0;
    const t0 = performance.now();
    for (let i = 0; i < frames.length; i++) sink += JSON.parse(frames[i]).type.length;
    const t = performance.now();
    return { ms: t - t0, bytes: w1.bytes.length, events: frames.length, ok: frames.length === w1.meta.events && sink > 0 };
  },
  async "w2-sdk"() {
    client ??= new AgentClient({ baseUrl: "" });
    return sdkW2(client);
  },
  async "w2-sdk-cmp"() {
    cmpClient ??= new CmpClient({ baseUrl: "" });
    return sdkW2(cmpClient);
  },
  async "w2-base"() {
    const session = new BaselineSession(w2.meta.session_id, { baseUrl: "" });
    const done = when(session, (s) => s.turns.length > 0);
    const t0 = performance.now();
    await session.load();
    const { t, frames, snap } = await done;
    const got = countW2(snap.turns, (it) => it.kind);
    globalThis.__keep = session;
    return { ms: t - t0, frames, bytes: w2.bytes, events: w2.meta.events, got, ok: got.turns === w2.meta.turns && got.messages === w2.meta.model_messages };
  },
  async "w2-floor"() {
    const pages = w2.pages;
    let sink = 0;
    const t0 = performance.now();
    for (let i = 0; i < pages.length; i++) sink += JSON.parse(pages[i]).data.length;
    const t = performance.now();
    return { ms: t - t0, bytes: w2.bytes, events: sink, ok: sink === w2.meta.events };
  },
};

// ---- W4: does the view keep up with the network? ------------------------------------------------
/**
 * One storyteller turn from the emulator at `base` (`words`, `paceMs` per delta, one frame per
 * write). The SDK's published snapshots (what a UI renders) and a raw `fetch` reader of the same
 * turn, both on this page's main thread, are timestamped with performance.now(): the reader per
 * frame (`id:` = sequence number), the SDK per listener call (the turn's `lastSequenceNumber`).
 * Returns the raw stamps; bench/browser.mjs computes the lag.
 */
async function w4({ base, words, paceMs }) {
  const lagClient = new AgentClient({ baseUrl: base, storage: "memory" });
  const session = await lagClient.createSession({ agent: { name: "storyteller" } });
  const views = []; // [t, lastSequenceNumber] per published snapshot
  let viewDoneAt = NaN;
  let done;
  const viewDone = new Promise((r) => (done = r));
  const unsubscribe = session.subscribe(() => {
    const t = performance.now();
    const turn = session.getSnapshot().turns.at(-1);
    if (!turn) return;
    views.push([t, turn.lastSequenceNumber ?? 0]);
    if (turn.status === "done" && Number.isNaN(viewDoneAt)) {
      viewDoneAt = t;
      done();
    }
  });
  const t0 = performance.now();
  const turnId = await session.send(`Tell a story, ${words} words, ${paceMs} ms`);
  const raw = []; // performance.now() at which the raw reader parsed sequence number i + 1
  let rawDoneAt = NaN;
  const res = await realFetch(`${base}/api/v1/sessions/${session.id}/turns/${encodeURIComponent(turnId)}/subscribe?after_sequence_number=0`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  for (;;) {
    const { done: end, value } = await reader.read();
    if (end) break;
    const t = performance.now();
    text += value;
    let cut;
    while ((cut = text.indexOf("\n\n")) >= 0) {
      const frame = text.slice(0, cut);
      text = text.slice(cut + 2);
      const id = /(?:^|\n)id: ?(\d+)/.exec(frame);
      if (id) raw[Number(id[1]) - 1] = t;
      if (frame.includes('"type":"turn.done"')) rawDoneAt = t;
    }
  }
  await Promise.race([viewDone, new Promise((r) => setTimeout(r, 30_000))]);
  unsubscribe();
  globalThis.__keep = session;
  return { t0, raw, rawDoneAt, views, viewDoneAt, frames: raw.length };
}

let wasm = null;

globalThis.__bench = {
  ready: false,
  /** name: a contender key; mode: "net" | "mem". */
  async run(name, mode = "net") {
    if (name.startsWith("w1")) await loadW1();
    else await loadW2();
    inPage = mode === "mem";
    served = 0;
    try {
      const r = await contenders[name]();
      return { ...r, servedInPage: served };
    } finally {
      inPage = false;
    }
  },
  async load(which) {
    if (which === "w1") await loadW1();
    else await loadW2();
  },
  w4,
  /** Set by the memory figure: W2 runs leave the full verification to `verifyKept`. */
  deferVerify: false,
  verifyKept: () => verifyW2(),
  wasmMemoryBytes: () => wasm.memory.buffer.byteLength,
  drop() {
    globalThis.__keep = null;
  },
};

try {
  ({ AgentClient, init } = await import(`/${PKG}/dist/index.js`));
  ({ default: wasmInit } = await import(`/${PKG}/wasm/forgestream_web.js`));
  await init();
  wasm = await wasmInit(); // the same instance the SDK uses: exposes `memory` to the bench only
  if (CMP) {
    const cmp = await import("/pkgcmp/dist/index.js");
    await cmp.init();
    CmpClient = cmp.AgentClient;
  }
  __bench.ready = true;
  status("ready");
} catch (e) {
  __bench.error = String(e?.stack ?? e);
  status(`error: ${e}`);
}
