/**
 * The notice for a session whose writable directories take in the filesystem's root or the user's home (`--add-dir ~`,
 * `additionalDirectories: ["/"]`, `crow run` in `~`, `sandbox.writable: [~]`): the sandbox then lets commands change
 * `~/.bashrc`, `~/.ssh` and everything else that runs or is trusted outside it. Accepted (the user may mean it), but
 * never without a word.
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import { homeDir } from "@crow/core/home";

function real(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return path.resolve(dir);
  }
}

/**
 * The notice to show when one of `roots` is `/`, the home directory `home`, or a directory above it; undefined when
 * none is.
 */
export function broadRootsNotice(roots: readonly string[], home: string = homeDir()): string | undefined {
  const realHome = real(home);
  const broad: string[] = [];
  for (const root of roots) {
    const resolved = real(root);
    const rel = path.relative(resolved, realHome);
    const holdsHome = rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
    if ((resolved === path.parse(resolved).root || holdsHome) && !broad.includes(root)) broad.push(root);
  }
  if (broad.length === 0) return undefined;
  const named = broad
    .map((dir) =>
      real(dir) === realHome
        ? `${dir} (your home directory)`
        : real(dir) === "/"
          ? `${dir} (the whole filesystem)`
          : `${dir} (holds your home directory)`,
    )
    .join(", ");
  return `Sandbox: this session may write in ${named}, so commands can change your shell startup files (~/.bashrc, ~/.profile), ~/.ssh and other files that run or are trusted outside the sandbox. Open the session in a project directory, and add only the directories it needs.`;
}
