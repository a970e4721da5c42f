/**
 * The sandbox's own programs come from trusted places: bwrap and the bash it starts are resolved to absolute paths
 * once, skipping PATH entries in the working directory, so a `bwrap` the model writes into an activated `.venv/bin`
 * never builds a sandbox (it would build none), not at start and not when the shell restarts. PATH entries under
 * /tmp (hidden inside by the private /tmp) do not keep the shell from starting. On real bubblewrap.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { callTool, connectStdio, type McpConnection, type TempWorkspace, tempWorkspace } from "@crow/testkit";

/** A fake `name` that leaves `marker` behind, then runs the real program (so nothing else would show it ran). */
async function plant(dir: string, name: string, marker: string, real: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, name);
  await writeFile(file, `#!/bin/sh\necho "$0" >> ${marker}\nexec ${real} "$@"\n`);
  await chmod(file, 0o755);
}

describe("sandbox: bwrap and bash are never taken from the workspace", () => {
  let ws: TempWorkspace;
  let base: string;
  let marker: string;
  let mcp: McpConnection;
  const readOnly = { mode: "read-only", writable: [], readOnly: [], network: false };

  before(async () => {
    ws = await tempWorkspace("crow-sbx-path-");
    base = await mkdtemp(path.join("/var/tmp", "crow-sbx-path-"));
    marker = path.join(base, "fake-ran");
    // A fake bwrap and bash already there when crow-mcp starts (a venv activated in a workspace the model wrote).
    await plant(ws.path(".venv/bin"), "bwrap", marker, "/usr/bin/bwrap");
    await plant(ws.path(".venv/bin"), "bash", marker, "/usr/bin/bash");
    // And a bash under /tmp first on PATH: invisible inside the sandbox's private /tmp.
    await plant(path.join(ws.dir, "..", `${path.basename(ws.dir)}-tmpbin`), "bash", marker, "/usr/bin/bash");
    mcp = await connectStdio({
      cwd: ws.dir,
      args: ["--sandbox", "workspace-write"],
      env: {
        PATH: [ws.path(".venv/bin"), `${ws.dir}-tmpbin`, "relative/bin", process.env.PATH].join(":"),
      },
    });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
    await rm(`${ws.dir}-tmpbin`, { recursive: true, force: true });
    await rm(base, { recursive: true, force: true });
  });

  test("the shell starts from the system's bwrap and bash, not the workspace's or /tmp's", async () => {
    const result = await callTool(mcp.client, "terminal", { command: 'echo "shell=$BASH"' });
    assert.match(result.text, /^shell=\/(usr\/)?bin\/bash$/);
    assert.equal(existsSync(marker), false, "a fake bwrap or bash ran");
  });

  test("a bwrap the model writes into .venv/bin later is not run when the shell restarts", async () => {
    await callTool(mcp.client, "terminal", {
      command: `printf '#!/bin/sh\\necho "$0" >> ${marker}\\nexec /usr/bin/bwrap "$@"\\n' > .venv/bin/bwrap; chmod +x .venv/bin/bwrap`,
    });
    // A mode change restarts the shell, as a reset does.
    const result = (await mcp.client.callTool({
      name: "terminal",
      arguments: { command: "echo restarted" },
      _meta: { "crow/sandbox": readOnly },
    })) as { content: Array<{ text?: string }> };
    assert.match(result.content.map((c) => c.text ?? "").join(""), /a new shell was started[\s\S]*restarted/);
    // And an explicit reset.
    const reset = await callTool(mcp.client, "terminal", { command: "echo reset", reset: true });
    assert.match(reset.text, /^reset(\n|$)/);
    assert.equal(existsSync(marker), false, "the planted bwrap ran");
  });
});
