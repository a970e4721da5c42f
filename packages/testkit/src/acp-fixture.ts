/**
 * The setup every ACP end-to-end test needs, in one place: the mock LLM, a temp workspace, a temp HOME with its Crow
 * home, the built `crow acp` spawned against them and connected (its updates recorded by the test client), and
 * everything torn down afterwards.
 *
 *   describe("crow acp: …", () => {
 *     const fx = useAcpFixture({ agent: { fs: true } });
 *     test("…", async () => {
 *       const { sessionId } = await fx.agent.newSession(fx.ws.dir);
 *       fx.mock.script(textReply("hi"));
 *       const turn = await fx.agent.prompt(sessionId, "hello");
 *     });
 *   });
 */
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { type AcpClientOptions, type AcpTestClient, spawnAcpAgent } from "./acp-client.js";
import { type MockLlm, type MockLlmOptions, startMockLlm } from "./mock-llm.js";
import { type TempWorkspace, tempWorkspace } from "./workspace.js";

export interface AcpFixtureOptions {
  /** Options of the mock LLM (models, embeddings). */
  mock?: MockLlmOptions;
  /**
   * Options of the agent spawned before the tests (`agent`), and the defaults of every agent `spawn` starts; their
   * `env` is added to HOME, CROW_HOME and OPENAI_BASE_URL.
   */
  agent?: Omit<AcpClientOptions, "llmUrl">;
  /** Whether an agent is spawned before the tests (default true); false for tests that spawn their own. */
  startAgent?: boolean;
  /** Runs after the mock, workspace and homes exist and before the agent starts (config.yaml, extensions, files). */
  prepare?: (fixture: AcpFixture) => Promise<void> | void;
}

/** What a test works with. Agents, temp dirs and the mock are closed and removed by `close` (or the `after` hook). */
export interface AcpFixture {
  readonly mock: MockLlm;
  readonly ws: TempWorkspace;
  /** HOME of the agents: a temp directory, so nothing of the real home is read or written. */
  readonly home: string;
  /** CROW_HOME of the agents (`<home>/.crow`, created): config.yaml, .env, extensions, the SQLite store. */
  readonly crowHome: string;
  /** The agent spawned before the tests (throws when the options said `startAgent: false`). */
  readonly agent: AcpTestClient;
  /** Spawns another agent on the same mock and homes; `options` are merged over the fixture's (env too). */
  spawn(options?: AcpClientOptions): Promise<AcpTestClient>;
  /** A temp directory removed with the fixture. */
  tempDir(prefix?: string): Promise<string>;
  /** Closes every agent still running, the mock, and removes the workspace, homes and temp dirs. */
  close(): Promise<void>;
}

/** Starts a fixture now (for a test that needs its own); prefer `useAcpFixture` in a `describe`. */
export async function startAcpFixture(options: AcpFixtureOptions = {}): Promise<AcpFixture> {
  const mock = await startMockLlm(options.mock);
  const ws = await tempWorkspace();
  const home = await mkdtemp(path.join(tmpdir(), "crow-home-"));
  const crowHome = path.join(home, ".crow");
  await mkdir(crowHome);
  const running = new Set<AcpTestClient>();
  const dirs: string[] = [];
  const defaults = options.agent ?? {};
  let first: AcpTestClient | undefined;

  const fixture: AcpFixture = {
    mock,
    ws,
    home,
    crowHome,
    get agent(): AcpTestClient {
      if (!first) throw new Error("this ACP fixture spawned no agent (startAgent: false): use fixture.spawn()");
      return first;
    },
    async spawn(extra = {}) {
      const client = await spawnAcpAgent({
        ...defaults,
        ...extra,
        llmUrl: mock.url,
        env: { HOME: home, CROW_HOME: crowHome, ...defaults.env, ...extra.env },
      });
      running.add(client);
      const close = client.close.bind(client);
      client.close = () => {
        running.delete(client);
        return close();
      };
      return client;
    },
    async tempDir(prefix = "crow-test-") {
      const dir = await mkdtemp(path.join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    async close() {
      await Promise.all([...running].map((client) => client.close()));
      await mock.close();
      await ws.cleanup();
      await Promise.all([home, ...dirs].map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
  try {
    await options.prepare?.(fixture);
    if (options.startAgent !== false) first = await fixture.spawn();
  } catch (error) {
    await fixture.close();
    throw error;
  }
  return fixture;
}

/**
 * Registers `before`/`after` hooks in the current `describe` that start and close a fixture, and returns it. Its
 * properties may be read from the tests and hooks that run after `before` (reading them earlier throws).
 */
export function useAcpFixture(options: AcpFixtureOptions = {}): AcpFixture {
  let current: AcpFixture | undefined;
  before(async () => {
    current = await startAcpFixture(options);
  });
  after(async () => {
    await current?.close();
  });
  const get = (): AcpFixture => {
    if (!current) throw new Error("the ACP fixture is read before its before() hook ran");
    return current;
  };
  return {
    get mock() {
      return get().mock;
    },
    get ws() {
      return get().ws;
    },
    get home() {
      return get().home;
    },
    get crowHome() {
      return get().crowHome;
    },
    get agent() {
      return get().agent;
    },
    spawn: (options) => get().spawn(options),
    tempDir: (prefix) => get().tempDir(prefix),
    close: () => get().close(),
  };
}
