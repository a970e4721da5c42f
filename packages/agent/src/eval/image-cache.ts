/**
 * Where built image layers are kept, and who may touch them: `<Crow's home>/cache/images/<key>/`, root's only. The
 * build's RUN steps are a task's code running as root; what they leave (setuid files, device nodes, keys a package
 * generated) must never be readable or writable by another local user, and a layer another user could have planted
 * must never be served. So the directory and every one of its ancestors must belong to root (or, for an ancestor, be
 * a sticky directory such as /tmp) and be writable by nobody else, else nothing is built or served from there.
 *
 *   <images>/<key>/image.json        what was built, when, from what (written last: its presence means complete)
 *   <images>/<key>/upper/{usr,etc,opt,var}   the overlay upper layers
 *   <images>/<key>/app/              /app as the build left it (copied into each trial's workspace)
 *   <images>/.build-<key>-<random>/  a build in progress (renamed to <key> when complete; removed if left over)
 *   <images>/<key>.lock              held (flock) while <key> is built or checked
 *   <images>/.mnt/                   the run's mounts, on a tmpfs of the run's own mount namespace
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
} from "node:fs";
import path from "node:path";
import { ImageError } from "./image-mounts.js";
import { globMatches } from "./suite.js";

/** What was built into one cache entry (its `image.json`). */
export interface ImageRecord {
  key: string;
  builtAt: string;
  /** The FROM line and what stood in for it. */
  from: string;
  /** The Dockerfile instructions the layer holds, one line each. */
  steps: string[];
  /** What the build printed (bounded). */
  output?: string;
}

/** The images directory under `home`, made root-only, after checking nobody else can have planted anything in it. */
export function imagesDir(home: string): string {
  const dir = path.join(home, "cache", "images");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const real = realpathSync(dir);
  trustedAncestors(real);
  const stats = lstatSync(real);
  if (!stats.isDirectory() || stats.uid !== 0) {
    throw new ImageError(`image cache ${real} is not a directory of root's: remove it`);
  }
  // Readable before (made by an older Crow, or chmod'ed): closed now; what others could write was refused above.
  if ((stats.mode & 0o077) !== 0) chmodSync(real, 0o700);
  // A path overlayfs options cannot carry (`:` separates layers, `,` options) is refused rather than misread.
  if (/[:,\\\n]/.test(real)) {
    throw new ImageError(`image cache ${real} holds ':', ',' or '\\', which overlayfs cannot take: move CROW_HOME`);
  }
  return real;
}

/**
 * Throws unless `dir` and each of its ancestors is root's and writable by no one else (an ancestor may be a sticky
 * directory like /tmp, where only the owner of an entry can rename or remove it).
 */
function trustedAncestors(dir: string): void {
  for (let current = dir; ; current = path.dirname(current)) {
    const stats = lstatSync(current);
    const sticky = (stats.mode & 0o1000) !== 0;
    const othersWrite = (stats.mode & 0o022) !== 0;
    if (stats.uid !== 0 || (othersWrite && !(sticky && current !== dir))) {
      throw new ImageError(
        `image cache ${dir}: ${current} belongs to uid ${stats.uid} or is writable by other users, who could plant ` +
          "an image there: give it to root (chmod go-w) or set CROW_HOME elsewhere",
      );
    }
    if (current === "/") return;
  }
}

/** The complete entry of `key`, or undefined: a directory of root's with its image.json naming that key. */
export function cachedImage(images: string, key: string): ImageRecord | undefined {
  const entry = path.join(images, key);
  try {
    const stats = lstatSync(entry);
    if (!stats.isDirectory() || stats.uid !== 0) return undefined;
    const record = JSON.parse(readFileSync(path.join(entry, "image.json"), "utf8")) as ImageRecord;
    return record.key === key ? record : undefined;
  } catch {
    return undefined;
  }
}

/** Removes builds of `key` left by a process that died (the caller holds the key's lock: none is in progress). */
export function removeLeftoverBuilds(images: string, key: string): void {
  for (const name of readdirSync(images)) {
    // rmSync never follows a link: a link a RUN step planted in an upper layer is removed, not what it names.
    if (name.startsWith(`.build-${key}-`)) rmSync(path.join(images, name), { recursive: true, force: true });
  }
}

/** What goes into an image's key besides the Dockerfile's text: the files its COPY steps take, and the host. */
export interface KeyInput {
  /** The instructions the layer holds, as planned (commands, destinations, ENV), and what else shapes them. */
  instructions: unknown;
  environmentDir: string;
  /** COPY/ADD sources (relative to environment/, Docker's wildcards) of the steps in the layer. */
  copied: readonly string[];
}

/** Version of the layout and build rules: a change makes every older entry unused. */
const FORMAT = "crow-image-1";

/**
 * The key of an image: a hash of the instructions up to the last RUN, the environment/ files their COPY steps take
 * (names, modes, contents; a link by its text, never followed), and the host's dpkg status (an upgrade of the host
 * changes the layer the steps would build).
 */
export function imageKey(input: KeyInput): string {
  const hash = createHash("sha256");
  hash.update(`${FORMAT}\n${JSON.stringify(input.instructions)}\n`);
  for (const source of input.copied) {
    for (const file of copiedFiles(input.environmentDir, source)) {
      const stats = lstatSync(file);
      hash.update(`${path.relative(input.environmentDir, file)}\0${stats.mode}\0`);
      // A link by its own text: what it names is not read (it may lie outside the suite).
      if (stats.isSymbolicLink()) hash.update(`link\0${readlinkSync(file)}\0`);
      else if (stats.isFile()) hash.update(readFileSync(file));
    }
  }
  try {
    hash.update(readFileSync("/var/lib/dpkg/status"));
  } catch {
    hash.update("no dpkg status");
  }
  return hash.digest("hex").slice(0, 32);
}

/** The files (and links) under environment/ that a COPY source names, sorted; none when it names nothing. */
function copiedFiles(environmentDir: string, source: string): string[] {
  const parts = path.posix
    .normalize(source)
    .split("/")
    .filter((p) => p !== "" && p !== ".");
  let matches = [environmentDir];
  for (const part of parts) {
    const next: string[] = [];
    for (const dir of matches) {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const name of names) if (globMatches(part, name)) next.push(path.join(dir, name));
    }
    matches = next;
  }
  const files: string[] = [];
  const walk = (entry: string) => {
    const stats = lstatSync(entry);
    if (stats.isDirectory()) {
      for (const name of readdirSync(entry).sort()) walk(path.join(entry, name));
    } else files.push(entry);
  };
  for (const match of matches.sort()) walk(match);
  return files;
}

/**
 * Holds `<images>/<key>.lock` (flock) until the returned release is called: two trials, workers or runs never build
 * the same key at once, and a waiter sees the entry only once it is complete. The lock belongs to a small child
 * process that reads its stdin: when Crow dies, the pipe closes, the child exits and the kernel releases the lock —
 * no stale lock to clean.
 */
export function lockImage(images: string, key: string, signal: AbortSignal): Promise<() => void> {
  const lockFile = path.join(images, `${key}.lock`);
  return new Promise((resolve, reject) => {
    const holder: ChildProcess = spawn(
      "flock",
      ["--exclusive", lockFile, "sh", "-c", "echo locked; exec cat >/dev/null"],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    let errors = "";
    let locked = false;
    const release = () => {
      signal.removeEventListener("abort", onAbort);
      holder.stdin?.end();
    };
    const onAbort = () => {
      holder.kill("SIGKILL");
      reject(new Error("cancelled while waiting for the image's lock"));
    };
    signal.addEventListener("abort", onAbort, { once: true });
    holder.stderr?.on("data", (chunk: Buffer) => {
      errors += chunk.toString("utf8");
    });
    holder.stdout?.on("data", (chunk: Buffer) => {
      if (!locked && chunk.toString("utf8").includes("locked")) {
        locked = true;
        resolve(release);
      }
    });
    holder.on("error", (error) => reject(new ImageError(`cannot lock ${lockFile}: ${error.message}`)));
    holder.on("exit", (code) => {
      if (!locked) reject(new ImageError(`cannot lock ${lockFile}: flock exited with ${code}: ${errors.trim()}`));
    });
  });
}

/** The size of a directory tree in bytes (links and special files by their own size), for the log. */
export function treeSize(dir: string): number {
  let total = 0;
  const walk = (entry: string) => {
    const stats = lstatSync(entry);
    total += stats.size;
    if (stats.isDirectory()) for (const name of readdirSync(entry)) walk(path.join(entry, name));
  };
  try {
    walk(dir);
  } catch {
    // Partly unreadable: the size is a hint.
  }
  return total;
}
