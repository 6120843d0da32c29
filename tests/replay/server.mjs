// Replays the recorded real TrueForge transcripts (tests/fixtures/recorded/<scenario>/) byte for
// byte, so the browser SDK is tested against what a real server sent, not only the emulator.
// Routes are those of PROTOCOL.md §4 under a scenario prefix: `http://HOST:PORT/<scenario>` is the
// SDK's baseUrl. `POST …/turns` serves `turnN-create.sse` (or `create.sse`) in order; the listings
// and GET turn serve the recorded JSON bodies. `/<scenario>~cut=N` ends the first create stream
// right after frame N, without `turn.done`; `/<scenario>~skip=N` drops its first N frames (a
// stream that does not start with `turn.created`). Both force recovery. `~bad-listing` answers
// the turn-events listing with truncated JSON. Specs combine: `/text~cut=5~bad-listing`.
//
// Hostile modes (issue 18), also on the first create stream only: `~id=N:VALUE` rewrites frame
// N's `id:` line to VALUE (e.g. `18446744073709551615`, `-1`); `~gap=N` leaves frame N out (a
// sequence number skipped); `~hang` never ends the stream after its last byte (a server that
// keeps the connection open, so only the frames can end the turn; with `~cut=N`, after frame N).
// Frame numbers count the frames as recorded. `~paged-turns` answers the turns listing with an
// empty first page whose `next_page_token` is `PAGE_TOKEN` (`+`, `/`, `&`, `=`, `#`, `%`, a space,
// non-ASCII) and serves the recorded turns only for that exact token (else 400): a token that is
// not percent-encoded arrives changed (`+` as a space, `&limit=…` as parameters, `#…` cut off).
// `~ctype=TYPE` answers the create POST 200 with a small page of that `Content-Type` (`html`,
// `json` and `none` stand for `text/html; charset=utf-8`, `application/json` and no header);
// `~redirect` answers it 302 to `/<scenario>/login`, a 200 HTML login page. `~trickle=N:MS` sends
// frame N of the first create stream in 8 pieces MS ms apart (a frame arriving more slowly than
// a client's idle timeout, its bytes still flowing; issue 18 item 9), everything else at once.
// `~paged-events=MS` answers the session timeline one event per page (newest first, tokens
// `e1`, `e2`, …), each page after the first MS ms late: a long history arriving slowly, for the
// progressive load (issue 16: the newest turns show, complete, before the last page is in).
//
// Usage: node tests/replay/server.mjs [--port 0]   → prints "listening on http://127.0.0.1:PORT"
import { createServer } from "node:http";
import { readFileSync, existsSync, readdirSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "recorded");
const port = Number(process.argv[process.argv.indexOf("--port") + 1] ?? 0) || 0;

const read = (scenario, file) => {
  const path = join(root, scenario, file);
  return existsSync(path) ? readFileSync(path) : null;
};
const scenarios = new Set(readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name));
/** Per scenario: how many turns were created since the last session creation. */
const created = new Map();

function cors(req, res) {
  const origin = req.headers.origin;
  if (origin) {
    res.setHeader("access-control-allow-origin", origin);
    res.setHeader("access-control-allow-credentials", "true");
    res.setHeader("access-control-allow-headers", "authorization,content-type,last-event-id,x-forgestream-fault");
    res.setHeader("access-control-allow-methods", "GET,POST,OPTIONS");
  }
}

function json(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(body);
}

/** The file prefix of a turn: `turnN-` in two-turn scenarios, `` otherwise. */
function turnPrefix(scenario, turnId) {
  for (const n of [1, 2]) {
    const body = read(scenario, `turn${n}-turn.json`);
    if (body && JSON.parse(body).data.id === turnId) return `turn${n}-`;
  }
  return "";
}

/** The recorded JSON body of a turn: `<prefix><kind>.json`. */
function turnFile(scenario, turnId, kind) {
  return read(scenario, `${turnPrefix(scenario, turnId)}${kind}.json`);
}

/** Frame boundaries: the byte offset right after frame `n` (1-based). */
function afterFrame(bytes, n) {
  let seen = 0;
  for (let i = 0; i + 1 < bytes.length; i++) {
    if (bytes[i] === 0x0a && bytes[i + 1] === 0x0a) {
      seen++;
      if (seen === n) return i + 2;
    }
  }
  return bytes.length;
}

/** `body` with frame `idFrame`'s `id:` line replaced by `id: idValue` and frame `gap` left out
 * (1-based; 0 = none). */
function rewriteFrames(body, idFrame, idValue, gap) {
  const frames = body.toString("utf8").split("\n\n").filter((f) => f.length > 0);
  return Buffer.from(
    frames
      .map((frame, i) => (i + 1 === idFrame ? frame.replace(/^id:.*$/m, `id: ${idValue}`) : frame))
      .filter((_, i) => i + 1 !== gap)
      .map((frame) => `${frame}\n\n`)
      .join(""),
    "utf8",
  );
}

/** A 200 page that is not an event stream (`type` null: no `Content-Type` at all). */
function page(res, type) {
  const body = type === "application/json" ? '{"ok":true}' : "<!doctype html><title>Sign in</title><form>data: not an event</form>\n\n";
  if (type === null) {
    res.removeHeader("content-type");
    res.sendDate = false;
    res.writeHead(200);
  } else {
    res.writeHead(200, { "content-type": type });
  }
  return res.end(body);
}

/** Writes `body` with frame `n`'s bytes in 8 pieces `ms` apart, then the rest (ended unless
 * `hang`). Stops when the client went away. */
function trickleFrame(res, body, n, ms, hang) {
  const start = n > 1 ? afterFrame(body, n - 1) : 0;
  const end = afterFrame(body, n);
  const size = Math.max(1, Math.ceil((end - start) / 8));
  res.write(body.subarray(0, start));
  let at = start;
  const next = () => {
    if (res.destroyed) return;
    if (at < end) {
      res.write(body.subarray(at, Math.min(end, at + size)));
      at += size;
      return setTimeout(next, ms);
    }
    if (hang) res.write(body.subarray(end));
    else res.end(body.subarray(end));
  };
  next();
}

/** The opaque paging token of `~paged-turns`. */
const PAGE_TOKEN = "a+b/c&limit=1000&x=1 %2F é#frag";

const server = createServer((req, res) => {
  cors(req, res);
  if (req.method === "OPTIONS") return res.writeHead(204).end();
  const url = new URL(req.url ?? "/", "http://x");
  const [head, ...rest] = url.pathname.split("/").filter(Boolean);
  const [scenario, ...specs] = (head ?? "").split("~");
  if (!scenarios.has(scenario)) return json(res, 404, '{"error":{"message":"unknown scenario"}}');
  const spec = (name) => specs.find((s) => s === name || s.startsWith(`${name}=`));
  const cut = Number(spec("cut")?.slice(4) ?? 0);
  const skip = Number(spec("skip")?.slice(5) ?? 0);
  const badListing = spec("bad-listing") !== undefined;
  const idRewrite = spec("id")?.slice(3).match(/^(\d+):(.*)$/);
  const gap = Number(spec("gap")?.slice(4) ?? 0);
  const hang = spec("hang") !== undefined;
  const ctype = spec("ctype")?.slice(6);
  const redirect = spec("redirect") !== undefined;
  const trickle = spec("trickle")?.slice(8).match(/^(\d+):(\d+)$/);
  const path = "/" + rest.join("/");
  // Drain the request body before answering.
  req.resume();
  req.on("end", () => {
    if (req.method === "POST" && path === "/api/v1/sessions") {
      created.set(scenario, 0);
      return json(res, 201, read(scenario, "session.json"));
    }
    if (path === "/login") return page(res, "text/html; charset=utf-8");
    if (req.method === "POST" && /^\/api\/v1\/sessions\/[^/]+\/turns$/.test(path) && ctype !== undefined) {
      const types = { html: "text/html; charset=utf-8", json: "application/json", none: null };
      return page(res, ctype in types ? types[ctype] : decodeURIComponent(ctype));
    }
    if (req.method === "POST" && /^\/api\/v1\/sessions\/[^/]+\/turns$/.test(path) && redirect) {
      res.writeHead(302, { location: `/${head}/login` });
      return res.end();
    }
    if (req.method === "POST" && /^\/api\/v1\/sessions\/[^/]+\/turns$/.test(path)) {
      const n = (created.get(scenario) ?? 0) + 1;
      created.set(scenario, n);
      const body = read(scenario, `turn${n}-create.sse`) ?? (n === 1 ? read(scenario, "create.sse") : null);
      if (!body) return json(res, 422, '{"error":{"message":"no recorded turn"}}');
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
      // A cut stream ends (cleanly, without turn.done) after frame N; a skipped one lacks its
      // first N frames (so it does not start with turn.created): the SDK must recover either way.
      if (n !== 1) return res.end(body);
      let out = body;
      if (cut > 0) out = out.subarray(0, afterFrame(out, cut));
      if (skip > 0) out = out.subarray(afterFrame(out, skip));
      if (idRewrite || gap > 0) out = rewriteFrames(out, idRewrite ? Number(idRewrite[1]) : 0, idRewrite?.[2], gap);
      if (trickle) return trickleFrame(res, out, Number(trickle[1]), Number(trickle[2]), hang);
      return hang ? res.write(out) : res.end(out);
    }
    let m = path.match(/^\/api\/v1\/sessions\/[^/]+\/turns\/([^/]+)\/subscribe$/);
    if (m) {
      const after = Number(req.headers["last-event-id"] ?? url.searchParams.get("after_sequence_number") ?? 0);
      const file = after === 0 ? "subscribe-0.sse" : `subscribe-after-${after}.sse`;
      const prefix = turnPrefix(scenario, m[1]);
      const body = read(scenario, prefix + file);
      if (!body) return json(res, 412, '{"error":{"message":"Cannot read from stream, stream does not exist anymore"}}');
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      return res.end(body);
    }
    m = path.match(/^\/api\/v1\/sessions\/[^/]+\/turns\/([^/]+)\/events$/);
    if (m && badListing) return json(res, 200, '{"data":[{"type":"turn.created"'); // truncated JSON
    if (m) {
      const body = turnFile(scenario, m[1], "turn-events");
      return body ? json(res, 200, body) : json(res, 404, '{"error":{"message":"not found"}}');
    }
    m = path.match(/^\/api\/v1\/sessions\/[^/]+\/turns\/([^/]+)$/);
    if (m) {
      const body = turnFile(scenario, m[1], "turn");
      return body ? json(res, 200, body) : json(res, 404, '{"error":{"message":"not found"}}');
    }
    if (/^\/api\/v1\/sessions\/[^/]+\/turns$/.test(path) && spec("paged-turns") !== undefined) {
      const token = url.searchParams.get("page_token");
      if (token === null) return json(res, 200, JSON.stringify({ data: [], pagination: { next_page_token: PAGE_TOKEN } }));
      if (token !== PAGE_TOKEN || url.searchParams.getAll("limit").length !== 1) {
        return json(res, 400, JSON.stringify({ error: { message: `page_token arrived as ${JSON.stringify(token)}` } }));
      }
      return json(res, 200, read(scenario, "turns.json"));
    }
    if (/^\/api\/v1\/sessions\/[^/]+\/turns$/.test(path)) return json(res, 200, read(scenario, "turns.json"));
    if (/^\/api\/v1\/sessions\/[^/]+\/events$/.test(path) && spec("paged-events") !== undefined) {
      const all = JSON.parse(read(scenario, "session-events.json"));
      const at = Number((url.searchParams.get("page_token") ?? "e0").slice(1)) || 0;
      const next = at + 1 < all.data.length ? `e${at + 1}` : null;
      const page = JSON.stringify({ ...all, data: all.data.slice(at, at + 1), pagination: { ...all.pagination, next_page_token: next } });
      const delay = at === 0 ? 0 : Number(spec("paged-events").split("=")[1] ?? 0);
      return void setTimeout(() => json(res, 200, page), delay);
    }
    if (/^\/api\/v1\/sessions\/[^/]+\/events$/.test(path)) return json(res, 200, read(scenario, "session-events.json"));
    if (/^\/api\/v1\/sessions\/[^/]+$/.test(path)) return json(res, 200, read(scenario, "session.json"));
    return json(res, 404, '{"error":{"message":"no such route"}}');
  });
});

server.listen(port, "127.0.0.1", () => {
  const address = server.address();
  console.log(`listening on http://127.0.0.1:${typeof address === "object" && address ? address.port : port}`);
});
