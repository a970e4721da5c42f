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
 * When the host lacks a package a RUN installs (or a RUN installs from files, or names a system directory) and Crow
 * can build here (root, image-namespace.ts), the plan holds an image instead (image-build.ts): every step up to the
 * last RUN, as written, built once into a layer over the host's system directories.
 *
 * Anything else — an image that is not a plain OS or language base, a multi-stage build, `USER`, `COPY --from`, a
 * URL `ADD`, files placed outside /app, a package the host lacks where Crow cannot build — means the task needs its
 * image: the plan says why, and the run skips the task with that reason rather than run it differently.
 */
import path from "node:path";
import { hostSystemName, imageBuildProblem } from "./image-namespace.js";
import { aptMissing, type CheckContext, pipMissing } from "./package-check.js";
import { CONTAINER, scriptBase } from "./trial-sandbox.js";
import { pythonShims } from "./trial-view.js";

export type DockerStep =
  | { kind: "copy"; sources: string[]; dest: string /** ADD: a local tar archive is unpacked. */; add?: true }
  | { kind: "run"; command: string; cwd: string; env: Record<string, string> };

/**
 * The part of a Dockerfile built into an image layer (image-build.ts) when the host lacks what its RUN steps install
 * and Crow can build here (root): the steps up to the last RUN, each RUN as written.
 */
export interface ImagePlan {
  steps: DockerStep[];
  /** The FROM image the host's system stands in for. */
  from: string;
  /** Why the layer is built: what the host lacks. */
  why: string[];
}

/** What setup does for a task with a Dockerfile, or why it cannot. */
export type DockerPlan =
  | {
      ok: true;
      /** The steps setup runs in each trial's workspace (with an image: those after its last RUN). */
      steps: DockerStep[];
      /** The image layer the trials run over, built once (image-build.ts); none when the host has everything. */
      image?: ImagePlan;
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
 * A RUN command that may write outside /app, into the system directories an image holds: one naming a path there, a
 * `make install`, a `dpkg -i`, an `npm install -g`. Where Crow can build an image, such a step goes into one (it would
 * fail on the read-only host); elsewhere it runs as today.
 */
const SYSTEM_WRITE =
  /(?:^|[\s>=:'"(])\/(?:usr|etc|opt|var)\/|\bmake\s+install\b|\bdpkg\s+(?:-i|--install)\b|\bnpm\s+(?:install|i)\s+(?:-g|--global)\b/;

/** The Debian packages the `apt-get install`s of a RUN command name (`&&`-chained ones; versions left out). */
export function aptInstallNames(command: string): string[] {
  return command.split(/\s*&&\s*/).flatMap((part) => {
    const named = APT_INSTALL.exec(part.trim())?.[1] ?? "";
    return named
      .split(/\s+/)
      .filter((w) => w !== "" && !w.startsWith("-"))
      .map((w) => w.replace(/^["']|["']$/g, "").replace(/[=:].*$/, ""));
  });
}

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
  // The same steps with every RUN as written, should an image be built; and why it would be.
  const asWritten: DockerStep[] = [];
  const why: string[] = [];
  const runLines: number[] = [];
  let fromImage = "";
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
        fromImage = image;
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
        const copy = {
          kind: "copy" as const,
          sources: paths,
          dest: to,
          ...(op === "ADD" ? { add: true as const } : {}),
        };
        steps.push(copy);
        asWritten.push(copy);
        emulated.push(line);
        break;
      }
      case "RUN": {
        if (rest.startsWith("--")) return needs(`RUN with options (${rest.split(/\s/)[0]})`);
        const form = words(rest);
        const command = rest.startsWith("[") ? form.map((w) => `'${w.replaceAll("'", "'\\''")}'`).join(" ") : rest;
        const stripped = withoutPackages(command, { env: { ...args, ...env }, python });
        asWritten.push({ kind: "run", command, cwd: workdir, env: { ...args, ...env } });
        runLines.push(emulated.length);
        if ("reason" in stripped) {
          // The host lacks it: the RUN steps are built into an image where Crow can (root), else the task needs one.
          const problem = imageBuildProblem();
          if (problem !== undefined) return needs(`${stripped.reason} (${problem})`);
          why.push(stripped.reason);
          emulated.push(line);
          break;
        }
        if (SYSTEM_WRITE.test(stripped.command) && imageBuildProblem() === undefined) {
          why.push(`RUN ${stripped.command.slice(0, 80)} may write to the system directories`);
        }
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
  const end = { env, workdir: inApp(workdir) ? workdir : CONTAINER.app, python };
  if (why.length === 0) return { ok: true, steps, emulated, ...end };
  // An image: every step up to the last RUN goes into its layer as written; the COPY steps after it, into /app.
  const lastRun = asWritten.findLastIndex((step) => step.kind === "run");
  for (const index of runLines)
    emulated[index] = `${emulated[index]?.replace(/ \(packages: the host's\)$/, "")} (in the image)`;
  emulated.push(
    `image: ${fromImage} approximated by ${hostSystemName()} (the host's) with a layer of its RUN steps (${why.join("; ")})`,
  );
  const image: ImagePlan = { steps: asWritten.slice(0, lastRun + 1), from: fromImage, why };
  return { ok: true, steps: asWritten.slice(lastRun + 1), image, emulated, ...end };
}
