/**
 * A scripted stand-in for the wasm core's `WasmSession`, as far as `SnapshotStore` uses it:
 * `id`, `setListener`, `snapshot()` and `takeChanges()`. Tests queue change sets and fire the
 * listener the way the core does after a drain.
 */
import type { WasmSession } from "../wasm/forgestream_web.js";
import type { ItemView, TurnSnapshot } from "../src/types.js";

/** Test data in the shape of `snapshot()` / `takeChanges()` (the generated `CoreChanges`), typed loosely so tests can script states the core never produces. */
export interface Changes {
  sessionId: string;
  drain: number;
  order?: string[];
  turns?: (Omit<TurnSnapshot, "items"> & { itemKeys: string[] })[];
  cursors?: { turnId: string; version: number; lastSequenceNumber: number | null }[];
  items?: { turnId: string; key: string; removed: boolean; value?: ItemView; append?: { baseVersion: number; version: number; content?: string; reasoning?: string; refusal?: string } }[];
  pending?: unknown[];
  threads?: unknown[];
  usage?: unknown;
  connection?: { status: string; turnId: string | null };
  error: { code: string; message: string; retryable: boolean; status?: number } | null;
  warnings?: { code: string; message: string }[];
}

export class FakeCore {
  readonly id = "s1";
  listener: (() => void) | undefined;
  /** What `snapshot()` returns (the whole view). */
  full: Changes;
  /** What the next `takeChanges()` calls return, in order. */
  queue: Changes[] = [];
  takes = 0;
  fulls = 0;
  /** The core's `catchingUp`: a restored turn's replay still short of the page's checkpoint. */
  catchingUp = false;

  constructor(full: Changes) {
    this.full = full;
  }

  setListener(f: () => void): void {
    this.listener = f;
  }

  snapshot(): Changes {
    this.fulls++;
    return this.full;
  }

  takeChanges(): Changes {
    this.takes++;
    return this.queue.shift() ?? { sessionId: this.id, drain: this.full.drain, connection: this.full.connection, error: null };
  }

  /** This object as the type `SnapshotStore` expects (it reads only the members above). */
  asSession(): WasmSession {
    return this as unknown as WasmSession;
  }
}

export function header(turnId: string, itemKeys: string[], status: TurnSnapshot["status"] = "running"): Omit<TurnSnapshot, "items"> & { itemKeys: string[] } {
  return {
    turnId,
    previousTurnId: null,
    status,
    cancelReason: null,
    errorMessage: null,
    input: null,
    createdAt: null,
    completedAt: null,
    usage: { inputTokens: 0, outputTokens: 0 },
    lastSequenceNumber: null,
    version: 1,
    itemKeys,
  } as unknown as Omit<TurnSnapshot, "items"> & { itemKeys: string[] };
}

export function message(turnId: string, key: string, version: number, content: string | null): ItemView {
  return {
    key,
    turnId,
    threadId: "main",
    version,
    createdAt: null,
    body: { kind: "message", id: key, name: null, content, reasoning: null, refusal: null, toolCalls: [], finishReason: null, usage: null, complete: false },
  } as unknown as ItemView;
}
