/**
 * The trust store: which project roots the user has marked trusted, so that their skills (`.crow/skills`,
 * `.agents/skills`) are offered to the model. A skill is instructions the model follows, so a repository someone
 * else wrote must not be able to steer the agent merely by being opened.
 *
 * Trust is decided per project root: the git top level of a directory (the nearest ancestor holding `.git`), else the
 * directory itself, always by real path. So a subfolder of a trusted repository is trusted, a repository nested inside
 * a trusted one (its own `.git`) is not, and a symlink is judged by where it points. Trust is keyed by path: a trusted
 * folder later replaced by another repository stays trusted (run `crow skills untrust` before reusing a path).
 */
import { chmod, mkdir, readFile, realpath, rename, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { errorText } from "../error-text.js";
import { exists } from "../exists.js";
import { crowHome } from "../home.js";

/** Where the trust store is and whose environment decides it. */
export interface TrustOptions {
  /** The Crow home (default `CROW_HOME`, else `~/.crow`). */
  home?: string;
  env?: NodeJS.ProcessEnv;
}

interface TrustFile {
  version: 1;
  projects: Record<string, { trusted_at: string }>;
}

/** The file holding trusted project roots: `<crow home>/trusted-projects.json`, {"version":1,"projects":{"<real path>":{"trusted_at":"<ISO>"}}}. */
export function trustStorePath(home?: string, env?: NodeJS.ProcessEnv): string {
  return path.join(home ?? crowHome(env), "trusted-projects.json");
}

/** The root a directory's trust is decided at: its git top level (walk up to a `.git`), else the directory; real path. */
export async function projectRoot(dir: string): Promise<string> {
  const real = await realpath(path.resolve(dir));
  for (let current = real; ; ) {
    if (await exists(path.join(current, ".git"))) return current;
    const parent = path.dirname(current);
    if (parent === current) return real;
    current = parent;
  }
}

/** Whether `dir`'s project root (see {@link projectRoot}) is in the trust store. A missing folder is not trusted. */
export async function isProjectTrusted(dir: string, options: TrustOptions = {}): Promise<boolean> {
  let root: string;
  try {
    root = await projectRoot(dir);
  } catch {
    return false;
  }
  const store = await readStore(storeFile(options), "lenient");
  return Object.hasOwn(store.projects, root);
}

/**
 * Marks `dir`'s project root trusted and returns that root. Throws with the path when `dir` does not exist or the
 * store cannot be read (a damaged store is never overwritten: fix or delete it first).
 */
export async function trustProject(dir: string, options: TrustOptions = {}): Promise<string> {
  const root = await projectRoot(dir);
  const file = storeFile(options);
  const store = await readStore(file, "strict");
  if (!Object.hasOwn(store.projects, root)) {
    store.projects[root] = { trusted_at: new Date().toISOString() };
    await writeStore(file, store);
  }
  return root;
}

/** Removes `dir`'s project root from the trust store; resolves whether it was there. */
export async function untrustProject(dir: string, options: TrustOptions = {}): Promise<boolean> {
  // The folder may be gone already: then its resolved absolute path is the key to drop.
  const root = await projectRoot(dir).catch(() => path.resolve(dir));
  const file = storeFile(options);
  const store = await readStore(file, "strict");
  if (!Object.hasOwn(store.projects, root)) return false;
  delete store.projects[root];
  await writeStore(file, store);
  return true;
}

/** The trusted project roots, sorted. */
export async function trustedProjects(options: TrustOptions = {}): Promise<string[]> {
  const store = await readStore(storeFile(options), "strict");
  return Object.keys(store.projects).sort();
}

function storeFile(options: TrustOptions): string {
  return trustStorePath(options.home, options.env ?? process.env);
}

/**
 * Reads the store; a missing file is an empty store. A damaged one is empty when `lenient` (nothing is trusted, the
 * safe answer for a reader) and an error naming the file when `strict` (a writer must not erase it).
 */
async function readStore(file: string, mode: "strict" | "lenient"): Promise<TrustFile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { version: 1, projects: {} };
    if (mode === "lenient") return { version: 1, projects: {} };
    throw new Error(`cannot read the trust store ${file}: ${errorText(error)}`);
  }
  try {
    const parsed = JSON.parse(text) as Partial<TrustFile> | null;
    if (parsed?.version !== 1 || typeof parsed.projects !== "object" || parsed.projects === null) {
      throw new Error('expected {"version":1,"projects":{…}}');
    }
    const projects: TrustFile["projects"] = {};
    for (const [root, entry] of Object.entries(parsed.projects)) {
      if (typeof entry?.trusted_at === "string") projects[root] = { trusted_at: entry.trusted_at };
    }
    return { version: 1, projects };
  } catch (error) {
    if (mode === "lenient") return { version: 1, projects: {} };
    throw new Error(
      `the trust store ${file} is damaged (${errorText(error)}); fix or delete it, then trust the projects again`,
    );
  }
}

/** Replaces the store atomically (temp file + rename), readable by the user only. */
async function writeStore(file: string, store: TrustFile): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify(store, null, 2)}\n`, { mode: 0o600 });
    // The mode argument is filtered by the umask; the store must be 0600 whatever it is.
    await chmod(temp, 0o600);
    await rename(temp, file);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
