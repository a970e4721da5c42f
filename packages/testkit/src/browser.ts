/**
 * A real browser for tests: Debian's `chromium`, driven headless by playwright-core (which never downloads a browser
 * of its own). `ensureChromium()` installs the package once when it is missing (tests run as root in CI; `apt-get
 * update` first) and fails with the reason when it cannot. Chromium starts with the flags this sandbox needs (no
 * background networking: the network is closed) and a fresh profile directory.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";

/** Where Debian's chromium package puts the browser (`CROW_CHROMIUM` overrides). */
export const CHROMIUM = process.env.CROW_CHROMIUM ?? "/usr/bin/chromium";

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    let output = "";
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-4000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("error", (error) => resolve({ code: -1, output: error.message }));
    child.on("close", (code) => resolve({ code, output }));
  });
}

let installing: Promise<string> | undefined;

/** The chromium executable, installed with apt-get on first use when missing. Rejects saying why it is unusable. */
export function ensureChromium(): Promise<string> {
  installing ??= (async () => {
    if (existsSync(CHROMIUM)) return CHROMIUM;
    if (process.getuid?.() !== 0) {
      throw new Error(`${CHROMIUM} is missing and installing it needs root: run apt-get install -y chromium`);
    }
    for (const args of [["update"], ["install", "-y", "--no-install-recommends", "chromium"]]) {
      const { code, output } = await run("apt-get", args);
      if (code !== 0)
        throw new Error(`apt-get ${args.join(" ")} failed (exit ${code}), so there is no chromium:\n${output}`);
    }
    if (!existsSync(CHROMIUM)) throw new Error(`apt-get installed chromium but ${CHROMIUM} does not exist`);
    return CHROMIUM;
  })();
  return installing;
}

/** The flags of a headless Chromium in a closed sandbox (besides `--headless` and the profile, which Playwright adds). */
export const CHROMIUM_FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface TestBrowser {
  context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** Starts headless chromium with a fresh profile (removed on close). */
export async function launchBrowser(): Promise<TestBrowser> {
  const executablePath = await ensureChromium();
  const { chromium } = await import("playwright-core");
  const profile = await mkdtemp(path.join(tmpdir(), "crow-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: CHROMIUM_FLAGS,
    // Chromium keeps its NSS database and caches under HOME (~/.pki, ~/.cache); a test never writes to the real one.
    env: { ...process.env, HOME: profile },
    viewport: { width: 1400, height: 900 },
  });
  return {
    context,
    newPage: () => context.newPage(),
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/** Runs in a blank page: decodes a PNG on a canvas and counts its colours. */
const DECODE = `async (base64) => {
  const image = new Image();
  image.src = "data:image/png;base64," + base64;
  await image.decode();
  const canvas = document.createElement("canvas");
  canvas.width = image.naturalWidth;
  canvas.height = image.naturalHeight;
  const ctx = canvas.getContext("2d");
  ctx.drawImage(image, 0, 0);
  const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
  const counts = new Map();
  let samples = 0;
  for (let i = 0; i < data.length; i += 4 * 7) {
    const key = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
    counts.set(key, (counts.get(key) || 0) + 1);
    samples++;
  }
  const top = Math.max(...counts.values());
  return { colours: counts.size, inked: (samples - top) / samples };
}`;

/**
 * How much a PNG shows: distinct colours among sampled pixels and the share of pixels that differ from the most
 * common one (the background). A blank or single-colour screenshot has 1 colour and 0 share. Decoded by the
 * browser itself (an image drawn on a canvas in a blank page).
 */
export async function pngContent(context: BrowserContext, png: Buffer): Promise<{ colours: number; inked: number }> {
  const page = await context.newPage();
  try {
    // A string, not a function: this package is compiled without the DOM's types.
    const result = await page.evaluate(`(${DECODE})(${JSON.stringify(png.toString("base64"))})`);
    return result as { colours: number; inked: number };
  } finally {
    await page.close();
  }
}
