// The session store on SQLite (a file, WAL) and PostgreSQL 15 (started here, fsync on): append latency per message,
// load + replay of a 10 000-message session (in process, and end to end as an ACP session/load over stdio), and
// listing over 10 000 sessions. Targets: append < 1 ms p50 on SQLite; load + replay of 10 000 messages < 500 ms.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { methods } from "@agentclientprotocol/sdk";
import { type ChatMessage, type MessageInput, openStore, type Store } from "@crow/core";
import { repairToolPairs } from "@crow/core/internal";
import { findPostgresBin, spawnAcpAgent, startPostgres } from "@crow/testkit";
import { replayHistory } from "../packages/agent/src/acp/replay.js";
import { writeReport } from "./lib.js";

const HISTORY = 10_000;
const SESSIONS = 10_000;
const APPENDS = 2_000;

function percentiles(samples: number[]): { p50: number; p99: number; runs: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return { p50: at(0.5), p99: at(0.99), runs: sorted.length };
}

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const fmt = (n: number) => `${n.toFixed(n < 10 ? 3 : 1)} ms`;

/** A realistic history: user → assistant (reasoning, an edit call) → tool result → assistant text, repeated. */
export function history(n: number, cwd: string): MessageInput[] {
  const out: MessageInput[] = [];
  const usage = { promptTokens: 12_000, completionTokens: 300, totalTokens: 12_300 };
  for (let i = 0; out.length < n; i++) {
    const file = path.join(cwd, `src/module${i % 50}.ts`);
    const messages: MessageInput[] = [
      { message: { role: "user", content: `Step ${i}: rename the helper in module${i % 50}.ts and update callers.` } },
      {
        message: {
          role: "assistant",
          content: "I'll make that change.",
          reasoning_content: "The helper is used in three places; an edit with enough context is safest.",
          tool_calls: [
            {
              id: `call_${i}`,
              type: "function",
              function: {
                name: "edit",
                arguments: JSON.stringify({
                  file_path: file,
                  old_string: `export function helper${i}(a: number) {\n  return a + 1;\n}`,
                  new_string: `export function renamed${i}(a: number) {\n  return a + 1;\n}`,
                }),
              },
            },
          ],
        },
        usage,
      },
      { message: { role: "tool", tool_call_id: `call_${i}`, content: `Edited ${file}: 1 replacement (lines 10-12).` } },
      { message: { role: "assistant", content: `Done with step ${i}: the helper is renamed.` }, usage },
    ];
    out.push(...messages.slice(0, n - out.length));
  }
  return out;
}

async function appendLatency(store: Store): Promise<ReturnType<typeof percentiles>> {
  const { id } = await store.createSession({ cwd: "/bench/append" });
  const messages = history(APPENDS + 50, "/bench/append");
  const samples: number[] = [];
  for (const [i, m] of messages.entries()) {
    const start = process.hrtime.bigint();
    await store.appendMessages(id, [m]);
    if (i >= 50) samples.push(ms(start)); // the first 50 warm up
  }
  return percentiles(samples);
}

async function loadReplay(store: Store, sessionId: string, cwd: string) {
  const samples: number[] = [];
  let loadOnly = 0;
  for (let run = 0; run < 5; run++) {
    const start = process.hrtime.bigint();
    const stored = await store.loadMessages(sessionId);
    loadOnly = ms(start);
    const { updates } = replayHistory(repairToolPairs(stored.map((m) => m.message as ChatMessage)), cwd);
    // What goes on the wire: every update serialized once.
    let bytes = 0;
    for (const update of updates) bytes += JSON.stringify({ sessionId, update }).length;
    samples.push(ms(start));
    if (bytes === 0) throw new Error("nothing replayed");
  }
  return { ...percentiles(samples), loadOnlyMs: loadOnly };
}

/** session/load over stdio against the built `crow acp`: from request to answer, with every update received. */
async function acpLoad(dbUri: string, sessionId: string, cwd: string): Promise<{ ms: number; updates: number }> {
  const agent = await spawnAcpAgent({ env: { CROW_DB_URI: dbUri, OPENAI_BASE_URL: "http://127.0.0.1:9/v1" } });
  try {
    // Warm the store connection and the runtime with a listing first.
    await agent.agent.request(methods.agent.session.list, {});
    const before = agent.notifications.length;
    const start = process.hrtime.bigint();
    await agent.agent.request(methods.agent.session.load, { sessionId, cwd, mcpServers: [] });
    const elapsed = ms(start);
    return { ms: elapsed, updates: agent.notifications.length - before };
  } finally {
    await agent.close();
  }
}

async function listing(store: Store) {
  const created: Promise<unknown>[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    created.push(store.createSession({ cwd: `/bench/list/${i % 20}`, title: `session ${i}` }));
    if (created.length >= 8) await Promise.all(created.splice(0));
  }
  await Promise.all(created);
  const first: number[] = [];
  const filtered: number[] = [];
  for (let i = 0; i < 50; i++) {
    let start = process.hrtime.bigint();
    await store.listSessions({ limit: 50 });
    first.push(ms(start));
    start = process.hrtime.bigint();
    await store.listSessions({ cwd: "/bench/list/7", limit: 50 });
    filtered.push(ms(start));
  }
  const start = process.hrtime.bigint();
  let pages = 0;
  let cursor: string | undefined;
  do {
    const page = await store.listSessions({ limit: 50, ...(cursor ? { cursor } : {}) });
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  return { firstPage: percentiles(first), cwdPage: percentiles(filtered), allPagesMs: ms(start), pages };
}

async function backend(name: string, uri: string): Promise<Record<string, unknown>> {
  const store = await openStore(uri);
  try {
    const append = await appendLatency(store);
    console.log(
      `${name}: append 1 message          p50 ${fmt(append.p50)}  p99 ${fmt(append.p99)}  (${append.runs} runs)`,
    );

    const cwd = "/bench/replay";
    const { id } = await store.createSession({ cwd, title: "big" });
    const fillStart = process.hrtime.bigint();
    await store.appendMessages(id, history(HISTORY, cwd));
    const fillMs = ms(fillStart);
    const replay = await loadReplay(store, id, cwd);
    console.log(
      `${name}: load + replay ${HISTORY} msgs    p50 ${fmt(replay.p50)}  (load alone ${fmt(replay.loadOnlyMs)}; ` +
        `bulk insert of them ${fmt(fillMs)})`,
    );
    const acp = await acpLoad(uri, id, cwd);
    console.log(`${name}: ACP session/load ${HISTORY} msgs  ${fmt(acp.ms)} (${acp.updates} updates over stdio)`);

    const list = await listing(store);
    console.log(
      `${name}: list, ${SESSIONS} sessions       first page p50 ${fmt(list.firstPage.p50)}, ` +
        `cwd-filtered p50 ${fmt(list.cwdPage.p50)}, all ${list.pages} pages ${fmt(list.allPagesMs)}`,
    );
    return { append, replay, bulkInsertMs: fillMs, acpLoad: acp, list };
  } finally {
    await store.close();
  }
}

export async function run(): Promise<void> {
  const results: Record<string, unknown> = {};
  const dir = await mkdtemp(path.join(tmpdir(), "crow-bench-store-"));
  try {
    results.sqlite = await backend("SQLite", path.join(dir, "crow.db"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  if (!findPostgresBin()) {
    console.log("PostgreSQL: skipped (not installed)");
  } else {
    const pg = await startPostgres({ fsync: true });
    try {
      results.postgres = await backend("PostgreSQL", await pg.createDatabase("crow_bench"));
    } finally {
      await pg.stop();
    }
  }
  writeReport("store", results);
}
