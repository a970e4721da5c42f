/**
 * A long-running workflow on the SDK: run the test files of a project, give each failing one to its own session
 * ("make this test pass"), re-run, and repeat until every test passes or the rounds are used up. Each session is
 * stored, so any attempt can be inspected later (`crow sessions show <id>`), and an in-process tool lets the model
 * re-run the test it is working on.
 *
 *   npx tsx --conditions=@crow/source examples/sdk/fix-tests.ts <project dir> test/a.test.mjs test/b.test.mjs
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { type Crow, createCrow, type ExtensionAPI } from "@crow/agent";

const run = promisify(execFile);

/** Runs one test file with `node --test`; its output when it fails, undefined when it passes. */
export async function testFailure(cwd: string, file: string): Promise<string | undefined> {
  try {
    // NODE_TEST_CONTEXT would make a nested `node --test` report to its parent runner instead of failing.
    const { NODE_TEST_CONTEXT: _nested, ...env } = process.env;
    await run(process.execPath, ["--test", file], { cwd, env, timeout: 120_000 });
    return undefined;
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    return `${stdout}\n${stderr}`.trim().slice(-4000);
  }
}

/** An extension giving the model a `run_test` tool for the file it is fixing. */
export function testRunner(cwd: string) {
  return (api: ExtensionAPI) => {
    api.registerTool({
      name: "run_test",
      description: "Runs one test file with node --test and returns PASS or the failure output.",
      parameters: api.z.object({ file: api.z.string().describe("Test file, relative to the project") }),
      readOnly: true,
      execute: async ({ file }) => (await testFailure(cwd, file)) ?? "PASS",
    });
  };
}

export interface FixReport {
  /** Files that pass at the end. */
  passing: string[];
  /** Files still failing after every round. */
  failing: string[];
  /** One line per session: which file, which session, how it ended. */
  attempts: Array<{ file: string; sessionId: string; stopReason: string; answer: string }>;
}

/** The workflow: until everything passes or `rounds` are used, one fresh session per failing file. */
export async function fixFailingTests(
  crow: Crow,
  cwd: string,
  files: readonly string[],
  options: { rounds?: number; log?: (line: string) => void } = {},
): Promise<FixReport> {
  const log = options.log ?? (() => {});
  const attempts: FixReport["attempts"] = [];
  let failing = [...files];
  for (let round = 1; round <= (options.rounds ?? 3) && failing.length > 0; round++) {
    const still: string[] = [];
    for (const file of failing) {
      const failure = await testFailure(cwd, file);
      if (failure === undefined) continue;
      const session = await crow.newSession({ cwd });
      log(`round ${round}: ${file} fails; session ${session.id} is on it`);
      const prompt = session.prompt(
        `The test file ${file} fails:\n\n${failure}\n\nFix the code under test (not the test) so that it passes. ` +
          "Use run_test to check your fix.",
      );
      for await (const event of prompt) {
        if (event.type === "tool_call_pending") log(`  ${session.id}: ${event.call.name}`);
      }
      const result = await prompt.result;
      attempts.push({ file, sessionId: session.id, stopReason: result.stopReason, answer: result.text });
      await session.close();
      if ((await testFailure(cwd, file)) !== undefined) still.push(file);
    }
    failing = still;
  }
  return { passing: files.filter((f) => !failing.includes(f)), failing, attempts };
}

// Run as a program: node --import tsx examples/sdk/fix-tests.ts <dir> <test files…>
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [dir = ".", ...files] = process.argv.slice(2);
  const cwd = path.resolve(dir);
  const crow = await createCrow({ extensions: [testRunner(cwd)] });
  try {
    const report = await fixFailingTests(crow, cwd, files, { log: (line) => console.error(line) });
    console.log(JSON.stringify(report, null, 2));
    process.exitCode = report.failing.length === 0 ? 0 : 1;
  } finally {
    await crow.close();
  }
}
