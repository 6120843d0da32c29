/**
 * A `ViewSource` double for the chat store's tests: holds a snapshot the test sets, and tells
 * the store's listener at once (no frames, no core).
 */
import type { ViewSource } from "../src/chat.js";
import type { SessionSnapshot } from "../src/types.js";

export class FakeSource implements ViewSource {
  readonly listeners = new Set<() => void>();
  constructor(public snapshot: SessionSnapshot) {}
  subscribe(l: () => void) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  getSnapshot() {
    return this.snapshot;
  }
  set(s: SessionSnapshot) {
    this.snapshot = s;
    for (const l of this.listeners) l();
  }
}
