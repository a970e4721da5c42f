// The setup the `crow acp --listen` tests share: a mock LLM, a fresh home and workspace, and the listening agent on
// them (the built binary on a loopback port).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import {
  type ListeningAgent,
  type ListenOptions,
  type MockLlm,
  startListeningAgent,
  startMockLlm,
  type TempWorkspace,
  tempWorkspace,
} from "@crow/testkit";

export interface ListenSetup {
  mock: MockLlm;
  ws: TempWorkspace;
  /** HOME and CROW_HOME of the agent. */
  home: string;
  server: ListeningAgent;
  /** Stops the agent and the mock, removes the home and the workspace. */
  close(): Promise<void>;
}

/** Starts a listening agent on a mock LLM with a fresh home; `options` as {@link startListeningAgent}'s. */
export async function startListenSetup(options: Partial<Omit<ListenOptions, "llmUrl">> = {}): Promise<ListenSetup> {
  const mock = await startMockLlm();
  const ws = await tempWorkspace();
  const home = await mkdtemp(path.join(tmpdir(), "crow-home-"));
  const server = await startListeningAgent({
    ...options,
    llmUrl: mock.url,
    env: { HOME: home, CROW_HOME: home, ...options.env },
  });
  return {
    mock,
    ws,
    home,
    server,
    async close() {
      await server.close();
      await mock.close();
      await ws.cleanup();
      await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * {@link startListenSetup} for a `describe` block: started before its tests, closed after them. Its fields are read
 * inside the tests (they exist once the block's `before` ran).
 */
export function listenFixture(options: Partial<Omit<ListenOptions, "llmUrl">> = {}): Omit<ListenSetup, "close"> {
  let setup: ListenSetup | undefined;
  before(async () => {
    setup = await startListenSetup(options);
  });
  after(async () => {
    await setup?.close();
  });
  const started = (): ListenSetup => {
    if (!setup) throw new Error("the listening agent is not started yet: read the fixture inside a test");
    return setup;
  };
  return {
    get mock() {
      return started().mock;
    },
    get ws() {
      return started().ws;
    },
    get home() {
      return started().home;
    },
    get server() {
      return started().server;
    },
  };
}
