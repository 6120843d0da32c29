#!/usr/bin/env node
// Deterministic benchmark workloads for forgestream (Node 20, ESM, no dependencies).
//
//   node bench/workloads.mjs [--force] [--out DIR]
//
// Writes into target/bench/ (or DIR):
//   w1.sse         one long live turn framed exactly like TrueForge (`data: <json>\nid: <seq>\n\n`)
//   w1.json        its metadata: sizes, counts, expected text per message (for verification)
//   w2-pages.json  a persisted session timeline of 100,000 merged events as
//                  `GET /sessions/{sid}/events` pages (newest first, 100 per page). The file is a
//                  JSON array of pages with exactly one page per line, so it can be read whole
//                  (JSON.parse) or page by page (split on newlines, drop `[`, `]` and the comma).
//   w2.json        its metadata and expectations
//
// Everything comes from a seeded PRNG and a virtual clock, so the bytes are identical on every
// machine. Files are left alone when they exist, match the recorded size and were written by
// this GENERATOR_VERSION (use --force to rewrite).

import { closeSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const GENERATOR_VERSION = 1;

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '..');

// ---------------------------------------------------------------- deterministic primitives

/** sfc32: small, fast, good-quality 32-bit PRNG; seeded from four words. */
export function makeRng(seed) {
  let a = 0x9e3779b9 ^ seed;
  let b = 0x243f6a88 + seed;
  let c = 0xb7e15162 ^ (seed << 7);
  let d = 1;
  const next = () => {
    a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  for (let i = 0; i < 16; i++) next();
  return {
    u32: next,
    /** Integer in [lo, hi] inclusive. */
    int(lo, hi) {
      return lo + (next() % (hi - lo + 1));
    },
    /** True with probability p. */
    chance(p) {
      return next() / 4294967296 < p;
    },
    pick(list) {
      return list[next() % list.length];
    },
  };
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * Lowercase ULID-like ids (10 time chars + 16 random chars) from a virtual clock. The time part
 * strictly increases on every call, so ids sort in creation order.
 */
function makeIds(rng, startMs) {
  let last = startMs - 1;
  return {
    /** A new id stamped at `ms` (bumped past the previous id if needed); returns {id, ms}. */
    next(ms) {
      const t = Math.max(ms, last + 1);
      last = t;
      let time = '';
      let rest = t;
      for (let i = 0; i < 10; i++) {
        time = CROCKFORD[rest % 32] + time;
        rest = Math.floor(rest / 32);
      }
      let rand = '';
      for (let i = 0; i < 16; i++) rand += CROCKFORD[rng.u32() & 31];
      return { id: time + rand, ms: t };
    },
  };
}

function uuid(rng) {
  const hex = (n) => {
    let s = '';
    for (let i = 0; i < n; i++) s += (rng.u32() & 15).toString(16);
    return s;
  };
  const variant = '89ab'[rng.u32() & 3];
  return `${hex(8)}-${hex(4)}-4${hex(3)}-${variant}${hex(3)}-${hex(12)}`;
}

function callId(rng) {
  let s = 'call_';
  for (let i = 0; i < 16; i++) s += (rng.u32() & 15).toString(16);
  return s;
}

const iso = (ms) => new Date(ms).toISOString();

// Mixed ASCII / Latin-1 / CJK / emoji vocabulary (whole code points only, so any split between
// deltas is at a character boundary, as a real model's token stream is).
const WORDS = [
  'the', 'order', 'status', 'was', 'shipped', 'and', 'refund', 'is', 'pending', 'for', 'customer',
  'we', 'checked', 'inventory', 'total', 'EUR', 'invoice', 'delivery', 'tracking', 'number',
  'café', 'naïve', 'über', 'Zoë', 'Müller', 'résumé', 'façade', 'déjà', 'vu', 'Ørsted', 'Straße',
  '日本語', 'テキスト', 'データ', '注文', '配送', '数据', '한국어', 'Привет', 'γειά',
  '🚀', '✨', '👍🏽', '📦', '🇯🇵', '✅', '—', '€', '…', '§4.2',
];

function words(rng, lo, hi) {
  const n = rng.int(lo, hi);
  const out = [];
  for (let i = 0; i < n; i++) out.push(rng.pick(WORDS));
  return out.join(' ');
}

const utf8Bytes = (s) => Buffer.byteLength(s, 'utf8');
const codePoints = (s) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

/** Splits `text` into fragments of `lo..hi` code points (never inside a surrogate pair). */
function fragments(rng, text, lo, hi) {
  const cps = Array.from(text);
  const out = [];
  for (let i = 0; i < cps.length; ) {
    const n = rng.int(lo, hi);
    out.push(cps.slice(i, i + n).join(''));
    i += n;
  }
  return out;
}

function makeUsage(rng, outputTokens) {
  return {
    input_tokens: rng.int(400, 9000),
    output_tokens: outputTokens,
    cache_read_tokens: rng.int(0, 4) === 0 ? rng.int(100, 3000) : 0,
    input_tokens_breakdown: {
      harness: rng.int(700, 2000),
      skills: 0,
      instructions: rng.int(0, 40),
      tool_definitions: rng.int(100, 400),
      messages: rng.int(0, 6000),
    },
  };
}

function addMetrics(metrics, usage) {
  metrics.total_input_tokens += usage.input_tokens;
  metrics.total_output_tokens += usage.output_tokens;
  metrics.total_tokens += usage.input_tokens + usage.output_tokens;
  metrics.total_cache_read_tokens += usage.cache_read_tokens;
}

const emptyMetrics = () => ({
  total_input_tokens: 0,
  total_output_tokens: 0,
  total_tokens: 0,
  total_cache_read_tokens: 0,
  total_reasoning_tokens: 0,
});

const MCP_TOOLS = ['get_order', 'search_docs', 'list_refunds'];

function mcpArguments(rng, name) {
  switch (name) {
    case 'get_order':
      return JSON.stringify({ order_id: `ORD-${rng.int(1000, 9999)}`, include: ['items', 'shipping'] });
    case 'search_docs':
      return JSON.stringify({ query: words(rng, 3, 8), limit: rng.int(3, 20), lang: rng.pick(['en', 'de', 'ja']) });
    default:
      return JSON.stringify({ customer: rng.pick(['Zoë Müller', '山田太郎', 'Ana Núñez']), since: '2026-01-01' });
  }
}

function mcpResult(rng, name) {
  return JSON.stringify(
    {
      tool: name,
      status: rng.pick(['shipped', 'pending', 'refunded']),
      total: rng.int(100, 99999) / 100,
      currency: 'EUR',
      note: words(rng, 4, 12),
    },
    null,
    2,
  );
}

// ---------------------------------------------------------------- W1: one long live turn

const W1 = {
  seed: 1,
  mainMessages: 17, // + 3 subagent messages = 20 model messages
  contentDeltas: 2000,
  spawnAt: [2, 7, 12], // main messages that call create_sub_agent
};

function generateW1() {
  const rng = makeRng(W1.seed);
  let clock = Date.UTC(2026, 11, 1, 9, 0, 0);
  const ids = makeIds(rng, clock);
  const tick = (lo = 0, hi = 2) => (clock += rng.int(lo, hi));
  const newId = () => {
    const { id, ms } = ids.next(tick(1, 3));
    clock = ms;
    return id;
  };
  const sessionId = newId();
  const turnId = `${newId()}.local`;
  const metrics = emptyMetrics();
  const expected = []; // per model message, in placeholder order

  // One model message as live events: placeholder, content deltas, tool-call deltas, final delta.
  // `calls` = [{name, tool_info, arguments}] get ids here. Returns a generator; `info` is filled
  // in as it runs (the merged message once finished).
  function* modelMessage(threadId, calls, finishReason, info) {
    const id = newId();
    const createdAt = iso(clock);
    yield { type: 'model.message', thread_id: threadId, created_at: createdAt, id };
    let text = '';
    for (let i = 0; i < W1.contentDeltas; i++) {
      const piece = (i === 0 ? '' : ' ') + words(rng, 1, 3);
      text += piece;
      const delta = { content: piece, type: 'model.message.delta', id, thread_id: threadId };
      if (i === 0) delta.created_at = iso(tick(5, 30));
      else tick(0, 1);
      yield delta;
    }
    const toolCalls = [];
    for (let index = 0; index < calls.length; index++) {
      const call = calls[index];
      const cid = callId(rng);
      call.id = cid;
      yield {
        tool_calls: [
          { index, id: cid, type: 'function', function: { name: call.name, arguments: '' }, tool_info: call.tool_info },
        ],
        type: 'model.message.delta',
        id,
        thread_id: threadId,
      };
      for (const frag of fragments(rng, call.arguments, 4, 12)) {
        tick(0, 1);
        yield { tool_calls: [{ index, function: { arguments: frag } }], type: 'model.message.delta', id, thread_id: threadId };
      }
      toolCalls.push({ id: cid, type: 'function', function: { name: call.name, arguments: call.arguments }, tool_info: call.tool_info });
    }
    const usage = makeUsage(rng, W1.contentDeltas + calls.length * 12);
    addMetrics(metrics, usage);
    yield { type: 'model.message.delta', id, thread_id: threadId, finish_reason: finishReason, usage };
    const merged = { content: text, type: 'model.message', id, created_at: iso(tick(1, 3)), thread_id: threadId };
    if (toolCalls.length > 0) merged.tool_calls = toolCalls;
    merged.finish_reason = finishReason;
    merged.usage = usage;
    info.merged = merged;
    expected.push({
      id,
      thread_id: threadId,
      text_bytes: utf8Bytes(text),
      text_chars: codePoints(text),
      tool_calls: toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments_bytes: utf8Bytes(c.function.arguments) })),
    });
  }

  const threads = [];

  // A subagent: its one message, then main's (empty) tool.response to the spawning call and
  // thread.done carrying the child's merged message.
  function* subagent(threadId, title, parentCallId) {
    const info = {};
    yield* modelMessage(threadId, [], 'stop', info);
    yield { type: 'tool.response', id: newId(), created_at: iso(clock), thread_id: 'main', tool_call_id: parentCallId, content: '' };
    const parent = { tool_call_id: parentCallId, thread_id: 'main' };
    yield { type: 'thread.done', id: newId(), created_at: iso(clock), parent, thread_id: threadId, title, state: { status: 'done', output: info.merged } };
  }

  // Runs `main` to completion while stepping the running subagents at random, one event at a
  // time (each runnable stream equally likely), so child deltas interleave with main's.
  function* interleave(main, children) {
    const streams = [main, ...children.map((c) => c.gen)];
    let mainDone = false;
    while (!mainDone) {
      const k = rng.u32() % streams.length;
      const step = streams[k].next();
      if (step.done) {
        if (k === 0) mainDone = true;
        else {
          streams.splice(k, 1);
          children.splice(k - 1, 1);
        }
      } else {
        yield step.value;
      }
    }
  }

  function* turn() {
    yield {
      type: 'turn.created',
      id: newId(),
      turn_id: turnId,
      previous_turn_id: null,
      input: [{ type: 'user.message', content: 'Audit every open order, 日本語 summary please ✨' }],
      state: { status: 'running' },
      created_at: iso(clock),
      thread_id: null,
    };
    yield {
      type: 'mcp.initialize',
      id: newId(),
      created_at: iso(clock),
      thread_id: 'main',
      mcp_servers: [{ name: 'orders', id: 'orders', transport_type: 'streamable-http' }],
    };
    const running = [];
    let last = null;
    for (let m = 0; m < W1.mainMessages; m++) {
      const final = m === W1.mainMessages - 1;
      const spawn = W1.spawnAt.includes(m);
      let calls = [];
      if (spawn) {
        const name = `researcher-${threads.length + 1}`;
        calls = [{
          name: 'create_sub_agent',
          tool_info: { type: 'truefoundry-system', name: 'create_sub_agent' },
          arguments: JSON.stringify({ name, input: `[[child]] ${words(rng, 6, 14)}` }),
          title: name,
        }];
      } else if (!final) {
        const n = rng.chance(0.3) ? 2 : 1;
        for (let i = 0; i < n; i++) {
          const name = rng.pick(MCP_TOOLS);
          calls.push({ name, tool_info: { type: 'mcp', name, server_id: 'orders', server_name: 'orders' }, arguments: mcpArguments(rng, name) });
        }
      }
      const info = {};
      yield* interleave(modelMessage('main', calls, final ? 'stop' : 'tool_calls', info), running);
      last = info.merged;
      if (spawn) {
        const call = calls[0];
        const threadId = uuid(rng);
        threads.push({ thread_id: threadId, tool_call_id: call.id, title: call.title });
        const input = JSON.parse(call.arguments).input;
        yield {
          type: 'thread.created',
          id: newId(),
          agent_info: { type: 'dynamic', name: call.title, input },
          created_at: iso(clock),
          parent: { tool_call_id: call.id, thread_id: 'main' },
          title: call.title,
          thread_id: threadId,
        };
        running.push({ gen: subagent(threadId, call.title, call.id) });
      } else {
        for (const call of calls) {
          tick(20, 200);
          yield { tool_call_id: call.id, content: mcpResult(rng, call.name), type: 'tool.response', id: newId(), created_at: iso(clock), thread_id: 'main' };
        }
      }
    }
    // Children still running finish before the turn does.
    while (running.length > 0) {
      const child = running[0];
      for (let step = child.gen.next(); !step.done; step = child.gen.next()) yield step.value;
      running.shift();
    }
    const doneAt = iso(tick(10, 50));
    yield {
      type: 'turn.done',
      id: newId(),
      created_at: doneAt,
      state: { status: 'done', output: last, required_actions: [], completed_at: doneAt, metrics },
      thread_id: null,
    };
  }

  const frames = [];
  const counts = {};
  let seq = 0;
  for (const event of turn()) {
    seq += 1;
    counts[event.type] = (counts[event.type] ?? 0) + 1;
    frames.push(`data: ${JSON.stringify(event)}\nid: ${seq}\n\n`);
  }
  const body = Buffer.from(frames.join(''), 'utf8');
  const meta = {
    generator_version: GENERATOR_VERSION,
    workload: 'w1',
    description: 'one live TrueForge turn: 20 model messages x 2,000 content deltas, streamed tool calls, 3 interleaved subagents',
    seed: W1.seed,
    bytes: body.length,
    events: seq,
    first_seq: 1,
    last_seq: seq,
    session_id: sessionId,
    turn_id: turnId,
    event_counts: counts,
    model_messages: expected.length,
    content_deltas_per_message: W1.contentDeltas,
    threads,
    total_text_bytes: expected.reduce((s, m) => s + m.text_bytes, 0),
    total_text_chars: expected.reduce((s, m) => s + m.text_chars, 0),
    tool_calls: expected.reduce((s, m) => s + m.tool_calls.length, 0),
    messages: expected,
  };
  return { body, meta };
}

// ---------------------------------------------------------------- W2: persisted session history

const W2 = { seed: 2, events: 100_000, pageSize: 100 };

function generateW2() {
  const rng = makeRng(W2.seed);
  let clock = Date.UTC(2026, 9, 1, 8, 0, 0);
  const ids = makeIds(rng, clock);
  const tick = (lo, hi) => (clock += rng.int(lo, hi));
  const newId = (lo = 1, hi = 40) => {
    const { id, ms } = ids.next(tick(lo, hi));
    clock = ms;
    return id;
  };
  const sessionId = newId();
  const timeline = []; // oldest first: {turn_id, event}
  let turns = 0;
  let messages = 0;
  let toolCalls = 0;
  let textBytes = 0;
  let previousTurnId = null;

  const message = (turnId, content, calls, finishReason) => {
    const usage = makeUsage(rng, rng.int(20, 900));
    const id = newId(200, 4000);
    const event = { type: 'model.message', id, created_at: iso(clock), thread_id: 'main' };
    if (content !== null) event.content = content;
    if (calls.length > 0) event.tool_calls = calls;
    event.finish_reason = finishReason;
    event.usage = usage;
    messages += 1;
    toolCalls += calls.length;
    if (content !== null) textBytes += utf8Bytes(content);
    return { event, usage };
  };

  // One turn of exactly `size` events (size >= 3): turn.created, [mcp.initialize],
  // rounds x (model.message with a tool call, tool.response), final model.message, turn.done.
  const turn = (size) => {
    const mcp = (size - 3) % 2 === 1;
    const rounds = (size - 3 - (mcp ? 1 : 0)) / 2;
    const turnId = `${newId(30_000, 600_000)}.local`;
    const metrics = emptyMetrics();
    const push = (event) => timeline.push({ turn_id: turnId, event });
    push({
      type: 'turn.created',
      id: newId(),
      turn_id: turnId,
      previous_turn_id: previousTurnId,
      input: [{ type: 'user.message', content: words(rng, 4, 12) }],
      state: { status: 'running' },
      created_at: iso(clock),
      thread_id: null,
    });
    if (mcp) {
      push({ type: 'mcp.initialize', id: newId(), created_at: iso(clock), thread_id: 'main', mcp_servers: [{ name: 'orders', id: 'orders', transport_type: 'streamable-http' }] });
    }
    for (let r = 0; r < rounds; r++) {
      const name = rng.pick(MCP_TOOLS);
      const call = { id: callId(rng), type: 'function', function: { name, arguments: mcpArguments(rng, name) }, tool_info: { type: 'mcp', name, server_id: 'orders', server_name: 'orders' } };
      const content = rng.chance(0.5) ? words(rng, 3, 15) : null;
      const { event, usage } = message(turnId, content, [call], 'tool_calls');
      addMetrics(metrics, usage);
      push(event);
      push({ tool_call_id: call.id, content: mcpResult(rng, name), type: 'tool.response', id: newId(50, 900), created_at: iso(clock), thread_id: 'main' });
    }
    const { event: final, usage } = message(turnId, words(rng, 8, 40), [], 'stop');
    addMetrics(metrics, usage);
    push(final);
    const doneAt = iso(tick(5, 60));
    push({ type: 'turn.done', id: newId(), created_at: doneAt, state: { status: 'done', output: final, required_actions: [], completed_at: doneAt, metrics }, thread_id: null });
    turns += 1;
    previousTurnId = turnId;
  };

  let remaining = W2.events;
  while (remaining > 0) {
    // Random shape (3..10 events), except that the last turn takes exactly what is left.
    const size = remaining <= 12 ? remaining : rng.int(3, 10);
    turn(size);
    remaining -= size;
  }

  const newestFirst = timeline.reverse();
  const pages = [];
  const pageCount = Math.ceil(newestFirst.length / W2.pageSize);
  const token = (n) => Buffer.from(`${sessionId}:${n * W2.pageSize}`).toString('base64url');
  for (let p = 0; p < pageCount; p++) {
    const pagination = { limit: W2.pageSize };
    if (p + 1 < pageCount) pagination.next_page_token = token(p + 1);
    if (p > 0) pagination.previous_page_token = token(p - 1);
    pages.push(JSON.stringify({ data: newestFirst.slice(p * W2.pageSize, (p + 1) * W2.pageSize), pagination, last_turn_id: previousTurnId }));
  }
  const body = Buffer.from(`[\n${pages.join(',\n')}\n]\n`, 'utf8');
  const meta = {
    generator_version: GENERATOR_VERSION,
    workload: 'w2',
    description: 'persisted session timeline (merged events, no deltas) as GET /sessions/{sid}/events pages, newest first',
    format: 'JSON array of pages, one page per line',
    seed: W2.seed,
    bytes: body.length,
    events: newestFirst.length,
    pages: pages.length,
    page_size: W2.pageSize,
    session_id: sessionId,
    last_turn_id: previousTurnId,
    turns,
    model_messages: messages,
    tool_calls: toolCalls,
    total_text_bytes: textBytes,
  };
  return { body, meta };
}

// ---------------------------------------------------------------- driver

function upToDate(dataPath, metaPath) {
  try {
    const meta = JSON.parse(readFileSync(metaPath, 'utf8'));
    return meta.generator_version === GENERATOR_VERSION && statSync(dataPath).size === meta.bytes;
  } catch {
    return false;
  }
}

function writeAtomic(path, data) {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, data);
  } finally {
    closeSync(fd);
  }
  // Readers never see a half-written file: rename is atomic within one filesystem.
  renameSync(tmp, path);
}

function main() {
  const args = process.argv.slice(2);
  const force = args.includes('--force');
  const outAt = args.indexOf('--out');
  const out = outAt >= 0 ? resolve(args[outAt + 1]) : join(ROOT, 'target', 'bench');
  mkdirSync(out, { recursive: true });
  const jobs = [
    { name: 'W1', data: 'w1.sse', meta: 'w1.json', make: generateW1 },
    { name: 'W2', data: 'w2-pages.json', meta: 'w2.json', make: generateW2 },
  ];
  for (const job of jobs) {
    const dataPath = join(out, job.data);
    const metaPath = join(out, job.meta);
    if (!force && upToDate(dataPath, metaPath)) {
      console.log(`[workloads] ${job.name}: ${dataPath} up to date (generator v${GENERATOR_VERSION})`);
      continue;
    }
    const started = process.hrtime.bigint();
    const { body, meta } = job.make();
    writeAtomic(dataPath, body);
    writeAtomic(metaPath, `${JSON.stringify(meta, null, 2)}\n`);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    console.log(
      `[workloads] ${job.name}: wrote ${dataPath} (${(meta.bytes / 1e6).toFixed(2)} MB, ${meta.events} events, ` +
        `${meta.total_text_bytes} text bytes) in ${ms.toFixed(0)} ms`,
    );
  }
}

main();
