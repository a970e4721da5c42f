/**
 * `crow run` with a scripted model against the real typescript-language-server (the repository's dev dependency, on
 * PATH): an edit that breaks a caller in another file shows the error under the diff, and the model's next request
 * carries it in the tool result; the fix shows that it is gone. The waits come from config.yaml's language_servers.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type MockLlm,
  REPO_ROOT,
  reply,
  startMockLlm,
  type TempWorkspace,
  tempWorkspace,
  textReply,
} from "@crow/testkit";
import { runCrow, runEnv, tempHome } from "./run-helpers.js";

describe("crow run: diagnostics under the diff", { timeout: 120_000 }, () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: { dir: string; cleanup: () => Promise<void> };

  before(async () => {
    mock = await startMockLlm();
    ws = await tempWorkspace();
    home = await tempHome();
    // Patient waits: this test is about what is shown, not how fast (bench/ measures that).
    await writeFile(
      path.join(home.dir, "config.yaml"),
      "language_servers:\n  wait_seconds: 90\n  start_wait_seconds: 120\n  servers:\n    python: off\n",
    );
  });
  after(async () => {
    await mock.close();
    await ws.cleanup();
    await home.cleanup();
  });

  test("a broken caller is shown under the edit's diff and reaches the model; the fix says it is gone", async () => {
    await ws.write("a.ts", "export function area(w: number): number {\n  return w * w;\n}\n");
    await ws.write("b.ts", 'import { area } from "./a";\n\nexport const size = area(3);\n');
    mock.script(
      reply().toolCall("read", { file_path: ws.path("b.ts") }),
      reply().toolCall("edit", {
        file_path: ws.path("a.ts"),
        old_string: "area(w: number): number {\n  return w * w;",
        new_string: "area(w: number, h: number): number {\n  return w * h;",
      }),
      reply().toolCall("edit", { file_path: ws.path("b.ts"), old_string: "area(3)", new_string: "area(3, 4)" }),
      textReply("Done."),
    );
    const bin = path.join(REPO_ROOT, "node_modules", ".bin");
    const env = runEnv(mock.url, home.dir, { PATH: `${bin}${path.delimiter}${process.env.PATH}`, CROW_LSP: undefined });
    const run = await runCrow(["--mode", "code", "give area a height"], { env, cwd: ws.dir });
    assert.equal(run.code, 0, run.stderr);
    // Under the first edit's diff, the error in the caller, with its place; under the fix, that it is gone.
    assert.match(
      run.stderr,
      /\+ {2}return w \* h;\n(?:.*\n)*? {2}✗ b\.ts:3:21 TS2554 Expected 2 arguments, but got 1\.\n/,
    );
    assert.match(
      run.stderr,
      /\+export const size = area\(3, 4\);\n(?:.*\n)*? {2}✓ typescript: the error from before is fixed\n/,
    );
    // The model read it in the edit's result.
    const toolTexts = (mock.requests[2]?.body.messages ?? [])
      .filter((m) => m.role === "tool")
      .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
    assert.match(toolTexts.at(-1) ?? "", /b\.ts:3:21 error TS2554: Expected 2 arguments, but got 1\./);
    mock.assertDone();
  });
});
