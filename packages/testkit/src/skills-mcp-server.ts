/**
 * A small stdio MCP server serving two skills over the MCP Skills extension (SEP-2640), on the MCP SDK's `Server`:
 * run it as `node <SKILLS_MCP_SERVER> [--no-extension] [--wrong-digest] [--broken-list] [--no-tools]`.
 *
 * - declares `io.modelcontextprotocol/skills` in `capabilities.extensions` (not with `--no-extension`: then its
 *   `skill://` files are ordinary resources and `skills/list` is unknown);
 * - `skills/list` / `skills/get`: `release-notes` and `db-migrate`, each with its frontmatter and every file's
 *   `sha256:` digest (with `--wrong-digest`, release-notes' SKILL.md is listed with the digest of other bytes; with
 *   `--broken-list`, `skills/list` answers an internal error);
 * - `resources/list` / `resources/read`: the skill files at `skill://<name>/<file>`; one tool, `merged_pulls` (with
 *   `--no-tools`, no tools capability at all: a skills-only server, whose `tools/list` is an unknown method).
 */
import { createHash } from "node:crypto";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/** A word only release-notes' SKILL.md body holds, to find it in what the model gets. */
const MCP_RELEASE_NOTES_MARKER = "MCP-RELEASE-NOTES-RULES";

const SKILLS = {
  "release-notes": {
    description: "Write release notes and a changelog from merged pull requests.",
    files: {
      "SKILL.md": `---\nname: release-notes\ndescription: Write release notes and a changelog from merged pull requests.\n---\n# Release notes\n${MCP_RELEASE_NOTES_MARKER}: group entries by Added, Changed, Fixed.\n`,
      "references/STYLE.md": "# Style\nPresent tense.\n",
    },
  },
  "db-migrate": {
    description: "Write and check database schema migrations.",
    files: {
      "SKILL.md":
        "---\nname: db-migrate\ndescription: Write and check database schema migrations.\n---\n# Migrations\nOne change per file.\n",
    },
  },
} as const;

const extension = !process.argv.includes("--no-extension");
const wrongDigest = process.argv.includes("--wrong-digest");
const brokenList = process.argv.includes("--broken-list");
const withTools = !process.argv.includes("--no-tools");

const files = Object.entries(SKILLS).flatMap(([name, skill]) =>
  Object.entries(skill.files).map(([file, text]) => ({ uri: `skill://${name}/${file}`, name, file, text })),
);

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text, "utf8").digest("hex")}`;

function entry(name: keyof typeof SKILLS) {
  return {
    uri: `skill://${name}/SKILL.md`,
    frontmatter: { name, description: SKILLS[name].description },
    resources: files
      .filter((f) => f.name === name)
      .map((f) => ({
        uri: f.uri,
        digest: wrongDigest && f.uri === "skill://release-notes/SKILL.md" ? sha256("other bytes") : sha256(f.text),
        size: Buffer.byteLength(f.text),
      })),
  };
}

const server = new Server(
  { name: "skills", version: "1.0.0" },
  {
    capabilities: {
      ...(withTools ? { tools: {} } : {}),
      resources: {},
      ...(extension ? { extensions: { "io.modelcontextprotocol/skills": {} } } : {}),
    },
  },
);

// A tool too, as a server shipping skills for its own tools would have.
if (withTools) {
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: "merged_pulls", description: "Lists merged pull requests.", inputSchema: { type: "object" } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async () => ({
    content: [{ type: "text", text: "#12 Add export" }],
  }));
}

server.setRequestHandler(ListResourcesRequestSchema, async () => ({
  resources: files.map((f) => ({ uri: f.uri, name: `${f.name}/${f.file}`, mimeType: "text/markdown" })),
}));

server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
  const file = files.find((f) => f.uri === request.params.uri);
  if (!file) throw new McpError(ErrorCode.InvalidParams, `no resource ${request.params.uri}`);
  return { contents: [{ uri: file.uri, mimeType: "text/markdown", text: file.text }] };
});

if (extension) {
  server.setRequestHandler(
    z.object({ method: z.literal("skills/list"), params: z.optional(z.looseObject({})) }),
    async () => {
      if (brokenList) throw new McpError(ErrorCode.InternalError, "the skill catalog is unavailable");
      return { skills: (Object.keys(SKILLS) as Array<keyof typeof SKILLS>).map(entry) };
    },
  );
  server.setRequestHandler(
    z.object({ method: z.literal("skills/get"), params: z.looseObject({ uri: z.string() }) }),
    async (request) => {
      const name = (Object.keys(SKILLS) as Array<keyof typeof SKILLS>).find(
        (n) => `skill://${n}/SKILL.md` === request.params.uri,
      );
      if (!name) throw new McpError(ErrorCode.InvalidParams, `no skill at ${request.params.uri}`);
      return { skill: entry(name) };
    },
  );
}

await server.connect(new StdioServerTransport());
