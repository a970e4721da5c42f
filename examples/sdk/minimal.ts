/**
 * The smallest SDK program: one session, one prompt, events streamed to the terminal, the final answer printed.
 * Configuration comes from ~/.crow (or CROW_HOME), else OPENAI_BASE_URL / OPENAI_API_KEY / CROW_MODEL.
 *
 *   npx tsx --conditions=@crow/source examples/sdk/minimal.ts "What does this project do?"
 */
import { createCrow } from "@crow/agent";

const crow = await createCrow();
try {
  const session = await crow.newSession({ cwd: process.cwd() });
  const run = session.prompt(process.argv[2] ?? "Say hello in one sentence.");
  for await (const event of run) {
    if (event.type === "text_delta") process.stdout.write(event.text);
    if (event.type === "tool_call_pending") process.stderr.write(`\n[tool] ${event.call.name}\n`);
  }
  const result = await run.result;
  process.stdout.write(`\n\nstop: ${result.stopReason}, session ${session.id}\n`);
} finally {
  await crow.close();
}
