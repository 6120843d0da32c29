// Differential test: forgestream-core's SSE parser (through the native example `sse_dump`)
// against the npm package eventsource-parser 4.x, on N deterministic pseudo-random streams.
//
//   node tests/diff/sse-diff.mjs                 # N=2000, seed 1
//   N=100000 SEED=7 node tests/diff/sse-diff.mjs # long run
//
// From N=20000 on, the example is built with --release (debug JSON/hex handling dominates).
// SSE_DUMP_BIN=/path/to/sse_dump skips the build and uses that binary.
// Builds the example with `cargo build --example sse_dump -p forgestream-core` (CARGO_TARGET_DIR
// honoured), feeds every case to both parsers with the same network reads, compares the items
// and exits 1 on any unexplained difference. Documented deviations: tests/diff/README.md.
// Ends with a plain `N passed, N failed` line.

import {spawnSync} from 'node:child_process'
import {fileURLToPath} from 'node:url'
import path from 'node:path'
import {createParser} from 'eventsource-parser'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const N = Number.parseInt(process.env.N ?? process.env.SSE_DIFF_N ?? '2000', 10)
const SEED = Number.parseInt(process.env.SEED ?? process.env.SSE_DIFF_SEED ?? '1', 10)
const BATCH = 500 // cases per sse_dump run (keeps each stdin well under memory limits)

// ---------------------------------------------------------------------------------------------
// Deterministic generator (mulberry32).

function rng(seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)) // inclusive
  const pick = (list) => list[int(0, list.length - 1)]
  const chance = (p) => next() < p
  return {next, int, pick, chance}
}

const enc = new TextEncoder()
const BOM = [0xef, 0xbb, 0xbf]
const TEXT_PIECES = ['a', 'hello', ' ', '  ', ':', ': ', '{"type":"x"}', 'é', '€', '日本語', '😀', '👍🏽',
  '\0', '\t', 'data', 'id', 'retry', 'event', '\u2028', '\ufeff', '\ufffd']
const INVALID_UTF8 = [[0xff], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80], [0x80], [0xc0, 0xaf]]

function text(r, maxPieces) {
  const parts = []
  const count = r.int(0, maxPieces)
  for (let i = 0; i < count; i++) {
    if (r.chance(0.04)) parts.push(...INVALID_UTF8[r.int(0, INVALID_UTF8.length - 1)])
    else parts.push(...enc.encode(r.pick(TEXT_PIECES)))
  }
  return parts
}

function retryValue(r) {
  const kind = r.int(0, 9)
  if (kind <= 3) return enc.encode(String(r.int(0, 10 ** r.int(1, 9))))
  if (kind === 4) return enc.encode('0'.repeat(r.int(1, 3)) + String(r.int(0, 999)))
  if (kind === 5) return enc.encode(Array.from({length: r.int(16, 25)}, () => r.int(0, 9)).join(''))
  return enc.encode(r.pick(['', ' 1000', '1.5', '-1', '12a', '1e3', '٣', '+5', '0x10', '1 ', '１']))
}

function line(r) {
  const k = r.int(0, 99)
  const b = (s) => [...enc.encode(s)]
  if (k < 30) return [...b(r.pick(['data: ', 'data:', 'data:  '])), ...text(r, 6)]
  if (k < 36) return b('data')
  if (k < 44) return [...b(r.pick(['id: ', 'id:', 'id'])), ...(r.chance(0.15) ? b(`${r.int(0, 9)}\0${r.int(0, 9)}`) : text(r, 2))]
  if (k < 50) return [...b(r.pick(['event: ', 'event:'])), ...text(r, 2)]
  if (k < 57) return [...b(r.pick(['retry: ', 'retry:'])), ...retryValue(r)]
  if (k < 65) return [...b(':'), ...text(r, 3)]
  if (k < 70) return [...b(r.pick(['foo: ', 'DATA: ', 'Data:', ' data: ', 'data : ', 'ID: ', 'dat', 'i'])), ...text(r, 2)]
  if (k < 72) return text(r, 3) // anything, possibly no colon
  if (k < 74) return [...b('data: '), ...b('x'.repeat(r.int(1000, 70000)))] // long line
  if (k < 76) return [...BOM, ...b('data: mid-stream BOM')]
  return [] // blank line: dispatch
}

function terminator(r, style) {
  const s = style === 'mixed' ? r.pick(['\n', '\r', '\r\n']) : style
  return [...enc.encode(s)]
}

function connectionBytes(r) {
  const out = []
  const bomKind = r.int(0, 9)
  if (bomKind === 0) out.push(...BOM)
  else if (bomKind === 1) out.push(...BOM, ...BOM)
  else if (bomKind === 2) out.push(...BOM.slice(0, r.int(1, 2)))
  const style = r.pick(['\n', '\r', '\r\n', 'mixed', 'mixed'])
  const lines = r.int(0, 30)
  for (let i = 0; i < lines; i++) {
    out.push(...line(r))
    out.push(...terminator(r, style))
    if (r.chance(0.25)) out.push(...terminator(r, style)) // frame end
  }
  if (r.chance(0.3)) out.push(...line(r)) // unterminated tail
  return Uint8Array.from(out)
}

function chunk(r, bytes) {
  const reads = []
  const mode = r.int(0, 5)
  let i = 0
  while (i < bytes.length) {
    let size
    if (mode === 0) size = bytes.length
    else if (mode === 1) size = 1
    else if (mode === 2) size = r.int(1, 4)
    else if (mode === 3) size = r.int(1, 64)
    else size = r.int(1, 4096)
    reads.push(bytes.subarray(i, i + size))
    i += size
    if (r.chance(0.02)) reads.push(new Uint8Array(0)) // an empty read
  }
  return reads
}

function generate(index) {
  const r = rng((SEED * 1000003 + index) >>> 0)
  const connections = []
  const count = r.chance(0.2) ? r.int(2, 3) : 1
  for (let c = 0; c < count; c++) connections.push(chunk(r, connectionBytes(r)))
  return connections
}

// ---------------------------------------------------------------------------------------------
// The reference: eventsource-parser fed the way a browser app feeds it (TextDecoder stream).

const U64_MAX_AS_NUMBER = Number(18446744073709551615n)

function reference(connections) {
  const items = []
  let lastEventId = ''
  const parser = createParser({
    onId(id) {
      lastEventId = id
    },
    onEvent(event) {
      items.push({kind: 'event', type: event.event ?? null, data: event.data, id: event.id ?? null,
        last_event_id: lastEventId})
    },
    onComment() {
      items.push({kind: 'comment'})
    },
    onRetry(ms) {
      // Documented normalisation (README §retry): our u64 saturates at u64::MAX ms.
      items.push({kind: 'retry', ms: ms > U64_MAX_AS_NUMBER ? U64_MAX_AS_NUMBER : ms})
    },
  })
  for (const reads of connections) {
    // ignoreBOM: keep U+FEFF in the text so the parser strips it as the SSE spec says (the
    // default decoder would strip it too, which would hide a bug in either parser).
    const decoder = new TextDecoder('utf-8', {ignoreBOM: true})
    for (const read of reads) parser.feed(decoder.decode(read, {stream: true}))
    parser.feed(decoder.decode())
    parser.reset() // EOF: discards the unterminated frame
    items.push({kind: 'finish'})
  }
  return {items, last_event_id: lastEventId}
}

// ---------------------------------------------------------------------------------------------
// Ours: the sse_dump example.

function buildDump() {
  // An already built sse_dump (e.g. from another checkout) skips the cargo build.
  if (process.env.SSE_DUMP_BIN) return process.env.SSE_DUMP_BIN
  const profile = N >= 20000 ? ['--release'] : []
  const result = spawnSync('cargo', ['build', '--example', 'sse_dump', '-p', 'forgestream-core', ...profile,
    '--message-format=json-render-diagnostics'], {cwd: root, encoding: 'utf8', maxBuffer: 64 << 20,
    stdio: ['ignore', 'pipe', 'inherit']})
  if (result.status !== 0) {
    console.error('cargo build --example sse_dump failed')
    process.exit(2)
  }
  for (const lineText of result.stdout.split('\n')) {
    if (!lineText.startsWith('{')) continue
    const msg = JSON.parse(lineText)
    if (msg.reason === 'compiler-artifact' && msg.target?.name === 'sse_dump' && msg.executable) {
      return msg.executable
    }
  }
  console.error('cargo did not report the sse_dump executable')
  process.exit(2)
}

const hex = (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')

function ours(exe, cases) {
  const input = cases.map((connections) =>
    JSON.stringify({connections: connections.map((reads) => reads.map(hex))})).join('\n') + '\n'
  const result = spawnSync(exe, [], {input, encoding: 'utf8', maxBuffer: 1 << 30})
  if (result.status !== 0) {
    console.error(`sse_dump failed (${result.status}): ${result.stderr}`)
    process.exit(2)
  }
  return result.stdout.trim().split('\n').map((l) => JSON.parse(l))
}

// ---------------------------------------------------------------------------------------------

function firstDifference(a, b) {
  const len = Math.max(a.items.length, b.items.length)
  for (let i = 0; i < len; i++) {
    if (JSON.stringify(a.items[i]) !== JSON.stringify(b.items[i])) return {index: i, ours: a.items[i], reference: b.items[i]}
  }
  if (a.last_event_id !== b.last_event_id) return {index: 'last_event_id', ours: a.last_event_id, reference: b.last_event_id}
  return null
}

function canonical(item) {
  // Same key order on both sides so JSON.stringify compares values only.
  if (item.kind === 'event') return {kind: 'event', type: item.type, data: item.data, id: item.id, last_event_id: item.last_event_id}
  if (item.kind === 'retry') return {kind: 'retry', ms: Number(item.ms)}
  return {kind: item.kind}
}

const exe = buildDump()
let passed = 0
let failed = 0
const seen = {event: 0, comment: 0, retry: 0, finish: 0, error: 0}
let oursMs = 0
let referenceMs = 0
const started = Date.now()
for (let start = 0; start < N; start += BATCH) {
  const indices = Array.from({length: Math.min(BATCH, N - start)}, (_, i) => start + i)
  const cases = indices.map(generate)
  let t = Date.now()
  const outputs = ours(exe, cases)
  oursMs += Date.now() - t
  cases.forEach((connections, i) => {
    const mine = {items: outputs[i].items.map(canonical), last_event_id: outputs[i].last_event_id}
    for (const item of mine.items) seen[item.kind]++
    t = Date.now()
    const ref = reference(connections)
    referenceMs += Date.now() - t
    ref.items = ref.items.map(canonical)
    const diff = firstDifference(mine, ref)
    if (!diff) {
      passed++
      return
    }
    failed++
    if (failed <= 5) {
      console.error(`case ${indices[i]} (seed ${SEED}) differs at item ${diff.index}:`)
      console.error(`  ours:      ${JSON.stringify(diff.ours)?.slice(0, 300)}`)
      console.error(`  reference: ${JSON.stringify(diff.reference)?.slice(0, 300)}`)
      console.error(`  reads: ${JSON.stringify(connections.map((reads) => reads.map(hex))).slice(0, 600)}`)
    }
  })
}
console.log(`sse diff vs eventsource-parser: seed ${SEED}, ${N} cases, ${((Date.now() - started) / 1000).toFixed(1)} s ` +
  `(sse_dump ${(oursMs / 1000).toFixed(1)} s, eventsource-parser ${(referenceMs / 1000).toFixed(1)} s); compared ` +
  `${seen.event} events, ${seen.comment} comments, ${seen.retry} retries, ${seen.finish} connection ends`)
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed === 0 ? 0 : 1)
