/**
 * An image without Docker: a task's Dockerfile steps up to its last RUN, run as root in an overlay over the host's
 * /usr, /etc, /opt and /var (the lower layers, with the mask of image-secrets.ts between), writing only to a
 * per-image upper layer, which is then kept in the cache (image-cache.ts) and shown read-only, over the same lower
 * layers, to every script and the agent's shell of every trial of that image. Each step runs in the trial sandbox
 * (trial-sandbox.ts: the host's view, nothing else) with a few capabilities (never CAP_SYS_ADMIN), the task's
 * network and apt told to run as root (`APT::Sandbox::User`): without network a package the host's apt cache lacks
 * fails the build, named.
 *
 * Built once per key: a process builds each key at most once (a failure is remembered for the run), and across
 * processes the key's lock makes a second builder wait and then take the finished entry.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { aptInstallNames, type ImagePlan } from "./dockerfile.js";
import {
  cachedImage,
  type ImageRecord,
  imageKey,
  imagesDir,
  lockImage,
  removeLeftoverBuilds,
  treeSize,
} from "./image-cache.js";
import {
  IMAGE_DIRS,
  type ImageDir,
  type ImageDirs,
  ImageError,
  type ImageView,
  mountOverlay,
  runMountRoot,
  submountsOfImageDirs,
  unmount,
} from "./image-mounts.js";
import { ownMountNamespace } from "./image-namespace.js";
import { makeMaskLayers, sameAttributes } from "./image-secrets.js";
import { boundedOutput } from "./script.js";
import { runSetupSteps, SETUP_OUTPUT_CHARS, SetupError } from "./setup-steps.js";
import type { EvalTask } from "./suite.js";
import { checkInTrialView, STAGE, scriptBase, scriptEnvironment } from "./trial-sandbox.js";
import { createTrialWorkspace } from "./workspace.js";

/** An image ready for a trial. */
export interface ServedImage {
  key: string;
  /** Its directories, read-only, for every sandbox of the trial. */
  view: ImageView;
  /** /app as its build left it (copied into each workspace). */
  app: string;
  /** One line for the trial's record: which image, built now or taken from the cache. */
  note: string;
  /** What its build printed (kept in the entry). */
  output: string;
}

/** The host's directories an image layers over (those it has). */
function layeredDirs(): ImageDir[] {
  return IMAGE_DIRS.filter((dir) => existsSync(`/${dir}`));
}

const images = new Map<string, Promise<ServedImage>>();
const served = new Set<string>();
let masks: { root: string; used: Set<string> } | undefined;

/** The mask layers (image-secrets.ts), made once per process on the run's tmpfs. */
function maskLayers(mounts: string): { root: string; used: Set<string> } {
  if (!masks) {
    const root = path.join(mounts, "mask");
    mkdirSync(root, { mode: 0o700 });
    masks = { root, used: makeMaskLayers(root) };
  }
  return masks;
}

/** The lower layers of `dir`, top first: the image's upper layer (when given), the mask, the host's. */
function lowerLayers(mounts: string, dir: ImageDir, upper?: string): string[] {
  const mask = maskLayers(mounts);
  return [...(upper ? [upper] : []), ...(mask.used.has(dir) ? [path.join(mask.root, dir)] : []), `/${dir}`];
}

/**
 * The image of `task` (whose Dockerfile's steps `plan` holds) for a trial: from the cache, or built now; throws
 * {@link SetupError} (a step failed) or {@link ImageError} (it cannot be built or served here).
 */
export function imageFor(task: EvalTask, plan: ImagePlan, home: string, signal: AbortSignal): Promise<ServedImage> {
  if (!ownMountNamespace()) {
    return Promise.reject(
      new ImageError("images are built only by a root `crow eval run` or `worker`, in a mount namespace of its own"),
    );
  }
  const dir = imagesDir(home);
  const python = task.docker?.ok === true && task.docker.python;
  const copied = plan.steps.flatMap((step) => (step.kind === "copy" ? step.sources : []));
  const key = imageKey({
    instructions: { from: plan.from, steps: plan.steps, python, env: task.env.environment },
    environmentDir: task.environmentDir ?? "/nonexistent",
    copied,
  });
  let image = images.get(key);
  if (!image) {
    image = prepare(task, plan, { dir, key, home }, signal);
    images.set(key, image);
  }
  return image;
}

/** Where an image goes: the cache directory, its key, Crow's home (hidden from the build like from every trial). */
interface Place {
  dir: string;
  key: string;
  home: string;
}

async function prepare(task: EvalTask, plan: ImagePlan, place: Place, signal: AbortSignal): Promise<ServedImage> {
  const { dir, key } = place;
  const release = await lockImage(dir, key, signal);
  try {
    let record = cachedImage(dir, key);
    let note: string;
    if (record) note = `image ${key.slice(0, 12)}: from the cache (built ${record.builtAt})`;
    else {
      removeLeftoverBuilds(dir, key);
      record = await build(task, plan, place, signal);
      note = `image ${key.slice(0, 12)}: built by this run (${(treeSize(path.join(dir, key, "upper")) / 1e6).toFixed(1)} MB)`;
    }
    return { key, view: serve(dir, key), app: path.join(dir, key, "app"), note, output: record.output ?? "" };
  } finally {
    release();
  }
}

/** The image's layer mounted read-only (once per process) over each host directory, for every trial's sandboxes. */
function serve(dir: string, key: string): ImageView {
  const mounts = runMountRoot(dir);
  const dirs: ImageDirs = {};
  for (const name of layeredDirs()) {
    const target = path.join(mounts, key, name);
    // Known by what this process mounted, not by the directory: one left by a failed mount must not serve empty.
    if (!served.has(target)) {
      mountOverlay(target, lowerLayers(mounts, name, path.join(dir, key, "upper", name)));
      served.add(target);
    }
    dirs[name] = target;
  }
  return { dirs, writable: false, submounts: submountsOfImageDirs(dir) };
}

/**
 * The apt configuration of a build: as root (there is no `_apt` user to switch to in a build's sandbox). Not
 * `--no-download` without network (apt 2.6 then refuses a local `./x.deb`: "Pathname to install is not absolute"):
 * the network namespace is the sandbox's own, so a download fails at once and the diagnosis names the package.
 */
const APT_CONFIG = 'APT::Sandbox::User "root";\n';

/** Builds `key` from `plan`'s steps into a fresh directory, renamed into place once complete. */
async function build(task: EvalTask, plan: ImagePlan, place: Place, signal: AbortSignal): Promise<ImageRecord> {
  const { dir, key } = place;
  const building = path.join(dir, `.build-${key}-${randomBytes(4).toString("hex")}`);
  const mounts = runMountRoot(dir);
  const merged = path.join(mounts, path.basename(building));
  const dirs: ImageDirs = {};
  const mounted: string[] = [];
  const workspace = createTrialWorkspace(task, [place.home]);
  try {
    mkdirSync(path.join(building, "app"), { recursive: true, mode: 0o700 });
    for (const name of layeredDirs()) {
      const upper = path.join(building, "upper", name);
      const work = path.join(building, "work", name);
      mkdirSync(upper, { recursive: true });
      mkdirSync(work, { recursive: true });
      sameAttributes(upper, `/${name}`);
      const target = path.join(merged, name);
      mountOverlay(target, lowerLayers(mounts, name), { upper, work });
      mounted.push(target);
      dirs[name] = target;
    }
    withoutServiceStarts(path.join(building, "upper", "usr"));
    const apt = path.join(merged, "apt");
    mkdirSync(apt, { mode: 0o700 });
    writeFileSync(path.join(apt, "apt.conf"), APT_CONFIG);
    workspace.app = path.join(building, "app");
    workspace.image = { dirs, writable: true, submounts: submountsOfImageDirs(dir) };
    const python = task.docker?.ok === true && task.docker.python;
    const output = await runSetupSteps(task, workspace, plan.steps, {
      phase: "build",
      // A python image's pip installs into its python; the host's Debian python refuses (PEP 668) unless told.
      env: { APT_CONFIG: `${STAGE}/apt/apt.conf`, ...(python ? { PIP_BREAK_SYSTEM_PACKAGES: "1" } : {}) },
      staged: { apt },
      deadline: Date.now() + task.buildTimeoutSec * 1000,
      signal,
    }).catch((error: unknown) => {
      if (!(error instanceof SetupError) || task.allowInternet) throw error;
      throw new SetupError(`${error.message}${offlineDiagnosis(plan)}`, error.output);
    });
    for (const target of mounted.splice(0)) unmount(target);
    rmSync(path.join(building, "work"), { recursive: true, force: true });
    const record: ImageRecord = {
      key,
      builtAt: new Date().toISOString(),
      from: plan.from,
      steps: plan.steps.map((step) => (step.kind === "run" ? `RUN ${step.command}` : `COPY ${step.sources.join(" ")}`)),
      output: boundedOutput(output, SETUP_OUTPUT_CHARS),
    };
    writeFileSync(path.join(building, "image.json"), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
    renameSync(building, path.join(dir, key));
    return record;
  } finally {
    for (const target of mounted) unmount(target);
    workspace.remove();
    // Left when the build failed (a complete one was renamed away); rmSync never follows a planted link.
    rmSync(building, { recursive: true, force: true });
  }
}

/**
 * Debian's and Ubuntu's images ship /usr/sbin/policy-rc.d saying "do not start services" (exit 101), so a package
 * installed in a build does not start its daemon: so does the layer, unless the host has one of its own.
 */
function withoutServiceStarts(upperUsr: string): void {
  if (existsSync("/usr/sbin/policy-rc.d") || !existsSync("/usr/sbin")) return;
  const sbin = path.join(upperUsr, "sbin");
  mkdirSync(sbin);
  sameAttributes(sbin, "/usr/sbin");
  writeFileSync(
    path.join(sbin, "policy-rc.d"),
    "#!/bin/sh\n# Crow's image build: no service starts, as in Docker's Debian images.\nexit 101\n",
    {
      mode: 0o755,
    },
  );
}

/**
 * Why an offline build failed, when apt is the cause: the packages its RUN steps name that the host's apt cache
 * lacks (apt-get --print-uris in the host's view, which lists what it would download), or those apt does not know.
 */
function offlineDiagnosis(plan: ImagePlan): string {
  const names = [...new Set(plan.steps.flatMap((step) => (step.kind === "run" ? aptInstallNames(step.command) : [])))];
  const local = names.filter((name) => !name.includes("/"));
  if (local.length === 0) return " (the task gives the build no network: [environment] network_mode / allow_internet)";
  const env = scriptEnvironment(scriptBase(), {});
  const args = ["apt-get", "install", "-qq", "--print-uris", "-o", "APT::Sandbox::User=root", ...local];
  const check = checkInTrialView(args, env);
  const lacking = [...check.stdout.matchAll(/^'[^']*' ([^_\s]+)_/gm)].map((m) => m[1]);
  const unknown = [...check.stderr.matchAll(/Unable to locate package (\S+)/g)].map((m) => m[1]);
  const parts = [
    ...(lacking.length > 0 ? [`not in the host's apt cache (/var/cache/apt/archives): ${lacking.join(", ")}`] : []),
    ...(unknown.length > 0 ? [`unknown to the host's apt: ${unknown.join(", ")}`] : []),
  ];
  const which = parts.length > 0 ? `; apt package(s) ${parts.join("; ")}` : "";
  return ` (the task gives the build no network — [environment] network_mode / allow_internet — so apt installs only from the host's cache${which})`;
}
