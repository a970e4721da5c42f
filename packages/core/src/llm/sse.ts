/**
 * Minimal Server-Sent Events reader for chat-completion streams: yields the `data` payload of each event.
 * Comments (`: keep-alive`) and other fields are skipped; multi-line data is joined with "\n".
 */
export async function* readSseData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = "";
  let data: string[] = [];
  const flushLine = function* (line: string): Generator<string> {
    if (line === "") {
      if (data.length > 0) yield data.join("\n");
      data = [];
    } else if (line.startsWith("data:")) {
      data.push(line.slice(line[5] === " " ? 6 : 5));
    }
  };
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    // Walk the lines by index and cut the buffer once per network chunk (slicing per line is quadratic).
    let start = 0;
    let newline = buffer.indexOf("\n", start);
    while (newline >= 0) {
      const end = newline > start && buffer.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      yield* flushLine(buffer.slice(start, end));
      start = newline + 1;
      newline = buffer.indexOf("\n", start);
    }
    buffer = buffer.slice(start);
  }
  buffer += decoder.decode();
  if (buffer.length > 0) yield* flushLine(buffer.replace(/\r$/, ""));
  yield* flushLine("");
}
