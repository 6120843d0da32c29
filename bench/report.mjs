#!/usr/bin/env node
// Renders BENCHMARKS.md (to stdout) from the figures one `scripts/bench` run measured.
//
//   node bench/report.mjs [BENCH_DIR]      (default target/bench)
//
// Inputs, all in BENCH_DIR and all optional (a missing one is reported as "not measured"):
//   steps.tsv           one line per step: name<TAB>status (ok|failed|skipped)<TAB>note
//   results-core.json   written by `cargo run --release -p forgestream-core --example bench_core`
//   results-*.json      any other step's figures: {"title", "rows":[{"figure","value","notes"?}]}
//   <step>.log          a step's console output; shown verbatim for steps without results JSON
//   w1.json, w2.json    workload metadata (bench/workloads.mjs)
// Nothing here is a figure of its own: every number comes from those files or from the machine.

import { execSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dir = resolve(process.argv[2] ?? join(ROOT, 'target', 'bench'));

const readJson = (name) => {
  try {
    return JSON.parse(readFileSync(join(dir, name), 'utf8'));
  } catch {
    return null;
  }
};
const sh = (cmd) => {
  try {
    return execSync(cmd, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
};
const num = (x, digits = 1) =>
  typeof x === 'number' && Number.isFinite(x)
    ? x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : 'n/a';
const int = (x) => num(x, 0);

function machine() {
  let cpu = null;
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('model name'));
    cpu = line ? line.split(':').slice(1).join(':').trim() : null;
  } catch {
    // not Linux: fall through
  }
  let mem = null;
  try {
    const line = readFileSync('/proc/meminfo', 'utf8').split('\n').find((l) => l.startsWith('MemTotal'));
    mem = line ? `${(Number(line.split(/\s+/)[1]) / 1048576).toFixed(1)} GiB` : null;
  } catch {
    // not Linux
  }
  return {
    nproc: sh('nproc') ?? 'unknown',
    cpu: cpu ?? 'unknown',
    mem: mem ?? 'unknown',
    os: sh('uname -srm') ?? 'unknown',
    rustc: sh('rustc --version') ?? 'unknown',
    node: process.version,
    commit: sh(`git -C "${ROOT}" rev-parse --short HEAD`) ?? 'no commit',
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

function steps() {
  const file = join(dir, 'steps.tsv');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [name, status, ...note] = l.split('\t');
      return { name, status, note: note.join(' ') };
    });
}

const m = machine();
const w1 = readJson('w1.json');
const w2 = readJson('w2.json');
const core = readJson('results-core.json');
const out = [];
const p = (s = '') => out.push(s);

p('# Benchmarks');
p();
p('Written by `scripts/bench`; every figure below was measured in that run (nothing is copied');
p('from earlier runs). Workloads: `bench/workloads.mjs`; method and caveats: `bench/README.md`.');
p();
p('## Machine');
p();
p('| | |');
p('|---|---|');
p(`| date (UTC) | ${m.date} |`);
p(`| nproc | ${m.nproc} |`);
p(`| CPU | ${m.cpu} |`);
p(`| memory | ${m.mem} |`);
p(`| OS | ${m.os} |`);
p(`| rustc | ${m.rustc} |`);
p(`| node | ${m.node} |`);
p(`| commit | ${m.commit} |`);
p();
p('The machine is shared (other jobs may run at the same time), so run-to-run spread can be wide;');
p('medians are reported.');
p();
p('## Workloads');
p();
if (w1) {
  p(`- **W1** \`w1.sse\`: ${num(w1.bytes / 1e6, 2)} MB, ${int(w1.events)} SSE frames, ${w1.model_messages} model messages ` +
    `(${int(w1.content_deltas_per_message)} content deltas each), ${w1.tool_calls} tool calls, ${w1.threads.length} subagent threads, ` +
    `${int(w1.total_text_bytes)} bytes of final text.`);
} else {
  p('- **W1**: not generated.');
}
if (w2) {
  p(`- **W2** \`w2-pages.json\`: ${num(w2.bytes / 1e6, 2)} MB, ${int(w2.events)} merged events in ${int(w2.pages)} pages of ${w2.page_size}, ` +
    `${int(w2.turns)} turns, ${int(w2.model_messages)} model messages, ${int(w2.total_text_bytes)} bytes of text.`);
} else {
  p('- **W2**: not generated.');
}
p();

p('## Native core (`forgestream-core`, release build)');
p();
if (!core) {
  p('Not measured: `results-core.json` is missing (the native core benchmark did not run or failed; see the steps below).');
} else {
  const a = core.w1;
  const b = core.w2;
  p('| workload | figure | value |');
  p('|---|---|---|');
  p(`| W1 | parse + reduce (SseParser → apply_live), ${core.read_size / 1024} KiB reads, median of ${a.runs} | **${num(a.reduce_mb_per_s)} MB/s**, ${int(a.reduce_events_per_s)} events/s |`);
  p(`| W1 | parse only (SseParser), median of ${a.runs} | ${num(a.parse_mb_per_s)} MB/s, ${int(a.parse_events_per_s)} events/s |`);
  p(`| W1 | peak heap during parse + reduce (input excluded) | ${num(a.peak_heap_bytes / 1e6, 2)} MB = **${num(a.peak_heap_ratio, 2)}×** final text |`);
  p(`| W1 | heap retained by the final view | ${num(a.retained_heap_bytes / 1e6, 2)} MB = **${num(a.retained_heap_ratio, 2)}×** final text |`);
  p(`| W1 | final view verified against w1.json | ${a.verified ? 'yes' : 'NO'} |`);
  p(`| W2 | decode pages only (wire::json → SessionEventsPage), median of ${b.decode_runs} | ${int(b.decode_events_per_s)} events/s |`);
  if (b.decode_serde_events_per_s) p(`| W2 | the same through serde_json's derives (the decoder's test oracle), alternated | ${int(b.decode_serde_events_per_s)} events/s (SDK decoder ${(b.decode_events_per_s / b.decode_serde_events_per_s).toFixed(2)}×) |`);
  if (b.complete) {
    p(`| W2 | decode + apply_session_events, median of ${b.runs} | **${int(b.apply_events_per_s)} events/s** |`);
    p(`| W2 | heap retained by the final view | ${num(b.retained_heap_bytes / 1e6, 2)} MB = ${num(b.retained_heap_ratio, 2)}× its text |`);
    p(`| W2 | final view verified against w2.json | ${b.verified ? 'yes' : 'NO'} |`);
    if (b.encode_items_mb_per_s) p(`| W2 | the view's items written as JSON (a whole-history snapshot's bulk, ${num(b.encode_items_bytes / 1e6, 1)} MB), median of ${b.runs} | **${num(b.encode_items_mb_per_s)} MB/s**; serde_json's derives ${num(b.encode_items_serde_mb_per_s)} MB/s (SDK encoder ${(b.encode_items_mb_per_s / b.encode_items_serde_mb_per_s).toFixed(2)}×), alternated, texts equal |`);
    for (const part of b.view_breakdown ?? []) {
      p(`| W2 | view heap: ${part.part} | ${num(part.bytes / 1e6, 2)} MB = ${int(part.bytes / w2.events)} B/event, ${num((100 * part.bytes) / b.retained_heap_bytes)}% |`);
    }
  } else {
    p(`| W2 | decode + apply_session_events | **not measured**: did not finish within the ${b.budget_s} s budget (${int(b.pages_done)} of ${int(w2?.pages)} pages, ${int(b.events_done)} events, ${num(b.apply_median_s)} s = ${int(b.apply_events_per_s)} events/s over that prefix only) |`);
    p(`| W2 | final view verified against w2.json | not checked (incomplete) |`);
  }
  p(`| W2 | apply rate over the first / last ${b.scaling_pages} pages applied (first run) | ${int(b.first_pages_events_per_s)} / ${int(b.last_pages_events_per_s)} events/s |`);
  p();
  p('MB = 10^6 bytes. Heap figures come from a counting global allocator in the benchmark binary');
  p('(requested bytes, not RSS); it is active during the timed runs too, adding a little overhead.');
  p('The W2 "view heap" rows: each part is the heap a clone of it allocates (`bench_core`, "view');
  p('breakdown"); "maps, indexes, bookkeeping" is the clone of the whole view less the listed parts,');
  p('"spare capacity" the retained heap less that clone.');
  p();
  // Issue 16's two native targets, judged here from the figures above.
  p('### Targets (native core)');
  p();
  p('| target | met | measured |');
  p('|---|---|---|');
  p(`| W1 parse + reduce ≥ 1 GB/s | ${a.reduce_mb_per_s >= 1000 ? 'met' : '**not met**'} | ${num(a.reduce_mb_per_s)} MB/s (${num(a.reduce_mb_per_s / 1000, 2)}× the target) |`);
  if (b.complete) p(`| W2 view retained ≤ 10× its text | ${b.retained_heap_ratio <= 10 ? 'met' : '**not met**'} | ${num(b.retained_heap_ratio, 2)}× (${num(b.retained_heap_bytes / 1e6, 2)} MB) |`);
  else p('| W2 view retained ≤ 10× its text | not checked | the W2 apply did not finish within its budget |');
}
p();

const others = readdirSync(existsSync(dir) ? dir : ROOT)
  .filter((f) => /^results-.+\.json$/.test(f) && f !== 'results-core.json')
  .sort();
for (const file of others) {
  const r = readJson(file);
  if (!r || !Array.isArray(r.rows)) continue;
  p(`## ${r.title ?? file}`);
  p();
  p('| figure | value | notes |');
  p('|---|---|---|');
  for (const row of r.rows) p(`| ${row.figure} | ${row.value} | ${row.notes ?? ''} |`);
  p();
  if (r.error) {
    p(`**The step stopped early:** \`${String(r.error).split('\n')[0]}\` — figures above are the phases that finished.`);
    p();
  }
  // Browser bench extras (bench/browser.mjs): targets met or not, and where the time went.
  if (Array.isArray(r.targets) && r.targets.length > 0) {
    p('### Targets');
    p();
    p('| target | met | measured |');
    p('|---|---|---|');
    for (const t of r.targets) p(`| ${t.target} | ${t.met === null ? 'not checked' : t.met ? 'met' : '**not met**'} | ${t.measured} |`);
    p();
  }
  for (const [workload, runs] of Object.entries(r.profiles ?? {})) {
    const entries = Object.entries(runs ?? {}).filter(([, v]) => v && Array.isArray(v.categories));
    if (entries.length === 0) continue;
    p(`### Where the time goes: ${workload.toUpperCase()} (one extra run each under the CDP sampling profiler, 100 µs)`);
    p();
    if (runs.wasm) p(`wasm for this pass: ${runs.wasm}.`);
    p();
    for (const [name, v] of entries) {
      p(`**${name}** — ${num(v.ms)} ms under the profiler. Self time by category: ` +
        v.categories.slice(0, 6).map((c) => `${c.what} ${num(c.pct)}%`).join(', ') + '.');
      p();
      p('| function (self time) | % |');
      p('|---|---|');
      for (const f of v.functions.slice(0, 10)) p(`| \`${f.what.replace(/\|/g, '\\|').replace(/::h[0-9a-f]{16}/g, '')}\` | ${num(f.pct)} |`);
      p();
    }
  }
  const w3 = r.raw?.w3;
  if (w3?.sdk_functions?.length) {
    p('### W3: SDK functions on the main thread (self time over the window)');
    p();
    p(w3.sdk_functions.slice(0, 8).map((f) => `\`${f.what}\` ${num(f.ms)} ms`).join(', ') + '.');
    p();
    if (w3.render_functions?.length) {
      p('Rendering JS (demo components and React; self time includes layout they force):');
      p(w3.render_functions.slice(0, 8).map((f) => `\`${f.what}\` ${num(f.ms)} ms`).join(', ') + '.');
      p();
    }
  }
}

const st = steps();
// Setup and workload generation print no figures; hooks without a results file are quoted.
const covered = new Set(['setup', 'workloads', 'core', ...others.map((f) => f.replace(/^results-|\.json$/g, ''))]);
for (const s of st) {
  if (covered.has(s.name) || s.status !== 'ok') continue;
  const log = join(dir, `${s.name}.log`);
  if (!existsSync(log)) continue;
  const text = readFileSync(log, 'utf8').trim().split('\n').slice(-25).join('\n');
  p(`## ${s.name} (console output, as printed)`);
  p();
  p('```');
  p(text);
  p('```');
  p();
}

p('## Steps of this run');
p();
p('| step | status | note |');
p('|---|---|---|');
for (const s of st) p(`| ${s.name} | ${s.status} | ${s.note} |`);
if (st.length === 0) p('| (no steps.tsv) | | |');
p();

process.stdout.write(out.join('\n'));
