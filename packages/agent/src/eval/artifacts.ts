/**
 * Harbor's artifacts: files a trial leaves that the record keeps — everything under `/logs/artifacts/` (Harbor's
 * convention directory) and the paths task.toml's `artifacts` names (`"/app/out.txt"`, or `{ source, destination }`).
 * Collected after the verifier, as text into the trial's details (`crow eval report RUN --trial TASK` shows them).
 *
 * Only the trial's own directories exist per trial (/app, /logs); any other path is the host's system, the same for
 * every trial, and is noted as not collected. Files are read as regular files only, never through a link, and only
 * where their real path stays inside the trial's directory: a link the agent planted at `/app/out.txt` pointing at a
 * host file (Crow's `.env`) is refused, not copied into a report. The sandboxes have exited before this runs.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync, realpathSync } from "node:fs";
import path from "node:path";
import type { EvalArtifact } from "@crow/core";
import { SuiteError } from "./task-fields.js";
import type { TomlValue } from "./toml.js";
import { CONTAINER } from "./trial-sandbox.js";

export interface ArtifactSpec {
  /** An absolute path in the trial (`/app/…`, `/logs/…`). */
  source: string;
  /** Where the record files it (relative). */
  destination: string;
}

/** The convention directory: collected whole without configuration. */
export const ARTIFACTS_DIR = `${CONTAINER.logs}/artifacts`;

/** Per file, and for all of a trial's artifacts together. */
const FILE_CHARS = 64 * 1024;
const TOTAL_CHARS = 512 * 1024;
const MAX_FILES = 200;

/** task.toml's `artifacts`: strings or `{ source, destination }` tables. */
export function artifactSpecs(value: TomlValue | undefined, tomlFile: string): ArtifactSpec[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new SuiteError(`${tomlFile}: artifacts must be a list of paths`);
  return value.map((entry, index) => {
    const where = `${tomlFile}: artifacts[${index}]`;
    const spec =
      typeof entry === "string"
        ? { source: entry, destination: undefined }
        : entry && typeof entry === "object" && !Array.isArray(entry) && !(entry instanceof Date)
          ? { source: entry.source, destination: entry.destination }
          : undefined;
    if (!spec || typeof spec.source !== "string" || !path.posix.isAbsolute(spec.source)) {
      throw new SuiteError(`${where} must be an absolute path, or { source = "/abs/path", destination = "rel" }`);
    }
    if (spec.destination !== undefined && typeof spec.destination !== "string") {
      throw new SuiteError(`${where}.destination must be a relative path`);
    }
    const destination = path.posix.normalize(spec.destination ?? spec.source).replace(/^\/+/, "");
    if (destination === "" || destination.startsWith("..")) throw new SuiteError(`${where}.destination is outside`);
    return { source: path.posix.normalize(spec.source), destination };
  });
}

/** Where a trial's container path is on the host, and the trial directory it must stay in; undefined elsewhere. */
function onHost(source: string, roots: { app: string; logs: string }): { file: string; root: string } | undefined {
  for (const [container, host] of [
    [CONTAINER.app, roots.app],
    [CONTAINER.logs, roots.logs],
  ] as const) {
    if (source === container || source.startsWith(`${container}/`)) {
      return { file: path.join(host, source.slice(container.length)), root: host };
    }
  }
  return undefined;
}

function readText(file: string, budget: number): { content?: string; note?: string } {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    return { note: (error as NodeJS.ErrnoException).code === "ELOOP" ? "a link: not collected" : "missing" };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { note: "not a regular file: not collected" };
    const size = Math.min(stats.size, FILE_CHARS, budget);
    const buffer = Buffer.alloc(size);
    const read = readSync(fd, buffer, 0, size, 0);
    const bytes = buffer.subarray(0, read);
    if (bytes.includes(0)) return { note: `binary, ${stats.size} bytes: not kept` };
    const more = stats.size > read ? `\n[… ${stats.size - read} more bytes not kept]` : "";
    return { content: bytes.toString("utf8") + more };
  } finally {
    closeSync(fd);
  }
}

/** The artifacts of a finished trial: `/logs/artifacts/` and `specs`, files within their bounds. */
export function collectArtifacts(specs: readonly ArtifactSpec[], roots: { app: string; logs: string }): EvalArtifact[] {
  const collected: EvalArtifact[] = [];
  let budget = TOTAL_CHARS;
  const all = [{ source: ARTIFACTS_DIR, destination: "logs/artifacts", optional: true }, ...specs];
  for (const spec of all) {
    const where = onHost(spec.source, roots);
    if (!where) {
      collected.push({ ...spec, note: "not collected: a trial has only /app and /logs of its own" });
      continue;
    }
    let realRoot: string;
    let real: string;
    try {
      realRoot = realpathSync(where.root);
      real = realpathSync(where.file);
    } catch {
      if (!("optional" in spec))
        collected.push({ source: spec.source, destination: spec.destination, note: "missing" });
      continue;
    }
    if (real !== realRoot && !real.startsWith(`${realRoot}${path.sep}`)) {
      collected.push({
        source: spec.source,
        destination: spec.destination,
        note: "leads outside the trial: not collected",
      });
      continue;
    }
    // A directory: its files, depth first, in name order (links and the rest noted, not followed).
    const walk = (file: string, source: string, destination: string) => {
      if (collected.length >= MAX_FILES) return;
      const stats = lstatSync(file, { throwIfNoEntry: false });
      if (stats?.isDirectory()) {
        for (const name of readdirSync(file).sort()) {
          walk(path.join(file, name), `${source}/${name}`, `${destination}/${name}`);
        }
        return;
      }
      const read = readText(file, budget);
      budget -= read.content?.length ?? 0;
      collected.push({ source, destination, ...read });
    };
    walk(where.file, spec.source, spec.destination);
  }
  return collected;
}
