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
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, "");
      buffer = buffer.slice(newline + 1);
      yield* flushLine(line);
      newline = buffer.indexOf("\n");
    }
  }
  buffer += decoder.decode();
  if (buffer.length > 0) yield* flushLine(buffer.replace(/\r$/, ""));
  yield* flushLine("");
}
