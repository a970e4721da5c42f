import { ndJsonStream } from "@agentclientprotocol/sdk";
import { log } from "../base/log.js";
import type { AgentConfig } from "../config/index.js";
import { createAgent } from "./agent.js";
import { batchedOutput } from "./batched-output.js";
import { boundedInput } from "./bounded-input.js";

/**
 * Serves ACP on stdin/stdout until stdin closes, then stops every session's tools. Resolves when done. stdout must
 * carry nothing else (the CLI routes console output to stderr before calling this). With `reload` (how the
 * configuration is read again), signing in is offered: see auth.ts.
 */
export async function runAcp(config: AgentConfig, reload?: () => Promise<AgentConfig>): Promise<void> {
  // One writer for everything that goes out: the connection's messages, and the answers to requests too long to
  // read (bounded-input.ts), so the two never interleave within a line.
  const writer = batchedOutput(process.stdout).getWriter();
  const output = new WritableStream<Uint8Array>({
    write: (chunk) => writer.write(chunk),
    close: () => writer.close(),
    abort: (reason) => writer.abort(reason),
  });
  const answer = (line: string) => {
    writer.write(Buffer.from(line)).catch((error: unknown) => log.debug("could not answer an oversize request", error));
  };
  const stream = ndJsonStream(output, boundedInput(process.stdin, answer));
  const { app, close } = createAgent({ config, ...(reload ? { signIn: { reload } } : {}) });
  const connection = app.connect(stream);
  await connection.closed.catch((error: unknown) => log.debug("connection closed with an error", error));
  await close();
}
