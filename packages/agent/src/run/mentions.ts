/**
 * `@path` mentions in a typed prompt: each mention of an existing file or directory (relative to the session's cwd,
 * else to the first of its additional directories, `--add-dir`, where it exists; optionally with a `#L10:20` line
 * range) is attached as an ACP `resource_link`, which the agent inlines (files, ranges, images, directory listings). The text itself is sent unchanged; mentions of nothing are reported back.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { ContentBlock } from "@agentclientprotocol/sdk";
import { expandTilde } from "@crow/core/home";

const MENTION = /(?:^|\s)@((?:[^\s#]|\\ )+)(#L\d+(?:[:-]L?\d+)?)?/g;

/**
 * The prompt as ACP content: the text, then one resource link per distinct mention that exists on disk; `missing`
 * lists the mentions that name nothing (reported to the user: the text still carries them).
 */
export function promptBlocks(
  text: string,
  cwd: string,
  extraRoots: readonly string[] = [],
): { blocks: ContentBlock[]; missing: string[] } {
  const blocks: ContentBlock[] = [{ type: "text", text }];
  const missing: string[] = [];
  const seen = new Set<string>();
  for (const match of text.matchAll(MENTION)) {
    // A mention at the end of a sentence keeps its punctuation out of the path.
    const raw = (match[1] ?? "").replace(/[.,;:!?)]+$/, "").replace(/\\ /g, " ");
    if (!raw) continue;
    const relative = raw.startsWith("~/") ? expandTilde(raw) : raw;
    const inCwd = path.resolve(cwd, relative);
    const file = existsSync(inCwd)
      ? inCwd
      : (extraRoots.map((root) => path.resolve(root, relative)).find((f) => existsSync(f)) ?? inCwd);
    const range = match[2] ?? "";
    const key = `${file}${range}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (!existsSync(file)) {
      missing.push(raw);
      continue;
    }
    blocks.push({
      type: "resource_link",
      uri: `${pathToFileURL(file).href}${range}`,
      name: path.basename(file) || file,
    });
  }
  return { blocks, missing };
}
