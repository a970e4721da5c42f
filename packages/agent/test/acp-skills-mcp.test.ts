/**
 * Skills served by an MCP server (the MCP Skills extension, SEP-2640) through the spawned `crow acp`: the testkit's
 * skills server, passed as the session's `mcpServers`, declares `io.modelcontextprotocol/skills`; its skills are found
 * by `discover_skills` next to local ones, `get_skill_details` reads the SKILL.md over `resources/read` (checked in the
 * next request the scripted model gets), a SKILL.md that does not match its listed digest is refused, a failing
 * `skills/list` is one notice, and the same
 * server without the extension changes nothing (no skill tools in a session without skills). A skills-only server
 * (no tools capability) connects and serves its skills: its missing `tools/list` is not asked.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { McpServer } from "@agentclientprotocol/sdk";
import {
  type CapturedRequest,
  chunkText,
  lastToolResult,
  reply,
  SKILLS_MCP_SERVER,
  textReply,
  useAcpFixture,
} from "@crow/testkit";

const server = (...flags: string[]): McpServer => ({
  name: "docs",
  command: process.execPath,
  args: [SKILLS_MCP_SERVER, ...flags],
  env: [],
});
const MARKER = "MCP-RELEASE-NOTES-RULES";
const toolNames = (request: CapturedRequest) => (request.body.tools ?? []).map((t) => t.function.name);

describe("crow acp: skills from MCP servers", () => {
  const fx = useAcpFixture();

  test("discover_skills finds the server's skill; get_skill_details reads its SKILL.md from the server", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir, [server()]);
    fx.mock.script(
      reply()
        .toolCall("discover_skills", { query: "write the changelog from merged pull requests" })
        .expect((request) =>
          assert.ok(toolNames(request).includes("discover_skills"), "offered: the server has skills"),
        ),
      reply()
        .toolCall("get_skill_details", { name: "docs:release-notes" })
        .expect((request) => {
          const hits = lastToolResult(request);
          assert.match(hits, /^1\. docs:release-notes \(score/);
          assert.match(hits, /path: skill:\/\/release-notes\/SKILL\.md/);
          assert.ok(!hits.includes(MARKER), "the body is not read to list it");
        }),
      textReply("Done.").expect((request) => {
        const details = lastToolResult(request);
        assert.ok(details.startsWith("---\nname: release-notes\n"), details);
        assert.ok(details.includes(MARKER));
        assert.match(details, /Served by mcp:docs at skill:\/\/release-notes/);
        assert.match(details, /References:\n- references\/STYLE\.md/);
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "Draft the notes for 2.0")).stopReason, "end_turn");
    fx.mock.assertDone();
  });

  test("a SKILL.md whose bytes differ from the listed digest is refused", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir, [server("--wrong-digest")]);
    fx.mock.script(
      reply().toolCall("get_skill_details", { name: "docs:release-notes" }),
      textReply("Done.").expect((request) => {
        const result = lastToolResult(request);
        assert.match(result, /Could not read skill "docs:release-notes" from mcp:docs: .*does not match the digest/);
        assert.ok(!result.includes(MARKER), "none of the refused content reaches the model");
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "Draft the notes")).stopReason, "end_turn");
    fx.mock.assertDone();
  });

  test("a server whose skills/list fails is one notice; its tools still work", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir, [server("--broken-list")]);
    fx.mock.script(
      textReply("Hi.").expect((request) => {
        assert.ok(toolNames(request).includes("merged_pulls"), "the server's tool is offered");
        assert.ok(!toolNames(request).includes("discover_skills"), "no skills to search");
      }),
    );
    const result = await fx.agent.prompt(sessionId, "hello");
    assert.equal(result.stopReason, "end_turn");
    fx.mock.assertDone();
    assert.match(chunkText(result.updates), /docs: skills\/list failed \(.*the skill catalog is unavailable\)/);
  });

  test("the same server without the extension changes nothing: no skills, no skill tools", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir, [server("--no-extension")]);
    fx.mock.script(
      textReply("Hi.").expect((request) => {
        assert.ok(!toolNames(request).includes("discover_skills"));
        assert.ok(!toolNames(request).includes("get_skill_details"));
        assert.ok(toolNames(request).includes("read"), "the other tools are there");
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "hello")).stopReason, "end_turn");
    fx.mock.assertDone();
  });

  test("a skills-only server (no tools capability) connects and serves its skills", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir, [server("--no-tools")]);
    fx.mock.script(
      reply()
        .toolCall("get_skill_details", { name: "docs:db-migrate" })
        .expect((request) => {
          assert.ok(toolNames(request).includes("discover_skills"), "the server's skills are offered");
          assert.ok(!toolNames(request).includes("merged_pulls"));
        }),
      textReply("Done.").expect((request) => assert.match(lastToolResult(request), /^---\nname: db-migrate\n/)),
    );
    const result = await fx.agent.prompt(sessionId, "Add a migration");
    assert.equal(result.stopReason, "end_turn");
    fx.mock.assertDone();
    assert.doesNotMatch(chunkText(result.updates), /docs/, "no notice: the server did not fail");
  });
});
