/**
 * What of the host's system directories a trial must not read: every entry there that other users cannot read — a
 * file without read permission for others, a directory they cannot enter — such as /etc/shadow, /etc/gshadow,
 * /etc/ssh/ssh_host_*_key, /etc/ssl/private, a database's files under /var/lib, debconf's passwords. A trial's
 * scripts run as root when Crow does: without capabilities root still reads what it owns (shadow is root's), and an
 * image build's RUN steps run with CAP_DAC_OVERRIDE and CAP_SETUID, which read everything. Scanned: /etc, /var/lib,
 * /var/cache and /opt (not /usr, whose files are world-readable and which is large).
 *
 * A plain trial gets each hidden (a directory empty, a file /dev/null); an image's sandboxes get the mask layer
 * made here between the host's directories and the image's upper layer: each such file empty (shadow and gshadow:
 * every account kept, no password hash), each such directory empty (its entries whited out) — there, so that a
 * package adding a user rewrites a shadow file without hashes, and a path a sandbox binds over still exists.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  type Dirent,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { IMAGE_DIRS, ImageError } from "./image-mounts.js";

const SCANNED = ["/etc", "/var/lib", "/var/cache", "/opt"];

/** Files whose lines keep their accounts and lose their password hashes (the second field). */
const ACCOUNT_FILES = new Set(["/etc/shadow", "/etc/gshadow"]);

let scanned: string[] | undefined;

/**
 * The entries of the scanned directories others cannot read (absolute; directories are not descended into), once
 * per process. Empty when Crow does not run as root: a sandbox then runs as a user who cannot read them either.
 */
export function privateHostEntries(): readonly string[] {
  if (scanned) return scanned;
  const found: string[] = [];
  if (process.geteuid?.() === 0) {
    const walk = (dir: string) => {
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        if (entry.isSymbolicLink()) continue;
        const full = path.join(dir, entry.name);
        let mode: number;
        try {
          mode = lstatSync(full).mode;
        } catch {
          continue;
        }
        if (entry.isDirectory()) {
          if ((mode & 0o001) === 0) found.push(full);
          else walk(full);
        } else if ((mode & 0o004) === 0) found.push(full);
      }
    };
    for (const dir of SCANNED) walk(dir);
  }
  scanned = found;
  return found;
}

/** A copy of the host's attributes (owner, mode, times) on `copy`, so the merged view shows the host's. */
export function sameAttributes(copy: string, original: string): void {
  const stats = lstatSync(original);
  chownSync(copy, stats.uid, stats.gid);
  chmodSync(copy, stats.mode & 0o7777);
  utimesSync(copy, stats.atime, stats.mtime);
}

/** Makes `dir` (absolute on the host) and its ancestors below the layer's top in `layer`, each as the host's. */
function mirrorDirs(layer: string, top: string, dir: string): void {
  const chain: string[] = [];
  for (let current = dir; current !== top && current !== "/"; current = path.dirname(current)) chain.unshift(current);
  for (const current of chain) {
    const copy = path.join(layer, path.relative(top, current));
    try {
      lstatSync(copy);
    } catch {
      mkdirSync(copy);
      sameAttributes(copy, current);
    }
  }
}

/** `text` of a shadow or gshadow file with the second field of every line replaced by `*`: no hash, no login. */
export function withoutHashes(text: string): string {
  return text
    .split("\n")
    .map((line) => {
      const fields = line.split(":");
      if (fields.length < 2) return line;
      fields[1] = "*";
      return fields.join(":");
    })
    .join("\n");
}

/**
 * Fills `root/<dir>` for each image directory with the mask of the private entries under the host's `/<dir>`;
 * returns the layers that have something (the others are left out of the overlay).
 */
export function makeMaskLayers(root: string): Set<string> {
  const whiteouts: string[] = [];
  const used = new Set<string>();
  for (const entry of privateHostEntries()) {
    const dir = IMAGE_DIRS.find((d) => entry.startsWith(`/${d}/`));
    if (dir === undefined) continue;
    const top = `/${dir}`;
    const layer = path.join(root, dir);
    if (!used.has(dir)) {
      mkdirSync(layer, { recursive: true });
      // The merged directory shows the attributes of the topmost layer that has it: the host's, copied.
      sameAttributes(layer, top);
      used.add(dir);
    }
    mirrorDirs(layer, top, path.dirname(entry));
    const copy = path.join(layer, path.relative(top, entry));
    let stats: ReturnType<typeof lstatSync>;
    try {
      stats = lstatSync(entry);
    } catch {
      continue;
    }
    if (stats.isDirectory()) {
      mkdirSync(copy);
      sameAttributes(copy, entry);
      // Each entry whited out: the directory is there, empty; what the build adds goes to its upper layer.
      for (const name of readdirSync(entry)) whiteouts.push(path.join(copy, name));
    } else {
      writeFileSync(copy, ACCOUNT_FILES.has(entry) ? withoutHashes(readFileSync(entry, "utf8")) : "");
      sameAttributes(copy, entry);
    }
  }
  if (whiteouts.length > 0) {
    // An overlay whiteout is a character device 0:0 (Node cannot make one).
    const made = spawnSync("sh", ["-c", 'for p in "$@"; do mknod "$p" c 0 0 || exit 1; done', "mask", ...whiteouts], {
      encoding: "utf8",
    });
    if (made.status !== 0) throw new ImageError(`could not make the mask layer: ${made.stderr.trim()}`);
  }
  return used;
}
