// LLM client and loop throughput against the zero-latency mock LLM (in-process, real HTTP on loopback).
import { createLlmClient, toolSetOf } from "@crow/core";
import { runLoop } from "@crow/core/internal";
import { reply, startMockLlm } from "@crow/testkit";
import { formatTiming, measure, writeReport } from "./lib.js";

const CHUNKS = 10_000;
const ROUNDS = 20;

const noopTools = toolSetOf(
  () => [{ type: "function", function: { name: "read", parameters: { type: "object" } } }],
  async () => ({ content: "ok" }),
);

export async function run(): Promise<void> {
  const mock = await startMockLlm();
  const llm = createLlmClient({ baseURL: mock.url });
  const user = [{ role: "user" as const, content: "go" }];
  const chunkyReply = () => {
    const r = reply();
    for (let i = 0; i < CHUNKS; i++) r.text("tok ");
    return r;
  };

  // 1. Raw client: chunks parsed and accumulated per second.
  const client = await measure(
    async () => {
      mock.script(chunkyReply());
      await llm.stream({ model: "m", messages: user });
    },
    10,
    2,
  );
  // 2. Through the loop: text_delta events delivered to a consumer per second.
  const loop = await measure(
    async () => {
      mock.script(chunkyReply());
      for await (const _event of runLoop({ messages: user }, { llm, model: "m", tools: noopTools })) {
        // consume
      }
    },
    10,
    2,
  );
  // 3. Per-round overhead: a task of ROUNDS tool rounds with an instant tool, divided by the rounds.
  const rounds = await measure(
    async () => {
      for (let i = 0; i < ROUNDS; i++) mock.script(reply().toolCall("read", { file_path: `f${i}` }));
      mock.script(reply().text("done"));
      for await (const _event of runLoop({ messages: user }, { llm, model: "m", tools: noopTools })) {
        // consume
      }
    },
    10,
    2,
  );
  mock.assertDone();
  await mock.close();

  const clientRate = Math.round(CHUNKS / (client.p50 / 1000));
  const loopRate = Math.round(CHUNKS / (loop.p50 / 1000));
  const perRound = rounds.p50 / (ROUNDS + 1);
  console.log(`client, ${CHUNKS} chunks: ${formatTiming(client)} → ${clientRate} chunks/s`);
  console.log(`loop,   ${CHUNKS} chunks: ${formatTiming(loop)} → ${loopRate} chunks/s`);
  console.log(
    `loop, ${ROUNDS}-round task: ${formatTiming(rounds)} → ${perRound.toFixed(2)} ms per LLM round (mock+HTTP incl.)`,
  );
  writeReport("llm", {
    client,
    clientChunksPerSecond: clientRate,
    loop,
    loopChunksPerSecond: loopRate,
    rounds,
    msPerRound: perRound,
  });
}
