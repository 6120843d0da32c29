import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import WebDriver, { type Client } from "webdriver";

// A small Playwright-shaped layer over WebDriver BiDi, so that the end-to-end checks of
// tests/e2e/checks/ run unchanged in Debian's Firefox ESR.
//
// Why not Playwright itself: its Firefox is a patched build that cannot be installed here, and its
// WebDriver BiDi mode (`firefox.launch({ channel: "moz-firefox" })`, Playwright 1.65.1) starts
// firefox-esr 153 but fails on the first context (`emulation.setMediaFeaturesOverride: unknown
// command`). So the `webdriver` package (WebdriverIO's protocol client) speaks BiDi to a geckodriver
// we start ourselves (`cargo install geckodriver`): given a host and port, it never starts or
// downloads a driver or a browser.
//
// Semantics copied from Playwright where the checks depend on them: locators are lazy and re-query
// on every use, single-element operations are strict (more than one match is an error), text
// assertions compare `textContent` (strings with whitespace normalized, RegExps raw), assertions
// retry until they pass or their timeout (5 s by default) ends, clicks are real pointer input at
// the element's centre after the hit target is checked. Anything the checks do not use throws
// "not implemented in the Firefox adapter" rather than silently doing nothing.

const EXPECT_TIMEOUT_MS = 5_000;
const ACTION_TIMEOUT_MS = 30_000;
const POLL_MS = 50;

/** Throws on any property the object does not define, so an unported call fails loudly. */
function strict<T extends object>(target: T, what: string): T {
  return new Proxy(target, {
    get(t, prop, receiver) {
      if (typeof prop === "symbol" || prop in t || prop === "then" || prop === "toJSON") return Reflect.get(t, prop, receiver);
      throw new Error(`${what}.${prop} is not implemented in the Firefox adapter (tests/e2e/firefox/bidi.ts)`);
    },
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A geckodriver process on a free loopback port (BiDi WebSocket on a free port too). */
export class Geckodriver {
  private constructor(
    private readonly proc: ChildProcess,
    readonly port: number,
  ) {}

  /** Starts `binary` and waits for its "Listening on 127.0.0.1:PORT" line (10 s at most). */
  static async start(binary: string): Promise<Geckodriver> {
    // --websocket-port 0: each Firefox gets a free remote-debugging port, so runs in parallel
    // (other worktrees, wasm-pack's own geckodriver) never collide on the default 9222.
    const proc = spawn(binary, ["--host", "127.0.0.1", "--port", "0", "--websocket-port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
    let log = "";
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`geckodriver did not start within 10 s:\n${log}`)), 10_000);
      const onData = (chunk: Buffer) => {
        log += chunk.toString();
        const m = /Listening on 127\.0\.0\.1:(\d+)/.exec(log);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      };
      proc.stdout!.on("data", onData);
      proc.stderr!.on("data", onData);
      proc.on("error", (e) => {
        clearTimeout(timer);
        reject(new Error(`cannot run geckodriver (${binary}): ${e.message}`));
      });
      proc.on("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`geckodriver exited with ${code}:\n${log}`));
      });
    });
    // Keep draining its output so a chatty driver never blocks on a full pipe.
    proc.stdout!.resume();
    proc.stderr!.resume();
    return new Geckodriver(proc, port);
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once("exit", r));
    this.proc.kill("SIGTERM");
    await Promise.race([exited, sleep(5_000)]);
  }
}

type EventHandler = (params: any) => void;

/** One headless Firefox (one WebDriver session with BiDi); `newContext()` per test. */
export class FirefoxBrowser {
  private readonly handlers = new Map<string, Set<EventHandler>>();

  private constructor(readonly client: Client) {}

  /**
   * Opens a session on `driver` running `firefoxBinary` headless. Prefs keep Firefox from
   * reaching out to a network it cannot reach (updates, telemetry, captive portal checks).
   */
  static async open(driver: Geckodriver, firefoxBinary: string): Promise<FirefoxBrowser> {
    const client = await WebDriver.newSession({
      hostname: "127.0.0.1",
      port: driver.port,
      path: "/",
      logLevel: "warn",
      connectionRetryCount: 0,
      capabilities: {
        browserName: "firefox",
        webSocketUrl: true,
        "moz:firefoxOptions": {
          binary: firefoxBinary,
          args: ["-headless"],
          prefs: {
            "app.update.auto": false,
            "browser.safebrowsing.update.enabled": false,
            "datareporting.policy.dataSubmissionEnabled": false,
            "extensions.update.enabled": false,
            "network.captive-portal-service.enabled": false,
            "network.connectivity-service.enabled": false,
            "toolkit.telemetry.enabled": false,
          },
        },
      },
    });
    const browser = new FirefoxBrowser(client);
    const events = ["network.beforeRequestSent", "network.responseStarted", "log.entryAdded", "browsingContext.contextCreated", "browsingContext.load"] as const;
    await client.sessionSubscribe({ events: [...events] });
    for (const event of events) {
      client.on(event, (params: any) => {
        // FX_DEBUG=1 prints every BiDi event received (context, method, URL or text, status).
        if (process.env.FX_DEBUG) console.log(Date.now() % 100000, event, params.context ?? params.source?.context, params.request?.method ?? "", params.request?.url ?? params.text ?? params.url ?? "", params.response?.status ?? "");
        for (const h of browser.handlers.get(event) ?? []) h(params);
      });
    }
    return browser;
  }

  /** `handler` for BiDi `event` (all browsing contexts); returns the unsubscribe function. */
  onEvent(event: string, handler: EventHandler): () => void {
    if (!this.handlers.has(event)) this.handlers.set(event, new Set());
    this.handlers.get(event)!.add(handler);
    return () => this.handlers.get(event)!.delete(handler);
  }

  /** A fresh user context (its own storage, like a Playwright BrowserContext). */
  async newContext(baseURL: string): Promise<FirefoxContext> {
    const { userContext } = await this.client.browserCreateUserContext({});
    return new FirefoxContext(this, userContext, baseURL);
  }

  async close(): Promise<void> {
    await this.client.deleteSession().catch(() => {});
  }
}

/** A user context: tabs opened with `newPage()` share its localStorage and BroadcastChannels. */
export class FirefoxContext {
  readonly pages: FirefoxPage[] = [];

  constructor(
    readonly browser: FirefoxBrowser,
    readonly userContext: string,
    readonly baseURL: string,
  ) {}

  async newPage(): Promise<FirefoxPage> {
    const { context } = await this.browser.client.browsingContextCreate({ type: "tab", userContext: this.userContext });
    // Playwright's default viewport, so layout-dependent checks (scrolling) see the same page.
    await this.browser.client.browsingContextSetViewport({ context, viewport: { width: 1280, height: 720 } });
    return this.adopt(context);
  }

  private adopt(context: string): FirefoxPage {
    const page = strict(new FirefoxPage(this, context), "page");
    this.pages.push(page);
    return page;
  }

  /**
   * `"page"`: resolves with the next top-level tab this user context opens by itself (a link
   * with `target="_blank"`, `window.open`), as Playwright's `context.waitForEvent("page")`.
   */
  waitForEvent(event: "page", options?: { timeout?: number }): Promise<FirefoxPage> {
    if (event !== "page") throw new Error(`context.waitForEvent("${event}") is not implemented in the Firefox adapter`);
    const timeout = options?.timeout ?? ACTION_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`timed out after ${timeout} ms waiting for a new page`));
      }, timeout);
      const off = this.browser.onEvent("browsingContext.contextCreated", (p) => {
        if (p.parent || p.userContext !== this.userContext || this.pages.some((page) => page.id === p.context)) return;
        clearTimeout(timer);
        off();
        resolve(this.adopt(p.context));
      });
    });
  }

  /**
   * Playwright's `context.setOffline`: every tab of this user context loses (or gets back) the
   * network (BiDi `emulation.setNetworkConditions`; the pages see `offline` / `online` events).
   */
  async setOffline(offline: boolean): Promise<void> {
    await this.browser.client.emulationSetNetworkConditions({
      networkConditions: offline ? { type: "offline" } : null,
      userContexts: [this.userContext],
    });
  }

  /** Closes every tab and the user context (its storage goes with it). */
  async close(): Promise<void> {
    for (const page of this.pages) page.detach();
    await this.browser.client.browserRemoveUserContext({ userContext: this.userContext }).catch(() => {});
  }
}

/** Playwright's `Request` as the checks read it. */
interface RequestInfo {
  method(): string;
  url(): string;
}
/** Playwright's `Response` as the checks read it. */
interface ResponseInfo {
  status(): number;
  url(): string;
}
/** Playwright's `Route` as the checks use it: pass on, fetch it from Node, or answer it. */
export interface RouteInfo {
  request(): RequestInfo;
  continue(): Promise<void>;
  /** Fails the request as a network error (BiDi `network.failRequest`; the code is not sent). */
  abort(errorCode?: string): Promise<void>;
  /** Sends the request (method, URL, headers, body as the page sent it) from Node; buffered. */
  fetch(): Promise<globalThis.Response>;
  /**
   * Answers with `response`'s status and headers and `body` (defaults to its own body), or —
   * without `response` — with `status` (default 200), `contentType` and `body`, as Playwright's.
   */
  fulfill(options: { response?: globalThis.Response; status?: number; contentType?: string; body?: string }): Promise<void>;
}

/** Playwright's `ConsoleMessage` as the checks read it. */
interface ConsoleInfo {
  type(): string;
  text(): string;
}

// BiDi console methods → Playwright's ConsoleMessage.type() names.
const CONSOLE_TYPE: Record<string, string> = { warn: "warning", log: "log", info: "info", error: "error", debug: "debug" };

/** A locator step: a CSS query under each current match, a text filter, or picking one match. */
type Step = { css: string } | { hasText: string | { source: string; flags: string } } | { nth: number } | { role: string; name?: string };

// Resolves a chain of steps to elements in document order; runs in the page (stringified).
const RESOLVE = `(steps) => {
  const norm = (s) => (s ?? "").replace(/\\u200b/g, "").replace(/\\s+/g, " ").trim();
  let nodes = [document];
  for (const s of steps) {
    if ("css" in s) {
      const found = new Set();
      for (const n of nodes) for (const e of n.querySelectorAll(s.css)) found.add(e);
      nodes = [...found].sort((a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
    } else if ("role" in s) {
      // Playwright's getByRole for the roles the checks use: explicit \`role\`, or the implicit role
      // of buttons, text fields and articles; \`name\` (case-insensitive substring, as Playwright's default)
      // against aria-label, aria-labelledby, a <label for> and, for buttons, the text.
      const implicit = { button: "button, input[type=button], input[type=submit]", textbox: "textarea, input:not([type]), input[type=text], input[type=search]", article: "article" };
      const sel = "[role=" + JSON.stringify(s.role) + "]" + (implicit[s.role] ? ", " + implicit[s.role] : "");
      const found = new Set();
      for (const n of nodes) for (const e of n.querySelectorAll(sel)) found.add(e);
      const accName = (e) => {
        if (e.getAttribute("aria-label")) return e.getAttribute("aria-label");
        const by = e.getAttribute("aria-labelledby");
        if (by) return by.split(/\\s+/).map((id) => document.getElementById(id)?.textContent ?? "").join(" ");
        if (e.id) { const l = document.querySelector("label[for=" + JSON.stringify(e.id) + "]"); if (l) return l.textContent; }
        const wrap = e.closest("label");
        if (wrap) return wrap.textContent;
        return s.role === "button" ? e.textContent : "";
      };
      nodes = [...found]
        .filter((e) => s.name === undefined || norm(accName(e)).toLowerCase().includes(norm(s.name).toLowerCase()))
        .sort((a, b) => (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
    } else if ("hasText" in s) {
      const t = s.hasText;
      nodes = nodes.filter((n) => typeof t === "string" ? norm(n.textContent).toLowerCase().includes(norm(t).toLowerCase()) : new RegExp(t.source, t.flags).test(n.textContent ?? ""));
    } else {
      const e = s.nth < 0 ? nodes[nodes.length + s.nth] : nodes[s.nth];
      nodes = e ? [e] : [];
    }
  }
  return nodes;
}`;

// Whether an element is visible the way Playwright means it: a non-empty box, not hidden.
const VISIBLE = `(e) => { const r = e.getBoundingClientRect(); const st = getComputedStyle(e); return r.width > 0 && r.height > 0 && st.visibility !== "hidden"; }`;

type TextExpected = string | RegExp;
const serializeText = (t: TextExpected) => (typeof t === "string" ? t : { source: t.source, flags: t.flags });

/** One tab. Implements the part of Playwright's `Page` the checks use. */
export class FirefoxPage {
  private readonly listeners: { event: string; handler: (arg: any) => void }[] = [];
  private readonly unsubscribe: (() => void)[] = [];
  /** The URL of the document last loaded (BiDi `browsingContext.load`), for the synchronous `url()`. */
  private currentUrl = "about:blank";
  /** Whether `route()` was called (once per tab). */
  private routed = false;
  /** The viewport last set (`newPage` sets Playwright's default 1280 × 720). */
  private viewport = { width: 1280, height: 720 };

  constructor(
    private readonly ctx: FirefoxContext,
    readonly id: string,
  ) {
    const b = ctx.browser;
    const emit = (event: string, arg: unknown) => {
      for (const l of this.listeners) if (l.event === event) l.handler(arg);
    };
    this.unsubscribe.push(
      b.onEvent("network.beforeRequestSent", (p) => {
        if (p.context !== id || p.redirectCount > 0) return;
        emit("request", strict<RequestInfo>({ method: () => p.request.method, url: () => p.request.url }, "request"));
      }),
      b.onEvent("network.responseStarted", (p) => {
        if (p.context !== id) return;
        emit("response", strict<ResponseInfo>({ status: () => p.response.status, url: () => p.response.url }, "response"));
      }),
      b.onEvent("browsingContext.load", (p) => {
        if (p.context === id) this.currentUrl = p.url;
      }),
      b.onEvent("log.entryAdded", (p) => {
        if (p.source?.context !== id) return;
        // BiDi's text is already "Name: message"; String(error) gives it back as Playwright's does.
        if (p.type === "javascript") emit("pageerror", Object.assign(new Error(p.text ?? ""), { toString: () => p.text ?? "" }));
        else if (p.type === "console") emit("console", strict<ConsoleInfo>({ type: () => CONSOLE_TYPE[p.method] ?? p.method, text: () => p.text ?? "" }, "console message"));
      }),
    );
  }

  /** Stops delivering events (the tab is closing with its context). */
  detach(): void {
    for (const u of this.unsubscribe) u();
  }

  get client(): Client {
    return this.ctx.browser.client;
  }

  /** `request` (Playwright's Request), `response` (at its headers), `console`, `pageerror`. */
  on(event: "request" | "response" | "console" | "pageerror", handler: (arg: any) => void): this {
    if (!["request", "response", "console", "pageerror"].includes(event)) throw new Error(`page.on("${event}") is not implemented in the Firefox adapter`);
    this.listeners.push({ event, handler });
    return this;
  }

  context(): FirefoxContext {
    return this.ctx;
  }

  /** The URL of the current document (as of its last load event). */
  url(): string {
    return this.currentUrl;
  }

  /** Closes the tab. */
  async close(): Promise<void> {
    this.detach();
    await this.client.browsingContextClose({ context: this.id });
  }

  /** Navigates (relative URLs against the emulator) and waits for the load event. */
  async goto(url: string): Promise<null> {
    const { url: loaded } = await this.client.browsingContextNavigate({ context: this.id, url: new URL(url, this.ctx.baseURL).href, wait: "complete" });
    this.currentUrl = loaded;
    return null;
  }

  async reload(): Promise<null> {
    await this.client.browsingContextReload({ context: this.id, wait: "complete" });
    return null;
  }

  /**
   * Playwright's `page.route(url, handler)` for a RegExp: every request of this tab is held
   * (BiDi `network.addIntercept` at `beforeRequestSent`); those whose URL matches go to `handler`,
   * the rest continue untouched. The request body comes from a BiDi data collector
   * (`network.getData`), so `route.fetch()` replays POSTs as sent.
   */
  async route(url: RegExp, handler: (route: RouteInfo) => unknown): Promise<void> {
    if (!(url instanceof RegExp)) throw new Error("page.route with a non-RegExp URL is not implemented in the Firefox adapter");
    // Two intercepts would both hold a request and both release it: one route per tab.
    if (this.routed) throw new Error("a second page.route on one tab is not implemented in the Firefox adapter");
    this.routed = true;
    const client = this.client;
    const { collector } = await client.networkAddDataCollector({ dataTypes: ["request"], maxEncodedDataSize: 10_000_000, contexts: [this.id] });
    const { intercept } = await client.networkAddIntercept({ phases: ["beforeRequestSent"], contexts: [this.id] });
    this.unsubscribe.push(
      this.ctx.browser.onEvent("network.beforeRequestSent", (p) => {
        if (p.context !== this.id || !p.isBlocked || !p.intercepts?.includes(intercept)) return;
        const id: string = p.request.request;
        const release = () => client.networkContinueRequest({ request: id }).then(() => {});
        if (!url.test(p.request.url)) {
          release().catch(() => {});
          return;
        }
        const route: RouteInfo = {
          request: () => strict<RequestInfo>({ method: () => p.request.method, url: () => p.request.url }, "request"),
          continue: release,
          abort: () => client.networkFailRequest({ request: id }).then(() => {}),
          fetch: async () => {
            const headers = new Headers();
            for (const h of p.request.headers as { name: string; value: { value: string } }[]) {
              // Hop-by-hop and length headers are Node fetch's own business.
              if (!["host", "connection", "content-length", "keep-alive", "transfer-encoding"].includes(h.name.toLowerCase())) headers.append(h.name, h.value.value);
            }
            let body: string | undefined;
            if (p.request.bodySize) {
              const { bytes } = (await client.networkGetData({ dataType: "request", collector, request: id })) as { bytes: { type: string; value: string } };
              body = bytes.type === "base64" ? Buffer.from(bytes.value, "base64").toString() : bytes.value;
            }
            const res = await fetch(p.request.url, { method: p.request.method, headers, body });
            // Buffered, as Playwright's APIResponse is.
            const buffered = await res.text();
            return new Response(buffered, { status: res.status, statusText: res.statusText, headers: res.headers });
          },
          fulfill: async ({ response: given, status, contentType, body }) => {
            const response = given ?? new Response(body ?? "", { status: status ?? 200, headers: contentType ? { "content-type": contentType } : {} });
            const text = body ?? (await response.text());
            const headers: { name: string; value: { type: "string"; value: string } }[] = [];
            response.headers.forEach((value, name) => {
              // The body is re-sent whole: its old length and encoding no longer apply.
              if (!["content-length", "content-encoding", "transfer-encoding"].includes(name)) headers.push({ name, value: { type: "string", value } });
            });
            await client.networkProvideResponse({
              request: id,
              statusCode: response.status,
              reasonPhrase: response.statusText || "OK",
              headers,
              body: { type: "string", value: text },
            });
          },
        };
        Promise.resolve(handler(strict(route, "route"))).catch((e) => {
          console.error(`page.route handler failed: ${e}`);
          release().catch(() => {});
        });
      }),
    );
  }

  /** Runs `fn` before any page script of every document this tab loads from now on. */
  async addInitScript(fn: () => void): Promise<void> {
    await this.client.scriptAddPreloadScript({ functionDeclaration: String(fn), contexts: [this.id] });
  }

  /** Calls `fn(arg)` in the page; the result travels as JSON. */
  async evaluate<R, A>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<R> {
    return this.call(`async (arg) => (${String(fn)})(arg)`, [arg ?? null]);
  }

  /** Calls `fnSource` in the page with JSON-serializable `args`; the result comes back as JSON (`undefined` kept). */
  async call<R>(fnSource: string, args: unknown[]): Promise<R> {
    const res = (await this.client.scriptCallFunction({
      // Wrapped, so that `undefined` comes back as `undefined` (as in Playwright), not `null`.
      functionDeclaration: `async (payload) => { const r = await (${fnSource})(...JSON.parse(payload)); return JSON.stringify(r === undefined ? {} : { v: r }); }`,
      target: { context: this.id },
      arguments: [{ type: "string", value: JSON.stringify(args) }],
      awaitPromise: true,
      resultOwnership: "none",
    })) as any;
    if (res.type === "exception") throw new Error(`in the page: ${res.exceptionDetails?.text ?? "exception"}`);
    return (JSON.parse(res.result.value) as { v?: R }).v as R;
  }

  /** Writes a PNG of the tab; Firefox shots get `-firefox` before `.png` beside Chromium's. */
  async screenshot(options: { path: string; fullPage?: boolean }): Promise<Buffer> {
    const { data } = await this.client.browsingContextCaptureScreenshot({ context: this.id, origin: options.fullPage ? "document" : "viewport" });
    const png = Buffer.from(data, "base64");
    const path = options.path.replace(/\.png$/, "-firefox.png");
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, png);
    return png;
  }

  getByTestId(id: string): FirefoxLocator {
    return FirefoxLocator.create(this, [{ css: `[data-testid=${JSON.stringify(id)}]` }]);
  }

  locator(css: string, options?: { hasText?: TextExpected }): FirefoxLocator {
    return FirefoxLocator.create(this, []).locator(css, options);
  }

  getByRole(role: string, options?: { name?: string }): FirefoxLocator {
    return FirefoxLocator.create(this, []).getByRole(role, options);
  }

  /** Resizes the tab's viewport (CSS px), as Playwright's `page.setViewportSize`. */
  async setViewportSize(size: { width: number; height: number }): Promise<void> {
    await this.client.browsingContextSetViewport({ context: this.id, viewport: size });
    this.viewport = { ...size };
  }

  viewportSize(): { width: number; height: number } {
    return { ...this.viewport };
  }

  async waitForTimeout(ms: number): Promise<void> {
    await sleep(ms);
  }

  /** Key input to the focused element (BiDi `input.performActions`), as Playwright's `page.keyboard`. */
  readonly keyboard = strict(
    {
      /** One key by Playwright's name ("Enter", "ArrowRight", …) or a single character. */
      press: async (key: string) => {
        const value = KEYS[key] ?? (key.length === 1 ? key : undefined);
        if (value === undefined) throw new Error(`keyboard.press("${key}") is not implemented in the Firefox adapter`);
        await this.keys([value]);
      },
      /** Types `text` character by character. */
      type: async (text: string) => this.keys([...text]),
    },
    "keyboard",
  );

  /** Presses and releases each of `values` (WebDriver key values) in turn. */
  async keys(values: string[]): Promise<void> {
    const actions = values.flatMap((value) => [
      { type: "keyDown" as const, value },
      { type: "keyUp" as const, value },
    ]);
    await this.client.inputPerformActions({ context: this.id, actions: [{ type: "key", id: "keyboard", actions }] });
    await this.client.inputReleaseActions({ context: this.id });
  }
}

// Playwright key names → WebDriver's key values (WebDriver §17.4.2), for the keys the checks press.
const KEYS: Record<string, string> = {
  Enter: "\uE007",
  Tab: "\uE004",
  Backspace: "\uE003",
  Escape: "\uE00C",
  End: "\uE010",
  Home: "\uE011",
  ArrowLeft: "\uE012",
  ArrowUp: "\uE013",
  ArrowRight: "\uE014",
  ArrowDown: "\uE015",
};

/** A lazy query, re-resolved on every use. Implements the part of Playwright's `Locator` used. */
export class FirefoxLocator {
  private constructor(
    readonly page: FirefoxPage,
    readonly steps: Step[],
  ) {}

  static create(page: FirefoxPage, steps: Step[]): FirefoxLocator {
    return strict(new FirefoxLocator(page, steps), "locator");
  }

  private with(step: Step): FirefoxLocator {
    return FirefoxLocator.create(this.page, [...this.steps, step]);
  }

  toString(): string {
    return `locator(${JSON.stringify(this.steps)})`;
  }

  getByTestId(id: string): FirefoxLocator {
    return this.with({ css: `[data-testid=${JSON.stringify(id)}]` });
  }

  locator(css: string, options?: { hasText?: TextExpected }): FirefoxLocator {
    const l = this.with({ css });
    return options?.hasText === undefined ? l : l.with({ hasText: serializeText(options.hasText) });
  }

  getByRole(role: string, options?: { name?: string }): FirefoxLocator {
    return this.with({ role, name: options?.name });
  }

  first(): FirefoxLocator {
    return this.with({ nth: 0 });
  }

  last(): FirefoxLocator {
    return this.with({ nth: -1 });
  }

  nth(index: number): FirefoxLocator {
    return this.with({ nth: index });
  }

  filter(options: { hasText: TextExpected }): FirefoxLocator {
    return this.with({ hasText: serializeText(options.hasText) });
  }

  /** One locator per current match (`nth(i)`), as Playwright's `all()`: no waiting. */
  async all(): Promise<FirefoxLocator[]> {
    const n = await this.count();
    return Array.from({ length: n }, (_, i) => this.nth(i));
  }

  /** Runs `op(elements, ...args)` in the page over the current matches. */
  query<R>(op: string, args: unknown[] = []): Promise<R> {
    return this.page.call<R>(`(steps, ...args) => (${op})((${RESOLVE})(steps), ...args)`, [this.steps, ...args]);
  }

  /** Like `query` on the single match, waiting (up to `timeoutMs`) until there is exactly one. */
  private async one<R>(op: string, args: unknown[] = [], timeoutMs = ACTION_TIMEOUT_MS): Promise<R> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // A failed call (e.g. the document is being replaced by a reload) is retried like no match.
      let failure = "";
      const r = await this.query<{ n: number; v?: R }>(`(els, ...args) => els.length === 1 ? { n: 1, v: (${op})(els[0], ...args) } : { n: els.length }`, args).catch((e: Error) => {
        failure = e.message;
        return { n: 0 } as { n: number; v?: R };
      });
      if (r.n > 1) throw new Error(`strict mode violation: ${this} resolved to ${r.n} elements`);
      if (r.n === 1) return r.v as R;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${this}${failure ? ` (last error: ${failure})` : ""}`);
      await sleep(POLL_MS);
    }
  }

  count(): Promise<number> {
    return this.query(`(els) => els.length`);
  }

  textContent(): Promise<string | null> {
    return this.one(`(e) => e.textContent`);
  }

  allTextContents(): Promise<string[]> {
    return this.query(`(els) => els.map((e) => e.textContent ?? "")`);
  }

  getAttribute(name: string): Promise<string | null> {
    return this.one(`(e, name) => e.getAttribute(name)`, [name]);
  }

  /** Focuses the single match. */
  async focus(): Promise<void> {
    await this.one(`(e) => { e.focus(); return true; }`);
  }

  /** Scrolls the single match into view (nothing when it is already in view). */
  async scrollIntoViewIfNeeded(): Promise<void> {
    await this.one(`(e) => { e.scrollIntoView({ block: "nearest", inline: "nearest" }); return true; }`);
  }

  /** The single match's box in viewport CSS px, `null` when it is not visible (as Playwright). */
  boundingBox(): Promise<{ x: number; y: number; width: number; height: number } | null> {
    return this.one(`(e) => { if (!(${VISIBLE})(e)) return null; const r = e.getBoundingClientRect(); return { x: r.x, y: r.y, width: r.width, height: r.height }; }`);
  }

  /** Calls `fn(element, arg)` in the page on the single match. */
  evaluate<R, A>(fn: (el: any, arg: A) => R, arg?: A): Promise<R> {
    return this.one(String(fn), [arg ?? null]);
  }

  /**
   * A real mouse click (BiDi pointer input) at the element's centre, once it is the only match,
   * visible, enabled and the topmost element at that point.
   */
  async click(): Promise<void> {
    const deadline = Date.now() + ACTION_TIMEOUT_MS;
    for (;;) {
      const at = await this.one<{ x: number; y: number } | null>(
        `(e) => {
          if (!(${VISIBLE})(e) || e.disabled) return null;
          e.scrollIntoView({ block: "center", inline: "center" });
          const r = e.getBoundingClientRect();
          const x = Math.round(r.left + r.width / 2), y = Math.round(r.top + r.height / 2);
          const hit = document.elementFromPoint(x, y);
          return hit && (hit === e || e.contains(hit)) ? { x, y } : null;
        }`,
        [],
        Math.max(0, deadline - Date.now()),
      );
      if (at) {
        await this.page.client.inputPerformActions({
          context: this.page.id,
          actions: [
            {
              type: "pointer",
              id: "mouse",
              parameters: { pointerType: "mouse" },
              actions: [
                { type: "pointerMove", x: at.x, y: at.y, origin: "viewport" },
                { type: "pointerDown", button: 0 },
                { type: "pointerUp", button: 0 },
              ],
            },
          ],
        });
        await this.page.client.inputReleaseActions({ context: this.page.id });
        return;
      }
      if (Date.now() > deadline) throw new Error(`timed out after ${ACTION_TIMEOUT_MS} ms waiting for ${this} to be clickable`);
      await sleep(POLL_MS);
    }
  }

  /**
   * Replaces the field's value by typing `text` (real key input) into it, once it is the only
   * match, visible and editable; focused, its old value selected.
   */
  async fill(text: string): Promise<void> {
    const deadline = Date.now() + ACTION_TIMEOUT_MS;
    while (!(await this.one<boolean>(`(e) => { if (!(${VISIBLE})(e) || e.disabled || e.readOnly) return false; e.focus(); e.select?.(); return document.activeElement === e; }`, [], Math.max(0, deadline - Date.now())))) {
      if (Date.now() > deadline) throw new Error(`timed out after ${ACTION_TIMEOUT_MS} ms waiting for ${this} to be editable`);
      await sleep(POLL_MS);
    }
    const keys = [...text].flatMap((ch) => [
      { type: "keyDown" as const, value: ch },
      { type: "keyUp" as const, value: ch },
    ]);
    // An empty text clears the selection with Backspace.
    if (keys.length === 0) keys.push({ type: "keyDown", value: "\uE003" }, { type: "keyUp", value: "\uE003" });
    await this.page.client.inputPerformActions({ context: this.page.id, actions: [{ type: "key", id: "keyboard", actions: keys }] });
    await this.page.client.inputReleaseActions({ context: this.page.id });
  }
}

/** What a locator assertion reads each poll: the match count and the single match's state. */
interface Probe {
  n: number;
  text?: string;
  visible?: boolean;
  className?: string;
  /** The element's attributes by name. */
  attributes?: Record<string, string>;
  /** A form control's `disabled` (Playwright's `toBeEnabled` reads it the same way). */
  disabled?: boolean;
  /** An input's, textarea's or select's `value` (undefined for other elements). */
  value?: string;
  /** Every match's `textContent`, in document order (for the array form of `toHaveText`). */
  texts: string[];
  /** The match is `document.activeElement`. */
  focused?: boolean;
}

const PROBE = `(els) => els.length === 1
  ? { n: 1, text: els[0].textContent ?? "", visible: (${VISIBLE})(els[0]), className: els[0].getAttribute("class") ?? "",
      attributes: Object.fromEntries([...els[0].attributes].map((a) => [a.name, a.value])), disabled: els[0].disabled === true,
      value: ["INPUT", "TEXTAREA", "SELECT"].includes(els[0].tagName) ? els[0].value : undefined, texts: [els[0].textContent ?? ""],
      focused: document.activeElement === els[0] }
  : { n: els.length, texts: els.map((e) => e.textContent ?? "") }`;

const norm = (s: string) => s.replace(/\u200b/g, "").replace(/\s+/g, " ").trim();

function textMatches(actual: string, expected: TextExpected, contains: boolean): boolean {
  if (expected instanceof RegExp) return new RegExp(expected.source, expected.flags).test(actual);
  return contains ? norm(actual).includes(norm(expected)) : norm(actual) === norm(expected);
}

/** Retries `test` on fresh probes until it passes (XOR `negate`) or the timeout ends. */
async function retry(locator: FirefoxLocator, name: string, expected: unknown, negate: boolean, timeout: number | undefined, strictOne: boolean, test: (p: Probe) => boolean): Promise<void> {
  const deadline = Date.now() + (timeout ?? EXPECT_TIMEOUT_MS);
  let last: Probe = { n: 0, texts: [] };
  for (;;) {
    last = await locator.query<Probe>(PROBE).catch(() => ({ n: 0, texts: [] }));
    if (strictOne && last.n > 1) throw new Error(`expect(${locator}).${name} failed: strict mode violation, ${last.n} elements`);
    if (test(last) !== negate) return;
    if (Date.now() > deadline) break;
    await sleep(POLL_MS);
  }
  const received = last.n === 1 ? JSON.stringify(last.text?.slice(0, 500)) : `${last.n} elements ${JSON.stringify(last.texts.map((t) => t.slice(0, 80)))}`;
  throw new Error(`expect(${locator})${negate ? ".not" : ""}.${name} failed after ${timeout ?? EXPECT_TIMEOUT_MS} ms\nExpected: ${String(expected)}\nReceived: ${received}`);
}

/** Playwright's locator assertions for a Firefox locator (`expect(locator)` in ../expect.ts). */
export function locatorMatchers(l: FirefoxLocator, negate: boolean): object {
  const m = {
    get not() {
      return locatorMatchers(l, !negate);
    },
    // An array: as many matches as entries, each matching its entry (Playwright's list form).
    toHaveText: (exp: TextExpected | TextExpected[], o?: { timeout?: number }) =>
      Array.isArray(exp)
        ? retry(l, "toHaveText", JSON.stringify(exp.map(String)), negate, o?.timeout, false, (p) => p.n === exp.length && exp.every((e, i) => textMatches(p.texts[i], e, false)))
        : retry(l, "toHaveText", exp, negate, o?.timeout, true, (p) => p.n === 1 && textMatches(p.text!, exp, false)),
    toContainText: (exp: TextExpected, o?: { timeout?: number }) => retry(l, "toContainText", exp, negate, o?.timeout, true, (p) => p.n === 1 && textMatches(p.text!, exp, true)),
    toBeVisible: (o?: { timeout?: number }) => retry(l, "toBeVisible", "visible", negate, o?.timeout, true, (p) => p.n === 1 && p.visible === true),
    // Playwright: no match, or a match that is not visible.
    toBeHidden: (o?: { timeout?: number }) => retry(l, "toBeHidden", "hidden", negate, o?.timeout, true, (p) => p.n === 0 || p.visible === false),
    toBeFocused: (o?: { timeout?: number }) => retry(l, "toBeFocused", "focused", negate, o?.timeout, true, (p) => p.n === 1 && p.focused === true),
    toHaveClass: (exp: TextExpected, o?: { timeout?: number }) =>
      retry(l, "toHaveClass", exp, negate, o?.timeout, true, (p) => p.n === 1 && (exp instanceof RegExp ? exp.test(p.className!) : norm(p.className!) === norm(exp))),
    toHaveCount: (n: number, o?: { timeout?: number }) => retry(l, "toHaveCount", n, negate, o?.timeout, false, (p) => p.n === n),
    toHaveAttribute: (name: string, exp: TextExpected, o?: { timeout?: number }) =>
      retry(l, "toHaveAttribute", `${name}=${String(exp)}`, negate, o?.timeout, true, (p) => {
        const value = p.n === 1 ? p.attributes?.[name] : undefined;
        return value !== undefined && (exp instanceof RegExp ? exp.test(value) : value === exp);
      }),
    toBeEnabled: (o?: { timeout?: number }) => retry(l, "toBeEnabled", "enabled", negate, o?.timeout, true, (p) => p.n === 1 && p.disabled === false),
    toBeDisabled: (o?: { timeout?: number }) => retry(l, "toBeDisabled", "disabled", negate, o?.timeout, true, (p) => p.n === 1 && p.disabled === true),
    // Playwright: a form control's value is empty, or else the element has no text.
    toBeEmpty: (o?: { timeout?: number }) => retry(l, "toBeEmpty", "empty", negate, o?.timeout, true, (p) => p.n === 1 && (p.value !== undefined ? p.value === "" : norm(p.text!) === "")),
    toHaveValue: (exp: TextExpected, o?: { timeout?: number }) =>
      retry(l, "toHaveValue", exp, negate, o?.timeout, true, (p) => p.n === 1 && p.value !== undefined && (exp instanceof RegExp ? exp.test(p.value) : p.value === exp)),
  };
  return strict(m, "expect(locator)");
}
