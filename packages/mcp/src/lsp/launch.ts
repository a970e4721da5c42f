/**
 * Starting a language server inside the walls of the session that needs it. A confined session's server runs in
 * bubblewrap as the terminal's shell does (the same probe, the same bwrapArgs), under a policy of its own derived from
 * the session's: the whole filesystem read-only, the session's hidden files hidden, no network, and only its private
 * /tmp writable (where its caches go: TMPDIR and XDG_CACHE_HOME point there). An unconfined session's server runs as
 * the user would start it. Either way its environment is the shell's: the secrets scrubbed (child-env.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { childEnvironment } from "../child-env.js";
import { bwrapArgs, inside, sandboxAvailability, writableRoots } from "../sandbox/bwrap.js";
import type { SandboxPolicy } from "../sandbox/policy.js";
import { makeTerminalDir } from "../terminal/temp-dirs.js";

/** The policy a language server of a session under `policy` runs under (see the file comment); undefined: none. */
export function serverPolicy(policy: SandboxPolicy): SandboxPolicy | undefined {
  if (policy.mode === "off") return undefined;
  return {
    mode: "read-only",
    writable: [],
    readOnly: [],
    network: false,
    ...(policy.hidden ? { hidden: [...policy.hidden] } : {}),
    ...(policy.binds ? { binds: policy.binds.map((b) => ({ ...b })) } : {}),
  };
}

/**
 * The folders a confined server must read besides the workspace, as a PATH for the sandbox's PATH rules (which mount
 * those of them lying in its private places — /tmp, /run — read-only, and never a hidden one): the `node_modules`
 * tree the server was installed in (its `.bin` entry is a link into it, and it loads its packages from there) or else
 * its own folder, then the session's PATH (its interpreter: `#!/usr/bin/env node`). Without them a server installed
 * under /tmp could not start confined ("execvp …: No such file or directory").
 *
 * The folder is taken from the path the server was found at, never from where a link leads: a server found in the
 * workspace adds nothing (the workspace is shown, and a link the session planted there must not open another folder
 * to it); one found in the workspace's parents or on PATH lies where the session cannot write.
 */
export function serverSearchPath(executable: string, root: string, searchPath: string | undefined): string {
  const rest = searchPath ? [searchPath] : [];
  if (inside(path.resolve(executable), path.resolve(root))) return rest.join(path.delimiter);
  const parts = path.resolve(executable).split(path.sep);
  const top = parts.indexOf("node_modules");
  const home = top > 0 ? parts.slice(0, top + 1).join(path.sep) : path.dirname(path.resolve(executable));
  return [home, ...rest].join(path.delimiter);
}

/** A started server process, and how to remove what was made for it. */
export interface Launched {
  readonly child: ChildProcess;
  /** Removes the private directory (after the process has ended). */
  cleanup(): void;
}

/**
 * Starts `executable args` for a workspace at `root`, confined when `policy` (the session's) says so. Throws, with a
 * sentence saying why, when a confined session's sandbox cannot start.
 */
export function launchServer(
  executable: string,
  args: readonly string[],
  root: string,
  policy: SandboxPolicy,
): Launched {
  // The environment passed on to the server, filtered (child-env.ts): plumbing, not a read of crow-mcp's settings.
  const env = childEnvironment(process.env);
  const confined = serverPolicy(policy);
  if (!confined) {
    const child = spawn(executable, [...args], { cwd: root, env, stdio: ["pipe", "pipe", "pipe"] });
    return { child, cleanup: () => {} };
  }
  const available = sandboxAvailability();
  if (!available.ok) throw new Error(`the sandbox cannot start: ${available.reason}`);
  // As for the shell: a bwrap the session could have written is not trusted to build the walls.
  if (writableRoots(policy).some((root) => inside(available.bwrap, root))) {
    throw new Error(`the sandbox cannot start: ${available.bwrap} lies in a directory this session may write`);
  }
  const dir = makeTerminalDir();
  const privateTmp = path.join(dir, "tmp");
  mkdirSync(privateTmp, { mode: 0o700 });
  Object.assign(env, { TMPDIR: "/tmp", XDG_CACHE_HOME: "/tmp/.cache" });
  const layout = {
    cwd: root,
    privateTmp,
    commandDir: privateTmp,
    searchPath: serverSearchPath(executable, root, env.PATH),
  };
  const argv = [...bwrapArgs(confined, layout), executable, ...args];
  const child = spawn(available.bwrap, argv, { cwd: root, env, stdio: ["pipe", "pipe", "pipe"] });
  return { child, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
