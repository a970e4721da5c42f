// Helpers of the `crow skills` tests: the built binary run with its own HOME and CROW_HOME, git repositories made
// on the spot, and the folder digest computed independently of the product (what skills-lock.json must record).
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { CROW_BIN } from "@crow/testkit";

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** This process's environment without Crow's, the provider's and npm's registry variables. */
export function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || key.startsWith("CROW_") || key.startsWith("OPENAI_")) continue;
    if (key.toLowerCase() === "npm_config_registry") continue;
    env[key] = value;
  }
  return env;
}

/**
 * Runs `crow skills <args>` in `cwd`, stdin not a terminal (as `uid` when given). Asynchronous on purpose: the loopback registries the
 * tests serve live in this process and must keep answering while crow runs.
 */
export function crowSkills(
  args: string[],
  options: { cwd: string; home: string; crowHome: string; env?: Record<string, string>; uid?: number },
): Promise<Run> {
  // With `uid` (tests running as root): as that user and its group, through setpriv.
  const command = options.uid === undefined ? process.execPath : "setpriv";
  const prefix =
    options.uid === undefined
      ? []
      : [`--reuid=${options.uid}`, `--regid=${options.uid}`, "--clear-groups", process.execPath];
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...prefix, CROW_BIN, "skills", ...args], {
      cwd: options.cwd,
      env: { ...cleanEnv(), HOME: options.home, CROW_HOME: options.crowHome, ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdin.end();
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "t",
  GIT_AUTHOR_EMAIL: "t@example.com",
  GIT_COMMITTER_NAME: "t",
  GIT_COMMITTER_EMAIL: "t@example.com",
};

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env: GIT_ENV, encoding: "utf8" }).trim();
}

/** A SKILL.md with `name` and `description` (and any other frontmatter lines). */
export function skillMd(name: string, description: string, extra = "", body = "Do the thing.\n"): string {
  return `---\nname: ${name}\ndescription: ${description}\n${extra}---\n${body}`;
}

/**
 * sha256 over each file's relative path then bytes, paths sorted with `localeCompare`: the lockfile's `computedHash`,
 * as the `skills` CLI 1.7.4 computes it (its `computeSkillFolderHash`).
 */
export function folderDigest(dir: string): string {
  const files: string[] = [];
  const walk = (rel: string) => {
    for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) files.push(child);
    }
  };
  walk("");
  const hash = createHash("sha256");
  for (const file of files.sort((a, b) => a.localeCompare(b))) {
    hash.update(file);
    hash.update(readFileSync(path.join(dir, file)));
  }
  return hash.digest("hex");
}

export function readJson(file: string): unknown {
  return JSON.parse(readFileSync(file, "utf8"));
}

/** A gzipped ustar archive of regular files (`body`) and symbolic links (`link`), names taken as given. */
export function tarArchive(entries: { name: string; body?: string; link?: string }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const body = Buffer.from(entry.body ?? "");
    const header = Buffer.alloc(512);
    header.write(entry.name, 0, 100);
    header.write("0000644\0", 100);
    header.write("0000000\0", 108);
    header.write("0000000\0", 116);
    header.write(`${body.length.toString(8).padStart(11, "0")}\0`, 124);
    header.write("00000000000\0", 136);
    header.write("        ", 148);
    header.write(entry.link ? "2" : "0", 156);
    if (entry.link) header.write(entry.link, 157, 100);
    header.write("ustar\0", 257);
    header.write("00", 263);
    let sum = 0;
    for (const byte of header) sum += byte;
    header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
    blocks.push(header, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}
