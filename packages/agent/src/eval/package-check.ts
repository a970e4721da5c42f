/**
 * Whether a Dockerfile's package installs are already satisfied, judged where the task's scripts run: inside the
 * trial's sandbox (its view of the host, its empty home), with the environment the scripts get — so the python3 that
 * answers is the one they will run, not one in a home the trial does not see (pyenv, uv). A Debian package counts
 * when dpkg has it installed or its command is there (npm from a vendor's nodejs); a pip distribution when the
 * trial's python3 has it, at the exact version an `==` pin names.
 */
import { errorText } from "@crow/core";
import { checkInTrialView, scriptBase, scriptEnvironment } from "./trial-sandbox.js";
import { pythonShims } from "./trial-view.js";

/**
 * Commands that tell a Debian package is there when dpkg does not (the command came another way: nodejs from its
 * vendor brings npm; a python image's shim is python-is-python3). A package not listed here counts by the command of
 * its own name.
 */
const PACKAGE_COMMANDS: Readonly<Record<string, readonly string[]>> = {
  "python-is-python3": ["python"],
  "python3-pip": ["pip3"],
  "build-essential": ["gcc", "g++", "make"],
  nodejs: ["node"],
  "golang-go": ["go"],
  golang: ["go"],
  "default-jdk": ["javac"],
  "default-jre": ["java"],
  "git-lfs": ["git-lfs"],
};

/**
 * bash: prints each of `pkg=cmd,cmd…` whose package dpkg does not have installed and whose commands are not all on
 * PATH — as the trial's scripts will find them.
 */
const APT_CHECK = `for spec in "$@"; do
  name=\${spec%%=*}; cmds=\${spec#*=}
  if dpkg-query -W -f='\${Status}' "$name" 2>/dev/null | grep -q 'install ok installed'; then continue; fi
  found=1; IFS=, read -ra list <<< "$cmds"
  for c in "\${list[@]}"; do command -v -- "$c" >/dev/null 2>&1 || found=0; done
  [ "$found" = 1 ] || echo "$name"
done`;

/**
 * python: prints each named distribution the trial's python3 lacks, or whose `==` pin it does not match (other
 * specifiers are not judged).
 */
const PIP_CHECK = `import sys, importlib.metadata as m
for spec in sys.argv[1:]:
  name, _, pin = spec.partition("==")
  try: v = m.version(name)
  except Exception: print(spec); continue
  if pin and v != pin: print(spec + " (has " + v + ")")`;

/** The environment the check of a RUN step runs with: what that step's scripts would get. */
export interface CheckContext {
  env: Record<string, string>;
  python: boolean;
}

/** What of `specs` is missing where the trial's scripts run (by the rule of `kind`'s check), or why it is not known. */
function missingInTrial(kind: "apt" | "pip", specs: readonly string[], context: CheckContext): string[] {
  const env = scriptEnvironment(scriptBase(), context.env, { shims: context.python });
  const shims = context.python ? pythonShims(scriptBase().PATH) : [];
  const command =
    kind === "apt" ? ["bash", "-c", APT_CHECK, "apt-check", ...specs] : ["python3", "-c", PIP_CHECK, ...specs];
  let result: ReturnType<typeof checkInTrialView>;
  try {
    result = checkInTrialView(command, env, shims);
  } catch (error) {
    return specs.map((spec) => `${spec} (cannot check: ${errorText(error)})`);
  }
  if (result.status !== 0)
    return specs.map((spec) => `${spec} (the check failed: ${result.stderr.trim().slice(-200)})`);
  return result.stdout.split("\n").filter((line) => line !== "");
}

/** The named Debian packages that a trial has neither installed nor as commands. */
export function aptMissing(names: readonly string[], context: CheckContext): string[] {
  const specs = names.map((name) => `${name}=${(PACKAGE_COMMANDS[name] ?? [name]).join(",")}`);
  return missingInTrial("apt", specs, context);
}

/** The Python distributions (`name` or `name==version`) that the trial's python3 lacks. */
export function pipMissing(specs: readonly string[], context: CheckContext): string[] {
  return missingInTrial("pip", specs, context);
}
