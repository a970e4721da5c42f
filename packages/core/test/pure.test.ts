import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ChatMessage } from "@crow/core";
import { findTool, parseToolArguments, repairToolPairs, toolKind } from "@crow/core/internal";

describe("tool kinds and names", () => {
  test("kinds are derived from the name tolerantly", () => {
    const cases: Array<[string, string]> = [
      ["terminal", "execute"],
      ["crow-mcp_terminal", "execute"],
      ["mcp__crow__bash", "execute"],
      ["read", "read"],
      ["read_file", "read"],
      ["list_directory", "read"],
      ["write", "edit"],
      ["crow-mcp_edit", "edit"],
      ["str_replace_editor", "edit"],
      ["web_search", "search"],
      ["web_fetch", "fetch"],
      ["delete_file", "delete"],
      ["rename", "move"],
      ["thread_x", "other"],
      ["frobnicate", "other"],
    ];
    for (const [name, kind] of cases) assert.equal(toolKind(name), kind, name);
  });

  test("findTool matches exact names first, then prefixed forms, and refuses ambiguity", () => {
    const defs = ["read", "write", "web_search", "crow-mcp_terminal"].map((name) => ({
      type: "function" as const,
      function: { name },
    }));
    assert.equal(findTool(defs, "read")?.function.name, "read");
    assert.equal(findTool(defs, "crow-mcp_read")?.function.name, "read");
    assert.equal(findTool(defs, "terminal")?.function.name, "crow-mcp_terminal");
    assert.equal(findTool(defs, "Web_Search")?.function.name, "web_search");
    // "search" is a suffix of web_search only via "_": accepted; "rite" is not a word boundary: refused.
    assert.equal(findTool(defs, "rite"), undefined);
    const twins = ["a_read", "b_read"].map((name) => ({ type: "function" as const, function: { name } }));
    assert.equal(findTool(twins, "read"), undefined);
  });
});

describe("tool argument repair", () => {
  const repaired = (text: string) => {
    const result = parseToolArguments(text);
    assert.ok(result.ok, `could not repair ${text}`);
    return result.value;
  };
  test("valid JSON passes untouched; empty means {}", () => {
    assert.deepEqual(parseToolArguments('{"a":1}'), { ok: true, value: { a: 1 }, repaired: false, text: '{"a":1}' });
    assert.deepEqual(repaired(""), {});
  });
  test("common breakages are repaired", () => {
    assert.deepEqual(repaired('{"a": 1,}'), { a: 1 });
    assert.deepEqual(repaired('{"a": [1, 2,], "b": {"c": true,},}'), { a: [1, 2], b: { c: true } });
    assert.deepEqual(repaired('{"path": "x.txt", "content": "unfinished'), { path: "x.txt", content: "unfinished" });
    assert.deepEqual(repaired('{"a": {"b": [1, 2'), { a: { b: [1, 2] } });
    assert.deepEqual(repaired('```json\n{"a": 1}\n```'), { a: 1 });
    assert.deepEqual(repaired('Sure! {"a": 1} hope this helps'), { a: 1 });
    assert.deepEqual(repaired('{"flag": True, "none": None}'), { flag: true, none: null });
    assert.deepEqual(repaired('{"text": "line1\nline2"}'), { text: "line1\nline2" });
    assert.deepEqual(repaired('{"a": 1, "b": '), { a: 1, b: null });
    assert.deepEqual(repaired('"{\\"a\\": 1}"'), { a: 1 });
  });
  test("hopeless text is reported, not guessed", () => {
    assert.equal(parseToolArguments("rm -rf /").ok, false);
    assert.equal(parseToolArguments("[1, 2]").ok, false);
  });
});

describe("repairToolPairs", () => {
  const call = (id: string) => ({ id, type: "function" as const, function: { name: "read", arguments: "{}" } });
  test("a valid history is returned as is", () => {
    const history: ChatMessage[] = [
      { role: "user", content: "hi" },
      { role: "assistant", content: null, tool_calls: [call("a")] },
      { role: "tool", tool_call_id: "a", content: "x" },
    ];
    assert.equal(repairToolPairs(history), history);
  });
  test("missing results are synthesised, orphans and duplicates dropped, order restored", () => {
    const history: ChatMessage[] = [
      { role: "user", content: "hi" },
      { role: "tool", tool_call_id: "orphan", content: "?" },
      { role: "assistant", content: null, tool_calls: [call("a"), call("b"), call("c")] },
      { role: "tool", tool_call_id: "b", content: "B" },
      { role: "tool", tool_call_id: "b", content: "B again" },
      { role: "tool", tool_call_id: "a", content: "A" },
      { role: "user", content: "next" },
    ];
    const fixed = repairToolPairs(history);
    assert.deepEqual(
      fixed.map((m) => (m.role === "tool" ? `${m.tool_call_id}:${String(m.content).slice(0, 9)}` : m.role)),
      ["user", "assistant", "a:A", "b:B", "c:Tool call", "user"],
    );
  });
});
