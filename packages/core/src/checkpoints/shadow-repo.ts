/**
 * The shadow repository of one workspace: a plain git repository under the Crow home whose work tree is the
 * workspace, so snapshots cover uncommitted work, untracked files and whatever a command changed, and the user's own
 * `.git` is never read or written. Its index is kept between snapshots: git's stat cache then rehashes only the files
 * that changed, which keeps a snapshot of a 20 000-file workspace cheap (bench/checkpoint.bench.ts).
 *
 * Snapshots are commits without parents, each kept alive by a ref `refs/crow/<commit>` (garbage collection drops the
 * refs no checkpoint names any more); `refs/heads/main` is the latest, so `git status` compares against it.
 */
import { createHash } from "node:crypto";
import type { Stats } from "node:fs";
import { appendFile, lstat, mkdir, readFile, realpath, rename, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { exists } from "../exists.js";
import { findGit, type GitProgram, nulList, objectId, runGit, ShadowGitError } from "./git.js";
import { restorePaths } from "./restore.js";

/** One changed path between two snapshots (`git diff --name-status`: A added, M modified, D deleted, T type). */
export interface FileChange {
  path: string;
  status: string;
}

/** A snapshot: the commit, whether it is the previous one reused (nothing changed), and files over the size cap. */
export interface Snapshot {
  commit: string;
  reused: boolean;
  /** Paths left out because they are larger than the cap (workspace-relative). */
  skipped: string[];
}

/** The directory of a workspace's shadow repository under `<home>/checkpoints/`. */
export function shadowGitDir(home: string, workspace: string): string {
  const hash = createHash("sha256").update(path.resolve(workspace)).digest("hex").slice(0, 20);
  return path.join(home, "checkpoints", `${hash}.git`);
}

const MAIN = "refs/heads/main";

/** What a shadow repository must never run or copy. */
export interface ShadowGuard {
  /**
   * Directories the model's commands may write besides the work tree (the sandbox's writable roots): no git found
   * there is run (see `findGit`).
   */
  untrusted?: readonly string[];
  /**
   * Files never captured, by path and by device and inode (a hard link elsewhere in the work tree): Crow's `.env` and
   * config.yaml. `<home>/.env` and `<home>/config.yaml` always are.
   */
  secrets?: readonly string[];
}

/** Paths of the work tree never captured (relative, POSIX) and the secrets' device:inode pairs. */
interface Exclusions {
  prefixes: string[];
  inodes: Set<string>;
}

/** A snapshot adding at least this many files asks for a repack (`packIfDue`). */
const PACK_AFTER = 1000;

export class ShadowRepo {
  private ready: Promise<void> | undefined;
  private readonly trees = new Map<string, string>();
  private packDue = false;

  constructor(
    readonly gitDir: string,
    readonly workTree: string,
    /** Files larger than this many bytes are not captured (and listed). */
    readonly maxFileBytes: number,
    /**
     * A snapshot that would add more paths than this at once is refused: a workspace that big (a home directory) would
     * take minutes and gigabytes to copy, on the path of a tool call.
     */
    readonly maxNewFiles = 100_000,
    guard: ShadowGuard = {},
  ) {
    this.untrusted = new Set(guard.untrusted ?? []);
    const home = path.dirname(path.dirname(gitDir));
    this.secrets = [path.join(home, ".env"), path.join(home, "config.yaml"), ...(guard.secrets ?? [])];
  }

  private readonly untrusted: Set<string>;
  private readonly secrets: string[];
  private program: GitProgram | undefined;
  private excluded: Promise<string[]> | undefined;
  private purged = false;

  /**
   * Adds directories the model's commands may write (a session's roots): git is looked for again outside them too.
   */
  distrust(dirs: readonly string[]): void {
    const before = this.untrusted.size;
    for (const dir of dirs) this.untrusted.add(dir);
    if (this.untrusted.size !== before) this.program = undefined;
  }

  private git(args: readonly string[], options?: { input?: string | Buffer; allowFailure?: boolean }) {
    this.program ??= findGit([this.workTree, ...this.untrusted]);
    return runGit(this.program, this.gitDir, this.workTree, args, options);
  }

  /**
   * Crow's home, its checkpoints and its secret files where they lie inside the work tree (`crow run` in `~`, or in
   * the home itself), as work-tree-relative paths: never captured, whatever a `.gitignore` re-includes.
   */
  private excludedPrefixes(): Promise<string[]> {
    this.excluded ??= (async () => {
      const real = async (p: string) => realpath(p).catch(() => path.resolve(p));
      const tree = await real(this.workTree);
      const checkpoints = path.dirname(this.gitDir);
      const candidates = [path.dirname(checkpoints), checkpoints, ...this.secrets];
      const prefixes: string[] = [];
      for (const candidate of candidates) {
        const inside = path.relative(tree, await real(candidate));
        if (inside !== "" && !inside.startsWith("..") && !path.isAbsolute(inside)) {
          prefixes.push(inside.split(path.sep).join("/"));
        }
      }
      return prefixes;
    })();
    return this.excluded;
  }

  /** What this snapshot must leave out: the paths above, and the secrets' current inodes. */
  private async exclusions(): Promise<Exclusions> {
    const inodes = new Set<string>();
    for (const secret of this.secrets) {
      const info = await stat(secret).catch(() => undefined);
      if (info?.isFile()) inodes.add(`${info.dev}:${info.ino}`);
    }
    return { prefixes: await this.excludedPrefixes(), inodes };
  }

  /**
   * Once per process: drops from the index what an earlier version captured of the excluded paths, so later snapshots
   * stop carrying it.
   */
  private async purgeExcluded(prefixes: readonly string[]): Promise<void> {
    if (this.purged) return;
    this.purged = true;
    if (prefixes.length === 0) return;
    const { stdout } = await this.git(["ls-files", "-z", "--", ...prefixes]);
    const tracked = nulList(stdout);
    if (tracked.length > 0) await this.git(["update-index", "--force-remove", "-z", "--stdin"], nul(tracked));
  }

  /**
   * Creates the repository once (idempotent; a repository made before, by this process or another, is used as it
   * is): byte-exact storage, no hooks, no automatic gc, the untracked cache on.
   */
  init(): Promise<void> {
    this.ready ??= (async () => {
      const attributes = path.join(this.gitDir, "info", "attributes");
      if (await exists(attributes)) return;
      await mkdir(path.dirname(this.gitDir), { recursive: true });
      await this.git(["init", "--quiet", "--initial-branch=main"]);
      await appendFile(
        path.join(this.gitDir, "config"),
        "[core]\n\tautocrlf = false\n\tfileMode = true\n\tsymlinks = true\n\tquotePath = false\n" +
          "\tuntrackedCache = true\n\thooksPath = /dev/null\n[gc]\n\tauto = 0\n[index]\n\tversion = 4\n",
      );
      // The Crow home when it lies inside the workspace (crow run in ~): its store and these very repositories are
      // Crow's own files, not the user's work, and a repository must not copy itself. This only saves git the walk:
      // snapshot() leaves them out whatever a .gitignore re-includes (and, in a workspace that is the home itself,
      // the repositories and the secret files).
      await mkdir(path.join(this.gitDir, "info"), { recursive: true });
      const checkpoints = path.dirname(this.gitDir);
      const home = path.dirname(checkpoints);
      const excluded = [home, checkpoints]
        .map((dir) => path.relative(this.workTree, dir))
        .find((inside) => inside !== "" && !inside.startsWith("..") && !path.isAbsolute(inside));
      if (excluded) {
        await writeFile(path.join(this.gitDir, "info", "exclude"), `/${excluded.split(path.sep).join("/")}/\n`);
      }
      // Highest-precedence attributes: no end-of-line conversion, no filter (LFS…) — files are stored as bytes.
      // Written last: its presence says the repository is ready.
      await writeFile(attributes, "* -text -filter -ident\n");
    })();
    return this.ready;
  }

  /**
   * The latest snapshot, if any: read from the ref file itself when it is loose (no git process: this is on the path of
   * every snapshot), through git when it was packed by a gc.
   */
  async head(): Promise<string | undefined> {
    try {
      const loose = (await readFile(path.join(this.gitDir, MAIN), "utf8")).trim();
      if (/^[0-9a-f]{40,64}$/.test(loose)) return loose;
    } catch {
      // Packed, or no snapshot yet.
    }
    const { stdout, code } = await this.git(["rev-parse", "--verify", "--quiet", MAIN], { allowFailure: true });
    return code === 0 ? stdout.toString("utf8").trim() : undefined;
  }

  /** A snapshot's tree (snapshots never change, so each is asked once). */
  private async treeOf(commit: string): Promise<string> {
    let tree = this.trees.get(commit);
    if (tree === undefined) {
      tree = (await this.git(["rev-parse", "--verify", `${objectId(commit)}^{tree}`])).stdout.toString("utf8").trim();
      this.trees.set(commit, tree);
    }
    return tree;
  }

  /**
   * Snapshots the work tree (`.gitignore` honoured, `.git` never included, files over the cap skipped). When nothing
   * changed since the latest snapshot, that commit is returned (`reused`) and nothing is written.
   */
  async snapshot(message = "checkpoint"): Promise<Snapshot> {
    await this.init();
    const previous = await this.head();
    const excluded = await this.exclusions();
    await this.purgeExcluded(excluded.prefixes);
    const status = await this.git([
      "status",
      "--porcelain=v1",
      "-z",
      "--untracked-files=all",
      "--no-renames",
      "--ignore-submodules=all",
    ]);
    const isExcluded = (p: string) => excluded.prefixes.some((prefix) => p === prefix || p.startsWith(`${prefix}/`));
    const entries = nulList(status.stdout).map((line) => ({ tracked: !line.startsWith("??"), path: line.slice(3) }));
    if (entries.length > this.maxNewFiles) {
      throw new ShadowGitError(
        `${this.workTree} has ${entries.length} files not yet captured (more than ${this.maxNewFiles}): too many to ` +
          "checkpoint (is it a home directory?); list the bulky ones in .gitignore or set checkpoints.enabled: false",
      );
    }
    const add: string[] = [];
    const untrack: string[] = [];
    const skipped: string[] = [];
    for (const entry of entries) {
      // A nested repository (status shows its directory): not captured, as a file over the cap is not.
      if (entry.path.endsWith("/")) {
        skipped.push(entry.path);
        continue;
      }
      const info = await fileInfo(path.join(this.workTree, entry.path));
      // Crow's home and secrets: left out without a word, and dropped from the index if an old snapshot had them.
      if (isExcluded(entry.path) || (info && excluded.inodes.has(`${info.dev}:${info.ino}`))) {
        if (entry.tracked) untrack.push(entry.path);
        continue;
      }
      // An empty, new skills-lock.json at the top is the sandbox's guard (crow-mcp plants it for the shell's life so
      // that it can be bound read-only), not a file of the project: never captured, so never restored or deleted.
      if (!entry.tracked && entry.path === "skills-lock.json" && info?.size === 0) continue;
      const size = info?.size;
      if (size !== undefined && size > this.maxFileBytes) {
        skipped.push(entry.path);
        if (entry.tracked) untrack.push(entry.path);
      } else add.push(entry.path);
    }
    if (previous && add.length === 0 && untrack.length === 0) return { commit: previous, reused: true, skipped };
    // Thousands of new loose objects (a workspace's first snapshot) take a file system block each: pack them soon.
    if (add.length >= PACK_AFTER) this.packDue = true;
    // Exact paths, no pathspec matching nor directory walk: status already found them.
    if (add.length > 0) await this.git(["update-index", "--add", "--remove", "-z", "--stdin"], nul(add));
    if (untrack.length > 0) await this.git(["update-index", "--force-remove", "-z", "--stdin"], nul(untrack));
    const tree = (await this.git(["write-tree"])).stdout.toString("utf8").trim();
    if (previous && (await this.treeOf(previous)) === tree) return { commit: previous, reused: true, skipped };
    const commit = (await this.git(["commit-tree", "-m", message, objectId(tree)])).stdout.toString("utf8").trim();
    this.trees.set(commit, tree);
    // Kept from garbage collection, then the latest: loose ref files written as git does (a whole file renamed into
    // place), without one more git process on the path of the tool call.
    await this.writeRef(`refs/crow/${commit}`, commit);
    await this.writeRef(MAIN, commit);
    return { commit, reused: false, skipped };
  }

  private async writeRef(name: string, commit: string): Promise<void> {
    const file = path.join(this.gitDir, name);
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${process.pid}.lock`;
    await writeFile(temporary, `${commit}\n`);
    await rename(temporary, file);
  }

  /** The paths that differ between two snapshots, with their status. */
  async changes(from: string, to: string): Promise<FileChange[]> {
    const { stdout } = await this.git([
      "diff-tree",
      "-r",
      "-z",
      "--no-renames",
      "--name-status",
      objectId(from),
      objectId(to),
    ]);
    const parts = nulList(stdout);
    const changes: FileChange[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      changes.push({ status: parts[i] ?? "", path: parts[i + 1] ?? "" });
    }
    return changes;
  }

  /**
   * Puts `paths` of the work tree back as they are in `commit`, bytes and mode: paths the snapshot has are written,
   * the others are deleted, never through a link (restore.ts).
   */
  async restore(commit: string, paths: readonly string[]): Promise<void> {
    await restorePaths((args, options) => this.git(args, options), this.workTree, commit, paths);
  }

  /**
   * Packs the loose objects when a snapshot wrote many (seconds on a big workspace: run it off the tool call's path,
   * e.g. after the turn). A no-op otherwise.
   */
  async packIfDue(): Promise<void> {
    if (!this.packDue) return;
    this.packDue = false;
    await this.git(["repack", "-d", "-q"]);
  }

  /** Every kept snapshot (`refs/crow/*`) with its time (ms since the epoch). */
  async keptCommits(): Promise<Array<{ commit: string; time: number }>> {
    const { stdout } = await this.git(["for-each-ref", "--format=%(objectname) %(committerdate:unix)", "refs/crow/"]);
    return stdout
      .toString("utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => {
        const [commit = "", seconds = "0"] = line.split(" ");
        return { commit, time: Number(seconds) * 1000 };
      });
  }

  /**
   * Drops the refs of snapshots no longer needed, then the unreachable objects older than `pruneAgo` (a git date such
   * as `1.hour.ago`: younger ones may belong to a snapshot another process is taking right now). Slow: run rarely.
   */
  async forget(commits: readonly string[], pruneAgo: string | undefined): Promise<void> {
    if (commits.length > 0) {
      const input = commits.map((c) => `delete refs/crow/${objectId(c)}\n`).join("");
      await this.git(["update-ref", "--stdin"], { input });
    }
    if (pruneAgo) await this.git(["gc", `--prune=${pruneAgo}`, "--quiet"]);
  }
}

function nul(paths: readonly string[]): { input: string } {
  return { input: `${paths.join("\0")}\0` };
}

/** A regular file's status; undefined for anything else (missing, directory, link). */
async function fileInfo(file: string): Promise<Stats | undefined> {
  try {
    const info = await lstat(file);
    return info.isFile() ? info : undefined;
  } catch {
    return undefined;
  }
}
