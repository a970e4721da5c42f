/**
 * One ACP session: a runtime session as one client sees it. It owns what is per session on the ACP side: the outbox
 * (the only writer of its updates and questions), the relay of its events to updates, the tool call ids it used, its
 * cost meter, its turn gate, its subscription to the runtime session, its subagent children and its questions to the
 * user. Everything the client sees about the session goes out through its outbox, in the order of its events.
 */
import type {
  AgentContext,
  ClientCapabilities,
  SessionConfigOption,
  SessionModeState,
  SessionUpdate,
} from "@agentclientprotocol/sdk";
import type { ClientCapabilities as UnstableCapabilities } from "@agentclientprotocol/sdk/unstable";
import type { CrowEvent, CrowSession, PermissionAnswer, PermissionRequest, UserAsker } from "@crow/core";
import { type AgentConfig, CostMeter, contextWindowOf, findModel } from "../config/index.js";
import { shortReason } from "../config/provider-errors.js";
import { configOptions, configOptionsUpdate, modeState } from "./config-options.js";
import { elicitationAsker } from "./elicitation.js";
import { EventRelay } from "./event-relay.js";
import { type AddressedUpdate, Outbox } from "./outbox.js";
import { permissionAsker } from "./permission.js";
import { SerialQueue } from "./serial-queue.js";
import { SubagentSessions } from "./subagent-sessions.js";
import { commandsUpdate, messageChunk, noticeUpdates, sessionInfoUpdate } from "./translate.js";
import { TurnGate } from "./turn-gate.js";

/** What a session needs from its connection: the configuration, the client's capabilities, the runtime's sessions. */
export interface SessionConnection {
  config(): AgentConfig;
  capabilities(): ClientCapabilities | undefined;
  /** A live session of the runtime (a task's child is live while it runs). */
  runtimeSession(id: string): CrowSession | undefined;
}

/** Whether the client takes boolean config options (else on/off settings are offered as On/Off selects). */
export function booleanOptions(capabilities: ClientCapabilities | undefined): boolean {
  return Boolean(capabilities?.session?.configOptions?.boolean);
}

/** Whether the client declared `subagents` (unstable ACP): a task's child is then a child session. */
export function subagentsOn(capabilities: ClientCapabilities | undefined): boolean {
  return Boolean((capabilities as UnstableCapabilities | undefined)?.subagents);
}

/**
 * Resolves once the response of the request being handled is queued for writing (it follows from the handler's
 * promise, within this macrotask). A session's outbox opens then: the client must know a session's id before
 * updates about it arrive, or a client that prompts at once could have its answer before the session's commands.
 */
function afterResponse(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A session's relay of events to updates (`cost`: its price meter, for the top session's usage). */
function eventRelay(connection: SessionConnection, session: CrowSession, usedIds: Set<string>, cost?: CostMeter) {
  return new EventRelay(
    () => contextWindowOf(connection.config(), session.model),
    usedIds,
    () => connection.capabilities(),
    cost ? (usage) => cost.add(findModel(connection.config(), session.model), usage) : undefined,
    // A retried request as a notice (`retrying 2/4: connection refused`), for clients that show notices.
    (attempt, error) =>
      noticeUpdates(connection.capabilities(), {
        severity: "warning",
        title: "Crow",
        description: `retrying ${attempt}/${connection.config().retry.maxRetries ?? 4}: ${shortReason(error)}`,
      }),
  );
}

/**
 * A session's questions to the user (permission, `ask_user` and elicitations). The runtime session's tools need them
 * before the session exists, so they are built first and bound to their session once it is open; until then a
 * question is declined (none comes before: questions come during turns).
 */
export class SessionAskers {
  private bound: AcpSession | undefined;
  readonly askPermission: (request: PermissionRequest) => Promise<PermissionAnswer>;
  /** Undefined when the client cannot show questions (the runtime then declines them, and `ask_user` is off). */
  readonly askUser: UserAsker | undefined;

  constructor(capabilities: ClientCapabilities | undefined) {
    this.askPermission = permissionAsker({
      outbox: () => this.bound?.outbox,
      announced: (callId) => this.bound?.relay.announced(callId),
      onCancelled: () => this.bound?.session.cancel(),
    });
    this.askUser = elicitationAsker(capabilities, {
      outbox: () => this.bound?.outbox,
      toolCallId: (callId) => this.bound?.relay.announced(callId)?.toolCallId,
    });
  }

  bind(session: AcpSession): void {
    this.bound = session;
  }
}

export class AcpSession {
  /** ACP tool call ids used so far (unique per session; a replay's ids are added, so new calls get fresh ones). */
  readonly usedIds = new Set<string>();
  /** Cumulative cost for usage_update (models with a configured price). */
  readonly cost = new CostMeter();
  /** Its `_session/steering` requests, handled one after another in arrival order (steering.ts). */
  readonly steers = new SerialQueue();
  /** The prompt turns (one at a time; a prompt sent while one runs is queued behind it). */
  readonly turns = new TurnGate();
  /** The only writer of the session's updates and questions, in the order of its events. */
  readonly outbox: Outbox;
  /** The session's events as updates (and the tool call ids a permission question refers to). */
  readonly relay: EventRelay;
  /** Its `task` children as ACP child sessions (clients that declared `subagents`). */
  private readonly subagents: SubagentSessions | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    readonly session: CrowSession,
    client: AgentContext,
    private readonly connection: SessionConnection,
    askers: SessionAskers,
  ) {
    this.outbox = new Outbox(client, session.id, afterResponse());
    this.relay = eventRelay(connection, session, this.usedIds, this.cost);
    this.subagents = subagentsOn(connection.capabilities())
      ? new SubagentSessions(session.id, this.relay, {
          session: (id) => connection.runtimeSession(id),
          send: (update, sessionId) => this.outbox.send(update, sessionId),
          relay: (child) => eventRelay(connection, child, new Set()),
        })
      : undefined;
    // The session's one stream: every event (a turn's and the session's own) becomes updates, in order.
    this.unsubscribe = session.subscribe((event) => this.show(event));
    askers.bind(this);
  }

  get id(): string {
    return this.session.id;
  }

  /** Sends the updates for one event of the session. */
  private show(event: CrowEvent): void {
    const updates = this.subagents?.updates(event) ?? this.relay.translate(event);
    for (const update of updates) this.outbox.send(update);
    // Whoever changed it (the client, a command, an extension): the config options show the new state.
    if (event.type === "mode" || event.type === "model" || event.type === "reasoning_effort")
      this.outbox.send(configOptionsUpdate(this.connection.config(), this.session, this.booleans()));
  }

  private booleans(): boolean {
    return booleanOptions(this.connection.capabilities());
  }

  /** What the client learns about a session it opened: its commands, its title, the problems of its opening. */
  introduce(): void {
    const { session } = this;
    this.outbox.send(commandsUpdate(session.commands()));
    if (session.title) this.outbox.send(sessionInfoUpdate(session.title));
    // Problems (an MCP server that did not start, an extension that failed): a notice where the client shows them.
    for (const problem of session.problems()) {
      const notice = { severity: "warning", title: "Crow", description: problem } as const;
      for (const update of noticeUpdates(this.connection.capabilities(), notice, `${problem}\n`))
        this.outbox.send(update);
    }
  }

  /** A slash command's answer, as agent text. */
  reply(text: string): void {
    this.outbox.send(messageChunk(text));
  }

  /** Queues a replayed history's updates, each as it is (addressed: a subagent child's). */
  replay(updates: ReadonlyArray<SessionUpdate | AddressedUpdate>): void {
    this.outbox.sendEach(updates);
  }

  /** Resolves once everything queued so far was written. */
  written(): Promise<void> {
    return this.outbox.written();
  }

  /** The modes and config options a session/new, load, resume or fork answers with. */
  state(): { modes: SessionModeState; configOptions: SessionConfigOption[] } {
    return { modes: modeState(this.session.mode), configOptions: this.configOptions() };
  }

  configOptions(): SessionConfigOption[] {
    return configOptions(this.connection.config(), this.session, this.booleans());
  }

  /** session/cancel: the turn waiting or running stops. */
  cancel(): void {
    this.turns.cancel();
    this.session.cancel();
  }

  /** Stops listening to the session and closes it (its turn, its pending writes, its tools). */
  async close(): Promise<void> {
    // Queued prompts answer cancelled instead of waiting for a session that is gone.
    this.turns.cancel();
    this.unsubscribe();
    this.subagents?.close();
    await this.session.close();
  }
}
