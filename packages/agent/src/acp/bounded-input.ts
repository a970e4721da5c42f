/**
 * `crow acp`'s stdin as the ACP SDK should read it: lines up to {@link ACP_MAX_LINE_BYTES}, and nothing longer.
 * The SDK's own reader, handed a longer line, failed the whole connection and `crow acp` exited without a word. Here
 * such a line is skipped as it arrives (memory stays bounded by the limit), stderr says what was dropped and why,
 * a request whose id can be read from the line's ends is answered with a JSON-RPC error (-32600) naming the size and
 * the limit, a response whose id can be read is replaced by an error response (the agent's call fails with the
 * reason instead of waiting forever), and the next line is read as usual.
 */
import type { Readable } from "node:stream";
import { BoundedLineSplitter, describeOversize, oversizeError, oversizeLog } from "@crow/mcp/line-transport";
import { log } from "../base/log.js";

/** The longest line read: the ACP SDK's own limit (DEFAULT_MAX_MESSAGE_BYTES), which still applies after this. */
export const ACP_MAX_LINE_BYTES = 32 * 1024 * 1024;

const NEWLINE = Buffer.from("\n");

/**
 * `input` as a byte stream of lines within `limit`; `answer` writes one JSON-RPC message (a line, newline included)
 * to the other side.
 */
export function boundedInput(
  input: Readable,
  answer: (line: string) => void,
  limit = ACP_MAX_LINE_BYTES,
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const splitter = new BoundedLineSplitter(
        limit,
        (line) => {
          controller.enqueue(Buffer.concat([line, NEWLINE]));
        },
        (line) => {
          const message = describeOversize(line);
          log.warn(`ACP input: ${oversizeLog(line, message)}`);
          const error = oversizeError(line, message);
          if (!error) return;
          const text = `${JSON.stringify(error)}\n`;
          if (message.kind === "request") answer(text);
          else controller.enqueue(Buffer.from(text));
        },
      );
      input.on("data", (chunk: Buffer) => {
        splitter.push(chunk);
        // The reader is behind: wait for it (pull resumes) rather than buffer stdin here.
        if ((controller.desiredSize ?? 1) <= 0) input.pause();
      });
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        splitter.end();
        controller.close();
      };
      input.once("end", finish);
      // Closed without an end (destroyed): what was read is all there is.
      input.once("close", finish);
      input.once("error", (error) => {
        done = true;
        controller.error(error);
      });
    },
    pull() {
      input.resume();
    },
    cancel() {
      input.pause();
    },
  });
}
