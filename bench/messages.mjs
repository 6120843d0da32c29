// `snapshot.messages` per snapshot over a W2-sized view (issue 13: the derivation must cost what
// changed, not the whole session). Builds a view shaped like W2 (bench/workloads.mjs: 15,419
// turns, 38,462 model messages, 23,043 tool calls with results, ~3.2 MB of text) in the core's
// view shapes, then streams a new turn at its end: each snapshot replaces only that turn's
// object, as `SnapshotStore` does, and is derived + shared as `ChatStore` does
// (`shareStructure(prev, deriveMessages(snapshot, []))`). Prints ms per snapshot.
//
//   node bench/messages.mjs [path/to/messages.js]    (default: pkg/dist/messages.js, after
//                                                    scripts/build-wasm or tsc -p pkg)
// Environment: BENCH_MESSAGES_TURNS (default 15419), BENCH_MESSAGES_SNAPSHOTS (default 40).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const modPath = resolve(process.argv[2] ?? new URL('../pkg/dist/messages.js', import.meta.url).pathname);
const { deriveMessages, shareStructure } = await import(pathToFileURL(modPath).href);
const TURNS = Number(process.env.BENCH_MESSAGES_TURNS) || 15_419;
const SNAPSHOTS = Number(process.env.BENCH_MESSAGES_SNAPSHOTS) || 40;

const freeze = (o) => Object.freeze(o);
const words = (n, seed) => Array.from({ length: n }, (_, i) => ['order', 'refund', 'naïve', 'データ', 'shipped', 'total'][(seed + i) % 6]).join(' ');

function message(turnId, id, text, calls, complete = true) {
  return freeze({
    key: id, turnId, threadId: 'main', version: 1, createdAt: null,
    body: freeze({
      kind: 'message', id, name: null, content: text, reasoning: null, refusal: null,
      toolCalls: freeze(calls.map((c, index) => freeze({ index, toolCallId: c, name: 'lookup_order', argumentsText: '{"order":"ORD-1"}', arguments: freeze({ order: 'ORD-1' }), argumentsError: null, toolInfo: null, resultEventId: null, resultTurnId: null, spawnedThreadIds: freeze([]), uncertain: false }))),
      finishReason: complete ? 'stop' : null, usage: null, complete, interrupted: false,
    }),
  });
}
const result = (turnId, id, callId) => freeze({ key: id, turnId, threadId: 'main', version: 1, createdAt: null, body: freeze({ kind: 'toolResult', toolCallId: callId, content: '{"status":"shipped"}', callMessageId: null, callTurnId: null }) });
function turn(turnId, items, status = 'done') {
  return freeze({ turnId, previousTurnId: null, status, cancelReason: null, errorMessage: null, input: freeze([freeze({ type: 'user.message', content: `question ${turnId}` })]), createdAt: null, completedAt: null, items: freeze(items), usage: freeze({ inputTokens: 0, outputTokens: 0 }), lastSequenceNumber: null, lateEventsIgnored: 0, version: 1 });
}

// ~2.5 messages and ~1.5 tool calls (with results) per turn, ~84 bytes of text per message.
const turns = [];
let messages = 0, calls = 0, text = 0;
for (let t = 0; t < TURNS; t++) {
  const id = `t${String(t).padStart(6, '0')}`;
  const items = [];
  const nMessages = t % 2 ? 3 : 2;
  const nCalls = t % 2 ? 2 : 1;
  for (let m = 0; m < nMessages; m++) {
    const callIds = m === 0 ? Array.from({ length: nCalls }, (_, c) => `${id}-c${c}`) : [];
    const body = words(12, t + m);
    text += Buffer.byteLength(body);
    items.push(message(id, `${id}-m${m}`, body, callIds));
    messages++;
  }
  for (let c = 0; c < nCalls; c++, calls++) items.push(result(id, `${id}-r${c}`, `${id}-c${c}`));
  turns.push(turn(id, items));
}
const base = { sessionId: 's', pending: freeze([]), threads: freeze([]), usage: null, connection: freeze({ status: 'live', turnId: 'live' }), error: null };
const snapshotWith = (liveText) => freeze({ ...base, turns: freeze([...turns, turn('live', [message('live', 'live-m0', liveText, [], false)], 'running')]) });

let prev = [];
const ms = [];
let live = '';
for (let i = 0; i <= SNAPSHOTS; i++) {
  live += ` ${words(3, i)}`;
  const snap = snapshotWith(live);
  const t0 = performance.now();
  prev = shareStructure(prev, deriveMessages(snap, []));
  const dt = performance.now() - t0;
  if (i > 0) ms.push(dt); // the first one derives everything in both versions
}
ms.sort((a, b) => a - b);
const median = ms[Math.floor(ms.length / 2)];
console.log(`view: ${TURNS.toLocaleString('en-US')} turns, ${messages.toLocaleString('en-US')} messages, ${calls.toLocaleString('en-US')} tool calls, ${(text / 1e6).toFixed(2)} MB text; ${prev.length.toLocaleString('en-US')} chat messages`);
console.log(`${modPath}: per streaming snapshot median ${median.toFixed(2)} ms (min ${ms[0].toFixed(2)}, max ${ms.at(-1).toFixed(2)}, ${ms.length} snapshots)`);
