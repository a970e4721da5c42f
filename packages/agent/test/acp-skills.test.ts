/**
 * Skills through the spawned `crow acp` (the built-in skills extension): skills in a temp CROW_HOME, a configured
 * `skills.dirs` folder and the workspace's `.crow/skills` and `.agents/skills` (the workspace trusted, as `crow skills
 * trust` does: acp-skills-trust.test.ts covers an untrusted one). The hint is in the system prompt the
 * mock receives, discover_skills/get_skill_details are offered and answer, a trigger word injects the skill's
 * instructions into the request (once, never into the stored history), an invalid skill is reported while the others
 * work, `skills.enabled: false` turns it all off, and `skills.embeddings` (the mock's /v1/embeddings) ranks a
 * paraphrase that keywords miss.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { trustProject } from "@crow/core";
import {
  type AcpTestClient,
  type CapturedRequest,
  chunkText,
  lastToolResult,
  lastUserText,
  loadReplay,
  reply,
  tempWorkspace,
  textReply,
  useAcpFixture,
} from "@crow/testkit";

/** Writes `<root>/<name>/SKILL.md` (and extra files). */
async function skill(root: string, folder: string, skillMd: string, files: Record<string, string> = {}) {
  const dir = path.join(root, folder);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "SKILL.md"), skillMd);
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
}

const md = (name: string, description: string, body: string, triggers?: string[]) =>
  [
    "---",
    `name: ${name}`,
    `description: ${JSON.stringify(description)}`,
    ...(triggers ? [`triggers: [${triggers.map((t) => JSON.stringify(t)).join(", ")}]`] : []),
    "---",
    body,
    "",
  ].join("\n");

const RELEASE_BODY = "# Release notes\nRELEASE-NOTES-RULES: group entries by Added, Changed, Fixed; newest first.";

/** A home and a workspace with skills in every root, one of them broken. */
async function fixtures(home: string, ws: string): Promise<void> {
  await skill(
    path.join(home, "skills"),
    "pdf-forms",
    md(
      "pdf-forms",
      "Fill in and flatten PDF forms: list the fields, set values, save a flattened copy.",
      "# PDF forms\nRun scripts/fill.py with the field values as JSON.",
    ),
    { "scripts/fill.py": "print('fill')\n", "references/FIELDS.md": "# Fields\n" },
  );
  await skill(
    path.join(home, "team-skills"),
    "k8s-deploy",
    md("k8s-deploy", "Deploy services to Kubernetes with kubectl and rollout checks.", "# Deploy\nkubectl apply."),
  );
  await skill(
    path.join(ws, ".crow", "skills"),
    "release-notes",
    md("release-notes", "Write release notes from merged pull requests.", RELEASE_BODY, ["changelog"]),
  );
  await skill(
    path.join(ws, ".agents", "skills"),
    "chart-builder",
    md("chart-builder", "Create bar and line charts from Excel spreadsheets.", "# Charts\nUse scripts/chart.py."),
  );
  await skill(path.join(ws, ".crow", "skills"), "broken", "---\nname: broken\ndescription: [unclosed\n---\nbody\n");
}

const toolNames = (request: CapturedRequest) => (request.body.tools ?? []).map((t) => t.function.name);
const SYNONYMS = { plot: "chart", graph: "chart", xlsx: "excel" };

describe("crow acp: skills", () => {
  const fx = useAcpFixture({
    // The mock embedder maps these words to one concept, so a paraphrase shares no keyword but embeds close.
    mock: { embeddings: { synonyms: SYNONYMS } },
    async prepare({ crowHome, ws }) {
      await fixtures(crowHome, ws.dir);
      await trustProject(ws.dir, { home: crowHome });
      await writeFile(path.join(crowHome, "config.yaml"), "skills:\n  dirs: [./team-skills]\n");
    },
  });

  test("the hint is in the system prompt, the tools are offered, the broken skill is reported", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const problem = await fx.agent.waitForUpdate(
      sessionId,
      (u) => chunkText([u]).includes("could not be loaded"),
      true,
    );
    assert.match(chunkText([problem]), /broken[/\\]SKILL\.md: invalid YAML frontmatter/);
    fx.mock.script(
      textReply("Noted.").expect((request) => {
        const system = String(request.body.messages[0]?.content);
        assert.match(
          system,
          /<SKILLS>\n4 skills are installed \(chart-builder, k8s-deploy, pdf-forms, release-notes\)/,
        );
        assert.match(system, /call discover_skills/);
        assert.ok(toolNames(request).includes("discover_skills"));
        assert.ok(toolNames(request).includes("get_skill_details"));
        assert.ok(toolNames(request).includes("read"), "next to the MCP tools");
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "hello")).stopReason, "end_turn");
    fx.mock.assertDone();
  });

  test("discover_skills ranks the intended skill first; get_skill_details returns SKILL.md and the file list", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("discover_skills", { query: "fill out a PDF form", limit: 3 }),
      reply()
        .toolCall("get_skill_details", { name: "pdf-forms" })
        .expect((request) => {
          assert.match(lastToolResult(request), /^1\. pdf-forms \(score/);
          assert.match(lastToolResult(request), /path: .*pdf-forms[/\\]SKILL\.md/);
        }),
      reply()
        .toolCall("discover_skills", { query: "roll out to kubernetes" })
        .expect((request) => {
          const details = lastToolResult(request);
          assert.ok(details.startsWith("---\nname: pdf-forms\n"), "the whole SKILL.md first");
          assert.match(details, /Run scripts\/fill\.py/);
          assert.match(details, /Scripts:\n- scripts\/fill\.py/);
          assert.match(details, /References:\n- references\/FIELDS\.md/);
        }),
      reply()
        .toolCall("get_skill_details", { name: "pdf-form" })
        .expect((request) => assert.match(lastToolResult(request), /^1\. k8s-deploy/, "from skills.dirs")),
      textReply("Done.").expect((request) => {
        assert.match(lastToolResult(request), /No skill is named "pdf-form"\. Close names: pdf-forms/);
      }),
    );
    const result = await fx.agent.prompt(sessionId, "I have a form to fill in");
    assert.equal(result.stopReason, "end_turn");
    fx.mock.assertDone();
    const titles = result.updates.flatMap((u) => (u.sessionUpdate === "tool_call" ? [u.title] : []));
    assert.equal(titles.length, 4, "four tool calls shown to the client");
  });

  test("a trigger word injects the skill's instructions after the request, once, never into the stored history", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply()
        .toolCall("read", { file_path: "README.md" })
        .expect((request) => {
          const user = lastUserText(request);
          assert.ok(user.startsWith("Draft the changelog for 2.0"), "the request first");
          assert.match(user, /<skill name="release-notes" folder="[^"]+" trigger="changelog">/);
          assert.ok(user.includes("RELEASE-NOTES-RULES"));
        }),
      textReply("Here it is.").expect((request) => {
        // The next step of the same turn still carries the instructions.
        assert.ok(lastUserText(request).includes("RELEASE-NOTES-RULES"));
      }),
      textReply("Updated.").expect((request) => {
        assert.equal(lastUserText(request), "Now shorten the changelog");
        const all = JSON.stringify(request.body.messages);
        assert.equal(all.split("RELEASE-NOTES-RULES").length - 1, 1, "injected once in the whole request");
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "Draft the changelog for 2.0")).stopReason, "end_turn");
    assert.equal((await fx.agent.prompt(sessionId, "Now shorten the changelog")).stopReason, "end_turn");
    fx.mock.assertDone();

    const replayed = (await loadReplay(fx.agent, sessionId, fx.ws.dir)).flatMap((u) =>
      u.sessionUpdate === "user_message_chunk" && u.content.type === "text" ? [u.content.text] : [],
    );
    assert.deepEqual(replayed, ["Draft the changelog for 2.0", "Now shorten the changelog"]);
  });

  test("a skill brought in survives /compact: the next request carries its instructions exactly once", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const once = (request: CapturedRequest, why: string) =>
      assert.equal(JSON.stringify(request.body.messages).split("RELEASE-NOTES-RULES").length - 1, 1, why);
    fx.mock.script(
      textReply("Hi."),
      textReply("Drafted.").expect((request) => once(request, "triggered")),
      textReply("Sure.").expect((request) => once(request, "kept on the triggering message")),
      textReply("The changelog for 2.0 was drafted."),
      reply()
        .toolCall("get_skill_details", { name: "release-notes" })
        .expect((request) => {
          assert.match(JSON.stringify(request.body.messages), /The changelog for 2\.0 was drafted/, "compacted");
          const first = JSON.stringify(request.body.messages.find((m) => m.role === "user")?.content);
          assert.match(first, /Skills brought into this conversation before it was compacted/, "on the first message");
          once(request, "restored once after compaction");
        }),
      textReply("Done.").expect((request) => {
        assert.match(lastToolResult(request), /already in this conversation/);
        once(request, "not repeated by get_skill_details");
      }),
    );
    await fx.agent.prompt(sessionId, "hello");
    await fx.agent.prompt(sessionId, "Draft the changelog for 2.0");
    await fx.agent.prompt(sessionId, "thanks");
    assert.match(chunkText((await fx.agent.prompt(sessionId, "/compact")).updates), /ompact/);
    assert.equal((await fx.agent.prompt(sessionId, "Add the date")).stopReason, "end_turn");
    fx.mock.assertDone();
  });

  test("the editor's available commands carry the skills; /skill-name brings that skill into the turn", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const update = await fx.agent.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "available_commands_update",
      true,
    );
    assert.ok(update.sessionUpdate === "available_commands_update");
    const names = update.availableCommands.map((c) => c.name);
    for (const name of ["chart-builder", "k8s-deploy", "pdf-forms", "release-notes", "compact"]) {
      assert.ok(names.includes(name), `${name} in ${names.join(", ")}`);
    }
    const chart = update.availableCommands.find((c) => c.name === "chart-builder");
    assert.match(chart?.description ?? "", /^Skill: Create bar and line charts/);
    fx.mock.script(
      textReply("Charting.").expect((request) => {
        const user = lastUserText(request);
        assert.ok(user.startsWith("/chart-builder sales by month"), "the prompt as typed");
        assert.match(user, /<skill name="chart-builder" folder="[^"]+" trigger="\/chart-builder">\n# Charts/);
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "/chart-builder sales by month")).stopReason, "end_turn");
    fx.mock.assertDone();
  });

  test("keyword ranking alone misses a paraphrase with no shared word", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("discover_skills", { query: "plot a graph of my xlsx numbers" }),
      textReply("None.").expect((request) => assert.match(lastToolResult(request), /^No skill matches/)),
    );
    await fx.agent.prompt(sessionId, "graph it");
    fx.mock.assertDone();
  });
});

describe("crow acp: skills configuration", () => {
  const fx = useAcpFixture({ mock: { embeddings: { synonyms: SYNONYMS } }, startAgent: false });

  async function agentWith(config: string): Promise<AcpTestClient> {
    const home = await fx.tempDir("crow-skills-home-");
    await fixtures(home, fx.ws.dir);
    await trustProject(fx.ws.dir, { home });
    await writeFile(path.join(home, "config.yaml"), config);
    return fx.spawn({ env: { CROW_HOME: home } });
  }

  test("skills.embeddings: the hybrid ranking finds the paraphrase through the mock's /v1/embeddings", async () => {
    const agent = await agentWith(
      `skills:\n  embeddings: { base_url: "${fx.mock.url}", model: mock-embed, dimensions: 256 }\n`,
    );
    const { sessionId } = await agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("discover_skills", { query: "plot a graph of my xlsx numbers" }),
      textReply("Found it.").expect((request) => {
        assert.match(lastToolResult(request), /^1\. chart-builder \(score/);
      }),
    );
    assert.equal((await agent.prompt(sessionId, "graph it")).stopReason, "end_turn");
    fx.mock.assertDone();
    assert.ok(
      fx.mock.embeddingRequests.some((r) => r.model === "mock-embed" && r.inputs.length > 1),
      "skills embedded",
    );
    assert.ok(
      fx.mock.embeddingRequests.some((r) => r.inputs.includes("plot a graph of my xlsx numbers")),
      "query",
    );
  });

  test("skills.enabled: false: no hint, no skill tools, no trigger injection", async () => {
    const agent = await agentWith("skills:\n  enabled: false\n");
    const { sessionId } = await agent.newSession(fx.ws.dir);
    fx.mock.script(
      textReply("Ok.").expect((request) => {
        assert.doesNotMatch(String(request.body.messages[0]?.content), /<SKILLS>/);
        assert.ok(!toolNames(request).includes("discover_skills"));
        assert.ok(!toolNames(request).includes("get_skill_details"));
        assert.equal(lastUserText(request), "Draft the changelog");
      }),
    );
    await agent.prompt(sessionId, "Draft the changelog");
    fx.mock.assertDone();
  });

  test("a workspace and home without skills: no hint and no skill tools", async () => {
    const agent = await fx.spawn();
    const empty = await tempWorkspace();
    try {
      const { sessionId } = await agent.newSession(empty.dir);
      fx.mock.script(
        textReply("Ok.").expect((request) => {
          assert.doesNotMatch(String(request.body.messages[0]?.content), /<SKILLS>/);
          assert.ok(!toolNames(request).includes("discover_skills"));
          assert.ok(toolNames(request).includes("read"));
        }),
      );
      await agent.prompt(sessionId, "hi");
      fx.mock.assertDone();
    } finally {
      await empty.cleanup();
    }
  });
});
