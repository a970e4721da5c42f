// Crow over the network against stdio: the same scripted workload through `crow acp` on stdio, and through
// `crow acp --listen` over WebSocket and over Streamable HTTP (the SDK's experimental clients): the time of a text
// turn, the overhead per tool round (a 20-round turn of real `read`s through crow-mcp, minus the text turn), the
// time to relay 2,000 streamed chunks, and the agent process's peak RSS (VmHWM) after it all.
import {
  connectRemote,
  type RemoteKind,
  reply,
  spawnAcpAgent,
  startListeningAgent,
  startMockLlm,
  tempWorkspace,
  textReply,
} from "@crow/testkit";
import { acp } from "./agent-load.js";
import { formatTiming, measure, type Timing, writeReport } from "./lib.js";
import { peakRssMb } from "./proc.js";

const ROUNDS = 20;
const CHUNKS = 2_000;

interface Client {
  pid: number;
  newSession(cwd: string): Promise<{ sessionId: string }>;
  prompt(sessionId: string, text: string): Promise<{ updates: Array<{ sessionUpdate: string }> }>;
  close(): Promise<unknown>;
}

interface Result {
  textTurn: Timing;
  toolTurn: Timing;
  perRoundMs: number;
  chunks: Timing;
  agentPeakRssMb: number;
}

export async function run(): Promise<void> {
  const mock = await startMockLlm();
  const ws = await tempWorkspace("crow-bench-");
  const file = await ws.write("small.txt", "one line\n");
  const home = await tempWorkspace("crow-bench-home-");
  const env = { HOME: home.dir, CROW_HOME: home.dir };

  const open = async (transport: "stdio" | RemoteKind): Promise<Client> => {
    if (transport === "stdio") {
      const agent = await spawnAcpAgent({ llmUrl: mock.url, cwd: ws.dir, command: acp(), env });
      return { pid: agent.process.pid ?? 0, ...pick(agent), close: () => agent.close() };
    }
    const server = await startListeningAgent({ llmUrl: mock.url, env });
    const remote = await connectRemote(server, transport);
    return {
      pid: server.process.pid ?? 0,
      ...pick(remote),
      close: async () => {
        await remote.close();
        await server.close();
      },
    };
  };

  const results: Record<string, Result> = {};
  for (const transport of ["stdio", "ws", "http"] as const) {
    const client = await open(transport);
    const { sessionId } = await client.newSession(ws.dir);
    const textTurn = await measure(
      async () => {
        mock.script(textReply("done"));
        await client.prompt(sessionId, "go");
      },
      15,
      3,
    );
    const toolTurn = await measure(
      async () => {
        for (let i = 0; i < ROUNDS; i++)
          mock.script(reply().toolCall("read", { file_path: file, offset: 1 + (i % 2) }));
        mock.script(textReply("done"));
        await client.prompt(sessionId, "go");
      },
      10,
      2,
    );
    const chunks = await measure(
      async () => {
        const r = reply();
        for (let i = 0; i < CHUNKS; i++) r.text("tok ");
        mock.script(r);
        const turn = await client.prompt(sessionId, "stream");
        const count = turn.updates.filter((u) => u.sessionUpdate === "agent_message_chunk").length;
        if (count === 0) throw new Error("no chunk arrived");
      },
      5,
      1,
    );
    results[transport] = {
      textTurn,
      toolTurn,
      perRoundMs: (toolTurn.p50 - textTurn.p50) / ROUNDS,
      chunks,
      agentPeakRssMb: peakRssMb(client.pid),
    };
    await client.close();
  }
  await mock.close();
  await ws.cleanup();
  await home.cleanup();

  for (const [transport, r] of Object.entries(results)) {
    console.log(`${transport.padEnd(5)} text turn:            ${formatTiming(r.textTurn)}`);
    console.log(`${transport.padEnd(5)} ${ROUNDS}-round tool turn:    ${formatTiming(r.toolTurn)}`);
    console.log(`${transport.padEnd(5)} per tool round:       ${r.perRoundMs.toFixed(2)} ms`);
    console.log(`${transport.padEnd(5)} ${CHUNKS} chunks relayed:  ${formatTiming(r.chunks)}`);
    console.log(`${transport.padEnd(5)} agent peak RSS:       ${r.agentPeakRssMb.toFixed(1)} MB`);
  }
  writeReport("acp-net", { rounds: ROUNDS, chunks: CHUNKS, transports: results });
}

/** The part of a test client the workload uses. */
function pick(client: Pick<Client, "newSession" | "prompt">): Pick<Client, "newSession" | "prompt"> {
  return {
    newSession: (cwd) => client.newSession(cwd),
    prompt: (sessionId, text) => client.prompt(sessionId, text),
  };
}
