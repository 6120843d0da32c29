// Micro-benchmark of `snapshot.messages` per streaming snapshot on a synthetic long session
// (issues 16/19): the full path the chat store used before (`shareStructure(prev,
// deriveMessages(snapshot, []))`, per-turn caches but an index rebuilt over every turn) against
// `MessageDeriver.update` (incremental). Each snapshot replaces only the last (streaming) turn's
// object, as `SnapshotStore` does; its text grows by a few words.
//
//   node pkg/test/messages.bench.mjs [path/to/messages.js]   (default pkg/dist/messages.js;
//                                                            build with tsc -p pkg first)
// Environment: BENCH_TURNS (default 15000), BENCH_SNAPSHOTS (default 60).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const modPath = resolve(process.argv[2] ?? new URL('../dist/messages.js', import.meta.url).pathname);
const { deriveMessages, shareStructure, MessageDeriver } = await import(pathToFileURL(modPath).href);
const TURNS = Number(process.env.BENCH_TURNS) || 15_000;
const SNAPSHOTS = Number(process.env.BENCH_SNAPSHOTS) || 60;
const f = Object.freeze;

const call = (id, index) => f({ index, toolCallId: id, name: 'lookup_order', argumentsText: '{"order":"ORD-1"}', arguments: f({ order: 'ORD-1' }), argumentsError: null, toolInfo: null, resultEventId: null, resultTurnId: null, spawnedThreadIds: f([]), uncertain: false });
const message = (turnId, id, text, calls, complete = true) =>
  f({ key: id, turnId, threadId: 'main', version: 1, createdAt: null, body: f({ kind: 'message', id, name: null, content: text, reasoning: null, refusal: null, toolCalls: f(calls.map(call)), finishReason: complete ? 'stop' : null, usage: null, complete, interrupted: false }) });
const result = (turnId, id, callId) => f({ key: id, turnId, threadId: 'main', version: 1, createdAt: null, body: f({ kind: 'toolResult', toolCallId: callId, content: '{"status":"shipped"}', callMessageId: null, callTurnId: null }) });
const turn = (turnId, items, status = 'done') =>
  f({ turnId, previousTurnId: null, status, cancelReason: null, errorMessage: null, input: f([f({ type: 'user.message', content: `question ${turnId}` })]), createdAt: null, completedAt: null, items: f(items), usage: f({ inputTokens: 0, outputTokens: 0 }), lastSequenceNumber: null, lateEventsIgnored: 0, version: 1 });

// ~2.5 model messages and ~1.5 tool calls (with results) per turn, like W2.
const turns = [];
for (let t = 0; t < TURNS; t++) {
  const id = `t${t}`;
  const nCalls = t % 2 ? 2 : 1;
  const items = [];
  for (let m = 0; m < (t % 2 ? 3 : 2); m++) items.push(message(id, `${id}-m${m}`, `answer ${t} part ${m} order refund shipped`, m === 0 ? Array.from({ length: nCalls }, (_, c) => `${id}-c${c}`) : []));
  for (let c = 0; c < nCalls; c++) items.push(result(id, `${id}-r${c}`, `${id}-c${c}`));
  turns.push(turn(id, items));
}
const base = { sessionId: 's', pending: f([]), threads: f([]), usage: null, connection: f({ status: 'live', turnId: 'live' }), error: null };
let live = '';
const snapshots = Array.from({ length: SNAPSHOTS + 1 }, (_, i) => {
  live += ` word${i}`;
  return f({ ...base, turns: f([...turns, turn('live', [message('live', 'live-m0', live, [], false)], 'running')]) });
});

function measure(name, step) {
  const ms = [];
  let out;
  snapshots.forEach((snap, i) => {
    const t0 = performance.now();
    out = step(snap);
    if (i > 0) ms.push(performance.now() - t0); // the first derives everything in both
  });
  ms.sort((a, b) => a - b);
  console.log(`${name}: per streaming snapshot median ${ms[ms.length >> 1].toFixed(3)} ms (min ${ms[0].toFixed(3)}, max ${ms.at(-1).toFixed(3)}; ${out.length} chat messages)`);
}

console.log(`${TURNS} turns, ${SNAPSHOTS} streaming snapshots (node ${process.version})`);
let prev = [];
measure('before  shareStructure(prev, deriveMessages(s))', (s) => (prev = shareStructure(prev, deriveMessages(s, []))));
const d = new MessageDeriver();
measure('after   MessageDeriver.update(s)             ', (s) => d.update(s, []));
