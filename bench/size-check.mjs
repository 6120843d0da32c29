#!/usr/bin/env node
// The bundle size check of scripts/test: fails when the shipped wasm + glue (gzip -9, measured as
// bench/bundle-size.mjs does) grows more than 5% over the figure recorded in bench/size-budget.json.
// Sizes are a function of the bytes only (Node's zlib), so the check is deterministic for a given
// build; timings never are, and no timing is checked here.
//
//   node bench/size-check.mjs [--pkg DIR]     (after scripts/build-wasm; DIR defaults to pkg/)
//
// A change that shrinks the bundle records the new figure on purpose (`--record` writes the
// measured sizes into bench/size-budget.json), so the 5% allowance is counted from the best
// figure reached, not from an old one. The check prints a reminder when the bundle is more than
// 5% under the recorded figure.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleSizes } from './bundle-size.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BUDGET = join(ROOT, 'bench', 'size-budget.json');
const ALLOWANCE = 0.05;

const args = process.argv.slice(2);
const at = args.indexOf('--pkg');
const pkg = at >= 0 ? resolve(args[at + 1] ?? '') : join(ROOT, 'pkg');
const sz = bundleSizes(pkg);
const kb = (n) => `${(n / 1000).toFixed(1)} KB`;
console.log(`wasm gzip ${kb(sz.wasm.gzip)}, wasm + glue gzip ${kb(sz.total.gzip)} (${sz.total.gzip} B)`);
for (const f of sz.files) console.log(`  ${f.file}: ${f.raw} B raw, ${f.gzip} B gzip`);

if (args.includes('--record')) {
  const record = {
    note: 'Shipped bundle, gzip -9 bytes (bench/bundle-size.mjs). scripts/test fails when wasm_glue_gzip grows more than 5%; record a smaller figure on purpose with `node bench/size-check.mjs --record`.',
    wasm_gzip: sz.wasm.gzip,
    wasm_glue_gzip: sz.total.gzip,
  };
  writeFileSync(BUDGET, JSON.stringify(record, null, 2) + '\n');
  console.log(`recorded in ${BUDGET}`);
  process.exit(0);
}

const budget = JSON.parse(readFileSync(BUDGET, 'utf8'));
const limit = Math.floor(budget.wasm_glue_gzip * (1 + ALLOWANCE));
if (sz.total.gzip > limit) {
  const pct = ((100 * (sz.total.gzip - budget.wasm_glue_gzip)) / budget.wasm_glue_gzip).toFixed(1);
  console.error(
    `FAIL: wasm + glue is ${sz.total.gzip} B gzip, ${pct}% over the recorded ${budget.wasm_glue_gzip} B ` +
      `(limit ${limit} B = +${ALLOWANCE * 100}%; bench/size-budget.json). ` +
      `wasm alone: ${sz.wasm.gzip} B (recorded ${budget.wasm_gzip} B).`,
  );
  process.exit(1);
}
if (sz.total.gzip < budget.wasm_glue_gzip * (1 - ALLOWANCE)) {
  console.log(`note: more than ${ALLOWANCE * 100}% under the recorded ${budget.wasm_glue_gzip} B: record the new figure (--record)`);
}
console.log(`ok: within ${ALLOWANCE * 100}% of the recorded ${budget.wasm_glue_gzip} B (limit ${limit} B)`);
