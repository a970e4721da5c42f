/**
 * Issue 49, deferred tools, the pure parts: when tools are deferred, what `find_tools` loads for names and queries,
 * and what the history says is loaded (its `find_tools` calls, however the model spelled the name).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ChatMessage, ToolDefinition } from "@crow/core";
import { DEFER_TOOLS_OVER_BYTES, deferredOf, loadedTools, selectTools } from "../src/extensions/deferred-tools.js";

const tool = (name: string, description: string): ToolDefinition => ({
  type: "function",
  function: { name, description, parameters: { type: "object" } },
});

const tools = [
  tool("issue_create", "Creates an issue in a repository."),
  tool("issue_list", "Lists the issues of a repository."),
  tool("pr_merge", "Merges a pull request."),
  tool("weather", "Gives the forecast for a city."),
];

function call(id: string, name: string, args: unknown): ChatMessage {
  return {
    role: "assistant",
    content: null,
    tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
  };
}

describe("deferred tools", () => {
  test("only deferrable tools are deferred, and only past the size threshold", () => {
    const big = Array.from({ length: 80 }, (_, i) => tool(`t${i}`, "x".repeat(400)));
    assert.ok(JSON.stringify(big).length > DEFER_TOOLS_OVER_BYTES);
    assert.equal(deferredOf(big, () => true).length, 80);
    assert.equal(deferredOf(big, (name) => name !== "t0").length, 79);
    assert.deepEqual(
      deferredOf(tools, () => true),
      [],
      "a few small tools stay offered",
    );
    assert.deepEqual(
      deferredOf(big, () => false),
      [],
    );
  });

  test("names load exactly those; a query loads the tools whose names or descriptions have its words", () => {
    assert.deepEqual(
      selectTools(tools, { names: ["pr_merge", "nope"] }).map((d) => d.function.name),
      ["pr_merge"],
    );
    assert.deepEqual(
      selectTools(tools, { query: "issue" }).map((d) => d.function.name),
      ["issue_create", "issue_list"],
    );
    assert.deepEqual(
      selectTools(tools, { query: "forecast" }).map((d) => d.function.name),
      ["weather"],
    );
    assert.deepEqual(selectTools(tools, { query: "spaceship" }), []);
    assert.deepEqual(selectTools(tools, {}), []);
  });

  test("the history's find_tools calls say what is loaded, in load order, the running call left out", () => {
    const history: ChatMessage[] = [
      { role: "user", content: "go" },
      call("c1", "find_tools", { names: ["weather"] }),
      { role: "tool", tool_call_id: "c1", content: "Loaded weather" },
      call("c2", "functions.find_tools", { query: "merge" }),
      { role: "tool", tool_call_id: "c2", content: "Loaded pr_merge" },
      call("c3", "find_tools", { names: ["weather", "issue_list"] }),
      call("c4", "find_tools", "not an object"),
    ];
    assert.deepEqual(
      loadedTools(history, tools).map((d) => d.function.name),
      ["weather", "pr_merge", "issue_list"],
    );
    assert.deepEqual(
      loadedTools(history, tools, "c3").map((d) => d.function.name),
      ["weather", "pr_merge"],
    );
  });
});
