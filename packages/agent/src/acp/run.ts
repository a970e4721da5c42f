import { Readable } from "node:stream";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import type { AgentConfig } from "../config/index.js";
import { log } from "../log.js";
import { createAgent } from "./agent.js";
import { batchedOutput } from "./batched-output.js";

/**
 * Serves ACP on stdin/stdout until stdin closes, then stops every session's tools. Resolves when done. stdout must
 * carry nothing else (the CLI routes console output to stderr before calling this).
 */
export async function runAcp(config: AgentConfig): Promise<void> {
  const stream = ndJsonStream(
    batchedOutput(process.stdout),
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const { app, close } = createAgent({ config });
  const connection = app.connect(stream);
  await connection.closed.catch((error: unknown) => log.debug("connection closed with an error", error));
  await close();
}
