/**
 * The startup snapshot of the shared crow-mcp (packages/mcp/src/snapshot-entry.ts): where its blob is for this
 * crow-mcp and this node, and whether a start may use it. crow spawns its toolserver with process.execPath, so the
 * blob is `<cache>/crow/snapshot/<crow-mcp's directory>/<process.execPath>/<build>.blob`, <build> being the id the
 * bundle wrote beside the script (crow-mcp-snapshot.id). The snapshot builder (build.ts) builds it after crow's own.
 */
import { readFileSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { crowCacheDir } from "@crow/mcp/compile-cache";

/** Node flags of the shared crow-mcp: the same when its blob is built (the flags of a blob's build and use match). */
export const TOOLSERVER_NODE_FLAGS: readonly string[] = ["--v8-pool-size=1"];

/** Whether snapshots may be used at all: not when turned off, nor under NODE_OPTIONS (see the launcher). */
function snapshotsAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  return !env.CROW_NO_SNAPSHOT && !env.NODE_OPTIONS;
}

/**
 * Where the blob of the crow-mcp at `serverPath` (its crow-mcp.js) belongs; undefined when it has no snapshot
 * script.
 */
export function toolserverBlobPath(serverPath: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  try {
    const dir = realpathSync(path.dirname(serverPath));
    const build = readFileSync(path.join(dir, "crow-mcp-snapshot.id"), "utf8").trim();
    if (!/^[0-9a-f]{12}$/.test(build)) return undefined;
    return path.join(crowCacheDir(env), "snapshot", dir, process.execPath, `${build}.blob`);
  } catch {
    return undefined;
  }
}

/**
 * Whether `blob` is there for the node running this: not if that node is newer (upgraded in place, it would refuse
 * it).
 */
export function blobFits(blob: string): boolean {
  try {
    return statSync(blob).mtimeMs >= statSync(process.execPath).mtimeMs;
  } catch {
    return false;
  }
}

/** Whether building `blob` failed with the node running this (a note older than that node is a past node's). */
export function buildFailed(blob: string): boolean {
  return blobFits(`${blob}.failed`);
}

/** The node flags that start the crow-mcp at `serverPath` from its snapshot, or none when there is no usable blob. */
export function toolserverSnapshotFlags(serverPath: string, env: NodeJS.ProcessEnv = process.env): string[] {
  if (!snapshotsAllowed(env)) return [];
  const blob = toolserverBlobPath(serverPath, env);
  return blob && blobFits(blob) ? ["--snapshot-blob", blob] : [];
}
