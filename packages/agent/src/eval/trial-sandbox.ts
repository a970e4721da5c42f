/**
 * The container paths of Harbor's tasks without a container: every task script (a Dockerfile's RUN at setup,
 * solution/solve.sh, tests/test.sh) runs in a bubblewrap sandbox of its own that shows
 *
 *   /app              the trial's workspace (writable; the cwd)
 *   /tests            a fresh, writable copy of the task's tests/ for each verifier run — verifier only
 *   /solution         the task's solution/, read-only — oracle only
 *   /logs/agent       writable (setup, oracle and verifier)
 *   /logs/verifier    writable by the verifier only (read-only, empty, for the oracle)
 *
 * over a read-only view of the host's system directories only (its tools are what the task gets: there is no image;
 * trial-view.ts says which: no home, no other project or suite), with a fresh /tmp, an empty home, an empty /run (no host service sockets), the suite's own directory and Crow's home hidden, its own
 * PID and IPC namespaces, no network unless the task allows it, and — when run as root — no capabilities, so that
 * `apt-get install` or a write outside these paths fails instead of changing the host. The script's variables are set
 * inside the sandbox only: bwrap itself runs with an empty environment, so a task's `LD_PRELOAD` (or any loader or
 * shell start-up variable) is never loaded by a host process. A task with an image (image-build.ts) sees its layer over
 * the host's /usr, /etc, /opt and /var instead, read-only; only the image's build writes there, with the few
 * capabilities of {@link buildCapabilities}. When the script exits, bwrap
 * (the namespace's init) exits and the kernel kills everything it left running: nothing outlives its phase to
 * rewrite the reward.
 */
import { spawnSync } from "node:child_process";
import { realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { hostRootArgs, procWallArgs, sandboxAvailability } from "@crow/mcp/sandbox";
import type { AgentConfig } from "../config/index.js";
import { childProcessEnvironment } from "../tools/child-env.js";
import { type ImageView, inSubmount } from "./image-mounts.js";
import { privateHostEntries } from "./image-secrets.js";
import { runScript, type ScriptOutcome } from "./script.js";
import { ExposeError, exposedPaths, realOrSelf, SHIMS, unseenHostPaths } from "./trial-view.js";

/** Which script runs: each sees only its own paths (`build`: an image's RUN and COPY steps, image-build.ts). */
export type TrialPhase = "setup" | "build" | "solution" | "verifier";

/** The host directories of one trial behind the container paths. */
export interface TrialMounts {
  app: string;
  /** The trial's logs/, holding agent/ and verifier/. */
  logs: string;
  /** The task's tests/ (copied for the verifier only). */
  tests: string;
  /** The verifier's /tests: a fresh copy of {@link tests} for each verifier run, writable. */
  testsCopy: string;
  /** Links to the commands a python image has (trial-view.ts), shown at {@link SHIMS}; none for other images. */
  shims?: string;
  /** The task's solution/ (bound for the oracle only). */
  solution: string;
  /** Host paths no script may see (the suite directory, Crow's home). */
  hidden: readonly string[];
  /** The task's image (image-build.ts), shown over the host's /usr, /etc, /opt, /var: read-only but for a build. */
  image?: ImageView;
}

/** The container paths, as the EVAL_* variables name them too. */
export const CONTAINER = { app: "/app", tests: "/tests", logs: "/logs", solution: "/solution" } as const;

/** `crow eval` cannot confine task scripts here; the message says why and what to do. */
export class TrialSandboxError extends Error {
  override name = "TrialSandboxError";
}

/**
 * The probe's reason without what it says to a session (commands then run unconfined, or the notice can be silenced
 * with `sandbox: off`): a trial never runs unconfined, whatever config.yaml says.
 */
function unconfinedWhy(reason: string): string {
  return reason
    .replace(/^commands run unconfined: /, "")
    .replace(/[,;]? (?:or )?set sandbox: off in config\.yaml to silence this notice\./, ".");
}

/**
 * bwrap's absolute path as the sandbox's probe found and checked it (outside the working directory, capabilities
 * dropped even as root). Throws {@link TrialSandboxError} when it cannot confine here: trials never run unconfined.
 */
export function trialBwrap(): string {
  const available = sandboxAvailability();
  if (!available.ok)
    throw new TrialSandboxError(`every trial runs in a sandbox, but ${unconfinedWhy(available.reason)}`);
  return available.bwrap;
}

/** The container paths and the sandbox's own directories: never the host's, whatever it has there. */
const OWN_ROOT = ["proc", "dev", "tmp", "run", "app", "tests", "logs", "solution"];

/**
 * The host's `/` as a trial sees it, rebuilt on a tmpfs (so the container paths can be created on it): its system
 * directories read-only, the rest left out (trial-view.ts) — top-level entries not there at all, deeper ones (of
 * /var) empty. With an image, its directories stand in for the host's /usr, /etc, /opt and /var, with what the host
 * mounts below them (a container's /etc/resolv.conf) bound again, read-only; the private entries of the host
 * (image-secrets.ts) are then hidden by the image's mask layer, else here.
 */
function rootArgs(unseen: readonly string[], image: ImageView | undefined): string[] {
  const top = unseen.filter((p) => path.dirname(p) === "/").map((p) => p.slice(1));
  const deeper = unseen.filter((p) => path.dirname(p) !== "/");
  const replaced = image ? Object.keys(image.dirs) : [];
  const args = hostRootArgs(new Set([...OWN_ROOT, ...top, ...replaced]));
  if (!image) return [...args, ...hiddenArgs(deeper), ...hiddenArgs(privateHostEntries())];
  for (const [dir, source] of Object.entries(image.dirs))
    args.push(image.writable ? "--bind" : "--ro-bind", source, `/${dir}`);
  for (const submount of image.submounts) args.push("--ro-bind", submount, submount);
  const submounts = image.submounts;
  return [...args, ...hiddenArgs(deeper), ...hiddenArgs(privateHostEntries().filter((e) => inSubmount(e, submounts)))];
}

/** Whether `entry` lies in one of `unseen` (already out of view: hiding it again would make its parents appear). */
function alreadyUnseen(entry: string, unseen: readonly string[]): boolean {
  return unseen.some((dir) => entry === dir || entry.startsWith(`${dir}/`));
}

/** A directory becomes an empty one, a file /dev/null; what does not exist needs nothing. */
export function hiddenArgs(hidden: readonly string[]): string[] {
  const args: string[] = [];
  for (const entry of hidden) {
    let real: string;
    try {
      real = realpathSync(entry);
    } catch {
      continue;
    }
    if (statSync(real).isDirectory()) args.push("--tmpfs", real);
    else args.push("--ro-bind", "/dev/null", real);
  }
  return args;
}

export interface ScriptSandbox {
  phase: TrialPhase;
  network: boolean;
  /** Where the script starts, as the sandbox sees it (default /app). */
  cwd?: string;
  /** Host directories shown read-only under {@link STAGE} (what setup's COPY and the verifier's /tests copy from). */
  staged?: Readonly<Record<string, string>>;
}

/**
 * Where a script sees what it copies from (`<STAGE>/environment` for a Dockerfile's COPY, `<STAGE>/tests` for the
 * verifier's /tests), read-only, on the sandbox's own /run: the copy itself runs inside the sandbox, so a link it
 * meets (one a RUN planted in /app) resolves in the sandbox's view and can reach nothing of the host it may write.
 */
export const STAGE = "/run/crow-eval";

/**
 * What every sandbox of a trial starts from: the host's system directories read-only, the sandbox's own /dev, /proc,
 * /tmp and /run, an empty home, `hidden` hidden. Every bind added after takes its source from the host as it is:
 * what the view leaves out does not hide it.
 */
function viewOptions(hidden: readonly string[], image?: ImageView): string[] {
  const unseen = unseenHostPaths([]);
  const args = [...rootArgs(unseen, image), "--dev", "/dev", "--proc", "/proc", ...procWallArgs()];
  args.push("--tmpfs", "/tmp", "--tmpfs", "/run");
  // The home exists, empty, as an image's would.
  const home = homedir();
  if (path.isAbsolute(home) && home !== "/") args.push("--tmpfs", home);
  // What the user exposes (CROW_EVAL_EXPOSE), even inside the home; what is hidden stays hidden.
  for (const exposed of exposedPaths()) args.push("--ro-bind", exposed, exposed);
  args.push(...hiddenArgs(hidden.filter((entry) => !alreadyUnseen(realOrSelf(entry), unseen))));
  return args;
}

/**
 * What an image build's RUN steps may do as root, no more: change owners and modes of what they install (dpkg,
 * useradd), write where only root may (CAP_DAC_OVERRIDE: inside the image's overlay, the sandbox's only writable
 * system directories), set file capabilities (ping). Never CAP_SYS_ADMIN (mount, remount: the way out), nor
 * CAP_MKNOD, CAP_SYS_PTRACE, CAP_NET_ADMIN. Switching users (su, runuser in a package's scripts) only without the
 * network: with the host's network namespace a step could act as any local user toward the host's abstract unix
 * sockets (an X server, a session bus) that trust the caller's uid.
 */
function buildCapabilities(network: boolean): string[] {
  const caps = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_SETFCAP"];
  if (!network) caps.push("CAP_SETUID", "CAP_SETGID");
  return caps;
}

/**
 * The end of every trial sandbox's options: the root sealed, own namespaces, no capabilities (a build: those of
 * {@link buildCapabilities}; bwrap sets no_new_privs, so no setuid or file-capability program gains more).
 */
function sealOptions(network: boolean, cwd: string, phase?: TrialPhase): string[] {
  const args = ["--remount-ro", "/", "--unshare-pid", "--unshare-ipc", "--unshare-uts"];
  if (!network) args.push("--unshare-net");
  // As root the sandbox would keep every capability (remount, chown…): none, so the read-only host stays read-only.
  args.push("--cap-drop", "ALL");
  if (phase === "build") for (const cap of buildCapabilities(network)) args.push("--cap-add", cap);
  args.push("--die-with-parent", "--new-session", "--chdir", cwd);
  return args;
}

/**
 * Runs `command` synchronously where a trial's scripts run — the same view of the host, an empty home, `env` set
 * inside only (so the same `python3`, the same PATH) — without a workspace or network: setup's "is this here"
 * checks. `shims`: the links a python image's trial gets in {@link SHIMS}.
 */
export function checkInTrialView(
  command: readonly string[],
  env: NodeJS.ProcessEnv,
  shims: ReadonlyArray<{ name: string; target: string }> = [],
): { status: number | null; stdout: string; stderr: string } {
  const args = [...viewOptions([]), ...shims.flatMap((s) => ["--symlink", s.target, `${SHIMS}/${s.name}`])];
  args.push(...sealOptions(false, "/"), ...environmentOptions(env));
  const run = spawnSync(trialBwrap(), ["--args", "0", "--", ...command], {
    env: {},
    input: Buffer.from(args.map((a) => `${a}\0`).join("")),
    encoding: "utf8",
    timeout: 60_000,
  });
  return { status: run.status, stdout: run.stdout ?? "", stderr: `${run.stderr ?? ""}${run.error?.message ?? ""}` };
}

function sandboxOptions(mounts: TrialMounts, sandbox: ScriptSandbox): string[] {
  if (sandbox.phase === "build" && !mounts.image?.writable) throw new Error("an image build without its overlay");
  const args = viewOptions(mounts.hidden, mounts.image);
  // /logs itself is scratch space, as in a container (a test may write there); only its two folders are kept.
  args.push("--bind", mounts.app, CONTAINER.app, "--tmpfs", CONTAINER.logs);
  args.push("--bind", path.join(mounts.logs, "agent"), `${CONTAINER.logs}/agent`);
  args.push("--bind", path.join(mounts.logs, "artifacts"), `${CONTAINER.logs}/artifacts`);
  const verifierLogs = path.join(mounts.logs, "verifier");
  args.push(sandbox.phase === "verifier" ? "--bind" : "--ro-bind", verifierLogs, `${CONTAINER.logs}/verifier`);
  // The verifier's /tests: this run's own copy, writable (a test may build there), as Harbor copies tests in.
  if (sandbox.phase === "verifier") args.push("--bind", mounts.testsCopy, CONTAINER.tests);
  if (sandbox.phase === "solution") args.push("--ro-bind", mounts.solution, CONTAINER.solution);
  for (const [name, source] of Object.entries(sandbox.staged ?? {})) {
    args.push("--ro-bind", source, `${STAGE}/${name}`);
  }
  if (mounts.shims) args.push("--ro-bind", mounts.shims, SHIMS);
  args.push(...sealOptions(sandbox.network, sandbox.cwd ?? CONTAINER.app, sandbox.phase));
  return args;
}

/** bwrap's options setting `env` inside the sandbox only (after clearing what bwrap itself runs with). */
function environmentOptions(env: NodeJS.ProcessEnv): string[] {
  const args = ["--clearenv"];
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && settable(name, value)) args.push("--setenv", name, value);
  }
  return args;
}

/** A name bwrap can set (setenv refuses `=`), and a value that fits its NUL-separated `--args`. */
function settable(name: string, value: string): boolean {
  return /^[^=\0]+$/.test(name) && !value.includes("\0");
}

/**
 * Runs `command` (bash and its arguments) in the trial's sandbox. bwrap itself starts with an empty environment:
 * the script's variables — the task's own, which may name `LD_PRELOAD`, `LD_AUDIT` or a shell's start-up file — are
 * set inside the sandbox only (`--clearenv`, `--setenv`), passed to bwrap on descriptor 3, never loaded by a host
 * process. A task's `LD_PRELOAD` applies to its scripts, as in its image.
 */
export function runInTrial(
  mounts: TrialMounts,
  sandbox: ScriptSandbox,
  command: readonly string[],
  options: { env: NodeJS.ProcessEnv; timeoutMs: number; signal?: AbortSignal; maxOutputChars?: number },
): Promise<ScriptOutcome> {
  const args = [...sandboxOptions(mounts, sandbox), ...environmentOptions(options.env)];
  const fd3 = Buffer.from(args.map((a) => `${a}\0`).join(""));
  return runScript([trialBwrap(), "--args", "3", "--", ...command], {
    env: {},
    fd3,
    timeoutMs: options.timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.maxOutputChars ? { maxOutputChars: options.maxOutputChars } : {}),
  });
}

/**
 * Crow's own settings and the provider's endpoint are the agent's business, not a task script's (the child-process
 * policy has already left out every secret).
 */
function isCrowsOwn(key: string): boolean {
  return key.startsWith("OPENAI_") || key.startsWith("CROW_");
}

/** The child-process environment a task script starts from: the agent's, without Crow's own settings. */
export function scriptBase(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(childProcessEnvironment())) if (!isCrowsOwn(key)) env[key] = value;
  return env;
}

/**
 * The environment of a task script: the child-process environment (`base`), HOME and TMPDIR as the sandbox has them,
 * `extra` (the task's), the shims' directory first on PATH for a python image, and the EVAL_* names of the container
 * paths.
 */
export function scriptEnvironment(
  base: NodeJS.ProcessEnv,
  extra: Readonly<Record<string, string>>,
  options: { shims?: boolean } = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, HOME: homedir(), TMPDIR: "/tmp", ...extra };
  // A python image's `python` and `pip` come first, as its /usr/local/bin does.
  if (options.shims) env.PATH = env.PATH ? `${SHIMS}:${env.PATH}` : SHIMS;
  return {
    ...env,
    EVAL_APP_DIR: CONTAINER.app,
    EVAL_TESTS_DIR: CONTAINER.tests,
    EVAL_LOGS_DIR: CONTAINER.logs,
    EVAL_SOLUTION_DIR: CONTAINER.solution,
  };
}

/**
 * The configuration trials run under: the agent's sandbox `required` whatever config.yaml says (a trial never runs
 * unconfined), after checking that bwrap works here (throws {@link TrialSandboxError} otherwise).
 */
export function evalConfig(config: AgentConfig): AgentConfig {
  trialBwrap();
  try {
    exposedPaths();
  } catch (error) {
    // Said by `crow eval`'s front, which puts its own prefix on it.
    if (error instanceof ExposeError) throw new TrialSandboxError(error.message);
    throw error;
  }
  return { ...config, sandbox: { ...config.sandbox, enabled: "required" } };
}
