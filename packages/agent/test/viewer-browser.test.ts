/**
 * The viewer in a real browser: Debian's chromium (installed by `ensureChromium` when missing), headless, driven by
 * playwright-core. Loads the sessions page and a session with tool calls, a diff, a compaction and a subagent;
 * clicks through to the child; compares two sessions; pages through a 1 000-message session; and watches a session
 * grow while `crow run` (another process) works through a mock-LLM turn. Screenshots go to the test's temp dir and
 * must show something. With CROW_UPDATE_SCREENSHOT=1 the session page's screenshot also replaces docs/viewer.png
 * (the README's picture).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { openStore, type Store } from "@crow/core";
import {
  CROW_BIN,
  launchBrowser,
  type MockLlm,
  pngContent,
  REPO_ROOT,
  reply,
  startMockLlm,
  type TempWorkspace,
  type TestBrowser,
  tempWorkspace,
} from "@crow/testkit";
import type { Page } from "playwright-core";
import { type RunningViewer, startViewer } from "../src/viewer/server.js";
import { runEnv } from "./run-helpers.js";
import { EXTERNAL_IMAGE, type Fixture, PRICES, populate } from "./viewer-fixtures.js";

/** The computed text and background colours of the first element matching `selector`, as "rgb(r, g, b)". */
async function textColours(page: Page, selector: string): Promise<[string, string]> {
  const style = `getComputedStyle(document.querySelector(${JSON.stringify(selector)}))`;
  return [String(await page.evaluate(`${style}.color`)), String(await page.evaluate(`${style}.backgroundColor`))];
}

/** WCAG 2's contrast ratio between two opaque `rgb(…)` colours (1 to 21). */
function contrastRatio(a: string, b: string): number {
  const luminance = (colour: string) => {
    const [r = 0, g = 0, bl = 0] = (colour.match(/[\d.]+/g) ?? []).map(Number).map((c) => {
      const s = c / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

describe("the viewer in chromium", () => {
  let ws: TempWorkspace;
  let home: TempWorkspace;
  let store: Store;
  let viewer: RunningViewer;
  let browser: TestBrowser;
  let page: Page;
  let ids: Fixture;
  let mock: MockLlm;

  /** Saves a screenshot under the temp dir and checks that it is not blank. */
  async function screenshot(name: string): Promise<Buffer> {
    const file = path.join(home.dir, `${name}.png`);
    const png = await page.screenshot({ path: file });
    const content = await pngContent(browser.context, png);
    assert.ok(content.colours > 20 && content.inked > 0.02, `${file} looks blank: ${JSON.stringify(content)}`);
    return png;
  }

  before(async () => {
    ws = await tempWorkspace("crow-viewer-ws-");
    home = await tempWorkspace("crow-viewer-home-");
    store = await openStore(path.join(home.dir, "crow.db"));
    ids = await populate(store, ws.dir);
    viewer = await startViewer({ store, prices: PRICES, pollMs: 100 });
    browser = await launchBrowser();
    page = await browser.newPage();
    // The URL crow sessions serve prints: its ?token= sets the cookie the later pages are opened with.
    await page.goto(viewer.url);
    mock = await startMockLlm();
  });
  after(async () => {
    await browser?.close();
    await viewer?.close();
    await store?.close();
    await mock?.close();
    await ws?.cleanup();
    await home?.cleanup();
  });

  test("sessions page, session page, inert model HTML, chart, and the click through to the subagent", async () => {
    const external = new URL(EXTERNAL_IMAGE).origin;
    const leaked: string[] = [];
    page.on("request", (request) => {
      if (request.url().startsWith(external)) leaked.push(request.url());
    });
    await page.goto(viewer.url);
    assert.equal(await page.locator("tr.session-row").count(), 4);
    assert.equal(await page.locator(`tr[data-id="${ids.chat}"] td.title a`).textContent(), "Explain closures");
    await screenshot("sessions");

    await page.locator(`tr[data-id="${ids.task}"] td.title a`).click();
    await page.waitForURL(`**/s/${ids.task}`);
    assert.equal(await page.locator("h1.session-title").textContent(), "Fix the parser bug");
    assert.equal(await page.locator("details.tool").count(), 5);
    assert.equal(await page.locator("details.tool.status-error").count(), 1);
    assert.equal(await page.locator('details.tool[data-tool="edit"] .d-add').textContent(), "+i + 1");
    assert.equal(await page.locator('details.tool[data-tool="edit"] .d-remove').textContent(), "-i - 1");
    // a collapsed thought shows only its summary
    assert.equal(await page.locator("details.thought").first().getAttribute("open"), null);
    assert.equal(await page.locator("details.thought pre").first().isVisible(), false);
    await page.locator("details.thought summary").first().click();
    assert.equal(await page.locator("details.thought pre").first().isVisible(), true);
    // the image is shown (decoded by the browser)
    assert.equal(await page.evaluate('document.querySelector("img.inline-image").naturalWidth'), 1);
    // the terminal output is monospaced
    const font = await page.evaluate('getComputedStyle(document.querySelector("pre.result.terminal")).fontFamily');
    assert.match(String(font), /mono/i);
    // and readable: WCAG's 4.5:1 at least between its text and its background (it was light grey on light grey)
    const ratio = contrastRatio(...(await textColours(page, "pre.result.terminal")));
    assert.ok(ratio >= 4.5, `the terminal output's contrast is ${ratio.toFixed(2)}:1`);
    // the model's <script>, onerror and javascript: link did nothing and are not markup
    assert.equal(await page.evaluate("typeof window.__pwned"), "undefined");
    // the images the model and the user pointed at elsewhere were not fetched: they are links naming the URL
    assert.deepEqual(leaked, []);
    assert.equal(await page.locator(`a.image-link[href="${EXTERNAL_IMAGE}"]`).count(), 2);
    assert.equal(await page.locator('a[href^="javascript:"]').count(), 0);
    assert.equal(await page.locator(".item script, .item img[onerror]").count(), 0);
    assert.ok(
      (await page.locator(".item.assistant").last().textContent())?.includes("<script>window.__pwned = 1</script>"),
    );
    // the chart: one point per request, one compaction, drawn on a canvas
    await page.waitForSelector('#chart[data-requests="6"][data-compactions="1"] canvas');
    // Before any hover the legend shows the last request's figures, not uPlot's "--" placeholders.
    const legend = await page.locator("#chart .u-legend .u-value").allTextContents();
    assert.ok(legend.length >= 3, String(legend));
    assert.ok(
      legend.every((value) => value !== "--"),
      `legend: ${legend.join(" | ")}`,
    );
    assert.equal(await page.locator(".compaction .before a").textContent(), "4 messages");
    assert.ok((await page.locator(".item.summary").textContent())?.includes("off-by-one"));
    assert.equal(await page.locator(".prompt-version").textContent(), "system_prompt@1");
    await page.locator('details.tool[data-tool="edit"] summary').click();
    assert.equal(await page.locator('details.tool[data-tool="edit"] .d-add').isVisible(), true);
    const png = await screenshot("session");
    if (process.env.CROW_UPDATE_SCREENSHOT) await writeFile(path.join(REPO_ROOT, "docs", "viewer.png"), png);

    await page.locator("#subagents a.child-link", { hasText: "Describe the image" }).click();
    await page.waitForURL(`**/s/${ids.child}`);
    assert.equal(await page.locator("h1.session-title").textContent(), "Describe the image");
    assert.equal(await page.locator(".facts a.parent-link").textContent(), ids.task);
    assert.equal(await page.locator("#subagents a.child-link").textContent(), "Check the colour");
    await screenshot("child");
  });

  test("the request axis has whole-number ticks only; no request of the page answers 404", async () => {
    const drawn = await browser.newPage();
    const missing: string[] = [];
    drawn.on("response", (response) => {
      if (response.status() === 404) missing.push(response.url());
    });
    // What the chart draws on its canvas: each label with its position (the x axis's labels share one baseline).
    await drawn.addInitScript({
      content: `window.__labels = [];
        const fillText = CanvasRenderingContext2D.prototype.fillText;
        CanvasRenderingContext2D.prototype.fillText = function (text, x, y, max) {
          window.__labels.push([String(text), Math.round(this.getTransform().f + y)]);
          return fillText.call(this, text, x, y, max);
        };`,
    });
    // Three requests: uPlot's own ticks for so few were 1, 1.5, 2, 2.5, 3.
    const few = await store.createSession({ cwd: ws.dir, title: "Three requests" });
    const usage = { promptTokens: 100, completionTokens: 10, totalTokens: 110 };
    for (const text of ["one", "two", "three"]) {
      await store.appendMessages(few.id, [
        { message: { role: "user", content: text } },
        { message: { role: "assistant", content: text }, usage },
      ]);
    }
    try {
      for (const id of [few.id, ids.child, ids.task]) {
        await drawn.goto(new URL(`/s/${id}`, viewer.url).href);
        await drawn.waitForSelector("#chart canvas");
        await drawn.waitForFunction("window.__labels.length > 0");
        const labels = (await drawn.evaluate("window.__labels")) as Array<[string, number]>;
        const numeric = labels.filter(([text]) => /^[\d.,]+$/.test(text));
        const bottom = Math.max(...numeric.map(([, y]) => y));
        const ticks = numeric.filter(([, y]) => y === bottom).map(([text]) => text);
        assert.ok(ticks.length > 0, JSON.stringify(labels));
        assert.ok(
          ticks.every((t) => /^\d+$/.test(t)),
          `request ticks: ${ticks.join(", ")}`,
        );
      }
      assert.deepEqual(missing, []);
    } finally {
      await drawn.close();
    }
  });

  test("two sessions side by side", async () => {
    await page.goto(viewer.url);
    assert.equal(await page.locator(".compare-button").isDisabled(), true);
    await page.locator(`tr[data-id="${ids.task}"] input[type=checkbox]`).check();
    await page.locator(`tr[data-id="${ids.chat}"] input[type=checkbox]`).check();
    await page.locator(".compare-button").click();
    await page.waitForURL("**/compare?*");
    const cells = async (figure: string) => page.locator(`tr[data-figure="${figure}"] td`).allTextContents();
    // the sessions page lists the newest first: the chat, then the task
    assert.deepEqual(await cells("LLM requests (steps)"), ["1", "6", "+5"]);
    assert.deepEqual(await cells("tool errors"), ["0", "1", "+1"]);
    assert.deepEqual((await cells("cost")).slice(0, 2), ["0.0002 USD", "0.0054 USD"]);
    await screenshot("compare");
  });

  test("a long session renders a page at a time and the rest as it scrolls into view", async () => {
    const long = await store.createSession({ cwd: ws.dir, title: "A very long session" });
    const messages = Array.from({ length: 1000 }, (_, i) => ({
      message:
        i % 2 === 0
          ? { role: "user" as const, content: `question ${i}` }
          : { role: "assistant" as const, content: `answer ${i}` },
    }));
    await store.appendMessages(long.id, messages);
    await page.goto(`${viewer.origin}/s/${long.id}`);
    const count = () => page.locator(".item").count();
    assert.ok((await count()) < 1000, "the first screen is not the whole history");
    for (let i = 0; i < 40 && (await count()) < 1000; i++) {
      await page.locator("#timeline-end").scrollIntoViewIfNeeded();
      await page.waitForTimeout(100);
    }
    const seqs = (await page.evaluate(
      'Array.from(document.querySelectorAll(".item"), (i) => Number(i.dataset.seq))',
    )) as number[];
    assert.deepEqual(
      seqs,
      Array.from({ length: 1000 }, (_, i) => i),
    );
  });

  test("a session running in another process grows in the open page without a reload", async () => {
    mock.script(
      reply().delay(2500).toolCall("terminal", { command: "echo live-$((20+22))" }).usage(100, 10),
      reply().delay(1500).text("Live answer: 42").usage(150, 12),
    );
    const run = spawn(process.execPath, [CROW_BIN, "run", "Say the live number"], {
      env: runEnv(mock.url, home.dir),
      cwd: ws.dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    run.stderr.setEncoding("utf8").on("data", (t: string) => {
      stderr += t;
    });
    const exited = new Promise<number | null>((resolve) => run.on("exit", resolve));
    let id: string | undefined;
    for (let i = 0; i < 200 && !id; i++) {
      const found = (await store.listSessions({ cwd: ws.dir })).sessions.find((s) => s.title === "Say the live number");
      id = found?.id;
      if (!id) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(id, `crow run stored no session: ${stderr}`);
    await page.goto(`${viewer.origin}/s/${id}`);
    await page.evaluate("window.__sameDocument = 42");
    await page.waitForSelector('details.tool[data-tool="terminal"] .badge.ok', { timeout: 30_000 });
    assert.match(String(await page.locator('details.tool[data-tool="terminal"] pre.result').textContent()), /live-42/);
    await page.waitForSelector('.item.assistant .md:has-text("Live answer: 42")', { timeout: 30_000 });
    await page.waitForSelector('#chart[data-requests="2"]', { timeout: 10_000 });
    assert.equal(await page.evaluate("window.__sameDocument"), 42, "the page was not reloaded");
    assert.equal(await exited, 0, stderr);
    await screenshot("live");
    mock.assertDone();
  });

  test("at 1280 px the cwd column wraps a long path only after a '/', never inside a folder's name", async () => {
    const cwd = `${ws.dir}/a-rather-long-project-name-with-dashes/and-another-deep-folder-name/packages/agent-tools`;
    const session = await store.createSession({ cwd, title: "Long path" });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${viewer.origin}/?cwd=${encodeURIComponent(cwd)}`);
    const cell = page.locator(`tr[data-id="${session.id}"] td.cwd`);
    assert.equal((await cell.textContent())?.trim(), cwd);
    const lines = (await cell
      .locator(".seg")
      .evaluateAll((segs) => segs.map((s) => s.getClientRects().length))) as number[];
    assert.ok(lines.length >= 6, `${lines.length} segments`);
    assert.ok(
      lines.every((n) => n === 1),
      `a folder name broken across lines: ${lines.join(",")}`,
    );
  });
});
