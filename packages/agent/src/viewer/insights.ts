/**
 * Figures about a session for the viewer: per-request tokens and cumulative cost across compactions (the chart),
 * totals for the side-by-side comparison, the compactions with their summaries, and the subagent tree. Costs use
 * the `price` of the session's model in config.yaml; sessions of models without a price have no cost.
 */
import type { SessionRecord, Store, StoredMessage, Usage } from "@crow/core";
import { usageCost } from "../config/models.js";
import type { Price } from "../config/types.js";
import { isErrorResult } from "./tool-call.js";

/** Prices by model name (config.yaml's keys, which sessions store). */
export type Prices = ReadonlyMap<string, Price>;

export function priceOf(prices: Prices, session: Pick<SessionRecord, "model">): Price | undefined {
  return session.model ? prices.get(session.model) : undefined;
}

/** Cost of token totals when only sums are known (no cache split): an upper bound when the provider cached. */
export function costOf(price: Price | undefined, usage: Usage): number | undefined {
  return price ? usageCost(price, usage) : undefined;
}

/** The chart's data: one entry per LLM response, oldest first, archives before the current history. */
export interface ChartData {
  prompt: number[];
  completion: number[];
  /** Cumulative cost after each response (empty without a price). */
  cost: number[];
  currency?: string;
  /** Indexes (into the arrays) of the first response after each compaction or clear. */
  compactions: number[];
}

export async function chartData(store: Store, session: SessionRecord, prices: Prices): Promise<ChartData> {
  const price = priceOf(prices, session);
  const histories = [...(await store.listArchives(session.id)), session];
  const data: ChartData = { prompt: [], completion: [], cost: [], compactions: [] };
  if (price) data.currency = price.currency;
  let total = 0;
  for (const [i, history] of histories.entries()) {
    if (i > 0) data.compactions.push(data.prompt.length);
    for (const point of await store.listUsage(history.id)) {
      data.prompt.push(point.usage.promptTokens);
      data.completion.push(point.usage.completionTokens);
      if (price) {
        total += usageCost(price, point.usage);
        data.cost.push(total);
      }
    }
  }
  return data;
}

/** What the comparison shows of one session (archives included). */
export interface Figures {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  toolCalls: number;
  toolErrors: number;
  userMessages: number;
  compactions: number;
  cost?: number;
  currency?: string;
}

export async function figures(store: Store, session: SessionRecord, prices: Prices): Promise<Figures> {
  const price = priceOf(prices, session);
  const archives = await store.listArchives(session.id);
  const out: Figures = {
    requests: 0,
    promptTokens: 0,
    completionTokens: 0,
    toolCalls: 0,
    toolErrors: 0,
    userMessages: 0,
    compactions: archives.length,
  };
  let cost = 0;
  for (const history of [...archives, session]) {
    for (let from = 0; ; ) {
      const page: StoredMessage[] = await store.loadMessagePage(history.id, { fromSeq: from, limit: 1000 });
      for (const { message, usage, outcome } of page) {
        if (usage) {
          out.requests++;
          out.promptTokens += usage.promptTokens;
          out.completionTokens += usage.completionTokens;
          if (price) cost += usageCost(price, usage);
        }
        if (message.role === "user") out.userMessages++;
        if (message.role === "assistant") out.toolCalls += message.tool_calls?.length ?? 0;
        const text = message.role === "tool" && typeof message.content === "string" ? message.content : "";
        if (message.role === "tool" && isErrorResult(text, outcome?.isError)) {
          out.toolErrors++;
        }
      }
      const last = page.at(-1);
      if (!last || page.length < 1000) break;
      from = last.seq + 1;
    }
  }
  if (price) {
    out.cost = cost;
    out.currency = price.currency;
  }
  return out;
}

/** One compaction, `/clear` or `/rewind`: the archived history it replaced and what took its place. */
export interface Compaction {
  archive: SessionRecord;
  messagesBefore: number;
  /** The summary (absent for a `/clear`, which keeps nothing, and a `/rewind`). */
  summary?: string;
  /** A `/rewind`: the messages it kept (the archive's beginning, unchanged). */
  rewoundTo?: number;
  at: string;
}

/** How many messages two histories share from their start (compared up to `limit`). */
async function sharedStart(store: Store, a: string, b: string, limit = 500): Promise<number> {
  const [left, right] = await Promise.all([
    store.loadMessagePage(a, { fromSeq: 0, limit }),
    store.loadMessagePage(b, { fromSeq: 0, limit }),
  ]);
  let n = 0;
  while (n < left.length && n < right.length && JSON.stringify(left[n]?.message) === JSON.stringify(right[n]?.message))
    n++;
  return n;
}

/**
 * The compacted history starts `[first user, summary, …]`: the summary is the assistant message at seq 1. A rewind
 * keeps the archive's beginning as it was (its first user message and the answer to it at least); a `/clear` or a
 * rewind to the very start keeps nothing.
 */
export async function compactions(store: Store, session: SessionRecord): Promise<Compaction[]> {
  const archives = await store.listArchives(session.id);
  const out: Compaction[] = [];
  for (const [i, archive] of archives.entries()) {
    const after = archives[i + 1] ?? session;
    const kept = await sharedStart(store, archive.id, after.id);
    const [first, second] = await store.loadMessagePage(after.id, { fromSeq: 0, limit: 2 });
    const summary =
      kept < 2 &&
      first?.message.role === "user" &&
      second?.message.role === "assistant" &&
      !second.message.tool_calls?.length
        ? (second.message.content ?? undefined)
        : undefined;
    // The archive's id says what made it (store ids.ts); older archives are told apart by their shape alone.
    const rewound = archive.id.includes("~rewind-") || (kept >= 2 && !archive.id.includes("~clear-"));
    const cleared = archive.id.includes("~clear-");
    out.push({
      archive,
      messagesBefore: await store.countMessages(archive.id),
      ...(summary && !rewound && !cleared ? { summary } : {}),
      ...(rewound ? { rewoundTo: kept } : {}),
      at: archive.updatedAt,
    });
  }
  return out;
}

/** A session's subagents, nested. */
export interface TreeNode {
  session: SessionRecord;
  children: TreeNode[];
}

/** The subagent tree under `id` (children by `parentId`, oldest first), at most `depth` levels. */
export async function subagentTree(store: Store, id: string, depth = 5): Promise<TreeNode[]> {
  if (depth <= 0) return [];
  const children: SessionRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listSessions({ parentId: id, limit: 200, ...(cursor ? { cursor } : {}) });
    children.push(...page.sessions);
    cursor = page.nextCursor;
  } while (cursor && children.length < 1000);
  children.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  return Promise.all(children.map(async (s) => ({ session: s, children: await subagentTree(store, s.id, depth - 1) })));
}
