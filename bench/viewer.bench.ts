// `crow sessions serve` on a SQLite store holding a 10 000-message session and 10 000 sessions: server time of the
// session page (its first timeline page), of a later timeline page, of the chart data and of the sessions page; and
// in headless chromium (Debian's, installed when missing) the first screen of the 10 000-message session — first
// contentful paint, DOMContentLoaded, and the chart drawn — measured from navigation start. Target: first screen
// under 1 s.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { openStore } from "@crow/core";
import { launchBrowser } from "@crow/testkit";
import { startViewer } from "../packages/agent/src/viewer/server.js";
import { formatTiming, measure, measureSpan, writeReport } from "./lib.js";
import { history } from "./store.bench.js";

const HISTORY = 10_000;
const SESSIONS = 10_000;

export async function run(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "crow-bench-viewer-"));
  const store = await openStore(path.join(dir, "crow.db"));
  try {
    const long = await store.createSession({ cwd: dir, title: "A 10 000-message session", model: "m" });
    await store.appendMessages(long.id, history(HISTORY, dir));
    for (let i = 0; i < SESSIONS; i += 500) {
      await Promise.all(
        Array.from({ length: 500 }, (_, k) =>
          store.createSession({ cwd: `${dir}/p${(i + k) % 20}`, title: `s${i + k}` }),
        ),
      );
    }
    const prices = new Map([["m", { input: 1, output: 2, currency: "USD" }]]);
    // Server time of the pages, not of the token check.
    const viewer = await startViewer({ store, prices, token: false });
    const base = viewer.origin;
    const get = async (url: string) => {
      const res = await fetch(url);
      await res.text();
      if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
    };
    const server = {
      sessionPage: await measure(() => get(`${base}/s/${long.id}`), 30, 3),
      laterTimelinePage: await measure(() => get(`${base}/s/${long.id}/timeline?from=8000`), 30, 3),
      chartData: await measure(() => get(`${base}/s/${long.id}/chart`), 30, 3),
      sessionsPage: await measure(() => get(`${base}/`), 30, 3),
      sessionsPageFiltered: await measure(() => get(`${base}/?q=s99`), 30, 3),
    };
    for (const [name, timing] of Object.entries(server))
      console.log(`server ${name.padEnd(22)} ${formatTiming(timing)}`);

    const browser = await launchBrowser();
    const page = await browser.newPage();
    const paint = { fcp: [] as number[], domContentLoaded: [] as number[], chartDrawn: [] as number[] };
    const firstScreen = await measureSpan(
      async () => {
        const start = Date.now();
        await page.goto(`${base}/s/${long.id}`);
        await page.waitForSelector("#chart canvas");
        const chartDrawn = Date.now() - start;
        const [fcp, dcl] = (await page.evaluate(
          `[performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? NaN, performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd]`,
        )) as [number, number];
        paint.fcp.push(fcp);
        paint.domContentLoaded.push(dcl);
        paint.chartDrawn.push(chartDrawn);
        return chartDrawn;
      },
      15,
      2,
    );
    const items = Number(await page.evaluate(`document.querySelectorAll(".item").length`));
    await browser.close();
    await viewer.close();
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
    const browserResults = {
      firstContentfulPaintMs: median(paint.fcp),
      domContentLoadedMs: median(paint.domContentLoaded),
      chartDrawnMs: firstScreen,
      itemsOnFirstRender: items,
    };
    console.log(
      `chromium, ${HISTORY}-message session: first contentful paint ${browserResults.firstContentfulPaintMs.toFixed(0)} ms, ` +
        `DOMContentLoaded ${browserResults.domContentLoadedMs.toFixed(0)} ms, chart drawn ${formatTiming(firstScreen)}; ` +
        `${items} items rendered of ${HISTORY} messages (target: first screen < 1000 ms)`,
    );
    writeReport("viewer", { history: HISTORY, sessions: SESSIONS, server, browser: browserResults });
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}
