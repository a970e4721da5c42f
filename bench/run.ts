// Benchmark runner: `npm run bench -- <name>...` runs bench/<name>.bench.ts (all of them when no name is given).
// Each benchmark module exports `run(): Promise<void>`, prints its numbers and writes a report with writeReport().
import { readdirSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const available = readdirSync(import.meta.dirname)
  .filter((f) => f.endsWith(".bench.ts"))
  .map((f) => f.replace(/\.bench\.ts$/, ""))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !available.includes(w));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(", ")}. Available: ${available.join(", ") || "(none)"}`);
  process.exit(2);
}
for (const name of wanted.length > 0 ? wanted : available) {
  console.log(`\n== ${name} ==`);
  const mod = (await import(pathToFileURL(path.join(import.meta.dirname, `${name}.bench.ts`)).href)) as {
    run: () => Promise<void>;
  };
  try {
    await mod.run();
  } catch (error) {
    // Said plainly (a case's failure names the case and, for an agent that died, how and its stderr's end); the
    // remaining benchmarks still run, and the exit code says one failed.
    console.error(`\nbenchmark ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  }
}
// A failed benchmark may have left its servers and processes open: they must not keep this process alive.
if (process.exitCode) process.exit();
