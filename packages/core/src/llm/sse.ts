/**
 * Minimal Server-Sent Events reader for chat-completion streams: yields the `data` payload of each event.
 * Comments (`: keep-alive`) and other fields are skipped; multi-line data is joined with "\n".
 *
 * One StringDecoder per stream (a character split between network chunks is kept for the next one; constructing a
 * TextDecoder cost a fresh process more than decoding a small stream) and one plain loop over the lines of each
 * chunk: a generator per line was the bulk of this reader's cost in the first tool rounds of a fresh agent.
 */
import { StringDecoder } from "node:string_decoder";

export async function* readSseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new StringDecoder("utf8");
  let buffer = "";
  let first = true;
  let data: string[] = [];
  /** Takes one line; returns the event it completes, if any. */
  const takeLine = (line: string): string | undefined => {
    if (line === "") {
      const event = data.length > 0 ? data.join("\n") : undefined;
      data = [];
      return event;
    }
    if (line.startsWith("data:")) data.push(line.slice(line[5] === " " ? 6 : 5));
    return undefined;
  };
  for await (const bytes of body) {
    buffer += decoder.write(bytes as Buffer);
    if (first && buffer.length > 0) {
      // A byte order mark may open the stream (the SSE spec drops it; TextDecoder did too).
      if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
      first = false;
    }
    // Walk the lines by index and cut the buffer once per network chunk (slicing per line is quadratic).
    const events: string[] = [];
    let start = 0;
    let newline = buffer.indexOf("\n", start);
    while (newline >= 0) {
      const end = newline > start && buffer.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      const event = takeLine(buffer.slice(start, end));
      if (event !== undefined) events.push(event);
      start = newline + 1;
      newline = buffer.indexOf("\n", start);
    }
    buffer = buffer.slice(start);
    for (const event of events) yield event;
  }
  buffer += decoder.end();
  const last = buffer.length > 0 ? takeLine(buffer.replace(/\r$/, "")) : undefined;
  if (last !== undefined) yield last;
  const final = takeLine("");
  if (final !== undefined) yield final;
}
