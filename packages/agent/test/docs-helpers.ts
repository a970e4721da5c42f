/**
 * Reading the Markdown pages (README.md, docs/*.md) as a reader follows them: their links, and GitHub's anchors for
 * their headings. Used by docs-links.test.ts (the repository) and packaging.test.ts (the installed package).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** The pages of a tree (the repository or the package): its README and every Markdown page under docs/. */
export function docPages(root: string): string[] {
  const docs = readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.join("docs", f));
  return ["README.md", ...docs];
}

/** The text outside fenced code blocks and inline code spans: a link written inside code is an example, not a link. */
export function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "``");
}

/**
 * GitHub's anchor for a heading (github-slugger): the rendered text lower-cased, everything but letters, digits,
 * `_`, `-` and spaces removed, spaces made `-`; a repeated heading gets `-1`, `-2`….
 */
export function slugs(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  const body = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const match of body.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const rendered = (match[1] as string)
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<[^>]+>/g, "")
      .replace(/[`*]/g, "");
    const base = rendered
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(match[1] as string);
  return found;
}

/** Every link target of a page's prose: `[text](target)`, `![alt](target)` and `<a href="target">`. */
export function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const targets = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string);
  for (const m of text.matchAll(/<a\s+href="([^"]+)"/g)) targets.push(m[1] as string);
  return targets;
}

/** What is wrong with each relative link of `page` (a path relative to `root`): a missing file or anchor. */
export function brokenLinks(root: string, page: string): string[] {
  const broken: string[] = [];
  const text = readFileSync(path.join(root, page), "utf8");
  for (const target of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …: not this repository's
    const [file, anchor] = target.split("#", 2) as [string, string | undefined];
    const resolved = file === "" ? path.join(root, page) : path.resolve(path.dirname(path.join(root, page)), file);
    if (!existsSync(resolved)) {
      broken.push(`${page}: ${target}: no such file`);
      continue;
    }
    if (anchor === undefined || anchor === "") continue;
    if (!resolved.endsWith(".md") || statSync(resolved).isDirectory()) {
      broken.push(`${page}: ${target}: an anchor into something that is not a Markdown page`);
    } else if (!slugs(readFileSync(resolved, "utf8")).has(anchor)) {
      broken.push(`${page}: ${target}: no heading or <a id> "${anchor}" in ${path.relative(root, resolved)}`);
    }
  }
  return broken;
}
