// The shipped bundle's size, measured one way for everyone: the benchmark (bench/browser.mjs)
// and the size check of scripts/test (bench/size-check.mjs) both call `bundleSizes`.
//
// What counts: pkg/wasm/*.wasm and *.js (wasm-bindgen's output after wasm-opt) plus pkg/dist/*.js
// (the TS layer), each file compressed alone (gzip -9 and brotli -q11, Node's zlib: the same bytes
// give the same sizes on every machine). The React and Vue adapters are counted apart: an app
// loads at most one of them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants as zc, gzipSync } from 'node:zlib';

/** Sizes in bytes of the package built under `pkgDir` (a `pkg/` folder with `wasm/` and `dist/`). */
export function bundleSizes(pkgDir) {
  const files = [];
  for (const f of readdirSync(join(pkgDir, 'wasm')).sort()) if (/\.(wasm|js)$/.test(f)) files.push(`wasm/${f}`);
  for (const f of readdirSync(join(pkgDir, 'dist')).sort()) if (/\.js$/.test(f)) files.push(`dist/${f}`);
  const out = files.map((f) => {
    const buf = readFileSync(join(pkgDir, f));
    return {
      file: `pkg/${f}`,
      raw: buf.length,
      gzip: gzipSync(buf, { level: 9 }).length,
      brotli: brotliCompressSync(buf, { params: { [zc.BROTLI_PARAM_QUALITY]: 11, [zc.BROTLI_PARAM_SIZE_HINT]: buf.length } }).length,
    };
  });
  const sum = (pred) => out.filter(pred).reduce((a, x) => ({ raw: a.raw + x.raw, gzip: a.gzip + x.gzip, brotli: a.brotli + x.brotli }), { raw: 0, gzip: 0, brotli: 0 });
  const adapters = (x) => /\/(react|vue)\.js$/.test(x.file);
  return {
    files: out,
    wasm: sum((x) => x.file.endsWith('.wasm')),
    glue: sum((x) => x.file.endsWith('.js') && !adapters(x)),
    total: sum((x) => !adapters(x)),
    adapters: sum(adapters),
  };
}
