/**
 * The skills folder of a scope, held open for every write and delete (the discipline of core's fs-beneath.ts, which
 * the file tools and rewind use): a project's `.agents` and `.agents/skills` are opened one by one without following
 * links, so a link planted there (by a sandboxed session, or committed) is refused instead of written through. The
 * global folder `~/.agents/skills` is the user's own: it is opened as the user's links make it.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { BeneathDir } from "@crow/core/internal";
import { SourceError } from "./errors.js";
import type { Scope } from "./scope.js";

/**
 * Runs `work` in the skills folder of `scope`, opened as above; with `create`, missing folders are made. Resolves to
 * undefined (without running `work`) when the folder does not exist and `create` is false.
 */
export async function inSkillsFolder<T>(
  scope: Scope,
  create: boolean,
  work: (dir: BeneathDir) => Promise<T>,
): Promise<T | undefined> {
  let root: string;
  let below: string[];
  if (scope.kind === "global") {
    if (create) await mkdir(scope.skillsDir, { recursive: true });
    root = scope.skillsDir;
    below = [];
  } else {
    root = scope.base;
    below = path.relative(scope.base, scope.skillsDir).split(path.sep);
  }
  let dir: BeneathDir;
  try {
    dir = await BeneathDir.open(root);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && !create) return undefined;
    throw error;
  }
  try {
    for (const name of below) {
      const next = await openChild(dir, name, create);
      if (!next) return undefined;
      await dir.close();
      dir = next;
    }
    return await work(dir);
  } finally {
    await dir.close();
  }
}

async function openChild(parent: BeneathDir, name: string, create: boolean): Promise<BeneathDir | undefined> {
  const shown = path.join(parent.shown, name);
  try {
    return await parent.child(name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "ENOTDIR") {
      throw new SourceError(
        `${shown} is a symbolic link or not a folder: Crow installs and removes skills only in a real folder there; ` +
          "look at what it points to, remove it, and run the command again",
      );
    }
    if (code !== "ENOENT" || !create) {
      if (code === "ENOENT") return undefined;
      throw error;
    }
  }
  await mkdir(parent.at(name)).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EEXIST") throw error;
  });
  return parent.child(name);
}
