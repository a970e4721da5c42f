/** `crow eval worker [--concurrency n]`: works off queued trials (see queue.ts) until Ctrl-C or SIGTERM. */

import type { Store } from "@crow/core";
import { parseArgs } from "@crow/mcp/parse-args";
import type { AgentConfig } from "../config/index.js";
import { adoptEndpointModel } from "./run-command.js";
import { EvalUsageError, QUEUE_NEEDS_POSTGRES } from "./stored-run.js";

export const WORKER_HELP = `Usage: crow eval worker [--concurrency n] [--maintenance-seconds s] [--lease-seconds s]

Works off the trials 'crow eval run --queue' enqueued on the PostgreSQL store (db_uri), n at a time (default 1),
until Ctrl-C or SIGTERM. Run it on any number of hosts with the same db_uri and the suite at the same path.
  --maintenance-seconds s   how often to look for trials whose worker died, default 15
  --lease-seconds s         a running trial beats a heartbeat; one silent this long (its worker died) is retried
                            by another worker, default 45 (a live trial is never attempted twice)`;

export async function runEvalWorker(args: readonly string[], config: AgentConfig, store: Store): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    options: {
      concurrency: { type: "string" },
      "maintenance-seconds": { type: "string" },
      "lease-seconds": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${WORKER_HELP}\n`);
    return 0;
  }
  if (positionals.length > 0) throw new EvalUsageError(`worker takes no arguments (got ${positionals.join(" ")})`);
  const number = (value: string | undefined, fallback: number, option: string) => {
    const n = Number(value ?? fallback);
    if (!Number.isInteger(n) || n < 1) throw new EvalUsageError(`${option} takes a whole number ≥ 1 (got ${value})`);
    return n;
  };
  const concurrency = number(values.concurrency, 1, "--concurrency");
  const maintenanceSeconds = number(values["maintenance-seconds"], 15, "--maintenance-seconds");
  const leaseSeconds = number(values["lease-seconds"], 45, "--lease-seconds");
  if (store.kind !== "postgres") throw new EvalUsageError(QUEUE_NEEDS_POSTGRES);
  // The trials of a run made with the endpoint's only model name no model: the worker finds it as `run` did.
  await adoptEndpointModel(config);
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    const { runWorker } = await import("./queue.js");
    await runWorker(config, store, { concurrency, maintenanceSeconds, leaseSeconds, signal: controller.signal });
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
  return 0;
}
