/**
 * The portable part of a task's `environment/Dockerfile`, applied to the trial's workspace at setup instead of
 * building an image: `WORKDIR`, `COPY`/`ADD` of files of environment/ into /app, `ENV`/`ARG` (for later steps and every
 * phase's scripts), and `RUN` executed in the trial's sandbox (setup phase: /app writable, the host read-only, the
 * task's network). A package install in a `RUN` (`apt-get install`, `pip install`) cannot change the host: it counts
 * as satisfied when the trial already has every package — checked inside the trial's sandbox, with the environment
 * the scripts get (the same python3, the same PATH): a Debian package by dpkg or by its command (`npm` from a vendor's
 * nodejs), a pip package by the trial's python3 (an exact `==` pin too) — and its `apt-get update`/cleanup is dropped
 * with it. A python image's trial gets `python` and `pip` (links to the host's python3 and pip3).
 *
 * Anything else — an image that is not a plain OS or language base, a multi-stage build, `USER`, `COPY --from`, a
 * URL `ADD`, files placed outside /app, a package the host lacks — means the task needs its image: the plan says
 * why, and the run skips the task with that reason rather than run it differently.
 */
import path from "node:path";
import { aptMissing, type CheckContext, pipMissing } from "./package-check.js";
import { CONTAINER, scriptBase } from "./trial-sandbox.js";
import { pythonShims } from "./trial-view.js";

export type DockerStep =
  | { kind: "copy"; sources: string[]; dest: string /** ADD: a local tar archive is unpacked. */; add?: true }
  | { kind: "run"; command: string; cwd: string; env: Record<string, string> };

/** What setup does for a task with a Dockerfile, or why it cannot. */
export type DockerPlan =
  | {
      ok: true;
      steps: DockerStep[];
      /** ENV set by the Dockerfile: every phase's scripts get it. */
      env: Record<string, string>;
      /** The working directory the image ends in (inside /app). */
      workdir: string;
      /** The instructions applied, one line each (recorded with each trial). */
      emulated: string[];
      /** FROM a python image: trials get its `python` and `pip` (trial-view.ts). */
      python: boolean;
    }
  | { ok: false; reason: string };

/**
 * Images whose content is a plain distribution or language runtime: the host's tools stand in for them. Docker Hub's
 * official images count under the registries that mirror them too (`public.ecr.aws/docker/library/ubuntu`,
 * `mirror.gcr.io/library/python`), as public tasks pin them that way to avoid Docker Hub's rate limit.
 */
const BASE_IMAGES =
  /^(?:(?:(?:docker\.io|index\.docker\.io|registry-1\.docker\.io|mirror\.gcr\.io|public\.ecr\.aws\/docker)\/)?(?:library\/)?(?:ubuntu|debian|python|node|buildpack-deps|golang|rust|gcc|openjdk|eclipse-temurin)|ghcr\.io\/laude-institute\/t-bench\/[\w.-]+)(?::[\w.-]+)?(?:@sha256:[0-9a-f]+)?$/;

/** Python's images (Docker's official ones, Terminal-Bench's python-3-13): they have `python` and `pip`. */
const PYTHON_IMAGE = /(?:^|\/)python[\w.-]*(?::[\w.-]+)?(?:@sha256:[0-9a-f]+)?$/;

/** The instructions of a Dockerfile: continuation lines joined, comments and blank lines dropped. */
export function dockerInstructions(text: string): Array<{ op: string; args: string }> {
  const joined = text.replace(/\\\r?\n/g, " ");
  const result: Array<{ op: string; args: string }> = [];
  for (const raw of joined.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = /^(\S+)\s*(.*)$/.exec(line);
    if (match) result.push({ op: (match[1] ?? "").toUpperCase(), args: match[2] ?? "" });
  }
  return result;
}

/** `["a", "b"]` (exec form) or `a b` (whitespace-separated). */
function words(args: string): string[] {
  if (args.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(args);
      if (Array.isArray(parsed)) return parsed.map(String);
    } catch {
      // Not JSON: read as words.
    }
  }
  return args.split(/\s+/).filter((w) => w !== "");
}

/**
 * `$NAME` / `${NAME}` as Docker expands them in an instruction: from the Dockerfile's ENV and ARG, else from the host
 * (which stands in for the image: `ENV PATH=/opt/x/bin:$PATH` extends the host's PATH), else empty. Crow's own
 * variables (`OPENAI_*`, `CROW_*`) are never taken from the host.
 */
function expand(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{(\w+)\}|\$(\w+)/g, (_whole, braced: string | undefined, bare: string | undefined) => {
    const name = braced ?? bare ?? "";
    const own = name.startsWith("OPENAI_") || name.startsWith("CROW_");
    return env[name] ?? (own ? undefined : process.env[name]) ?? "";
  });
}

/** `ENV a=1 b="2"` or `ENV a 1`. */
function assignments(args: string): Array<[string, string]> {
  if (!/^\w+=/.test(args)) {
    const [name = "", ...rest] = args.split(/\s+/);
    return [[name, rest.join(" ")]];
  }
  const pairs: Array<[string, string]> = [];
  for (const match of args.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|'[^']*'|\S*)/g)) {
    const value = match[2] ?? "";
    pairs.push([match[1] ?? "", /^["']/.test(value) ? value.slice(1, -1) : value]);
  }
  return pairs;
}

const PACKAGE_NOOP =
  /^(?:(?:sudo\s+)?apt(?:-get)?\s+(?:update|clean|autoclean|autoremove|upgrade)\b.*|rm\s+-rf?\s+\/var\/lib\/apt\/lists\S*\s*|pip3?\s+install\s+(?:-U\s+|--upgrade\s+)pip\s*)$/;
const APT_INSTALL = /^(?:\w+=\S+\s+)*(?:sudo\s+)?apt(?:-get)?\s+install\s+(.*)$/;
const PIP_INSTALL = /^(?:python3?\s+-m\s+)?(?:uv\s+)?pip3?\s+install\s+(.*)$/;

/**
 * A RUN command without its package installs, or why the host cannot stand in for them. Only `&&`-chained commands
 * are looked at; a package install elsewhere in a command runs as written (and fails on the read-only host).
 */
function withoutPackages(command: string, context: CheckContext): { command: string } | { reason: string } {
  const kept: string[] = [];
  for (const part of command.split(/\s*&&\s*/)) {
    const segment = part.trim();
    if (segment === "" || PACKAGE_NOOP.test(segment)) continue;
    const apt = APT_INSTALL.exec(segment);
    const pip = PIP_INSTALL.exec(segment);
    const named = (apt ?? pip)?.[1];
    if (named !== undefined) {
      const words = named.split(/\s+/).filter((w) => w !== "" && !w.startsWith("-"));
      if (pip && words.some((n) => n.includes("/") || n.endsWith(".txt"))) {
        return { reason: `RUN ${segment}: installs from files, not named packages` };
      }
      // apt: `name=version` is not judged (the host's version stands in); pip: an exact `==` pin is.
      const unquoted = words.map((w) => w.replace(/^["']|["']$/g, ""));
      const missing = apt
        ? aptMissing(
            unquoted.map((w) => w.replace(/[=:].*$/, "")),
            context,
          )
        : pipMissing(
            unquoted.map((w) => {
              const exact = /^([\w.-]+)(?:\[[^\]]*\])?==([\w.+!-]+)$/.exec(w);
              return exact ? `${exact[1]}==${exact[2]}` : w.replace(/(?:[=<>!~]=?|\[|;).*$/, "");
            }),
            context,
          );
      if (missing.length > 0) {
        const where = apt ? "apt package(s) not on this host" : "pip package(s) not in the trial's python3";
        return { reason: `${where}: ${missing.join(", ")}` };
      }
      continue;
    }
    kept.push(segment);
  }
  return { command: kept.join(" && ") };
}

/** Whether `target` (absolute, in the container) is /app or inside it. */
function inApp(target: string): boolean {
  return target === CONTAINER.app || target.startsWith(`${CONTAINER.app}/`);
}

/** The plan for `text`, the Dockerfile of a task. */
export function planDockerfile(text: string): DockerPlan {
  const env: Record<string, string> = {};
  const args: Record<string, string> = {};
  const steps: DockerStep[] = [];
  const emulated: string[] = [];
  let workdir = "/";
  let from = 0;
  let python = false;
  const needs = (reason: string): DockerPlan => ({ ok: false, reason: `needs the image: ${reason}` });
  for (const { op, args: rest } of dockerInstructions(text)) {
    const line = `${op} ${rest}`;
    const expanded = expand(rest, { ...args, ...env });
    switch (op) {
      case "FROM": {
        from++;
        const [image = "", ...more] = words(expanded).filter((w) => !w.startsWith("--"));
        if (from > 1 || more.length > 0) return needs("a multi-stage build");
        if (!BASE_IMAGES.test(image)) return needs(`FROM ${image} is not a plain OS or language base image`);
        python = PYTHON_IMAGE.test(image);
        const shims = python ? pythonShims(scriptBase().PATH) : [];
        const shown = shims.map((s) => `${s.name} → ${s.target}`).join(", ");
        emulated.push(`${line} (the host's tools${shims.length > 0 ? `; ${shown}` : ""})`);
        break;
      }
      case "WORKDIR": {
        workdir = path.posix.resolve(workdir, expanded.trim());
        if (!inApp(workdir)) return needs(`WORKDIR ${workdir} is outside /app`);
        emulated.push(line);
        break;
      }
      case "ENV":
      case "ARG": {
        for (const [name, value] of assignments(expanded)) {
          if (op === "ENV") env[name] = value;
          else if (!(name in args)) args[name] = value;
        }
        emulated.push(line);
        break;
      }
      case "COPY":
      case "ADD": {
        const all = words(expanded);
        const flags = all.filter((w) => w.startsWith("--"));
        if (flags.some((f) => f.startsWith("--from"))) return needs(`${op} --from (a multi-stage build)`);
        const paths = all.filter((w) => !w.startsWith("--"));
        const dest = paths.pop();
        if (dest === undefined || paths.length === 0) return needs(`${line} names no source`);
        if (paths.some((p) => /^[a-z]+:\/\//i.test(p))) return needs(`${op} of a URL`);
        const target = path.posix.resolve(workdir, dest);
        if (!inApp(target)) return needs(`${op} to ${target}, outside /app`);
        if (paths.some((p) => path.posix.normalize(p).startsWith("..")))
          return needs(`${op} from outside environment/`);
        const to = dest.endsWith("/") ? `${target}/` : target;
        steps.push({ kind: "copy", sources: paths, dest: to, ...(op === "ADD" ? { add: true as const } : {}) });
        emulated.push(line);
        break;
      }
      case "RUN": {
        if (rest.startsWith("--")) return needs(`RUN with options (${rest.split(/\s/)[0]})`);
        const form = words(rest);
        const command = rest.startsWith("[") ? form.map((w) => `'${w.replaceAll("'", "'\\''")}'`).join(" ") : rest;
        const stripped = withoutPackages(command, { env: { ...args, ...env }, python });
        if ("reason" in stripped) return needs(stripped.reason);
        if (stripped.command !== "") {
          steps.push({ kind: "run", command: stripped.command, cwd: workdir, env: { ...args, ...env } });
        }
        emulated.push(stripped.command === command ? line : `${line} (packages: the host's)`);
        break;
      }
      case "USER": {
        if (!["root", "0", "0:0", "root:root"].includes(expanded.trim())) return needs(`USER ${expanded.trim()}`);
        break;
      }
      case "CMD":
      case "ENTRYPOINT":
      case "VOLUME":
      case "LABEL":
      case "EXPOSE":
      case "MAINTAINER":
      case "STOPSIGNAL":
      case "HEALTHCHECK":
      case "SHELL":
        // Nothing to do without a container that starts (SHELL: RUN uses bash here).
        break;
      default:
        return needs(`${op} cannot be reproduced without the image`);
    }
  }
  return { ok: true, steps, env, workdir: inApp(workdir) ? workdir : CONTAINER.app, emulated, python };
}
