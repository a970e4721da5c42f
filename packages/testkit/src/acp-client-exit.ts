/**
 * Why a spawned `crow acp` went away, for the test client: when the agent's stdout ends (or a write to its stdin fails)
 * without the client having closed it (it exited, crashed, was killed, or closed its stdout), the connection fails with an error naming the exit
 * code or signal and the tail of the agent's stderr, and every pending request rejects with that error, instead of the
 * SDK's bare "ACP connection closed".
 */
import type { ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";

/** Lines of the agent's stderr an exit error quotes. */
const STDERR_TAIL_LINES = 20;
/** How long after its stdout ended a still running agent is reported as such (only the message waits on it). */
const EXIT_WAIT_MS = 5000;

/** How a process ended, as {@link AgentExitError} reports it. */
export interface AgentExit {
  pid: number | undefined;
  /** Exit code; null when killed by a signal, undefined while it still runs. */
  code: number | null | undefined;
  signal: NodeJS.Signals | null | undefined;
}

/** The agent went away while the client still used it. */
export class AgentExitError extends Error {
  constructor(
    readonly exit: AgentExit,
    readonly stderrTail: string,
  ) {
    super(
      `${describeAgentExit(exit)}${stderrTail ? `; the end of its stderr:\n${stderrTail}` : " (its stderr is empty)"}`,
    );
    this.name = "AgentExitError";
  }
}

function describeAgentExit({ pid, code, signal }: AgentExit): string {
  const who = `crow acp (pid ${pid ?? "?"})`;
  if (signal) return `${who} was killed by ${signal}`;
  if (code === undefined) return `${who} closed its stdout but is still running`;
  return `${who} exited with code ${code}`;
}

function tail(text: string): string {
  return text.trimEnd().split("\n").slice(-STDERR_TAIL_LINES).join("\n");
}

/**
 * The stdio of a spawned agent as web streams for the ACP connection. Its stdout ends normally when `closing()` says
 * the client asked the agent to exit; otherwise (and when a write to its stdin fails: EPIPE) the stream fails with an
 * {@link AgentExitError} once the process has ended (its stderr read to the end), or after {@link EXIT_WAIT_MS} if it
 * keeps running.
 */
export class AgentStdio {
  private exit: AgentExit;
  /** "close": the process has exited and its stdio streams have ended, so the stderr read is complete. */
  private readonly closed: Promise<void>;

  constructor(
    private readonly child: ChildProcess,
    private readonly stderr: () => string,
    private readonly closing: () => boolean,
  ) {
    this.exit = { pid: child.pid, code: undefined, signal: undefined };
    this.closed = new Promise<void>((resolve) =>
      child.once("close", (code: number | null, signal: NodeJS.Signals | null) => {
        this.exit = { pid: child.pid, code, signal };
        resolve();
      }),
    );
  }

  /** Why the agent is gone, once that is known (see the class comment). */
  private async gone(): Promise<AgentExitError> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.closed, new Promise((resolve) => (timer = setTimeout(resolve, EXIT_WAIT_MS)))]);
    clearTimeout(timer);
    return new AgentExitError(this.exit, tail(this.stderr()));
  }

  /** The agent's stdout (`out`: what was piped from it). */
  output(out: Readable): ReadableStream<Uint8Array> {
    /** Closed, errored or cancelled: a second ending would throw (ERR_INVALID_STATE). */
    let ended = false;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        out.on("data", (chunk: Buffer) => {
          controller.enqueue(new Uint8Array(chunk));
          if ((controller.desiredSize ?? 1) <= 0) out.pause();
        });
        out.once("error", (error) => {
          if (ended) return;
          ended = true;
          controller.error(error);
        });
        out.once("end", async () => {
          const why = this.closing() ? undefined : await this.gone();
          // The reader may have gone meanwhile (the connection closed): the stream is then closed already.
          if (ended) return;
          ended = true;
          if (why && !this.closing()) controller.error(why);
          else controller.close();
        });
      },
      pull: () => {
        out.resume();
      },
      cancel: () => {
        ended = true;
        out.destroy();
      },
    });
  }

  /** The agent's stdin. */
  input(): WritableStream<Uint8Array> {
    const stdin = this.child.stdin;
    if (!stdin) throw new Error("the agent was spawned without a stdin pipe");
    // A write to a dead agent fails with EPIPE: reported through the write's callback, below.
    stdin.on("error", () => {});
    return new WritableStream<Uint8Array>({
      write: async (chunk) => {
        const failed = await new Promise<Error | null | undefined>((resolve) => stdin.write(chunk, resolve));
        if (!failed) return;
        throw this.closing() ? failed : await this.gone();
      },
      close: () => new Promise<void>((resolve) => stdin.end(resolve)),
      abort: () => {
        stdin.destroy();
      },
    });
  }
}
