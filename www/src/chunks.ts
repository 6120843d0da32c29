/**
 * Splitting a long message's text into chunks that stay the same while the text grows.
 *
 * A chunk ends after a run of line breaks, once it holds at least `CHUNK_MIN` UTF-16 code units,
 * and only when the character after the run has arrived (the run might still grow). Where each
 * boundary falls therefore depends only on the text before it: appending text never moves an
 * earlier boundary, so every chunk but the last keeps its exact string while a message streams.
 * Text without line breaks stays in one chunk (cutting a paragraph would change how it wraps).
 */

/** Smallest chunk worth its own element, in UTF-16 code units (~30 lines of prose). */
export const CHUNK_MIN = 2048;

/** The chunks of `text`, in order; their concatenation is `text`. Never empty. */
export function textChunks(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (;;) {
    const end = chunkEnd(text, start);
    if (end < 0) break;
    out.push(text.slice(start, end));
    start = end;
  }
  out.push(text.slice(start));
  return out;
}

/** Where the chunk starting at `start` ends, or -1 when it is (so far) the last one. */
function chunkEnd(text: string, start: number): number {
  // The run's last line break must be at `start + CHUNK_MIN - 1` or later.
  let i = text.indexOf("\n", start + CHUNK_MIN - 1);
  if (i < 0) return -1;
  while (text.charCodeAt(i + 1) === 10) i++;
  // No character after the run yet: another line break may still join it.
  return i + 1 < text.length ? i + 1 : -1;
}
