// Checks what `npm pack` put in the forgestream tarball: the built code and wasm are there, the
// sources and tests are not, every `exports` entry lists `types` first and points at a packed
// file, every relative import of the packed JS / .d.ts resolves inside the tarball, and source
// maps do not point at files that are not shipped.
// Usage: node tests/packaging/tarball.mjs PATH/forgestream-X.Y.Z.tgz
import { execFileSync } from "node:child_process";
import { posix } from "node:path";

const tgz = process.argv[2];
if (!tgz) {
  console.error("usage: tarball.mjs TARBALL");
  process.exit(2);
}
const tar = (...args) => execFileSync("tar", [...args, tgz], { encoding: "utf8", maxBuffer: 64 << 20 });
const files = new Set(
  tar("-tzf")
    .split("\n")
    .filter((l) => l && !l.endsWith("/"))
    .map((l) => l.replace(/^package\//, "")),
);
const read = (path) => execFileSync("tar", ["-xzOf", tgz, `package/${path}`], { encoding: "utf8", maxBuffer: 64 << 20 });

let failed = 0;
const check = (ok, what) => {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) failed++;
};

// 1. What must be there.
const required = ["package.json", "wasm/forgestream_web.js", "wasm/forgestream_web.d.ts", "wasm/forgestream_web_bg.wasm"];
for (const m of ["index", "react", "vue", "types", "errors", "open", "snapshot"]) required.push(`dist/${m}.js`, `dist/${m}.d.ts`);
const missing = required.filter((f) => !files.has(f));
check(missing.length === 0, `required files present${missing.length ? `; missing: ${missing.join(", ")}` : ` (${required.length})`}`);

// 2. What must not be there: sources, tests, fixtures, configs, stray artefacts.
const unwanted = [...files].filter(
  (f) =>
    /^(src|test|tests|__tests__|fixtures|e2e)\//.test(f) ||
    /\.(test|spec)\.[cm]?[jt]sx?$/.test(f) ||
    /(^|\/)tsconfig(\..*)?\.json$/.test(f) ||
    /\.tsbuildinfo$/.test(f) ||
    /(^|\/)\.(gitignore|npmignore|DS_Store)$/.test(f) ||
    (f.endsWith(".ts") && !f.endsWith(".d.ts")),
);
check(unwanted.length === 0, `no sources, tests or configs${unwanted.length ? `; found: ${unwanted.join(", ")}` : ""}`);
const outside = [...files].filter((f) => !/^(dist|wasm)\//.test(f) && !/^(package\.json|README(\..*)?|LICEN[CS]E(\..*)?|CHANGELOG(\..*)?)$/i.test(f));
check(outside.length === 0, `only dist/, wasm/ and package metadata${outside.length ? `; also: ${outside.join(", ")}` : ""}`);

// 3. package.json: exports with `types` first, every target packed.
const pkg = JSON.parse(read("package.json"));
check(pkg.name === "forgestream" && typeof pkg.version === "string", `name/version ${pkg.name}@${pkg.version}`);
const exportsMap = pkg.exports ?? {};
for (const sub of [".", "./react", "./vue"]) {
  const entry = exportsMap[sub];
  const keys = entry && typeof entry === "object" ? Object.keys(entry) : [];
  const targets = keys.map((k) => entry[k]).filter((t) => typeof t === "string");
  const absent = targets.filter((t) => !files.has(posix.normalize(t)));
  check(
    keys[0] === "types" && keys.at(-1) === "default" && absent.length === 0,
    `exports["${sub}"]: conditions [${keys.join(", ")}]${absent.length ? `; not packed: ${absent.join(", ")}` : ""}`,
  );
}
for (const field of ["main", "types"]) {
  check(typeof pkg[field] === "string" && files.has(posix.normalize(pkg[field])), `"${field}": ${pkg[field]} is packed`);
}
check(
  pkg.peerDependenciesMeta?.react?.optional === true && pkg.peerDependenciesMeta?.vue?.optional === true,
  "react and vue are optional peer dependencies",
);
check(!pkg.dependencies || Object.keys(pkg.dependencies).length === 0, `no runtime dependencies${pkg.dependencies ? `: ${Object.keys(pkg.dependencies).join(", ")}` : ""}`);

// 4. Every relative import / export-from / reference of the packed JS and .d.ts resolves.
const unresolved = [];
for (const f of files) {
  if (!/\.(js|d\.ts)$/.test(f)) continue;
  const text = read(f);
  const specs = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*|\/\/\/\s*<reference\s+path=)["'](\.{1,2}\/[^"']+)["']/g)].map((m) => m[1]);
  for (const spec of specs) {
    const target = posix.normalize(posix.join(posix.dirname(f), spec));
    const candidates = f.endsWith(".d.ts") ? [target, target.replace(/\.js$/, ".d.ts")] : [target];
    if (!candidates.some((c) => files.has(c))) unresolved.push(`${f} → ${spec}`);
  }
}
check(unresolved.length === 0, `relative imports resolve inside the tarball${unresolved.length ? `; unresolved: ${unresolved.join(", ")}` : ""}`);

// 5. Source maps: each listed source is packed or its content is embedded.
const badMaps = [];
for (const f of files) {
  if (!f.endsWith(".map")) continue;
  const map = JSON.parse(read(f));
  (map.sources ?? []).forEach((s, i) => {
    const target = posix.normalize(posix.join(posix.dirname(f), map.sourceRoot ?? "", s));
    if (!files.has(target) && typeof map.sourcesContent?.[i] !== "string") badMaps.push(`${f} → ${s}`);
  });
}
check(badMaps.length === 0, `source maps resolve (sources packed or embedded)${badMaps.length ? `; dangling: ${badMaps.join(", ")}` : ""}`);

const wasmBytes = Number(tar("-tvzf").match(/(\d+)\s+\S+\s+\S+\s+package\/wasm\/forgestream_web_bg\.wasm$/m)?.[1] ?? NaN);
console.log(`info ${files.size} files; forgestream_web_bg.wasm ${wasmBytes} bytes`);
process.exit(failed ? 1 : 0);
