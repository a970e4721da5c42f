import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolContext } from "../context.js";
import { log } from "../log.js";
import { takeCallPolicy } from "../sandbox/meta.js";
import { UNCONFINED, UNSANDBOXED_META_KEY } from "../sandbox/policy.js";
import { type TerminalRequest, type TerminalResponse, TerminalSession } from "../terminal/session.js";
import { sweepOrphanTerminalDirsOnce } from "../terminal/temp-dirs.js";
import { errorResult, guarded, textResult } from "./result.js";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export const DEFAULT_SOFT_TIMEOUT_SECONDS = 30;
/** Progress notifications go out at most this often, each carrying the output since the previous one. */
const PROGRESS_INTERVAL_MS = 200;
const PROGRESS_MESSAGE_CHARS = 8000;

/**
 * Lean: what a model must know before its first call (the shell persists; a silent command returns early and how to
 * follow it up). The rest is said where it happens: a cut output, a soft timeout, a refused command while another
 * runs, a restarted shell each say so in their result.
 */
function description(softSeconds: number): string {
  return `Run bash in a persistent shell (cwd, env, venvs carry over). A command silent for ${softSeconds}s returns early and keeps running.`;
}

const inputSchema = z.strictObject({
  command: z.string().describe('Command; "" waits for a running one; "C-c", "C-z", "C-d" send keys'),
  is_input: z.boolean().optional().describe("Type command into the running program"),
  timeout: z.number().positive().max(86_400).nullable().optional().describe("Seconds, then interrupt"),
  reset: z.boolean().optional().describe("Start a fresh shell first"),
});

/** Registers `terminal(command, is_input=false, timeout?, reset=false)`: one shell per ToolContext. */
export function registerTerminalTool(server: McpServer, context: ToolContext): void {
  // At the first session of this crow-mcp: what killed ones left in the temp directory goes (in the background).
  void sweepOrphanTerminalDirsOnce();
  const softSeconds = context.options.terminal?.softTimeoutSeconds ?? DEFAULT_SOFT_TIMEOUT_SECONDS;
  const session = new TerminalSession({
    cwd: context.cwd,
    softTimeoutMs: softSeconds * 1000,
    policy: () => context.sandbox.current,
  });
  context.onClose(() => session.close());
  server.registerTool(
    "terminal",
    {
      title: "Terminal",
      description: description(softSeconds),
      inputSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    guarded("terminal", async (args, extra: Extra) => {
      const badPolicy = takeCallPolicy(context, extra._meta);
      if (badPolicy) return errorResult(badPolicy);
      const progress = progressStreamer(extra);
      try {
        if (extra._meta?.[UNSANDBOXED_META_KEY] === true) {
          return toResult(
            await runOnceUnconfined(session.currentCwd, softSeconds, {
              command: args.command,
              ...(args.timeout != null ? { timeoutSeconds: args.timeout } : {}),
              signal: extra.signal,
              ...(progress ? { onOutput: progress.push } : {}),
            }),
          );
        }
        const response = await session.run({
          command: args.command,
          isInput: args.is_input ?? false,
          reset: args.reset ?? false,
          ...(args.timeout != null ? { timeoutSeconds: args.timeout } : {}),
          signal: extra.signal,
          ...(progress ? { onOutput: progress.push } : {}),
        });
        return toResult(response);
      } finally {
        progress?.stop();
      }
    }),
  );
}

function toResult(response: TerminalResponse): CallToolResult {
  if (response.isError) return errorResult(response.text);
  return textResult(response.text, {
    status: response.status ?? "completed",
    ...(response.exitCode !== undefined ? { exit_code: response.exitCode } : {}),
    cwd: response.cwd,
    ...(response.sandboxBlocked ? { sandbox_blocked: true } : {}),
  });
}

/**
 * Runs one command the user allowed outside the sandbox: in a separate unconfined shell started in `cwd` (the
 * session's shell and its state stay as they are, confined), closed afterwards with anything it left running. The
 * next call runs in the sandbox again: the permission covers this command once.
 */
async function runOnceUnconfined(
  cwd: string,
  softSeconds: number,
  request: Omit<TerminalRequest, "isInput" | "reset">,
): Promise<TerminalResponse> {
  const once = new TerminalSession({ cwd, softTimeoutMs: softSeconds * 1000, policy: () => UNCONFINED });
  try {
    const response = await once.run(request);
    const still = response.status === "running" ? " It was still running and has been stopped." : "";
    return {
      ...response,
      text: `[Ran once outside the sandbox, with the user's permission, in a separate shell.${still} Later commands run in the sandbox again.]\n${response.text}`,
    };
  } finally {
    once.close();
  }
}

/**
 * Streams output as MCP progress notifications when the caller asked for progress (sent a progressToken): batched
 * every {@link PROGRESS_INTERVAL_MS}, `progress` counting characters so far, `message` carrying the new output.
 * Notifications also keep a client's request timeout alive (resetTimeoutOnProgress) during long commands.
 */
function progressStreamer(extra: Extra): { push: (text: string) => void; stop: () => void } | undefined {
  const token = extra._meta?.progressToken;
  if (token === undefined) return undefined;
  let pending = "";
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    if (!pending) return;
    sent += pending.length;
    const message = pending.length > PROGRESS_MESSAGE_CHARS ? pending.slice(-PROGRESS_MESSAGE_CHARS) : pending;
    pending = "";
    extra
      .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: sent, message } })
      .catch((error: unknown) => log.debug("progress notification failed", error));
  };
  return {
    push: (text) => {
      pending += text;
      // Keep the pending text bounded when output floods in faster than we send it.
      if (pending.length > 4 * PROGRESS_MESSAGE_CHARS) {
        sent += pending.length - PROGRESS_MESSAGE_CHARS;
        pending = pending.slice(-PROGRESS_MESSAGE_CHARS);
      }
      timer ??= setTimeout(flush, PROGRESS_INTERVAL_MS);
    },
    stop: () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      pending = "";
    },
  };
}
