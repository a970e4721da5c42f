/**
 * Skills served by MCP servers (the MCP Skills extension, SEP-2640): a server declaring `io.modelcontextprotocol/skills`
 * in its capabilities' `extensions` lists its skills with `skills/list` (each entry: the SKILL.md `uri`, its verbatim
 * `frontmatter`, and every file with a `sha256:` digest, or "dynamic"); a SKILL.md is read with `resources/read` when
 * the model asks for it, and refused if its bytes do not match the listed digest. Only servers the user configured
 * (config or the editor's `mcpServers`) are asked: their skills are as trusted as the servers themselves.
 */
import { createHash } from "node:crypto";
import type { ExternalSkill, ExternalSkills } from "@crow/core";
import { errorText } from "@crow/core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { z } from "zod";

/** The extension's identifier in a server's `capabilities.extensions`. */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";

/** How long one server may take to list its skills (all pages) before it is reported and skipped. */
const LIST_TIMEOUT_MS = 4_000;
/** How long reading one SKILL.md may take. */
const READ_TIMEOUT_MS = 15_000;
const MAX_PAGES = 20;

const SkillEntry = z.looseObject({
  uri: z.string(),
  frontmatter: z.looseObject({ name: z.string(), description: z.string() }),
  resources: z.union([
    z.array(z.looseObject({ uri: z.string(), digest: z.string(), size: z.number().optional() })),
    z.literal("dynamic"),
  ]),
});
const ListSkillsResult = z.looseObject({ skills: z.array(SkillEntry), nextCursor: z.string().optional() });
type Entry = z.infer<typeof SkillEntry>;

/** One connected server: its name (the namespace of its skills) and its client. */
export interface SkillServer {
  name: string;
  client: Client | undefined;
}

/** The skills of every server that declares the extension; a server that fails or is slow becomes a problem. */
export async function serverSkills(servers: readonly SkillServer[], signal?: AbortSignal): Promise<ExternalSkills> {
  const found = await Promise.all(
    servers.map(async ({ name, client }): Promise<ExternalSkills> => {
      if (!client?.getServerCapabilities()?.extensions?.[SKILLS_EXTENSION]) return { skills: [], problems: [] };
      try {
        return { skills: await listSkills(name, client, signal), problems: [] };
      } catch (error) {
        const why = errorText(error);
        return { skills: [], problems: [`${name}: skills/list failed (${why}); its skills are left out`] };
      }
    }),
  );
  return { skills: found.flatMap((f) => f.skills), problems: found.flatMap((f) => f.problems) };
}

async function listSkills(server: string, client: Client, signal?: AbortSignal): Promise<ExternalSkill[]> {
  const entries: Entry[] = [];
  const deadline = Date.now() + LIST_TIMEOUT_MS;
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await client.request({ method: "skills/list", params: cursor ? { cursor } : {} }, ListSkillsResult, {
      timeout: Math.max(1, deadline - Date.now()),
      ...(signal ? { signal } : {}),
    });
    entries.push(...result.skills);
    cursor = result.nextCursor;
    if (!cursor) break;
  }
  // Names are labels, not identities: two entries of one server with the same name are told apart by their path.
  const counts = new Map<string, number>();
  for (const e of entries) counts.set(e.frontmatter.name, (counts.get(e.frontmatter.name) ?? 0) + 1);
  return entries.map((entry) => {
    const label = (counts.get(entry.frontmatter.name) ?? 0) > 1 ? skillPath(entry.uri) : entry.frontmatter.name;
    return externalSkill(server, `${server}:${label}`, entry, client);
  });
}

/** `skill://acme/billing/refunds/SKILL.md` → `acme/billing/refunds`. */
function skillPath(uri: string): string {
  return uri.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").replace(/\/SKILL\.md$/, "");
}

function externalSkill(server: string, name: string, entry: Entry, client: Client): ExternalSkill {
  const files = entry.resources === "dynamic" ? [] : entry.resources;
  const own = files.find((f) => f.uri === entry.uri)?.digest;
  const digest = own?.startsWith("sha256:") ? own.slice("sha256:".length).toLowerCase() : undefined;
  const root = entry.uri.replace(/SKILL\.md$/, "");
  return {
    name,
    description: entry.frontmatter.description,
    origin: `mcp:${server}`,
    uri: entry.uri,
    ...(digest ? { digest } : {}),
    files: files.filter((f) => f.uri !== entry.uri && f.uri.startsWith(root)).map((f) => f.uri.slice(root.length)),
    async load(signal) {
      const result = await client.readResource(
        { uri: entry.uri },
        { timeout: READ_TIMEOUT_MS, ...(signal ? { signal } : {}) },
      );
      const content = result.contents.find((c) => c.uri === entry.uri) ?? result.contents[0];
      if (!content) throw new Error(`${entry.uri} came back empty`);
      const bytes =
        "text" in content && typeof content.text === "string"
          ? Buffer.from(content.text, "utf8")
          : Buffer.from(String((content as { blob?: unknown }).blob ?? ""), "base64");
      const actual = createHash("sha256").update(bytes).digest("hex");
      if (digest && actual !== digest) {
        throw new Error(
          `${entry.uri} does not match the digest skills/list gave (sha256:${digest}, got sha256:${actual})`,
        );
      }
      return bytes.toString("utf8");
    },
  };
}
