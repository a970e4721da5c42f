/**
 * `crow sessions serve`'s routes over a store on a SQLite file and on the test PostgreSQL (skipped, with the reason,
 * only when PostgreSQL is not installed): the pages show what the store holds, model text renders inert, bad ids
 * get the 404 page, and off loopback the Host and token checks hold. Needs `npm run build` (the page bundle).
 */
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { request } from "node:http";
import { after, before, describe, test } from "node:test";
import { openStore, type Store } from "@crow/core";
import { CROW_BIN, findPostgresBin, type PostgresServer, startPostgres, tempWorkspace } from "@crow/testkit";
import { type RunningViewer, startViewer } from "../src/viewer/server.js";
import { EXTERNAL_IMAGE, type Fixture, PRICES, populate } from "./viewer-fixtures.js";

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET with any headers (fetch cannot set Host). */
function get(url: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

interface Backend {
  name: string;
  skip?: string;
  open(dir: string): Promise<Store>;
  cleanup(): Promise<void>;
}

const backends: Backend[] = [
  { name: "SQLite", open: (dir) => openStore(`${dir}/crow.db`), cleanup: async () => {} },
  (() => {
    let server: PostgresServer | undefined;
    const backend: Backend = {
      name: "PostgreSQL",
      async open() {
        server = await startPostgres();
        return openStore(await server.createDatabase());
      },
      cleanup: async () => server?.stop(),
    };
    if (!findPostgresBin()) backend.skip = "PostgreSQL is not installed (apt-get install -y postgresql)";
    return backend;
  })(),
];

for (const backend of backends) {
  describe(`viewer routes on ${backend.name}`, { skip: backend.skip }, () => {
    let store: Store;
    let viewer: RunningViewer;
    let ids: Fixture;
    let cwd: string;
    let cleanupDir: () => Promise<void>;
    const base = () => viewer.url.replace(/\/$/, "");
    before(async () => {
      const ws = await tempWorkspace("crow-viewer-");
      cwd = ws.dir;
      cleanupDir = ws.cleanup;
      store = await backend.open(ws.dir);
      ids = await populate(store, cwd);
      // The pages themselves; the token is tested below.
      viewer = await startViewer({ store, prices: PRICES, pollMs: 50, token: false });
    });
    after(async () => {
      await viewer?.close();
      await store?.close();
      await backend.cleanup();
      await cleanupDir?.();
    });

    test("the sessions page lists sessions with their figures, filters by title and cwd", async () => {
      // An editor opens a session at each start: one never prompted has nothing to show and is not listed.
      const unprompted = await store.createSession({ cwd });
      const all = await get(`${base()}/`);
      assert.equal(all.status, 200);
      assert.ok(!all.body.includes(unprompted.id), "a never-prompted session is not listed");
      assert.match(all.headers["content-security-policy"] as string, /script-src 'self'/);
      for (const title of ["Fix the parser bug", "Explain closures", "Describe the image"])
        assert.ok(all.body.includes(title));
      assert.ok(all.body.includes(`subagent of <a href="/s/${ids.task}">`), "children link to their parent");
      assert.ok(all.body.includes("system_prompt@1"), "prompt version shown");
      const search = await get(`${base()}/?q=PARSER`);
      assert.ok(search.body.includes("Fix the parser bug"));
      assert.ok(!search.body.includes("Explain closures"));
      const byCwd = await get(`${base()}/?cwd=${encodeURIComponent(`${cwd}/other`)}`);
      assert.ok(byCwd.body.includes("Explain closures"));
      assert.ok(!byCwd.body.includes("Fix the parser bug"));
    });

    test("the session page shows the timeline, tool calls, diffs, images, compaction, prompt and subagents", async () => {
      const res = await get(`${base()}/s/${ids.task}`);
      assert.equal(res.status, 200);
      const body = res.body;
      assert.ok(body.includes('<details class="thought">'), "thoughts collapsed");
      assert.match(body, /class="tool status-ok" data-call-id="call_edit" data-tool="edit"/);
      assert.match(body, /<span class="d-remove">-i - 1<\/span>/);
      assert.match(body, /<span class="d-add">\+i \+ 1<\/span>/);
      assert.match(body, /<pre class="terminal command">\$ python -m pytest -q<\/pre>/);
      assert.match(body, /<pre class="result terminal">\.\.\.\.\n4 passed/);
      assert.match(body, /class="tool status-error" data-call-id="call_bad"/);
      assert.match(body, /<img class="inline-image" alt="image" loading="lazy" src="data:image\/png;base64,/);
      assert.match(body, /compaction summary/);
      assert.match(body, /before: <a href="\/s\/[^"]+">4 messages<\/a>/);
      assert.ok(body.includes("<strong>off-by-one</strong>"), "the summary is rendered Markdown");
      assert.ok(body.includes('class="prompt-version">system_prompt@1'));
      assert.ok(body.includes(`You are Crow, working in ${cwd}.`), "rendered system prompt");
      assert.ok(body.includes(`<a class="child-link" href="/s/${ids.child}">Describe the image</a>`));
      assert.ok(body.includes(`<a class="child-link" href="/s/${ids.grandchild}">Check the colour</a>`), "nested");
      assert.ok(body.includes(`<a class="subagent-link" href="/s/${ids.child}">`), "the task result links its child");
    });

    test("model text with <script>, event handlers and javascript: links renders inert", async () => {
      const { body } = await get(`${base()}/s/${ids.task}`);
      assert.ok(body.includes("&lt;script&gt;window.__pwned = 1&lt;/script&gt;"));
      assert.ok(!body.includes("<script>window"));
      assert.ok(!/<img[^>]*onerror/i.test(body));
      assert.ok(!/href="javascript:/i.test(body));
      assert.ok(body.includes("<strong>Bold</strong>"), "Markdown still renders");
      // the only script on the page is the viewer's own bundle
      assert.deepEqual(body.match(/<script[^>]*>/g), ['<script type="module" src="/assets/viewer.js">']);
    });

    test("images from elsewhere are not loaded: they show as links naming their URL, and the CSP refuses them", async () => {
      const res = await get(`${base()}/s/${ids.task}`);
      const csp = res.headers["content-security-policy"] as string;
      assert.match(csp, /img-src 'self' data:;/);
      assert.doesNotMatch(csp, /https?:/);
      const url = EXTERNAL_IMAGE.replace(/&/g, "&amp;");
      assert.ok(!/<img[^>]*src="http/i.test(res.body), "no <img> loads an http(s) URL");
      assert.ok(res.body.includes(`[image] the chart: ${url}</a>`), "the Markdown image is a link showing its URL");
      assert.ok(res.body.includes(`[image] ${url}</a>`), "so is an image a message carries by URL");
      assert.match(res.body, /<img class="inline-image" alt="image" loading="lazy" src="data:image\/png;base64,/);
      for (const path of ["/", `/s/${ids.task}/timeline?from=0`, "/nowhere"]) {
        const other = await get(`${base()}${path}`);
        assert.match(other.headers["content-security-policy"] as string, /img-src 'self' data:;/, path);
      }
    });

    test("timeline pages, chart data, events, comparison and assets", async () => {
      const page = JSON.parse((await get(`${base()}/s/${ids.task}/timeline?from=2`)).body);
      assert.equal(page.more, false);
      assert.equal(page.next, 12);
      assert.match(page.html, /data-seq="3"/);
      assert.doesNotMatch(page.html, /data-seq="1"/);

      const chart = JSON.parse((await get(`${base()}/s/${ids.task}/chart`)).body);
      assert.deepEqual(chart.prompt, [500, 700, 1000, 1400, 600, 800]);
      assert.deepEqual(chart.compactions, [2]);
      assert.equal(chart.currency, "USD");
      assert.equal(chart.cost.length, 6);
      assert.ok(Math.abs(chart.cost[5] - (5000 * 1 + 200 * 2) / 1e6) < 1e-12);

      const controller = new AbortController();
      const events = await fetch(`${base()}/s/${ids.task}/events`, { signal: controller.signal });
      assert.equal(events.headers.get("content-type"), "text/event-stream");
      const reader = events.body?.getReader();
      const first = new TextDecoder().decode((await reader?.read())?.value);
      controller.abort();
      assert.match(first, /^event: change\ndata: \{"updatedAt":"[^"]+","messages":12,/);

      const compare = await get(`${base()}/compare?id=${ids.task}&id=${ids.chat}`);
      assert.equal(compare.status, 200);
      assert.match(
        compare.body,
        /<tr data-figure="LLM requests \(steps\)"><th>[^<]+<\/th><td class="num">6<\/td><td class="num">1<\/td><td class="num">-5<\/td>/,
      );
      assert.match(
        compare.body,
        /<tr data-figure="tool errors"><th>tool errors<\/th><td class="num">1<\/td><td class="num">0<\/td>/,
      );
      assert.match(compare.body, /data-figure="cost"><th>cost<\/th><td class="num">0\.0054 USD<\/td>/);
      assert.equal((await get(`${base()}/compare?id=${ids.task}`)).status, 400);

      const js = await get(`${base()}/assets/viewer.js`);
      assert.equal(js.status, 200);
      assert.match(js.headers["content-type"] as string, /^text\/javascript/);
      assert.equal((await get(`${base()}/assets/viewer.css`)).status, 200);
    });

    test("unknown ids and paths get the 404 page; other hosts and methods are refused", async () => {
      for (const path of [
        "/s/no-such-session",
        "/s/no-such-session/chart",
        "/s/no-such-session/timeline",
        "/nothing",
        "/s/%E0%A4%A",
        `/compare?id=${ids.task}&id=nope`,
      ]) {
        const res = await get(`${base()}${path}`);
        assert.equal(res.status, 404, path);
        assert.match(res.body, /<h1>Not found<\/h1>/, path);
      }
      assert.match((await get(`${base()}/s/no-such-session`)).body, /There is no session &quot;no-such-session&quot;/);
      // A unique beginning of an id, as people type it, leads to the session's page.
      const short = await get(`${base()}/s/${ids.task.slice(0, ids.task.lastIndexOf("-") + 3)}`);
      assert.equal(short.status, 303);
      assert.equal(short.headers.location, `/s/${ids.task}`);
      const foreign = await get(`${base()}/`, { Host: "evil.example:80" });
      assert.equal(foreign.status, 403);
      assert.match(foreign.body, /Host "evil.example:80" is not served here/);
      const post = await fetch(`${base()}/`, { method: "POST" });
      assert.equal(post.status, 405);
    });

    test("keyset pagination pages through many sessions", async () => {
      const bulk: string[] = [];
      for (let i = 0; i < 55; i++)
        bulk.push((await store.createSession({ cwd: `${cwd}/many`, title: `bulk ${i}` })).id);
      try {
        const first = await get(`${base()}/?cwd=${encodeURIComponent(`${cwd}/many`)}`);
        assert.equal(first.body.match(/class="session-row"/g)?.length, 50);
        const next = /class="next-page" href="([^"]+)"/.exec(first.body)?.[1]?.replace(/&amp;/g, "&");
        assert.ok(next);
        const second = await get(`${base()}${next}`);
        assert.equal(second.body.match(/class="session-row"/g)?.length, 5);
        assert.ok(!second.body.includes("next-page"));
      } finally {
        // Newer than the fixture's: left in place they would push it off the first page the other tests read.
        for (const id of bulk) await store.deleteSession(id);
      }
    });
  });
}

describe("viewer off loopback", () => {
  let store: Store;
  let viewer: RunningViewer;
  let cleanup: () => Promise<void>;
  before(async () => {
    const ws = await tempWorkspace("crow-viewer-token-");
    cleanup = ws.cleanup;
    store = await openStore(`${ws.dir}/crow.db`);
    await populate(store, ws.dir);
    viewer = await startViewer({ store, host: "0.0.0.0", allowedHosts: ["crow.test"] });
  });
  after(async () => {
    await viewer?.close();
    await store?.close();
    await cleanup?.();
  });

  test("a token is generated and required; the ?token= URL sets a cookie; Host is still checked", async () => {
    assert.ok(viewer.token && viewer.token.length >= 20);
    assert.match(viewer.url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=/);
    const origin = new URL(viewer.url).origin;
    const none = await get(`${origin}/`);
    assert.equal(none.status, 401);
    assert.match(none.body, /needs its token/);
    assert.equal((await get(`${origin}/?token=wrong`)).status, 401);
    const login = await get(viewer.url);
    assert.equal(login.status, 303);
    assert.equal(login.headers.location, "/");
    const cookie = String(login.headers["set-cookie"]).split(";")[0] as string;
    assert.match(String(login.headers["set-cookie"]), /HttpOnly; SameSite=Strict/);
    assert.equal((await get(`${origin}/`, { Cookie: cookie })).status, 200);
    assert.equal((await get(`${origin}/`, { Authorization: `Bearer ${viewer.token}` })).status, 200);
    assert.equal((await get(`${origin}/`, { Cookie: cookie, Host: "crow.test:8080" })).status, 200);
    assert.equal((await get(`${origin}/`, { Cookie: cookie, Host: "attacker.example" })).status, 403);
  });
});

describe("crow sessions serve", () => {
  test("serves the configured store until SIGTERM; bad options are usage errors", async () => {
    const ws = await tempWorkspace("crow-viewer-cli-");
    try {
      const store = await openStore(`${ws.dir}/crow.db`);
      await populate(store, ws.dir);
      await store.close();
      const env = { ...process.env, CROW_HOME: ws.dir, CROW_DB_URI: `${ws.dir}/crow.db` };
      const { child, url } = await startServe([], env);
      const origin = new URL(url).origin;
      // Loopback is no reason to go without a token: another local user (uid 65534, curl) gets nothing.
      for (const pathname of ["/", "/assets/viewer.js", "/s/x/timeline"]) {
        assert.equal((await get(`${origin}${pathname}`)).status, 401, pathname);
        const other = execFileSync(
          "setpriv",
          [
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "curl",
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            `${origin}${pathname}`,
          ],
          { encoding: "utf8" },
        );
        assert.equal(other, "401", `another user's curl of ${pathname}`);
      }
      // The URL printed sets the cookie and redirects to the clean address, which then serves the sessions.
      const login = await get(url);
      assert.equal(login.status, 303);
      assert.equal(login.headers.location, "/");
      const cookie = String(login.headers["set-cookie"]).split(";")[0] as string;
      const page = await get(`${origin}/`, { Cookie: cookie });
      assert.equal(page.status, 200);
      assert.ok(page.body.includes("Fix the parser bug"));
      const script = await get(`${origin}/assets/viewer.js`, { Cookie: cookie });
      assert.equal(script.status, 200, "the built binary finds the bundled page script");
      assert.ok(script.body.length > 10_000);
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      child.kill("SIGTERM");
      assert.equal(await exited, 0);

      const bad = spawn(process.execPath, [CROW_BIN, "sessions", "serve", "--port", "http"], { env });
      let err = "";
      bad.stderr.setEncoding("utf8").on("data", (t: string) => {
        err += t;
      });
      assert.equal(await new Promise((resolve) => bad.on("exit", resolve)), 2);
      assert.match(err, /--port must be a port number \(0-65535\), got "http"/);
    } finally {
      await ws.cleanup();
    }
  });
});

/** Spawns `crow sessions serve --port 0 …args` and waits for the URL it prints (stderr so far is kept). */
async function startServe(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [CROW_BIN, "sessions", "serve", "--port", "0", ...args], { env });
  let out = "";
  let err = "";
  child.stderr.setEncoding("utf8").on("data", (t: string) => {
    err += t;
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.setEncoding("utf8").on("data", (t: string) => {
      out += t;
      const found = /at (http:\/\/127\.0\.0\.1:\d+\/(?:\?token=[\w-]+)?)\n/.exec(out)?.[1];
      if (found) resolve(found);
    });
    child.on("exit", (code) => reject(new Error(`exited ${code}: ${out}${err}`)));
  });
  return { child, url, stderr: () => err };
}

describe("crow sessions serve: where the token comes from", () => {
  const TOKEN = "viewer-token-4f9c2a";
  /** What another user of the machine reads of the process's command line. */
  const cmdlineAsOtherUser = (pid: number) =>
    execFileSync("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", "cat", `/proc/${pid}/cmdline`], {
      encoding: "utf8",
    });

  test("--token-file and CROW_VIEWER_TOKEN keep it out of ps; --token works but warns; bad sources are usage errors", async () => {
    const ws = await tempWorkspace("crow-viewer-token-");
    try {
      const env = { ...process.env, CROW_HOME: ws.dir, CROW_DB_URI: `${ws.dir}/crow.db` };
      const tokenFile = await ws.write("token", `${TOKEN}\n`);
      for (const [args, extraEnv] of [
        [["--token-file", tokenFile], {}],
        [[], { CROW_VIEWER_TOKEN: TOKEN }],
      ] as const) {
        const served = await startServe([...args], { ...env, ...extraEnv });
        try {
          assert.equal(new URL(served.url).searchParams.get("token"), TOKEN, args.join(" ") || "CROW_VIEWER_TOKEN");
          assert.doesNotMatch(cmdlineAsOtherUser(served.child.pid ?? 0), new RegExp(TOKEN));
          assert.doesNotMatch(served.stderr(), /warning/);
        } finally {
          const exited = new Promise((resolve) => served.child.on("exit", resolve));
          served.child.kill("SIGTERM");
          await exited;
        }
      }
      const onCommandLine = await startServe(["--token", TOKEN], env);
      try {
        assert.equal(new URL(onCommandLine.url).searchParams.get("token"), TOKEN);
        await new Promise<void>((resolve) => {
          const check = () => (/warning: --token/.test(onCommandLine.stderr()) ? resolve() : setTimeout(check, 20));
          check();
        });
        assert.match(onCommandLine.stderr(), /warning: --token puts the token on the command line.*--token-file/);
      } finally {
        const exited = new Promise((resolve) => onCommandLine.child.on("exit", resolve));
        onCommandLine.child.kill("SIGTERM");
        await exited;
      }
      for (const [args, message] of [
        [["--token-file", `${ws.dir}/missing`], /cannot read --token-file/],
        [["--token-file", tokenFile, "--token", "x"], /--token and --token-file exclude each other/],
      ] as const) {
        const run = spawnSync(process.execPath, [CROW_BIN, "sessions", "serve", "--port", "0", ...args], {
          env,
          encoding: "utf8",
        });
        assert.equal(run.status, 2, run.stderr);
        assert.match(run.stderr, message);
      }
    } finally {
      await ws.cleanup();
    }
  });
});
