/**
 * The stored-session methods of the ACP agent: session/load (replays the whole history as `session/update`s before
 * it answers), session/resume (the same without the replay), session/fork (unstable ACP: a new session starting
 * as a copy of a stored one, opened without a replay), session/list, session/close and session/delete.
 * The connection (acp-connection.ts) holds the live sessions and knows how to open one; this file only decides what to
 * open and what to send.
 */
import path from "node:path";
import {
  type AgentApp,
  type AgentContext,
  type ListSessionsRequest,
  type ListSessionsResponse,
  type LoadSessionRequest,
  methods,
  RequestError,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import type { ForkSessionRequest, ForkSessionResponse } from "@agentclientprotocol/sdk/unstable";
import type { Crow, Store } from "@crow/core";
import { log } from "../base/log.js";
import type { AcpMcpServer } from "../tools/types.js";
import type { AcpConnection } from "./acp-connection.js";
import type { AcpSession } from "./acp-session.js";
import { listedDirectories, requestedDirectories, withDirectoryErrors } from "./additional-directories.js";
import type { AddressedUpdate } from "./outbox.js";
import { planUpdate } from "./translate.js";

/** What the stored-session methods use of the connection: its live sessions, the runtime, opening and closing. */
type SessionHost = Pick<AcpConnection, "sessions" | "crow" | "ready" | "open" | "dispose" | "subagents">;

/** Page size of session/list. */
const LIST_PAGE = 50;

async function storeOf(host: SessionHost): Promise<Store> {
  const store = (await host.crow()).store;
  if (!store) throw new RequestError(-32603, "no session store is configured");
  return store;
}

/** Loads a stored session into a live one (closing a live copy first); returns it with its replay. */
async function reopen(
  host: SessionHost,
  client: AgentContext,
  params: Pick<LoadSessionRequest, "sessionId" | "cwd" | "mcpServers" | "additionalDirectories" | "_meta">,
): Promise<{ session: AcpSession; replay: Array<SessionUpdate | AddressedUpdate> }> {
  if (!path.isAbsolute(params.cwd)) throw RequestError.invalidParams(undefined, `cwd must be absolute: ${params.cwd}`);
  const live = host.sessions.get(params.sessionId);
  if (live?.session.running) {
    throw RequestError.invalidRequest(undefined, "this session is running a prompt; cancel it before loading it again");
  }
  const additionalDirectories = requestedDirectories(params.additionalDirectories, "session/load");
  if (live) {
    // A load refused for its directories must leave the live copy open (it changes nothing).
    const { checkAdditionalDirectories } = await import("@crow/core/internal");
    await withDirectoryErrors(() => checkAdditionalDirectories(additionalDirectories, params.cwd));
    await host.dispose(live);
  }
  const store = await storeOf(host);
  const record = await store.getSession(params.sessionId);
  if (!record || record.archivedFrom !== null) throw RequestError.sessionNotFound(params.sessionId);
  const session = await host.open(client, {
    kind: "load",
    sessionId: record.id,
    cwd: params.cwd,
    mcpServers: (params.mcpServers ?? []) as AcpMcpServer[],
    additionalDirectories,
    // Another process has it open: `_meta: {"crow/takeOver": true}` takes it over (the refusal says so).
    takeOver: params._meta?.["crow/takeOver"] === true,
  });
  // Loaded lazily like the rest of the runtime (initialize answers before @crow/core is parsed).
  const { replayHistory } = await import("./replay.js");
  // How each call ended and what it showed live; a failed read only costs the replay its stored diffs and flags.
  const outcomes = await store.loadToolOutcomes(record.id).catch(() => []);
  const replay = replayHistory(session.session.history, params.cwd, outcomes);
  for (const id of replay.usedIds) session.usedIds.add(id);
  const updates: Array<SessionUpdate | AddressedUpdate> =
    host.subagents() && replay.subagents.length > 0
      ? await (await import("./subagent-replay.js")).replayWithSubagents(record.id, replay, (id) =>
          storedChild(store, id),
        )
      : replay.updates;
  // The plan as it stands (restored from the history by the todo extension): the editor's checklist comes back.
  const plan = session.session.plan;
  if (plan.length > 0) updates.push(planUpdate(plan));
  return { session, replay: updates };
}

/** A stored child session's history and tool outcomes (undefined when it is gone); a failed read replays without it. */
async function storedChild(store: Store, id: string) {
  try {
    const record = await store.getSession(id);
    if (!record) return undefined;
    const messages = (await store.loadMessages(id)).map((m) => m.message).filter((m) => m.role !== "system");
    return { cwd: record.cwd, messages, outcomes: await store.loadToolOutcomes(id) };
  } catch (error) {
    log.debug(`subagent session ${id} could not be replayed`, error);
    return undefined;
  }
}

/** `session/fork` is unstable ACP: the stable SDK entry point Crow uses has no parser for it, so this is its own. */
const FORK_METHOD = "session/fork";

function forkParams(
  params: unknown,
): Pick<ForkSessionRequest, "sessionId" | "cwd" | "mcpServers"> & { additionalDirectories: string[] } {
  const p = (params ?? {}) as Record<string, unknown>;
  if (typeof p.sessionId !== "string" || typeof p.cwd !== "string") {
    throw RequestError.invalidParams(undefined, `${FORK_METHOD} expects {"sessionId": "<id>", "cwd": "/abs/path"}`);
  }
  if (p.mcpServers !== undefined && p.mcpServers !== null && !Array.isArray(p.mcpServers)) {
    throw RequestError.invalidParams(undefined, `${FORK_METHOD}: mcpServers must be a list`);
  }
  return {
    sessionId: p.sessionId,
    cwd: p.cwd,
    mcpServers: (p.mcpServers ?? []) as ForkSessionRequest["mcpServers"],
    additionalDirectories: requestedDirectories(p.additionalDirectories, FORK_METHOD),
  };
}

/** session/fork: stores a copy of the session, then opens the copy (without a replay: the client shows it already). */
async function forkSession(
  host: SessionHost,
  client: AgentContext,
  params: ReturnType<typeof forkParams>,
): Promise<ForkSessionResponse> {
  if (!path.isAbsolute(params.cwd)) {
    throw RequestError.invalidParams(undefined, `cwd must be absolute: ${params.cwd}`);
  }
  // Before the copy is stored: a fork that cannot open must leave nothing behind.
  await host.ready();
  const crow = await host.crow();
  if (!crow.store) throw new RequestError(-32603, "no session store is configured");
  let forkId: string;
  try {
    const { additionalDirectories } = params;
    forkId = (
      await withDirectoryErrors(() => crow.forkSession(params.sessionId, { cwd: params.cwd, additionalDirectories }))
    ).id;
  } catch (error) {
    if ((error as { code?: unknown }).code === -32002) throw RequestError.sessionNotFound(params.sessionId);
    throw error;
  }
  // The client already shows the history it forked: the new session opens without a replay.
  const session = await host.open(client, {
    kind: "load",
    sessionId: forkId,
    cwd: params.cwd,
    mcpServers: (params.mcpServers ?? []) as AcpMcpServer[],
    additionalDirectories: params.additionalDirectories,
  });
  session.introduce();
  log.info(`session ${params.sessionId} forked as ${forkId}`);
  return { sessionId: forkId, ...session.state() };
}

/** session/list: a page of the stored sessions, without the ones never prompted (unless live here). */
async function listSessions(host: SessionHost, params: ListSessionsRequest): Promise<ListSessionsResponse> {
  const crow = await host.crow();
  let page: Awaited<ReturnType<Crow["listSessions"]>>;
  try {
    page = await crow.listSessions({
      limit: LIST_PAGE,
      // Never-prompted sessions (an editor opens one at each start; open here or not) have nothing to resume, and
      // subagent children are part of their parent: the picker shows neither.
      prompted: true,
      topLevel: true,
      ...(params.cwd ? { cwd: params.cwd } : {}),
      ...(params.cursor ? { cursor: params.cursor } : {}),
    });
  } catch (error) {
    if (params.cursor && error instanceof Error && error.message.includes("cursor")) {
      throw RequestError.invalidParams(undefined, `invalid cursor: ${params.cursor}`);
    }
    throw error;
  }
  return {
    sessions: page.sessions.map((s) => ({
      sessionId: s.id,
      cwd: s.cwd,
      // No title yet: no "title" at all (a client's resume picker failed on an explicit null).
      ...(s.title ? { title: s.title } : {}),
      updatedAt: s.updatedAt,
      ...listedDirectories(s.additionalDirectories),
    })),
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
  };
}

/** Registers session/load, resume, fork, list, close and delete on the agent app. */
export function registerSessionMethods(app: AgentApp, host: SessionHost): AgentApp {
  return app
    .onRequest(FORK_METHOD, forkParams, ({ params, client }) => forkSession(host, client, params))
    .onRequest(methods.agent.session.load, async ({ params, client }) => {
      const { session, replay } = await reopen(host, client, params);
      // ACP: the whole history arrives before the load answers.
      session.replay(replay);
      session.introduce();
      await session.written();
      return session.state();
    })
    .onRequest(methods.agent.session.resume, async ({ params, client }) => {
      const { session } = await reopen(host, client, { ...params, mcpServers: params.mcpServers ?? [] });
      session.introduce();
      return session.state();
    })
    .onRequest(methods.agent.session.list, ({ params }) => listSessions(host, params))
    .onRequest(methods.agent.session.close, async ({ params }) => {
      const live = host.sessions.get(params.sessionId);
      if (live) {
        await host.dispose(live);
        return {};
      }
      const store = await storeOf(host);
      if (!(await store.getSession(params.sessionId))) throw RequestError.sessionNotFound(params.sessionId);
      return {};
    })
    .onRequest(methods.agent.session.delete, async ({ params }) => {
      const live = host.sessions.get(params.sessionId);
      if (live) await host.dispose(live);
      const store = await storeOf(host);
      const deleted = await store.deleteSession(params.sessionId);
      if (!deleted && !live) throw RequestError.sessionNotFound(params.sessionId);
      log.info(`session ${params.sessionId} deleted`);
      return {};
    });
}
