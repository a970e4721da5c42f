import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { HookContext, PermissionAnswer } from "../src/index.js";
import { permissionGate, toolKind } from "../src/internal.js";

describe("the permission gate and a tool the sandbox confines", () => {
  const ctx = (): HookContext => ({ signal: new AbortController().signal, sessionId: "s" });

  function gateWith(mode: "code" | "ask" | "read-only", confined: boolean, rules = {}) {
    let asked = 0;
    const gate = permissionGate({
      mode: () => mode,
      rules,
      isConfined: (name) => confined && name === "terminal",
      askPermission: async (): Promise<PermissionAnswer> => {
        asked++;
        return "reject";
      },
    });
    const call = (name: string, args: Record<string, unknown>) =>
      gate.gate(
        {
          call: { id: "c", name, tool: name, args },
          kind: toolKind(name),
          definition: { type: "function", function: { name, description: name, parameters: {} } },
        },
        ctx(),
      );
    return { call, asked: () => asked };
  }

  test("read-only runs a confined terminal without asking; unconfined it is refused; write stays refused", async () => {
    const confined = gateWith("read-only", true);
    assert.equal(await confined.call("terminal", { command: "git log" }), undefined);
    assert.equal(confined.asked(), 0);
    const write = await confined.call("write", { file_path: "/w/a" });
    assert.ok(write && "block" in write);
    assert.match(write.reason, /read-only mode/);
    const unconfined = await gateWith("read-only", false).call("terminal", { command: "git log" });
    assert.ok(unconfined && "block" in unconfined);
  });

  test("ask mode still asks for a confined terminal, and a deny rule still refuses it in read-only", async () => {
    const ask = gateWith("ask", true);
    await ask.call("terminal", { command: "ls" });
    assert.equal(ask.asked(), 1);
    const denied = await gateWith("read-only", true, { deny: ["terminal(git push*)"] }).call("terminal", {
      command: "git push",
    });
    assert.ok(denied && "block" in denied);
    assert.match(denied.reason, /permissions\.deny/);
  });
});
