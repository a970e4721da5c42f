/**
 * What `crow run`'s client side knows while it runs, and how it answers the agent: which session's updates to show
 * and when (a loaded session's history, updates held back while a question is on screen), the permission and
 * elicitation questions answered at the keyboard one at a time (or by `--yes`), the running turn and Ctrl-C.
 * client.ts drives it through one session: open, prompt, REPL, finish.
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
import { AgentExitedError, type AgentHandlers, type AgentProcess } from "./agent-process.js";
import type { RunOptions } from "./args.js";
import { answerAtKeyboard } from "./form.js";
import type { Keyboard } from "./keyboard.js";
import { promptBlocks } from "./mentions.js";
import type { RunOutput } from "./output.js";

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

/** Updates that show the model answered (its text, thoughts or tool calls). */
const ANSWER_UPDATES = new Set<string>(["agent_message_chunk", "agent_thought_chunk", "tool_call"]);

const CANCELLED: RequestPermissionResponse = { outcome: { outcome: "cancelled" } };
const selected = (option: PermissionOption): RequestPermissionResponse => ({
  outcome: { outcome: "selected", optionId: option.optionId },
});

export class TerminalClient {
  /** The session whose updates are shown (set as soon as it is known, before its history replays). */
  sessionId: string | undefined;
  /** The session once it is open (the one `finish` tells how to continue). */
  openedId: string | undefined;
  /** True while a loaded session's history replays. */
  replaying = false;
  /**
   * Whether the session holds an answer worth continuing: a loaded one does; a new one once the model said or did
   * anything. A new session without one is deleted at the end and no "Continue with" is offered.
   */
  answered: boolean;
  /** Tool calls refused because they needed a yes and no terminal could ask: the run then fails (exit 1). */
  refusedNoTty = 0;
  /** Permission questions answered at the keyboard with a no, and with a yes (a run where all were no did nothing). */
  readonly keyboardAnswers = { no: 0, yes: 0 };
  /** Whether a person answers questions here: the agent is told it may ask only then (else it declines them). */
  readonly canAsk: boolean;
  /** What the agent calls back (ACP client methods): pass to `startAgent`/`connectAgent`, then `attach` the agent. */
  readonly handlers: AgentHandlers;

  /** Updates that arrive before the session is announced (e.g. tool server failures right after session/new). */
  private early: SessionNotification[] | undefined = [];
  private turn: { cancelled: boolean } | undefined;
  /** Lines typed with Tab while a turn ran (or steers that came too late): the REPL sends them next, in order. */
  private readonly queued: string[] = [];
  private question: AbortController | undefined;
  /** Updates that arrive while a question is on screen, shown after the answer. */
  private held: SessionNotification[] | undefined;
  private questions = Promise.resolve();
  private agent: AgentProcess | undefined;

  constructor(
    private readonly options: RunOptions,
    private readonly output: RunOutput,
    private readonly keyboard: Keyboard,
    /** Ends the process at once (second Ctrl-C while a turn hangs). */
    private readonly exit: (code: number) => never,
    private readonly stdin: { setRawMode?: (raw: boolean) => unknown },
  ) {
    this.answered = options.session !== undefined;
    this.canAsk = keyboard.isTTY && !options.yes;
    this.handlers = {
      onUpdate: (notification) => this.onUpdate(notification),
      requestPermission: (request, signal) => this.oneAtATime(() => this.askPermission(request, signal)),
      elicit: (request, signal) => this.oneAtATime(() => this.elicit(request, signal)),
      elicitationComplete: () => this.output.notice("The web page you were asked to open reports it is done."),
    };
  }

  attach(agent: AgentProcess): void {
    this.agent = agent;
  }

  /** The session is open: updates held back until now are shown. */
  opened(): void {
    for (const notification of this.early ?? []) this.output.update(notification.update, false);
    this.early = undefined;
  }

  /**
   * Ctrl-C: cancels the running turn (`session/cancel`, and the question on screen); with no turn running, or a
   * second time, quits at once.
   */
  readonly interrupt = (): void => {
    const agent = this.agent;
    if (this.turn && !this.turn.cancelled && this.sessionId) {
      this.turn.cancelled = true;
      this.output.notice("Cancelling… (press Ctrl-C again to quit)");
      agent?.agent.notify(methods.agent.session.cancel, { sessionId: this.sessionId }).catch(() => {});
      this.question?.abort();
      return;
    }
    this.output.pause();
    this.output.finish(this.answered ? this.openedId : undefined);
    agent?.kill();
    this.stdin.setRawMode?.(false);
    this.exit(EXIT.cancelled);
  };

  /** Sends `text` as one turn of the session; resolves with the turn's exit code. */
  /** Sends one prompt; `attached` (piped input) follows the text as a text block of its own, mentions unparsed. */
  readonly submitPrompt = async (text: string, attached?: string): Promise<number> => {
    const agent = this.agent as AgentProcess;
    const state = { cancelled: false };
    this.turn = state;
    this.output.turnStart(text);
    const { blocks, missing } = promptBlocks(text, this.options.cwd, this.options.addDirs);
    if (attached !== undefined) blocks.splice(1, 0, { type: "text", text: attached });
    for (const mention of missing) {
      this.output.notice(`@${mention}: no such file in ${this.options.cwd}; sent as plain text`);
    }
    const stopKeys = this.keyboard.watchTurn(
      { interrupt: this.interrupt, line: (line, how) => this.typedDuringTurn(line, how) },
      (text) => this.output.question(text),
    );
    try {
      const response = await agent.guard(
        agent.agent.request(methods.agent.session.prompt, {
          sessionId: this.sessionId as string,
          prompt: blocks,
        }),
      );
      this.output.turnEnd(response.stopReason);
      return STOP_CODES[response.stopReason] ?? EXIT.error;
    } catch (error) {
      if (error instanceof AgentExitedError) throw error;
      this.output.error(errorText(error));
      return state.cancelled ? EXIT.cancelled : EXIT.error;
    } finally {
      this.turn = undefined;
      stopKeys();
    }
  };

  /** The prompts queued while turns ran, taken in order (the REPL runs them before reading a new line). */
  takeQueued(): string | undefined {
    return this.queued.shift();
  }

  /**
   * A line typed while the turn runs: Enter steers the turn (`_session/steering`: the model gets it before its next
   * request, and it shows where it joined); Tab, or a steer that arrives after the turn decided to end, waits for the
   * next turn.
   */
  private typedDuringTurn(text: string, how: "steer" | "queue"): void {
    const agent = this.agent;
    if (how === "queue" || !agent || !this.sessionId) {
      this.queued.push(text);
      this.output.notice(`Queued for the next turn: ${text}`);
      return;
    }
    const { blocks } = promptBlocks(text, this.options.cwd, this.options.addDirs);
    agent.agent
      .request("_session/steering", {
        sessionId: this.sessionId,
        prompt: blocks,
        _meta: { steering: { idleBehavior: "promptRequired" } },
      })
      .then((answer) => {
        const outcome = (answer as { outcome?: unknown } | null)?.outcome;
        if (outcome === "injected") return;
        this.queued.push(text);
        this.output.notice(`The turn had ended: queued for the next one: ${text}`);
      })
      .catch((error: unknown) => this.output.error(`could not steer: ${errorText(error)}`));
  }

  private onUpdate(notification: SessionNotification): void {
    if (this.sessionId !== undefined && notification.sessionId !== this.sessionId) return;
    if (!this.replaying && ANSWER_UPDATES.has(notification.update.sessionUpdate)) this.answered = true;
    // A loaded session's history: shown in the REPL, skipped by one-shot runs (the new answer is what matters).
    if (this.replaying) {
      if (this.options.interactive) this.output.update(notification.update, true);
      return;
    }
    if (this.early) this.early.push(notification);
    else if (this.held) this.held.push(notification);
    else this.output.update(notification.update, false);
  }

  /** One question at a time: parallel tool calls in `ask` mode, or several servers' questions, are asked in turn. */
  private oneAtATime<T>(ask: () => Promise<T>): Promise<T> {
    const answer = this.questions.then(ask);
    this.questions = answer.then(
      () => {},
      () => {},
    );
    return answer;
  }

  /** A question goes on screen: updates wait until `release` (its answer shown) shows them. */
  private hold(): AbortController {
    this.question = new AbortController();
    this.held = [];
    return this.question;
  }

  private release(): void {
    const later = this.held ?? [];
    this.question = undefined;
    this.held = undefined;
    for (const notification of later) this.output.update(notification.update, false);
  }

  private async askPermission(request: RequestPermissionRequest, signal: AbortSignal) {
    const pick = (...kinds: PermissionOption["kind"][]) => request.options.find((o) => kinds.includes(o.kind));
    const { output, options } = this;
    if (this.turn?.cancelled) return CANCELLED;
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
    if (!this.keyboard.isTTY) {
      // Counted where --yes would have allowed it (lifting the sandbox needs a person even then).
      if (!unconfined) this.refusedNoTty++;
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
    const question = this.hold();
    const answer = await this.keyboard.choose(choices, AbortSignal.any([signal, question.signal]));
    if (typeof answer === "string") {
      output.permissionAnswer(request, "Cancelled", "keyboard");
      this.release();
      if (answer === "interrupt") this.interrupt();
      return CANCELLED;
    }
    output.permissionAnswer(request, answer.name, "keyboard");
    if (answer.kind === "reject_once" || answer.kind === "reject_always") this.keyboardAnswers.no++;
    else this.keyboardAnswers.yes++;
    this.release();
    return selected(answer);
  }

  private async elicit(request: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse> {
    if (this.turn?.cancelled) return { action: "cancel" };
    if (!this.canAsk) {
      const why = this.options.yes ? "--yes answers no questions" : "no terminal to ask";
      this.output.notice(`Declined a question (${why}).`);
      return { action: "decline" };
    }
    const question = this.hold();
    const show = (text: string) => this.output.question(text);
    const answer = await answerAtKeyboard(request, this.keyboard, show, AbortSignal.any([signal, question.signal]));
    this.release();
    if (answer.interrupted) this.interrupt();
    return answer.response;
  }
}
