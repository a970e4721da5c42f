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
import { access, appendFile, lstat, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { nulList, runGit, ShadowGitError } from "./git.js";

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
  ) {}

  private git(args: readonly string[], options?: { input?: string | Buffer; allowFailure?: boolean }) {
    return runGit(this.gitDir, this.workTree, args, options);
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
      // Crow's own files, not the user's work, and a repository must not copy itself. (A workspace that is the home
      // itself keeps everything but the repositories.)
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
      tree = (await this.git(["rev-parse", `${commit}^{tree}`])).stdout.toString("utf8").trim();
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
    const status = await this.git(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]);
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
      const size = await fileSize(path.join(this.workTree, entry.path));
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
    const commit = (await this.git(["commit-tree", tree, "-m", message])).stdout.toString("utf8").trim();
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
    const { stdout } = await this.git(["diff-tree", "-r", "-z", "--no-renames", "--name-status", from, to]);
    const parts = nulList(stdout);
    const changes: FileChange[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      changes.push({ status: parts[i] ?? "", path: parts[i + 1] ?? "" });
    }
    return changes;
  }

  /** Which of `paths` exist (as a file, link or submodule) in `commit`. */
  async present(commit: string, paths: readonly string[]): Promise<Set<string>> {
    if (paths.length === 0) return new Set();
    const input = paths.map((p) => `${commit}:${p}\n`).join("");
    const { stdout } = await this.git(["cat-file", "--batch-check=%(objectname)"], { input });
    const answers = stdout.toString("utf8").split("\n");
    return new Set(paths.filter((_, i) => !(answers[i] ?? "").endsWith("missing")));
  }

  /**
   * Puts `paths` of the work tree back as they are in `commit`, bytes and mode: paths the snapshot has are checked
   * out, the others are deleted.
   */
  async restore(commit: string, paths: readonly string[]): Promise<void> {
    const there = await this.present(commit, paths);
    const checkout = paths.filter((p) => there.has(p));
    const remove = paths.filter((p) => !there.has(p));
    if (checkout.length > 0) {
      await this.git(["checkout", commit, "--pathspec-from-file=-", "--pathspec-file-nul"], nul(checkout));
    }
    for (const relative of remove) await rm(path.join(this.workTree, relative), { force: true });
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
      const input = commits.map((c) => `delete refs/crow/${c}\n`).join("");
      await this.git(["update-ref", "--stdin"], { input });
    }
    if (pruneAgo) await this.git(["gc", `--prune=${pruneAgo}`, "--quiet"]);
  }
}

function nul(paths: readonly string[]): { input: string } {
  return { input: `${paths.join("\0")}\0` };
}

/** A regular file's size; undefined for anything else (missing, directory, link). */
async function fileSize(file: string): Promise<number | undefined> {
  try {
    const info = await lstat(file);
    return info.isFile() ? info.size : undefined;
  } catch {
    return undefined;
  }
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
