// Where the wasm's bytes go: a size breakdown of the package's wasm by what the code is for
// (serde decoding, BTreeMap, the reducer, the session engine…), so a change can see which part
// it grew or shrank. Written to target/bench/results-size.json ({title, rows}) for
// bench/report.mjs; run by scripts/bench after the browser step.
//
// Method: `twiggy top` (crates.io) over the wasm-bindgen output of the release build *before*
// wasm-opt (target/bench/size/forgestream_web_bg.wasm: it keeps the name section, which the
// shipped pkg/wasm does not). Each function's shallow size is given to the first group whose
// pattern its (demangled) name matches; custom sections (names, wasm-bindgen's metadata) are
// left out of the code total. wasm-opt then shrinks every group, so the shares, not the bytes,
// carry over to the shipped file, whose size is reported beside them.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'target', 'bench');
const BIN = join(process.env.HOME ?? '', '.cargo', 'bin');
const TARGET = process.env.CARGO_TARGET_DIR ?? join(ROOT, 'target');
const RAW = join(TARGET, 'wasm32-unknown-unknown', 'wasm-release', 'forgestream_web.wasm');
const SHIPPED = join(ROOT, 'pkg', 'wasm', 'forgestream_web_bg.wasm');
const TWIGGY_VERSION = '0.8.0';

const run = (cmd, args, opts = {}) => {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 512 << 20, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr || r.error}`);
  return r.stdout;
};

// Groups, first match wins (so "a reducer type's Deserialize impl" counts as decoding).
const GROUPS = [
  ['serde decoding (derive impls + serde_json::de)', /deserializ|Deserializ|serde_json::de|Visitor|MapAccess|SeqAccess|visit_/],
  ['serde encoding (derive impls + serde_json::ser)', /serializ|Serializ|serde_json::ser|format_escaped/],
  ['float formatting / parsing', /flt2dec|dec2flt|grisu|dragon|f64|f32/],
  ['core::fmt (Display, Debug, format!)', /core::fmt|Formatter|fmt::|Display|Debug/],
  ['BTreeMap / BTreeSet', /btree|BTree/],
  ['reducer (core::reduce)', /forgestream_core::reduce/],
  ['session engine (core::session)', /forgestream_core::session/],
  ['connection machine (core::resume)', /forgestream_core::resume/],
  ['SSE parser (core::sse)', /forgestream_core::sse/],
  ['wire types, fast decoder (core::wire)', /forgestream_core::wire|forgestream_core::respond/],
  ['web crate (executor, transport, client)', /forgestream_web/],
  ['wasm-bindgen, js-sys, web-sys, gloo', /wasm_bindgen|js_sys|web_sys|gloo/],
  ['allocator (dlmalloc)', /dlmalloc|__rust_alloc|__rust_dealloc|__rust_realloc|__rdl_/],
  ['memchr', /memchr/],
  ['other core / alloc (strings, Vec, iterators…)', /core|alloc/],
];

function twiggyBinary() {
  const bin = join(BIN, 'twiggy');
  const v = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  if (v.status === 0 && v.stdout.includes(TWIGGY_VERSION)) return bin;
  run(join(BIN, 'cargo'), ['install', 'twiggy', '--version', TWIGGY_VERSION, '--locked'], { stdio: ['ignore', 'inherit', 'inherit'] });
  return bin;
}

function main() {
  if (!existsSync(RAW)) throw new Error(`${RAW} missing: run scripts/build-wasm`);
  const dir = join(OUT, 'size');
  mkdirSync(dir, { recursive: true });
  run(join(BIN, 'wasm-bindgen'), ['--target', 'web', '--out-dir', dir, '--out-name', 'forgestream_web', RAW]);
  const named = join(dir, 'forgestream_web_bg.wasm');
  const items = JSON.parse(run(twiggyBinary(), ['top', '-n', '1000000', '--format', 'json', named]));
  const bytes = new Map(GROUPS.map(([g]) => [g, 0]));
  let code = 0, data = 0, other = 0, sections = 0;
  const fns = [];
  for (const { name, shallow_size: size } of items) {
    if (/subsection|custom section|^section /.test(name)) { sections += size; continue; }
    if (/^data segment/.test(name)) { data += size; continue; }
    code += size;
    fns.push([name, size]);
    const group = GROUPS.find(([, re]) => re.test(name));
    if (group) bytes.set(group[0], bytes.get(group[0]) + size);
    else other += size;
  }
  const kb = (n) => (n / 1000).toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  const pct = (n) => `${((100 * n) / code).toFixed(1)}%`;
  const shipped = existsSync(SHIPPED) ? readFileSync(SHIPPED) : null;
  const rows = [];
  rows.push({
    figure: 'attributed build (wasm-bindgen output before wasm-opt, names kept)',
    value: `${kb(statSync(named).size)} KB raw: code ${kb(code)} KB, data segments ${kb(data)} KB, custom sections ${kb(sections)} KB`,
    notes: shipped ? `shipped pkg/wasm (wasm-opt -Oz, no names): ${kb(shipped.length)} KB raw, ${kb(gzipSync(shipped, { level: 9 }).length)} KB gzip` : 'pkg/wasm missing',
  });
  const sorted = [...bytes.entries(), ['unmatched', other]].filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
  for (const [group, n] of sorted) rows.push({ figure: `code: ${group}`, value: `${kb(n)} KB = **${pct(n)}**`, notes: '' });
  fns.sort((a, b) => b[1] - a[1]);
  for (const [name, n] of fns.slice(0, 12)) {
    // Without the symbol hash and the crates' disambiguators: `core[c5930c85…]::…::h1234…`.
    const plain = name.replace(/::h[0-9a-f]{16}$/, '').replace(/\[[0-9a-f]{16}\]/g, '');
    const short = plain.length > 110 ? `${plain.slice(0, 107)}…` : plain;
    rows.push({ figure: `largest function: \`${short.replace(/`/g, "'")}\``, value: `${kb(n)} KB (${pct(n)})`, notes: '' });
  }
  writeFileSync(join(OUT, 'results-size.json'), JSON.stringify({
    title: `Wasm size breakdown (twiggy ${TWIGGY_VERSION} top, shallow bytes by group)`,
    rows,
  }, null, 2) + '\n');
  for (const r of rows) console.log(`${r.figure}: ${r.value}`);
}

main();
