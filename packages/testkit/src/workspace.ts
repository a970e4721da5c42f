import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

/** A throwaway directory for one test, removed by {@link TempWorkspace.cleanup}. */
export interface TempWorkspace {
  /** Absolute path of the workspace directory. */
  readonly dir: string;
  /** Absolute path of `relative` inside the workspace. */
  path(relative: string): string;
  /** Writes a file (creating parent directories) and returns its absolute path. */
  write(relative: string, content: string | Uint8Array): Promise<string>;
  /** Reads a file of the workspace as UTF-8. */
  read(relative: string): Promise<string>;
  /** Removes the workspace and everything in it. */
  cleanup(): Promise<void>;
}

/**
 * Creates a temp workspace. It is world-readable (0755) so that a server spawned as an unprivileged user (for
 * permission tests while the suite runs as root) can still enter it.
 */
export async function tempWorkspace(prefix = "crow-test-"): Promise<TempWorkspace> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  await chmod(dir, 0o755);
  const abs = (relative: string) => path.join(dir, relative);
  return {
    dir,
    path: abs,
    write: async (relative, content) => {
      const file = abs(relative);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, content);
      return file;
    },
    read: (relative) => readFile(abs(relative), "utf8"),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}
