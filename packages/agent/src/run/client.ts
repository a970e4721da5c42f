/**
 * `crow run`: a terminal ACP client. It hosts the ACP agent in this process (agent-process.ts), opens (or, with `-s`,
 * loads) a session, applies `--mode`/`--model`, sends the prompt and then, with `-i`, one prompt per REPL line.
 * Updates go to a `RunOutput`; what the client side knows while it runs, the questions answered at the keyboard (or
 * by `--yes`) and Ctrl-C (cancel the running turn with `session/cancel`; a second one quits at once) are
 * terminal-client.ts.
 */
import { methods } from "@agentclientprotocol/sdk";
import { errorText } from "@crow/core";
import { UsageError } from "../base/exit-codes.js";
import { shellWord } from "../base/shell-word.js";
import type { AgentConfig } from "../config/index.js";
import { AgentExitedError, type AgentProcess, startAgent } from "./agent-process.js";
import type { RunOptions } from "./args.js";
import { Keyboard, type KeyboardInput } from "./keyboard.js";
import { JsonOutput, type RunOutput } from "./output.js";
import { type PipedInput, pipedBlock, pipedNotice, readPipedInput, WAITING_NOTICE } from "./piped-input.js";
import { PreflightError, preflight } from "./preflight.js";
import { connectAgent } from "./remote-agent.js";
import { replBanner, runRepl } from "./repl.js";
import { pickRewind } from "./rewind-picker.js";
import { configure, openSession } from "./session-setup.js";
import { StrippedOutput } from "./stripped-output.js";
import { EXIT, TerminalClient } from "./terminal-client.js";
import { TerminalOutput } from "./terminal-output.js";

export interface RunIO {
  stdin: KeyboardInput;
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Immediate exit (second Ctrl-C while a turn hangs). */
  exit(code: number): never;
}

const processIO = (): RunIO => ({
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  exit: (code) => process.exit(code),
});

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** What a run starts from once its arguments are known good. */
interface Prepared {
  /** The prompt given as an argument or on stdin (none with `-i` or `--rewind` alone). */
  first: string | undefined;
  /**
   * Input piped beside a prompt argument (`git diff | crow run "review this"`), being read while the agent starts;
   * sent after the prompt as a delimited block.
   */
  piped: Promise<PipedInput> | undefined;
  /** This machine's configuration (none for a remote agent: it has its own). */
  config: AgentConfig | undefined;
  /** Shown once the arguments are known good (after --model, --thought, -s are applied): errors about them come first. */
  notices: string[];
}

/** Runs `crow run` with parsed options; resolves with the exit code. */
export async function runClient(options: RunOptions, io: RunIO = processIO()): Promise<number> {
  const tty = io.stdout.isTTY === true && !options.json;
  const output = outputFor(options, io, tty);
  const keyboard = new Keyboard(io.stdin, tty ? io.stdout : io.stderr);
  const prepared = await prepareRun(options, io, output);
  if (typeof prepared === "number") return prepared;

  const client = new TerminalClient(options, output, keyboard, io.exit, io.stdin);
  const agent = options.connect
    ? await connectAgent(client.handlers, options.connect.url, options.connect.token)
    : startAgent(client.handlers, prepared.config as AgentConfig, io.env);
  client.attach(agent);
  process.on("SIGINT", client.interrupt);
  let code: number;
  try {
    code = await runSession(client, agent, options, prepared, { keyboard, output, tty });
  } catch (error) {
    code = failureCode(output, error);
  } finally {
    process.off("SIGINT", client.interrupt);
    output.finish(client.answered ? client.openedId : undefined);
    if (client.openedId !== undefined && !client.answered) await forget(agent, client.openedId);
    await agent.close();
  }
  return code;
}

function outputFor(options: RunOptions, io: RunIO, tty: boolean): RunOutput {
  if (options.json) return new JsonOutput(io.stdout, io.stderr);
  return new StrippedOutput(
    new TerminalOutput({
      stdout: io.stdout,
      stderr: io.stderr,
      tty,
      color: !io.env.NO_COLOR,
      columns: () => io.stdout.columns ?? 80,
      cwd: options.cwd,
      continueArgs: continueArgs(options),
    }),
  );
}

/** The options, besides `-s ID`, a pasted "Continue with" command needs to reach this session again. */
function continueArgs(options: RunOptions): string {
  const words: string[] = [];
  if (options.connect) {
    words.push("--connect", options.connect.url.href);
    if (options.connect.tokenFile !== undefined) words.push("--token-file", options.connect.tokenFile);
  }
  if (options.cwd !== process.cwd()) words.push("-c", options.cwd);
  return words.map((word) => ` ${shellWord(word)}`).join("");
}

/** The prompt and the configuration, or the exit code of a run that stops before starting the agent. */
async function prepareRun(options: RunOptions, io: RunIO, output: RunOutput): Promise<Prepared | number> {
  // The prompt first: a missing one is an argument error, said before anything asks the network (GET /models).
  let first = options.prompt;
  if (first === undefined && !options.interactive && !options.rewind) {
    if (io.stdin.isTTY) return usage(output, "no prompt: give one as an argument, pipe it on stdin, or use -i");
    first = await readAll(io.stdin);
    if (!first.trim()) return usage(output, "the prompt on stdin is empty");
  }
  // With a prompt argument, piped input is the material it is about; a terminal on stdin, -i (REPL lines) and
  // --rewind (the picker's answer) keep stdin for themselves.
  const piped =
    options.prompt !== undefined && !options.interactive && !options.rewind && !io.stdin.isTTY
      ? readPipedInput(io.stdin, () => output.notice(WAITING_NOTICE))
      : undefined;
  piped?.catch(() => {});
  // A remote agent has its own configuration: nothing of this machine's is read.
  if (options.connect) return { first, piped, config: undefined, notices: [] };
  try {
    return { first, piped, ...(await preflight(options, io.env)) };
  } catch (error) {
    if (error instanceof UsageError) return usage(output, error.message);
    if (error instanceof PreflightError) {
      output.error(error.message);
      return EXIT.usage;
    }
    throw error;
  }
}

/** Opens the session, applies the options, sends the first prompt, then runs the REPL with `-i`: the exit code. */
async function runSession(
  client: TerminalClient,
  agent: AgentProcess,
  options: RunOptions,
  { first, piped, config, notices }: Prepared,
  { keyboard, output, tty }: { keyboard: Keyboard; output: RunOutput; tty: boolean },
): Promise<number> {
  let code: number = EXIT.ok;
  const opened = await openSession(
    agent,
    options,
    config,
    (id) => {
      client.sessionId = id;
      client.replaying = true;
    },
    client.canAsk,
  );
  client.replaying = false;
  client.sessionId = opened.sessionId;
  client.openedId = opened.sessionId;
  output.session({
    sessionId: opened.sessionId,
    loaded: options.session !== undefined,
    ...(opened.modes ? { modeId: opened.modes.currentModeId } : {}),
  });
  client.opened();
  await configure(agent, opened.sessionId, options, opened.modes, opened.configOptions);
  // The agent's own current_mode_update may arrive after the REPL's prompt is drawn ("Mode: ask" below "crow›"):
  // shown now, in order; the terminal output says a mode once, so the agent's later update adds nothing. (The JSON
  // stream gets the agent's update as it comes.)
  if (options.mode && !options.json) {
    output.update({ sessionUpdate: "current_mode_update", currentModeId: options.mode }, false);
  }
  for (const notice of notices) output.notice(notice);
  if (options.rewind) await pickRewind(agent, opened.sessionId, keyboard, output);
  const input = await piped;
  const note = input && pipedNotice(input);
  if (note) output.notice(note);
  const attached = input && input.bytes > 0 && !input.quiet ? pipedBlock(input) : undefined;
  if (first !== undefined) code = await client.submitPrompt(first, attached);
  if (client.refusedNoTty > 0 && code === EXIT.ok && !options.interactive) {
    const calls = client.refusedNoTty === 1 ? "1 tool call was" : `${client.refusedNoTty} tool calls were`;
    output.error(
      `${calls} refused: permission was needed and, with no terminal, nobody could be asked. Run crow in a terminal to answer, or allow such calls with --yes (or --mode code).`,
    );
    code = EXIT.error;
  }
  // The exit-code table's "nothing done because you said no": every tool call asked about was refused.
  const { no, yes } = client.keyboardAnswers;
  if (no > 0 && yes === 0 && code === EXIT.ok && !options.interactive) {
    output.error(`nothing done: you said no to ${no === 1 ? "the tool call" : `all ${no} tool calls`} it asked for`);
    code = EXIT.error;
  }
  if (options.interactive) {
    const select = opened.configOptions?.find((o) => o.category === "model");
    output.notice(replBanner(options.model ?? (select ? String(select.currentValue) : undefined), options.cwd));
    // Quitting an idle REPL cancels nothing: Ctrl-C twice ends it as Ctrl-D and /exit do (0).
    await runRepl({ keyboard, output, tty, submitPrompt: client.submitPrompt, takeQueued: () => client.takeQueued() });
    code = EXIT.ok;
  }
  return code;
}

/** The exit code of a run that failed after the agent started, with the error shown. */
function failureCode(output: RunOutput, error: unknown): number {
  if (error instanceof UsageError) return usage(output, error.message);
  if (error instanceof AgentExitedError && error.code === EXIT.usage) {
    // The agent refused its configuration: its own message, without the process details.
    output.error(error.stderr.trim().replace(/^crow: /, "") || error.message);
    return EXIT.usage;
  }
  output.error(errorText(error));
  // The agent could not open the store where it is configured: a setup problem like a bad config (2).
  return (error as { data?: { setup?: unknown } } | undefined)?.data?.setup ? EXIT.usage : EXIT.error;
}

/** Deletes a session `crow run` created that never got an answer, so it does not clutter `crow sessions list`. */
async function forget(agent: AgentProcess, sessionId: string): Promise<void> {
  try {
    await agent.guard(agent.agent.request(methods.agent.session.delete, { sessionId }));
  } catch {
    // The agent is gone or the store refused: the session stays listed, nothing else is lost.
  }
}

function usage(output: RunOutput, message: string): number {
  output.error(`${message}\nRun 'crow run --help' for usage.`);
  return EXIT.usage;
}
