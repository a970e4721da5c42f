// Startup alone (the last part of `npm run bench -- agent`, for repeated runs): spawn → initialize and spawn →
// session/new of `crow acp` on Node 20, 22 and 24 (CROW_BENCH_NODES="20 22 24"), with the module compile cache off,
// cold and warm. Nodes other than this process's come from `npm run test:node`'s prepared trees.
import { startMockLlm, tempWorkspace } from "@crow/testkit";
import { writeReport } from "./lib.js";
import { formatStartup, startupByNode } from "./node-startup.js";

export async function run(): Promise<void> {
  const mock = await startMockLlm();
  const ws = await tempWorkspace("crow-bench-");
  try {
    const byNode = await startupByNode(mock.url, ws, (process.env.CROW_BENCH_NODES ?? "20 22 24").split(/\s+/));
    console.log(formatStartup(byNode));
    writeReport("startup", { startupByNode: byNode });
  } finally {
    await mock.close();
    await ws.cleanup();
  }
}
