import { Readable, Writable } from "node:stream";
import { ndJsonStream } from "@agentclientprotocol/sdk";
import type { AgentConfig } from "../config/index.js";
import { log } from "../log.js";
import { createAgent } from "./agent.js";

/**
 * Serves ACP on stdin/stdout until stdin closes, then stops every session's tools. Resolves when done. stdout must
 * carry nothing else (the CLI routes console output to stderr before calling this).
 */
export async function runAcp(config: AgentConfig): Promise<void> {
  const stream = ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const { app, close } = createAgent({ config });
  const connection = app.connect(stream);
  await connection.closed.catch((error: unknown) => log.debug("connection closed with an error", error));
  await close();
}
