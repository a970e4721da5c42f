/**
 * The mounts of an image, all in the run's own mount namespace (image-namespace.ts), none in the host's: a tmpfs at
 * `<images>/.mnt` holding the mount points, the build's writable overlays, and the read-only overlays every trial of
 * an image sees (`nodev,nosuid`: a device node or setuid file a RUN step left in the layer is inert).
 */

import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { errorText } from "@crow/core";

/** An image that cannot be built or served here (cache, mounts); the message names the path and what to do. */
export class ImageError extends Error {
  override name = "ImageError";
}

/** The host's system directories an image layers over (the lower layers): what `apt-get`, `pip` and `make install` write. */
export const IMAGE_DIRS = ["usr", "etc", "opt", "var"] as const;
export type ImageDir = (typeof IMAGE_DIRS)[number];

/** Where each of {@link IMAGE_DIRS} (that the host has) is mounted for a sandbox to bind over `/<dir>`. */
export type ImageDirs = Partial<Record<ImageDir, string>>;

/** The image's directories as a sandbox shows them: writable (a build's) or read-only (a trial's). */
export interface ImageView {
  dirs: ImageDirs;
  writable: boolean;
  /** The host's mounts below those directories ({@link submountsOfImageDirs}), bound again read-only. */
  submounts: readonly string[];
}

function run(command: string, args: readonly string[]): void {
  const result = spawnSync(command, args, { encoding: "utf8" });
  if (result.status !== 0) {
    const why = (result.error?.message ?? result.stderr ?? "").trim() || `exit ${result.status}`;
    throw new ImageError(`${command} ${args.join(" ")}: ${why}`);
  }
}

const runRoots = new Set<string>();

/**
 * `<images>/.mnt`, a tmpfs only root can enter, mounted once per process in its own mount namespace (so two runs
 * each have their own, and nothing remains on the disk or in the host's mount table when the run ends).
 */
export function runMountRoot(images: string): string {
  const root = path.join(images, ".mnt");
  if (runRoots.has(root)) return root;
  mkdirSync(root, { recursive: true, mode: 0o700 });
  run("mount", ["-t", "tmpfs", "-o", "mode=0700,nodev,nosuid,size=64m", "crow-eval-images", root]);
  runRoots.add(root);
  return root;
}

/**
 * Mounts an overlay of `lower` (top first) at `target`: writable with `upper`/`work` (a build), read-only without
 * (a trial's view). `lower` entries and the paths must not hold `:` or `,` (imagesDir refuses such a cache).
 */
export function mountOverlay(target: string, lower: readonly string[], upper?: { upper: string; work: string }): void {
  mkdirSync(target, { recursive: true, mode: 0o700 });
  const layers = `lowerdir=${lower.join(":")}`;
  const options = upper ? `${layers},upperdir=${upper.upper},workdir=${upper.work}` : `ro,nodev,nosuid,${layers}`;
  try {
    run("mount", ["-t", "overlay", "-o", options, "crow-eval-image", target]);
  } catch (error) {
    const why = errorText(error);
    throw new ImageError(
      `overlayfs could not be mounted (${why}); the cache's filesystem must support it as an upper layer ` +
        "(not overlayfs itself, as a container's root often is): set CROW_HOME on a disk filesystem",
    );
  }
}

/** Unmounts `target` (lazily: a process still in it does not keep the build from finishing). */
export function unmount(target: string): void {
  spawnSync("umount", ["--lazy", target], { encoding: "utf8" });
}

/** Whether `entry` lies in one of `submounts` (or is one). */
export function inSubmount(entry: string, submounts: readonly string[]): boolean {
  return submounts.some((m) => entry === m || entry.startsWith(`${m}/`));
}

/** `\040`-style escapes of /proc/self/mountinfo decoded. */
function unescaped(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_all, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/**
 * The mount points strictly below the host's `/<dir>` of {@link IMAGE_DIRS} (in a container: /etc/resolv.conf,
 * /etc/hosts, /etc/hostname). An overlay's lower layer does not show them, so every image sandbox binds each again,
 * read-only, at its place.
 */
export function submountsOfImageDirs(images: string): string[] {
  let table: string;
  try {
    table = readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return [];
  }
  const found: string[] = [];
  for (const line of table.split("\n")) {
    const point = line.split(" ")[4];
    if (point === undefined) continue;
    const mountPoint = unescaped(point);
    if (IMAGE_DIRS.some((dir) => mountPoint.startsWith(`/${dir}/`))) found.push(mountPoint);
  }
  // The run's own mounts (a cache under /var or /opt) are not the host's: only what the host had.
  return [...new Set(found)].filter((p) => p !== images && !p.startsWith(`${images}/`));
}
