/**
 * The protocol's events (PROTOCOL §5) as the app receives them from `session.exportEvents()`.
 * The shapes are generated from the core's wire types by tsify (`crates/forgestream-core/src/wire/`):
 * field names as on the wire (snake_case), `type` the discriminant. `ProtocolEvent` is the union
 * of the 12 known types; an event of any other `type` is an `UnknownEvent`, kept whole.
 */
import type { ProtocolEvent, UnknownEvent } from "../wasm/forgestream_web.js";

/** Every `type` of `ProtocolEvent`, checked against the generated union in both directions. */
export const KNOWN_EVENT_TYPES = [
  "turn.created",
  "turn.done",
  "model.message",
  "model.message.delta",
  "tool.response",
  "tool.approval_required",
  "tool.response_required",
  "mcp.auth_required",
  "mcp.initialize",
  "sandbox.created",
  "thread.created",
  "thread.done",
] as const satisfies readonly ProtocolEvent["type"][];

// A `type` added to the core's union but not listed above fails to compile here.
type Unlisted = Exclude<ProtocolEvent["type"], (typeof KNOWN_EVENT_TYPES)[number]>;
const everyTypeListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyTypeListed;

const known: ReadonlySet<string> = new Set(KNOWN_EVENT_TYPES);

/**
 * True when `event` has one of the protocol's known types; then `switch (event.type)` narrows
 * it to that type's fields. (The core decodes every known type strictly, so an event with a known
 * `type` in an export has that type's shape; `UnknownEvent`s are the rest.)
 */
export function isKnownEvent(event: ProtocolEvent | UnknownEvent): event is ProtocolEvent {
  return known.has(event.type);
}
