import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolContext } from "../context.js";
import { log } from "../log.js";
import { takeCallPolicy } from "../sandbox/meta.js";
import { UNCONFINED, UNSANDBOXED_META_KEY } from "../sandbox/policy.js";
import { MAX_OUTPUT_CHARS, withThousands } from "../terminal/output.js";
import { type TerminalRequest, type TerminalResponse, TerminalSession } from "../terminal/session.js";
import { sweepOrphanTerminalDirsOnce } from "../terminal/temp-dirs.js";
import { errorResult, guarded, textResult } from "./result.js";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export const DEFAULT_SOFT_TIMEOUT_SECONDS = 30;
/** Progress notifications go out at most this often, each carrying the output since the previous one. */
const PROGRESS_INTERVAL_MS = 200;
const PROGRESS_MESSAGE_CHARS = 8000;

function description(softSeconds: number): string {
  return `Run a bash command in a persistent shell (a real terminal) and return its output (stdout and stderr together).

- State persists between calls: it is one bash process per session, so the working directory (cd), environment variables (export), shell variables and functions, and activated virtualenvs (source .venv/bin/activate) carry over to the next call. The shell starts in the workspace directory.
- Every result ends with "[Current working directory: …]" and "[Command completed with exit code 0]" or "[Command failed with exit code N]".
- Colours and escape codes are removed and progress bars collapsed. Output over ${withThousands(MAX_OUTPUT_CHARS)} characters keeps its beginning and end with a note of how much was cut; for big outputs redirect to a file and use grep, head or tail.
- Multi-line scripts, heredocs and && chains work. Pagers are off (PAGER=cat, GIT_PAGER=cat). Avoid full-screen programs (vim, less, top); use non-interactive flags (-y, --yes, --no-input) where you can.
- Long-running commands: when a command prints nothing new for ${softSeconds} seconds, the call returns what it has so far with "[Process still running (soft timeout)]" and the command keeps running. Then call with command "" to keep waiting (you get only output you have not seen yet), is_input=true to type into it, or "C-c" to interrupt it. A new command is refused while the previous one is still running.
- timeout (seconds): wait up to this long for the command instead of returning after ${softSeconds} seconds of silence; if it is still running then, it is interrupted (SIGINT, then SIGKILL) and the result says so. Use it for slow builds and tests, and to bound commands that might hang.
- Servers and watchers: run them in the background with output to a file, e.g. \`npm run dev > /tmp/dev.log 2>&1 &\`, then read the log; the call returns at once.
- is_input=true: send the text (followed by Enter) to the running program, e.g. to answer a prompt or drive \`python3 -i\`; returns the program's new output.
- Special keys as the command: "C-c" (interrupt), "C-z" (suspend), "C-d" (end of input).
- reset=true kills the shell and everything it started, then starts a fresh one (all state is lost); with a command, runs it in the fresh shell.
- If the shell exits (e.g. \`exit\`), the next call starts a new shell and says so.`;
}

const inputSchema = z.strictObject({
  command: z
    .string()
    .describe(
      'The bash command to run; "" to keep waiting for a running command; with is_input=true, the text to send to it; or a key: "C-c", "C-z", "C-d"',
    ),
  is_input: z
    .boolean()
    .default(false)
    .describe("Send command as input (followed by Enter) to the running program instead of running it"),
  timeout: z
    .number()
    .positive()
    .max(86_400)
    .nullable()
    .optional()
    .describe("Seconds to wait before interrupting the command (SIGINT, then SIGKILL); no limit on silence then"),
  reset: z.boolean().default(false).describe("Kill the shell and start a fresh one before running command"),
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
          isInput: args.is_input,
          reset: args.reset,
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
