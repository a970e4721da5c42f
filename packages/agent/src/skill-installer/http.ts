/**
 * The sources fetched over HTTP: an npm registry tarball (checked against the packument's `dist.integrity`) and a
 * `.well-known/agent-skills` index (each entry checked against its sha256 `digest`). Every download is capped as it
 * arrives and every archive as it unpacks (limits.ts); every name an index gives is a skill name before it becomes
 * a folder.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { errorText } from "@crow/core";
import { skillNameProblem } from "./checks.js";
import { SourceError } from "./errors.js";
import { MAX_DOCUMENT_BYTES, MAX_DOWNLOAD_BYTES, readCapped } from "./limits.js";
import { unpackTar } from "./tar.js";

/** The npm registry: `npm_config_registry` / `NPM_CONFIG_REGISTRY` as npm honours them, else the public one. */
export function npmRegistry(env: NodeJS.ProcessEnv): string {
  const configured = env.npm_config_registry || env.NPM_CONFIG_REGISTRY || "https://registry.npmjs.org/";
  return configured.endsWith("/") ? configured : `${configured}/`;
}

/** GETs `url` and reads its body, at most `max` bytes; `what` names it in errors. */
async function download(url: string, what: string, max: number): Promise<Buffer> {
  let response: Response;
  try {
    response = await fetch(url, { redirect: "follow" });
  } catch (error) {
    throw new SourceError(`cannot fetch ${what} from ${url}: ${errorText(error)}`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new SourceError(`cannot fetch ${what} from ${url}: HTTP ${response.status}`);
  }
  return readCapped(response, max, what, url);
}

/** Unpacks `name` at `wanted` (a version or dist-tag; default `latest`) into `dir`; returns the version. */
export async function fetchNpm(
  name: string,
  wanted: string | undefined,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const registry = npmRegistry(env);
  const url = `${registry}${name.replace("/", "%2f")}`;
  const body = await download(url, `the npm package ${name}`, MAX_DOCUMENT_BYTES);
  let packument: {
    "dist-tags"?: Record<string, string>;
    versions?: Record<string, { dist?: { tarball?: string; integrity?: string } }>;
  };
  try {
    packument = JSON.parse(body.toString("utf8")) as typeof packument;
  } catch {
    throw new SourceError(`the registry's answer for ${name} (${url}) is not JSON`);
  }
  const tag = wanted ?? "latest";
  const version = packument.versions?.[tag] ? tag : packument["dist-tags"]?.[tag];
  const dist = version ? packument.versions?.[version]?.dist : undefined;
  if (!version || !dist?.tarball) {
    const known = Object.keys(packument.versions ?? {}).join(", ");
    throw new SourceError(`npm package ${name} has no version or tag "${tag}" (versions: ${known || "none"})`);
  }
  if (!dist.integrity) throw new SourceError(`npm package ${name}@${version} has no dist.integrity to check it by`);
  const tarball = await download(dist.tarball, `the tarball of ${name}@${version}`, MAX_DOWNLOAD_BYTES);
  const checked = dist.integrity.split(/\s+/).some((entry) => {
    const [algorithm, expected] = [entry.slice(0, entry.indexOf("-")), entry.slice(entry.indexOf("-") + 1)];
    if (!["sha512", "sha384", "sha256"].includes(algorithm)) return false;
    return createHash(algorithm).update(tarball).digest("base64") === expected;
  });
  if (!checked) {
    throw new SourceError(
      `the tarball of ${name}@${version} does not match the registry's dist.integrity: refused, nothing installed`,
    );
  }
  const unpacked = path.join(dir, ".unpack");
  await unpackTar(tarball, unpacked, `npm package ${name}@${version}`);
  // npm tarballs hold one top folder (`package/`); the package is what is inside it.
  const top = await readdir(unpacked);
  const inner = top.length === 1 && top[0] ? path.join(unpacked, top[0]) : unpacked;
  for (const entry of await readdir(inner)) await rename(path.join(inner, entry), path.join(dir, entry));
  await rm(unpacked, { recursive: true, force: true });
  return version;
}

/** One entry of an Agent Skills Discovery index. */
interface IndexEntry {
  name?: unknown;
  type?: unknown;
  url?: unknown;
  digest?: unknown;
}

/**
 * Downloads every skill of a `.well-known/agent-skills/index.json` into `dir/<name>`, each checked against its
 * sha256 `digest` first: one mismatch refuses the whole source and nothing is kept. Returns the index's digest.
 */
export async function fetchWellKnown(indexUrl: string, dir: string): Promise<string> {
  const text = (await download(indexUrl, "the skills index", MAX_DOCUMENT_BYTES)).toString("utf8");
  let index: { skills?: unknown };
  try {
    index = JSON.parse(text) as { skills?: unknown };
  } catch {
    throw new SourceError(`${indexUrl} is not JSON: expected an Agent Skills Discovery index ({"skills": [...]})`);
  }
  if (!Array.isArray(index.skills)) throw new SourceError(`${indexUrl} has no "skills" list`);
  for (const entry of index.skills as IndexEntry[]) {
    const { name, type, url, digest } = entry;
    if (typeof name !== "string" || typeof url !== "string" || typeof digest !== "string") {
      throw new SourceError(`${indexUrl}: every skill needs a name, url and digest (got ${JSON.stringify(entry)})`);
    }
    const nameWhy = skillNameProblem(name);
    if (nameWhy) throw new SourceError(`${indexUrl}: field name: ${nameWhy}`);
    const href = new URL(url, indexUrl).href;
    const archive = type === "archive";
    const bytes = await download(href, `skill ${name}`, archive ? MAX_DOWNLOAD_BYTES : MAX_DOCUMENT_BYTES);
    const actual = createHash("sha256").update(bytes).digest("hex");
    const expected = digest.replace(/^sha256:/i, "").toLowerCase();
    if (actual !== expected) {
      throw new SourceError(
        `skill ${name} from ${href} has sha256 ${actual}, but the index says ${expected}: refused, nothing installed`,
      );
    }
    const target = path.join(dir, name);
    if (archive) {
      await unpackTar(bytes, target, `skill ${name}`);
      const top = await readdir(target);
      // An archive holding one folder with the SKILL.md: that folder is the skill.
      if (top.length === 1 && top[0] && !existsSync(path.join(target, "SKILL.md"))) {
        const inner = path.join(target, top[0]);
        for (const e of await readdir(inner)) await rename(path.join(inner, e), path.join(target, e));
        await rm(inner, { recursive: true, force: true });
      }
    } else {
      await mkdir(target, { recursive: true });
      await writeFile(path.join(target, "SKILL.md"), bytes);
    }
  }
  return `sha256:${createHash("sha256").update(text).digest("hex")}`;
}
