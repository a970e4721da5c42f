/**
 * The mount namespace a root `crow eval run` (or `worker`) runs in: one of its own, private, made by running the same
 * command again under `unshare --mount --propagation private`. Every mount an image needs (the build's writable
 * overlays, the read-only overlays each trial sees, image-mounts.ts) is made there: the host's mount table never shows
 * them, every process of the run (the agent's toolserver included) sees them, and the kernel drops them all when the
 * run's last process exits — on Ctrl-C, a crash or SIGKILL as well — so nothing stale is left for the next run.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, readlinkSync } from "node:fs";

/** Set for the command run again: the mount namespace it left (so it can tell it has one of its own). */
export const MOUNT_NS_VARIABLE = "CROW_EVAL_MOUNT_NS";

function namespaceOf(pid: number | "self"): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined;
  }
}

/** Whether this process runs in the mount namespace of its own that {@link rerunInOwnMountNamespace} made. */
export function ownMountNamespace(): boolean {
  const left = process.env[MOUNT_NS_VARIABLE];
  const here = namespaceOf("self");
  return left !== undefined && here !== undefined && left !== here;
}

/**
 * `crow eval` commands that plan or run trials: `run` (with `--queue` too, so that it plans images as the workers
 * will build them) and `worker`.
 */
function runsTrials(command: string, args: readonly string[]): boolean {
  if (args.includes("--help") || args.includes("-h")) return false;
  return command === "run" || command === "worker";
}

let unshareProblem: string | undefined | null = null;

/** Why `unshare --mount` does not work here (not root, no util-linux, a container without the right), or undefined. */
export function unshareUnavailable(): string | undefined {
  if (unshareProblem !== null) return unshareProblem;
  if (process.geteuid?.() !== 0) {
    unshareProblem = `Crow runs as uid ${process.geteuid?.() ?? "?"}, not root`;
    return unshareProblem;
  }
  const probe = spawnSync("unshare", ["--mount", "--propagation", "private", "true"], { encoding: "utf8" });
  unshareProblem =
    probe.status === 0
      ? undefined
      : `unshare --mount failed: ${(probe.error?.message ?? probe.stderr ?? "").trim() || `exit ${probe.status}`}`;
  return unshareProblem;
}

/**
 * Whether `crow eval <command> <args>` should run again in a mount namespace of its own before doing anything: as
 * root, for commands that run trials, when not there yet and `unshare` works.
 */
export function wantsOwnMountNamespace(command: string, args: readonly string[]): boolean {
  if (process.geteuid?.() !== 0 || !runsTrials(command, args) || ownMountNamespace()) return false;
  return unshareUnavailable() === undefined;
}

/** The signal numbers of the signals passed on to the command run again. */
const FORWARDED: Record<string, number> = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1, SIGQUIT: 3 };

/**
 * Runs this very command again (same executable, options and arguments, same output) in a private mount namespace
 * and resolves to its exit code. The command runs in a session of its own, so that a signal reaches it once, from
 * here: Ctrl-C (SIGINT, from the terminal or `kill -INT`), SIGTERM, SIGHUP and SIGQUIT are passed on, and its own
 * handling decides (the first Ctrl-C stops cleanly, a second at once); should this process be killed anyway (SIGKILL),
 * the command is killed too (setpriv --pdeathsig SIGKILL): no run goes on unseen, and a killed worker stays a killed
 * worker — with SIGTERM it would stop cleanly and record the trial it was in, which the queue gives another worker.
 */
export function rerunInOwnMountNamespace(): Promise<number> {
  const argv = [process.execPath, ...process.execArgv, ...process.argv.slice(1)];
  const env = { ...process.env, [MOUNT_NS_VARIABLE]: namespaceOf("self") ?? "" };
  // setpriv's parent-death signal: should this process be killed (SIGKILL included), the run goes with it.
  const orphanless = spawnSync("setpriv", ["--pdeathsig", "SIGKILL", "true"]).status === 0;
  const command = [...(orphanless ? ["setpriv", "--pdeathsig", "SIGKILL", "--"] : []), ...argv];
  const child = spawn("unshare", ["--mount", "--propagation", "private", "--", ...command], {
    stdio: "inherit",
    env,
    detached: true,
  });
  const forwarders = Object.keys(FORWARDED).map((signal) => {
    const forward = () => child.kill(signal as NodeJS.Signals);
    process.on(signal, forward);
    return () => process.off(signal, forward);
  });
  return new Promise((resolve) => {
    const done = (code: number) => {
      for (const off of forwarders) off();
      resolve(code);
    };
    child.on("error", (error) => {
      process.stderr.write(`crow eval: could not run in a mount namespace of its own: ${error.message}\n`);
      done(1);
    });
    child.on("exit", (code, signal) => {
      const number = signal === null ? undefined : (FORWARDED[signal] ?? 9);
      done(code ?? 128 + (number ?? 1));
    });
  });
}

/** Whether the kernel has overlayfs (loaded, or as a module it can load on the first mount). */
export function kernelHasOverlay(): boolean {
  try {
    if (/\toverlay$/m.test(readFileSync("/proc/filesystems", "utf8"))) return true;
  } catch {
    // No /proc: not Linux as we know it.
  }
  try {
    const release = readFileSync("/proc/sys/kernel/osrelease", "utf8").trim();
    return spawnSync("find", [`/lib/modules/${release}/kernel/fs/overlayfs`, "-name", "overlay.ko*"], {
      encoding: "utf8",
    }).stdout.includes("overlay.ko");
  } catch {
    return false;
  }
}

/**
 * Why a Dockerfile's RUN steps cannot be built into an image here, or undefined when they can: root, a mount
 * namespace of its own (`unshare --mount`), and the kernel's overlayfs.
 */
export function imageBuildProblem(): string | undefined {
  if (process.geteuid?.() !== 0) return `building it needs root (Crow runs as uid ${process.geteuid?.() ?? "?"})`;
  if (!ownMountNamespace()) {
    const why = unshareUnavailable() ?? "only `crow eval run` and `crow eval worker` make one";
    return `building it needs a mount namespace of its own (${why})`;
  }
  if (!kernelHasOverlay()) return "building it needs the kernel's overlayfs, which this kernel lacks";
  return undefined;
}

let systemName: string | undefined;

/** The host's system as /etc/os-release names it ("Debian GNU/Linux 12 (bookworm)"): what stands in for FROM. */
export function hostSystemName(): string {
  if (systemName !== undefined) return systemName;
  try {
    const release = readFileSync("/etc/os-release", "utf8");
    systemName = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(release)?.[1] ?? "the host's system";
  } catch {
    systemName = "the host's system";
  }
  return systemName;
}
