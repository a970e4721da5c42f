/**
 * The check, once per process, that bubblewrap can confine commands here, and that the sandbox it builds holds: the
 * probe starts bwrap as the terminal's shell would (every capability dropped, a new PID namespace) and, inside,
 * reads its own capabilities and tries to remount / read-write. Run as root, bwrap keeps every capability inside
 * unless told otherwise, and with them a command can remount the read-only filesystem writable, unmount the binds
 * that hide Crow's keys or protect `.git`: a sandbox whose probe shows that is not called confined.
 *
 * bwrap and bash are resolved to absolute paths here, once, skipping PATH entries in the working directory (see
 * which.ts): every shell, including one restarted after the model wrote a `bwrap` into `.venv/bin`, runs these.
 */
import { spawn, spawnSync } from "node:child_process";
import { findOnPath, trustedExecutable } from "./which.js";

/**
 * Whether bubblewrap can confine commands here, and if not, why and what to do (or that the check did not finish).
 * `bwrap` and `bash` are the absolute paths every sandboxed shell runs; `root`: the process runs as root (the sandbox
 * then rests on dropped capabilities, which the probe checked).
 */
export type SandboxAvailability =
  | { ok: true; bwrap: string; bash: string; root: boolean }
  | {
      ok: false;
      reason: string;
      /**
       * The check did not finish (bwrap ran out of time or was killed): no verdict. It is not remembered, the next
       * check runs the probe again, and nothing may treat it as "bubblewrap cannot confine here": on a machine made
       * busy enough (by anyone) that would turn the sandbox off.
       */
      undecided?: true;
    };

let cached: SandboxAvailability | undefined;
/** The latest answer, undecided ones included (see {@link latestSandboxAnswer}). */
let latest: SandboxAvailability | undefined;
let probing: Promise<SandboxAvailability> | undefined;

/** The directory a shell's private /tmp hides: the bash run inside the sandbox must not live there. */
const PRIVATE_TMP = "/tmp";

/** What the probe's script prints when the sandbox holds. */
const CONFINED = "crow-sandbox-confined";

/**
 * Inside the probe: every capability set empty (and no way back through exec: no_new_privs, or an empty bounding
 * set), and a remount of / read-write refused. Prints {@link CONFINED}, or what it found instead.
 */
const PROBE_SCRIPT = `PATH=/usr/sbin:/usr/bin:/sbin:/bin
kept= nnp= bnd=
while read -r key value; do
  case "$key" in
    CapInh:|CapPrm:|CapEff:|CapAmb:) [ "$value" = 0000000000000000 ] || kept="$kept $key$value" ;;
    CapBnd:) bnd=$value ;;
    NoNewPrivs:) nnp=$value ;;
  esac
done </proc/self/status
if [ -n "$kept" ]; then echo "capabilities kept inside:$kept"; exit 0; fi
if [ "$nnp" != 1 ] && [ "$bnd" != 0000000000000000 ]; then echo "a program run inside could regain capabilities (no_new_privs is not set)"; exit 0; fi
if command -v mount >/dev/null 2>&1 && mount -o remount,bind,rw / 2>/dev/null; then echo "remounting / read-write succeeded inside"; exit 0; fi
echo ${CONFINED}`;

/** The probe: bwrap with the namespaces and the capability drop the sandbox uses, running the check above. */
function probeArgs(bash: string): string[] {
  return [
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--unshare-pid",
    "--unshare-ipc",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--",
    bash,
    "-c",
    PROBE_SCRIPT,
  ];
}
const PROBE_TIMEOUT_MS = 10_000;

const NOT_LINUX = (): SandboxAvailability => ({
  ok: false,
  reason: `commands run unconfined: Crow's sandbox uses bubblewrap, which exists only on Linux (this is ${process.platform}).`,
});

const NOT_INSTALLED =
  "commands run unconfined: bubblewrap (bwrap) is not installed. Install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) to confine them, or set sandbox: off in config.yaml to silence this notice.";

/** The bubblewrap this process runs, as its configuration names it (see {@link useBwrapProgram}). */
let bwrapProgram = "bwrap";

/**
 * Sets the bubblewrap to run: `CROW_BWRAP` as each executable's loader read it (crow-mcp's settings.ts, the agent's
 * configuration; tests, unusual installs), a bare name looked up like `bwrap`, or a path; undefined: `bwrap`. Set it
 * before the first check: the answer is kept for the process (tests call {@link resetSandboxAvailability} after).
 */
export function useBwrapProgram(program: string | undefined): void {
  bwrapProgram = program || "bwrap";
}

/**
 * The bwrap and bash to run, as absolute paths, or why there are none. bwrap: the one configured
 * ({@link useBwrapProgram}) or `bwrap`, from PATH when a bare name; bash: from PATH, outside /tmp (the shell's /tmp
 * is a private one). Neither from a PATH entry in the working directory.
 */
function programs(): { bwrap: string; bash: string } | SandboxAvailability {
  const name = bwrapProgram;
  const bwrap = trustedExecutable(name);
  if (!bwrap) {
    const planted = findOnPath(name, []);
    if (!planted) return { ok: false, reason: NOT_INSTALLED };
    return {
      ok: false,
      reason: `commands run unconfined: the only bwrap on PATH is ${planted}, in the working directory, where a command could have put it, so it cannot be trusted to build the sandbox. Install bubblewrap system-wide (Debian/Ubuntu: apt-get install bubblewrap), or set CROW_BWRAP to its absolute path.`,
    };
  }
  const bash = trustedExecutable("bash", [PRIVATE_TMP]);
  if (!bash) {
    return {
      ok: false,
      reason:
        "commands run unconfined: no bash found on PATH outside the working directory and /tmp (the sandbox runs its shell from there). Put bash's directory (usually /usr/bin) on PATH.",
    };
  }
  return { bwrap, bash };
}

/** The verdict on one run of the probe: how it failed to start (`error`), or its exit status and output. */
function verdict(
  found: { bwrap: string; bash: string },
  error: NodeJS.ErrnoException | undefined,
  status: number | null,
  signal: NodeJS.Signals | null,
  stdout: string,
  stderr: string,
): SandboxAvailability {
  if (error?.code === "ENOENT") return { ok: false, reason: NOT_INSTALLED };
  // Out of time (killed with SIGTERM then) or killed by anyone: what bwrap would have found is unknown.
  if (signal || error?.code === "ETIMEDOUT") {
    const what =
      error?.code === "ETIMEDOUT" || signal === "SIGTERM"
        ? `bwrap did not answer within ${PROBE_TIMEOUT_MS / 1000} s`
        : `bwrap was killed by ${signal}`;
    return {
      ok: false,
      undecided: true,
      reason: `the sandbox check did not finish (${what}; is the machine overloaded?), so no command runs until it passes: the next command checks again.`,
    };
  }
  if (error || status !== 0) {
    const why = (error?.message ?? stderr).trim() || `exit code ${status}`;
    return {
      ok: false,
      reason: `commands run unconfined: bubblewrap cannot create a sandbox here (${why}). This usually means user namespaces are disabled (containers, kernel.unprivileged_userns_clone=0 or an AppArmor restriction); allow them, or set sandbox: off in config.yaml to silence this notice.`,
    };
  }
  const root = process.getuid?.() === 0;
  if (stdout.trim() !== CONFINED) {
    const what = stdout.trim().split("\n").at(-1) || "the check inside did not run";
    return {
      ok: false,
      reason: `commands run unconfined: bubblewrap starts, but its sandbox does not hold here (${what})${root ? ": run as root, a command inside could remount the filesystem writable and undo the sandbox's walls" : ""}, so Crow does not call it confined. Use the distribution's bubblewrap${root ? ", or run Crow as an ordinary user" : ""}; set sandbox: off in config.yaml to silence this notice.`,
    };
  }
  return { ok: true, ...found, root };
}

/**
 * Checks once per process that bwrap runs, creates the namespaces the sandbox needs (some containers forbid user
 * namespaces) and that its sandbox holds (no capability inside, a remount refused). Synchronous: it runs once and
 * takes a few milliseconds. A process that knows early it will need the answer starts {@link probeSandbox} instead,
 * so the check runs while it does other things; this then returns its answer.
 */
export function sandboxAvailability(): SandboxAvailability {
  if (cached) return cached;
  if (process.platform !== "linux") {
    cached = NOT_LINUX();
    return cached;
  }
  const found = programs();
  if ("ok" in found) {
    cached = found;
    return cached;
  }
  const probe = spawnSync(found.bwrap, probeArgs(found.bash), { encoding: "utf8", timeout: PROBE_TIMEOUT_MS });
  return remember(
    verdict(
      found,
      probe.error as NodeJS.ErrnoException | undefined,
      probe.status,
      probe.signal,
      probe.stdout ?? "",
      probe.stderr ?? "",
    ),
  );
}

/** Keeps a verdict for the rest of the process; an undecided answer is only the latest answer, until the next. */
function remember(answer: SandboxAvailability): SandboxAvailability {
  if (answer.ok || !answer.undecided) cached = answer;
  latest = answer;
  return answer;
}

/**
 * The answer of the latest check that finished (a verdict, or undecided), without running anything; undefined
 * before any did. For callers that must not wait: an undecided answer here is not refreshed by reading it.
 */
export function latestSandboxAnswer(): SandboxAvailability | undefined {
  return cached ?? latest;
}

/**
 * The same check as {@link sandboxAvailability}, without blocking: bwrap runs as a child process while the caller
 * goes on (the agent starts it when it starts, and awaits it when a session opens). Once per process; never rejects.
 */
export function probeSandbox(): Promise<SandboxAvailability> {
  if (cached) return Promise.resolve(cached);
  if (process.platform !== "linux") return Promise.resolve(sandboxAvailability());
  const found = programs();
  if ("ok" in found) {
    cached ??= found;
    return Promise.resolve(cached);
  }
  probing ??= new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    let failure: NodeJS.ErrnoException | undefined;
    let settled = false;
    const settle = (status: number | null, signal: NodeJS.Signals | null) => {
      // `close` follows `error` too: the first decides.
      if (settled) return;
      settled = true;
      // A synchronous check that ran meanwhile already decided: one answer per process.
      const answer = cached ?? remember(verdict(found, failure, status, signal, stdout, stderr));
      // No verdict: the next caller probes again.
      if (answer !== cached) probing = undefined;
      resolve(answer);
    };
    const child = spawn(found.bwrap, probeArgs(found.bash), {
      stdio: ["ignore", "pipe", "pipe"],
      timeout: PROBE_TIMEOUT_MS,
    });
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      stderr += text;
    });
    // ENOENT and the like: no `close` follows a spawn that failed.
    child.once("error", (error: NodeJS.ErrnoException) => {
      failure = error;
      settle(null, null);
    });
    child.once("close", (code, signal) => settle(code, signal));
  });
  return probing;
}

/** Forgets the cached availability (tests that point {@link useBwrapProgram} elsewhere). */
export function resetSandboxAvailability(): void {
  cached = undefined;
  latest = undefined;
  probing = undefined;
}
