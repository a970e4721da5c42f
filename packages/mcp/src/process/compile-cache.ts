/**
 * Node's module compile cache for both executables: V8's code cache of the bundle and its chunks is kept on disk,
 * so a later start reuses it instead of compiling the same JavaScript again. `module.enableCompileCache()` exists
 * from Node 22.8 (on 22.1–22.7 only `NODE_COMPILE_CACHE=dir` enables it, which Node itself honours); on Node 20
 * this does nothing. Node keys the cache by its own version and by each file's content, so an upgrade of Node or
 * of Crow never reuses stale code.
 *
 * It must run before the code it should cover is compiled, so each executable's entry module (cli.ts) calls it and
 * only then imports the rest.
 */
import module from "node:module";
import { homedir } from "node:os";
import path from "node:path";

/**
 * Where the cache lives: the user's cache directory (`$XDG_CACHE_HOME`, else `~/.cache` on Linux,
 * `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows), in `crow/compile-cache`. A cache is not
 * configuration, so it stays out of the Crow home.
 */
// Read before crow-mcp's settings are (cli.ts calls it first), and a cache is not a setting: process plumbing.
export function compileCacheDir(env: NodeJS.ProcessEnv = process.env, platform = process.platform): string {
  const home = env.HOME || homedir();
  let base = env.XDG_CACHE_HOME;
  if (!base && platform === "darwin") base = path.join(home, "Library", "Caches");
  if (!base && platform === "win32") base = env.LOCALAPPDATA;
  return path.join(base || path.join(home, ".cache"), "crow", "compile-cache");
}

type EnableCompileCache = (dir?: string) => { status: number; message?: string; directory?: string };

/**
 * Enables the compile cache where Node has it. Never throws and never prints: a directory that cannot be created
 * or written only means no cache (Node reports that as a status, which is ignored), and stdout carries protocol
 * only. `NODE_DISABLE_COMPILE_CACHE=1` turns it off; `NODE_COMPILE_CACHE=dir` (Node's own) picks another directory.
 */
export function enableCompileCache(): void {
  const enable = (module as { enableCompileCache?: EnableCompileCache }).enableCompileCache;
  if (typeof enable !== "function") return;
  try {
    enable(compileCacheDir());
  } catch {
    // Starting matters more than starting faster.
  }
}
