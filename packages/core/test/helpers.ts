import {
  type ChatMessage,
  createLlmClient,
  type LlmClient,
  type LoopEvent,
  type StopEvent,
  type ToolDefinition,
  type ToolProgress,
  type ToolResult,
  type ToolSet,
  toolSetOf,
} from "@crow/core";
import { type LoopConfig, runLoop } from "@crow/core/internal";

/** A tool implementation for the fake executor. */
export type FakeTool = (
  args: Record<string, unknown>,
  ctx: { signal: AbortSignal; onProgress: (p: ToolProgress) => void },
) => Promise<ToolResult | string> | ToolResult | string;

/** An in-memory tool executor: tools by name, each call recorded. */
export function fakeTools(
  tools: Record<string, FakeTool>,
): ToolSet & { calls: Array<{ name: string; args: unknown }> } {
  const calls: Array<{ name: string; args: unknown }> = [];
  const definitions = (): ToolDefinition[] =>
    Object.keys(tools).map((name) => ({
      type: "function",
      function: { name, description: `the ${name} tool`, parameters: { type: "object" } },
    }));
  const set = toolSetOf(definitions, async (call, ctx) => {
    calls.push({ name: call.tool, args: call.args });
    const tool = tools[call.tool];
    if (!tool) return { content: `no such tool ${call.name}`, isError: true };
    const result = await tool(call.args, ctx);
    return typeof result === "string" ? { content: result } : result;
  });
  return Object.assign(set, { calls });
}

/** A client with fast retries, for the mock. */
export function testClient(url: string): LlmClient {
  return createLlmClient({ baseURL: url, retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 50 } });
}

/** Runs a turn to completion and returns every event plus the stop event. */
export async function runTurn(
  messages: ChatMessage[],
  config: LoopConfig,
  onEvent?: (event: LoopEvent) => void,
): Promise<{ events: LoopEvent[]; stop: StopEvent; history: ChatMessage[] }> {
  const events: LoopEvent[] = [];
  for await (const event of runLoop({ messages }, config)) {
    events.push(event);
    onEvent?.(event);
  }
  const stop = events.at(-1);
  if (stop?.type !== "stop") throw new Error("the loop did not end with a stop event");
  return { events, stop, history: [...messages, ...stop.messages] };
}

/** Resolves when `signal` aborts. */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
