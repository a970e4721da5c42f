/**
 * `crow run`: a terminal ACP client. It hosts the ACP agent in this process (agent-process.ts), opens (or, with `-s`, loads) a session, applies
 * `--mode`/`--model`, sends the prompt and then, with `-i`, one prompt per REPL line. Updates go to a `RunOutput`;
 * permission questions are answered at the keyboard (or by `--yes`); Ctrl-C cancels the running turn
 * (`session/cancel`) and a second Ctrl-C quits at once.
 */
import {
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  methods,
  type PermissionOption,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type StopReason,
} from "@agentclientprotocol/sdk";
import { errorText } from "@crow/core";
import { UNCONFINED_META_KEY } from "../acp/permission.js";
import { UsageError } from "../base/exit-codes.js";
import type { AgentConfig } from "../config/index.js";
import { AgentExitedError, type AgentProcess, startAgent } from "./agent-process.js";
import type { RunOptions } from "./args.js";
import { answerAtKeyboard } from "./form.js";
import { Keyboard, type KeyboardInput } from "./keyboard.js";
import { promptBlocks } from "./mentions.js";
import { JsonOutput, type RunOutput } from "./output.js";
import { PreflightError, preflight } from "./preflight.js";
import { connectAgent } from "./remote-agent.js";
import { replBanner, runRepl } from "./repl.js";
import { pickRewind } from "./rewind-picker.js";
import { configure, openSession } from "./session-setup.js";
import { StrippedOutput } from "./stripped-output.js";
import { TerminalOutput } from "./terminal-output.js";

/** Exit codes (documented in `crow run --help`). */
export const EXIT = { ok: 0, error: 1, usage: 2, stoppedEarly: 3, cancelled: 130 } as const;

const STOP_CODES: Record<StopReason, number> = {
  end_turn: EXIT.ok,
  cancelled: EXIT.cancelled,
  max_tokens: EXIT.stoppedEarly,
  max_turn_requests: EXIT.stoppedEarly,
  refusal: EXIT.stoppedEarly,
};

/** Keys that answer a permission question, per option kind (the option's number works too). */
const PERMISSION_KEYS: Record<PermissionOption["kind"], string[]> = {
  allow_once: ["y", "Y"],
  allow_always: ["a", "A"],
  reject_once: ["n", "\x1b"],
  reject_always: ["N"],
};

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

const CANCELLED: RequestPermissionResponse = { outcome: { outcome: "cancelled" } };
const selected = (option: PermissionOption): RequestPermissionResponse => ({
  outcome: { outcome: "selected", optionId: option.optionId },
});

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}

/** Runs `crow run` with parsed options; resolves with the exit code. */
export async function runClient(options: RunOptions, io: RunIO = processIO()): Promise<number> {
  const json = options.json;
  const tty = io.stdout.isTTY === true && !json;
  const output: RunOutput = json
    ? new JsonOutput(io.stdout, io.stderr)
    : new StrippedOutput(
        new TerminalOutput({
          stdout: io.stdout,
          stderr: io.stderr,
          tty,
          color: !io.env.NO_COLOR,
          columns: () => io.stdout.columns ?? 80,
          cwd: options.cwd,
        }),
      );
  const keyboard = new Keyboard(io.stdin, tty ? io.stdout : io.stderr);
  // The prompt first: a missing one is an argument error, said before anything asks the network (GET /models).
  let first = options.prompt;
  if (first === undefined && !options.interactive && !options.rewind) {
    if (io.stdin.isTTY) return usage(output, "no prompt: give one as an argument, pipe it on stdin, or use -i");
    first = await readAll(io.stdin);
    if (!first.trim()) return usage(output, "the prompt on stdin is empty");
  }
  // A remote agent has its own configuration: nothing of this machine's is read.
  let config: AgentConfig | undefined;
  /** Shown once the arguments are known good (after --model, --thought, -s are applied): errors about them come first. */
  let notices: string[] = [];
  try {
    if (!options.connect) ({ config, notices } = await preflight(options, io.env));
  } catch (error) {
    if (error instanceof UsageError) return usage(output, error.message);
    if (error instanceof PreflightError) {
      output.error(error.message);
      return EXIT.usage;
    }
    throw error;
  }

  let sessionId: string | undefined;
  /** The session once it is open (the one `finish` tells how to continue). */
  let openedId: string | undefined;
  /** Updates that arrive before the session is announced (e.g. tool server failures right after session/new). */
  let early: SessionNotification[] | undefined = [];
  let replaying = false;
  let turn: { cancelled: boolean } | undefined;
  let question: AbortController | undefined;
  /** Updates that arrive while a permission question is on screen, shown after the answer. */
  let held: SessionNotification[] | undefined;
  let questions = Promise.resolve();
  /** Tool calls refused because they needed a yes and no terminal could ask: the run then fails (exit 1). */
  let refusedNoTty = 0;

  /**
   * Whether the session holds an answer worth continuing: a loaded one does; a new one once the model said or did
   * anything. A new session without one is deleted at the end and no "Continue with" is offered.
   */
  let answered = options.session !== undefined;

  const onUpdate = (notification: SessionNotification) => {
    if (sessionId !== undefined && notification.sessionId !== sessionId) return;
    if (!replaying && ANSWER_UPDATES.has(notification.update.sessionUpdate)) answered = true;
    // A loaded session's history: shown in the REPL, skipped by one-shot runs (the new answer is what matters).
    if (replaying) {
      if (options.interactive) output.update(notification.update, true);
      return;
    }
    if (early) early.push(notification);
    else if (held) held.push(notification);
    else output.update(notification.update, false);
  };

  let agent: AgentProcess;
  const interrupt = () => {
    if (turn && !turn.cancelled && sessionId) {
      turn.cancelled = true;
      output.notice("Cancelling… (press Ctrl-C again to quit)");
      agent.agent.notify(methods.agent.session.cancel, { sessionId }).catch(() => {});
      question?.abort();
      return;
    }
    output.pause();
    output.finish(answered ? openedId : undefined);
    agent.kill();
    io.stdin.setRawMode?.(false);
    io.exit(EXIT.cancelled);
  };

  const ask = async (request: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse> => {
    const pick = (...kinds: PermissionOption["kind"][]) => request.options.find((o) => kinds.includes(o.kind));
    if (turn?.cancelled) return CANCELLED;
    // --yes approves what the mode or a rule asks, never lifting the sandbox: that one a person answers, or nobody.
    const unconfined = request._meta?.[UNCONFINED_META_KEY] === true;
    if (options.yes && unconfined)
      output.notice("--yes does not run a command outside the sandbox: that needs a yes typed here");
    if (options.yes && !unconfined) {
      const allow = pick("allow_once", "allow_always");
      if (allow) {
        output.permissionAnswer(request, allow.name, "yes");
        return selected(allow);
      }
    }
    if (!keyboard.isTTY) {
      // Counted where --yes would have allowed it (lifting the sandbox needs a person even then).
      if (!unconfined) refusedNoTty++;
      const reject = pick("reject_once", "reject_always");
      output.permissionAnswer(request, reject?.name ?? "cancelled", "no-tty");
      return reject ? selected(reject) : CANCELLED;
    }
    const choices = request.options.map((option, i) => ({
      keys: [String(i + 1), ...PERMISSION_KEYS[option.kind]],
      value: option,
    }));
    const label = choices.map((c) => `[${c.keys[1] ?? c.keys[0]}] ${c.value.name}`).join("  ");
    output.permissionQuestion(request, label);
    question = new AbortController();
    held = [];
    const answer = await keyboard.choose(choices, AbortSignal.any([signal, question.signal]));
    question = undefined;
    const later = held;
    held = undefined;
    const release = () => {
      for (const notification of later) output.update(notification.update, false);
    };
    if (typeof answer === "string") {
      output.permissionAnswer(request, "Cancelled", "keyboard");
      release();
      if (answer === "interrupt") interrupt();
      return CANCELLED;
    }
    output.permissionAnswer(request, answer.name, "keyboard");
    release();
    return selected(answer);
  };

  /** Whether a person answers questions here: the agent is told it may ask only then (else it declines them). */
  const canAsk = keyboard.isTTY && !options.yes;
  const elicit = async (request: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse> => {
    if (turn?.cancelled) return { action: "cancel" };
    if (!canAsk) {
      output.notice(`Declined a question (${options.yes ? "--yes answers no questions" : "no terminal to ask"}).`);
      return { action: "decline" };
    }
    question = new AbortController();
    held = [];
    const show = (text: string) => output.question(text);
    const answer = await answerAtKeyboard(request, keyboard, show, AbortSignal.any([signal, question.signal]));
    question = undefined;
    const later = held;
    held = undefined;
    for (const notification of later) output.update(notification.update, false);
    if (answer.interrupted) interrupt();
    return answer.response;
  };

  /** One question at a time: parallel tool calls in `ask` mode, or several servers' questions, are asked in turn. */
  const oneAtATime = <T>(ask: () => Promise<T>): Promise<T> => {
    const answer = questions.then(ask);
    questions = answer.then(
      () => {},
      () => {},
    );
    return answer;
  };
  const handlers = {
    onUpdate,
    requestPermission: (request: RequestPermissionRequest, signal: AbortSignal) =>
      oneAtATime(() => ask(request, signal)),
    elicit: (request: CreateElicitationRequest, signal: AbortSignal) => oneAtATime(() => elicit(request, signal)),
    elicitationComplete: () => output.notice("The web page you were asked to open reports it is done."),
  };
  agent = options.connect
    ? await connectAgent(handlers, options.connect.url, options.connect.token)
    : startAgent(handlers, config as AgentConfig, io.env);
  process.on("SIGINT", interrupt);

  const submitPrompt = async (text: string): Promise<number> => {
    const state = { cancelled: false };
    turn = state;
    output.turnStart(text);
    const { blocks, missing } = promptBlocks(text, options.cwd, options.addDirs);
    for (const mention of missing) output.notice(`@${mention}: no such file in ${options.cwd}; sent as plain text`);
    const stopKeys = keyboard.watchInterrupts(interrupt);
    try {
      const response = await agent.guard(
        agent.agent.request(methods.agent.session.prompt, {
          sessionId: sessionId as string,
          prompt: blocks,
        }),
      );
      output.turnEnd(response.stopReason);
      return STOP_CODES[response.stopReason] ?? EXIT.error;
    } catch (error) {
      if (error instanceof AgentExitedError) throw error;
      output.error(errorText(error));
      return state.cancelled ? EXIT.cancelled : EXIT.error;
    } finally {
      turn = undefined;
      stopKeys();
    }
  };

  let code: number = EXIT.ok;
  try {
    const opened = await openSession(
      agent,
      options,
      config,
      (id) => {
        sessionId = id;
        replaying = true;
      },
      canAsk,
    );
    replaying = false;
    sessionId = opened.sessionId;
    openedId = opened.sessionId;
    output.session({
      sessionId: opened.sessionId,
      loaded: options.session !== undefined,
      ...(opened.modes ? { modeId: opened.modes.currentModeId } : {}),
    });
    for (const notification of early ?? []) output.update(notification.update, false);
    early = undefined;
    await configure(agent, opened.sessionId, options, opened.modes, opened.configOptions);
    for (const notice of notices) output.notice(notice);
    if (options.rewind) await pickRewind(agent, opened.sessionId, keyboard, output);
    if (first !== undefined) code = await submitPrompt(first);
    if (refusedNoTty > 0 && code === EXIT.ok && !options.interactive) {
      const calls = refusedNoTty === 1 ? "1 tool call was" : `${refusedNoTty} tool calls were`;
      output.error(
        `${calls} refused: permission was needed and, with no terminal, nobody could be asked. Run crow in a terminal to answer, or allow such calls with --yes (or --mode code).`,
      );
      code = EXIT.error;
    }
    if (options.interactive) {
      const select = opened.configOptions?.find((o) => o.category === "model");
      output.notice(replBanner(options.model ?? (select ? String(select.currentValue) : undefined), options.cwd));
      // Quitting an idle REPL cancels nothing: Ctrl-C twice ends it as Ctrl-D and /exit do (0).
      await runRepl({ keyboard, output, tty, submitPrompt });
      code = EXIT.ok;
    }
  } catch (error) {
    if (error instanceof UsageError) code = usage(output, error.message);
    else if (error instanceof AgentExitedError && error.code === EXIT.usage) {
      // The agent refused its configuration: its own message, without the process details.
      output.error(error.stderr.trim().replace(/^crow: /, "") || error.message);
      code = EXIT.usage;
    } else {
      output.error(errorText(error));
      // The agent could not open the store where it is configured: a setup problem like a bad config (2).
      code = (error as { data?: { setup?: unknown } } | undefined)?.data?.setup ? EXIT.usage : EXIT.error;
    }
  } finally {
    process.off("SIGINT", interrupt);
    output.finish(answered ? openedId : undefined);
    if (openedId !== undefined && !answered) await forget(agent, openedId);
    await agent.close();
  }
  return code;
}

/** Updates that show the model answered (its text, thoughts or tool calls). */
const ANSWER_UPDATES = new Set<string>(["agent_message_chunk", "agent_thought_chunk", "tool_call"]);

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
