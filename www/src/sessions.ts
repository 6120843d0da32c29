/**
 * The sessions this browser created, kept in localStorage under the demo's own keys (the SDK keeps
 * its resume checkpoints under its own). Storage that throws (disabled, full) degrades to memory.
 */
export interface StoredSession {
  id: string;
  agent: string;
  createdAt: number;
}

const LIST_KEY = "forgestream-demo:sessions";
const CURRENT_KEY = "forgestream-demo:current";
const memory = new Map<string, string>();

function read(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return memory.get(key) ?? null;
  }
}

function write(key: string, value: string | null): void {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    if (value === null) memory.delete(key);
    else memory.set(key, value);
  }
}

function isStored(v: unknown): v is StoredSession {
  if (typeof v !== "object" || v === null) return false;
  const o = v as Record<string, unknown>;
  return typeof o.id === "string" && typeof o.agent === "string" && typeof o.createdAt === "number";
}

export function loadSessions(): StoredSession[] {
  try {
    const parsed: unknown = JSON.parse(read(LIST_KEY) ?? "[]");
    return Array.isArray(parsed) ? parsed.filter(isStored) : [];
  } catch {
    return [];
  }
}

export function saveSessions(list: readonly StoredSession[]): void {
  write(LIST_KEY, JSON.stringify(list));
}

export function loadCurrent(): string | null {
  return read(CURRENT_KEY);
}

export function saveCurrent(id: string | null): void {
  write(CURRENT_KEY, id);
}

/** Fires when another tab changed the list or the current session. */
export function onStorageChange(listener: () => void): () => void {
  const handler = (e: StorageEvent) => {
    if (e.key === LIST_KEY || e.key === null) listener();
  };
  window.addEventListener("storage", handler);
  return () => window.removeEventListener("storage", handler);
}
