import type { ErrorCode as SessionErrorCode } from "../wasm/forgestream_web.js";

/**
 * Stable error codes (DESIGN.md "Errors"): branch on these, never on messages. Generated from the
 * core's `ErrorCode` enum (`SessionErrorCode`), plus `not-initialized`, which only the TS layer
 * raises (an `AgentClient` before `init()`).
 */
export type ErrorCode = SessionErrorCode | "not-initialized";

/** Every error the SDK throws or reports: a real `Error` with a stable `code`. */
export class ForgestreamError extends Error {
  override readonly name = "ForgestreamError";
  /** Stable code. */
  readonly code: ErrorCode;
  /** Whether trying again later may succeed. */
  readonly retryable: boolean;
  /** HTTP status, when the server answered. */
  readonly status: number | undefined;

  constructor(code: ErrorCode, message: string, options: { retryable?: boolean; status?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? (code === "network" || code === "outcome-unknown");
    this.status = options.status;
  }

  /** Converts anything thrown by the wasm core into a `ForgestreamError` (an unknown throw is `internal`). */
  static from(error: unknown): ForgestreamError {
    if (error instanceof ForgestreamError) return error;
    // The wasm side throws a JS `Error` named `ForgestreamError` whose `code` it took from the
    // core's enum (`ErrorCode::as_str`); any other throw with a `code` (a DOMException's number,
    // a Node `ECONNRESET`) is not one of ours.
    if (error instanceof Error && error.name === "ForgestreamError" && typeof (error as { code?: unknown }).code === "string") {
      const e = error as Error & { code: ErrorCode; retryable?: boolean; status?: number };
      return new ForgestreamError(e.code, e.message, { retryable: e.retryable ?? false, ...(e.status === undefined ? {} : { status: e.status }), cause: error });
    }
    // Not one of ours: a fault inside the SDK (or a bug), never a retryable network error.
    const message = error instanceof Error ? error.message : String(error);
    return new ForgestreamError("internal", message, { retryable: false, cause: error });
  }
}
