// Enforces the dependency direction of the packages (DESIGN.md §1): core imports neither ACP nor MCP nor the
// other packages but util (the shared leaf helpers, which import nothing); the toolserver does not import the agent
// or core; only tests and the test kit import testkit. The session viewer is read-only over the store: its server
// knows nothing of ACP or the agent's session runtime, and its page script (bundled for the browser) imports neither
// Node nor Crow.
// And no import cycles between the source files of a package (type-only imports count: a cycle of types is still
// two files that cannot be understood, or split, one without the other).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { folderOrder } from "./folder-order.mjs";

// `--root <dir>` checks another tree (the tests check deliberately broken ones).
const cliArgs = process.argv.slice(2);
const rootArg = cliArgs.indexOf("--root");
const root =
  rootArg >= 0 && cliArgs[rootArg + 1] ? path.resolve(cliArgs[rootArg + 1]) : path.resolve(import.meta.dirname, "..");
const rules = {
  "agent/src/viewer": [/^@agentclientprotocol\//, /^@modelcontextprotocol\//, /^\.\.\/(acp|acp-net|sdk|run)\//],
  "agent/viewer-page": [/^node:/, /^@crow\//, /^@agentclientprotocol\//, /^@modelcontextprotocol\//],
  // Crow over the network (`crow acp --listen`, `crow run --connect`): it hosts the ACP agent; nothing of the agent
  // but the entry and `crow run` knows it, and it knows nothing of them.
  "agent/src/acp-net": [/^\.\.\/(run|entry|eval|commands)\//],
  core: [/^@agentclientprotocol\//, /^@modelcontextprotocol\//, /^@crow\/(agent|mcp|testkit)(\/|$)/],
  // The edit engine is the agent's entry `@crow/mcp/edit`: strings in, strings out, nothing of the server, MCP or Node.
  "mcp/src/edit": [/^node:/, /^@modelcontextprotocol\//, /^zod$/, /^\.\.\//],
  mcp: [/^@agentclientprotocol\//, /^@crow\/(agent|core|testkit)(\/|$)/, /^openai$/],
  // The leaf helpers core, crow-mcp and the agent share (deadline, log, text) import nothing at all, not even Node's
  // modules: each side may use them without taking on anything (crow-mcp's edit engine is Node-free, for one).
  util: [/^(?!\.)/],
  // The agent may use crow-mcp's dependency-free read format and its process plumbing (`@crow/mcp/process`: compile
  // cache switch, V8 flags, zod setting, the lazy JSON Schema validator both sides give the MCP SDK), never the server.
  // And its edit engine (`@crow/mcp/edit`: pure string functions, no MCP, no fs): the agent edits the editor's
  // buffers through `fs/read_text_file` / `fs/write_text_file` with the same matchers and messages as crow-mcp.
  // And the line framing both speak on the socket.
  // And the guarded HTTP GET (`@crow/mcp/guarded-fetch`, Node built-ins only): a prompt's image URL is fetched under
  // web_fetch's rules (address guard on the connected address, size cap, GC-proof deadline, cancellation).
  // And the environment policy of child processes (`@crow/mcp/child-env`: which variables are secrets), which the
  // agent applies to every process it starts and crow-mcp to its shell.
  // And the sandbox's policy type and availability probe (the agent picks each session's policy).
  // And the control-sequence stripper `crow run` passes the model's text through before drawing it.
  // And the language servers' settings, lookup and diagnostics shape (`@crow/mcp/lsp`: config.yaml's
  // `language_servers`, `crow doctor`'s list, the diagnostics shown under a diff), never the servers themselves;
  // and the command-line parsing every command of both executables shares (readable unknown-option errors);
  // and crow-mcp's environment settings check (`@crow/mcp/settings`), so a value crow-mcp would refuse is a config
  // error at the agent's start instead of a toolserver that does not start.
  agent: [
    /^@crow\/(mcp|testkit)(\/(?!(read-format|edit|process|line-transport|guarded-fetch|child-env|sandbox|control-text|lsp|parse-args|settings)$).*)?$/,
  ],
  // The process plumbing both executables' entries load before anything else knows nothing of the server.
  "mcp/src/process": [/^\.\.\//],
  // The environment policy stays dependency-free: the agent loads it at startup, before anything else of crow-mcp.
  "mcp/src/child-env.ts": [/./],
};

function sources(dir) {
  // A rule may name one file.
  if (dir.endsWith(".ts") && statSync(dir).isFile()) return [dir];
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return sources(full);
    return entry.endsWith(".ts") ? [full] : [];
  });
}

const importPattern = /(?:import|export)[^'"]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
const violations = [];
for (const [pkg, forbidden] of Object.entries(rules)) {
  const srcDir = path.join(root, "packages", pkg.includes("/") ? pkg : `${pkg}/src`);
  let files = [];
  try {
    files = sources(srcDir);
  } catch {
    continue;
  }
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(importPattern)) {
      const specifier = match[1] ?? match[2];
      if (specifier && forbidden.some((re) => re.test(specifier))) {
        violations.push(`${path.relative(root, file)} imports ${specifier}, which ${pkg} must not depend on`);
      }
    }
  }
}
/** The relative imports of each source file of `srcDir`, resolved to files (`./x.js` → `x.ts`). */
function importGraph(srcDir) {
  const graph = new Map();
  for (const file of sources(srcDir)) {
    const targets = [];
    for (const match of readFileSync(file, "utf8").matchAll(importPattern)) {
      const specifier = match[1] ?? match[2];
      if (!specifier?.startsWith(".")) continue;
      const target = path.resolve(path.dirname(file), specifier).replace(/\.js$/, ".ts");
      if (existsSync(target)) targets.push(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan's algorithm): each holds at least one cycle. */
function cycles(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  const visit = (file) => {
    index.set(file, index.size);
    low.set(file, index.get(file));
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file), low.get(next)));
      } else if (onStack.has(next)) {
        low.set(file, Math.min(low.get(file), index.get(next)));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) found.push(component);
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

for (const pkg of readdirSync(path.join(root, "packages"))) {
  const srcDir = path.join(root, "packages", pkg, "src");
  if (!existsSync(srcDir)) continue;
  const graph = importGraph(srcDir);
  for (const component of cycles(graph)) {
    const members = new Set(component);
    const edges = component.flatMap((file) =>
      (graph.get(file) ?? [])
        .filter((next) => members.has(next))
        .map((next) => `${path.relative(srcDir, file)} → ${path.relative(srcDir, next)}`),
    );
    violations.push(
      `import cycle in packages/${pkg}/src: ${edges.join(", ")}. Move what both sides need into one of them or a third file.`,
    );
  }
}

// The folder order inside core, the agent and crow-mcp (the table is scripts/folder-order.mjs): a file may import its
// own folder and the folders (or top-level files) below it, never one above. A folder or top-level file of src/
// missing from the list fails the check: a new folder must be given its place.
for (const [pkg, layers] of Object.entries(folderOrder)) {
  const srcDir = path.join(root, "packages", pkg, "src");
  if (!existsSync(srcDir)) continue;
  const rank = new Map(layers.flatMap((names, i) => names.map((name) => [name, i])));
  for (const entry of readdirSync(srcDir)) {
    if (!rank.has(entry) && (entry.endsWith(".ts") || statSync(path.join(srcDir, entry)).isDirectory())) {
      violations.push(
        `packages/${pkg}/src/${entry} has no place in the folder order: add it to folderOrder in scripts/folder-order.mjs`,
      );
    }
  }
  // A file's place: the top-level folder it is in, or its own name when it sits at the top of src/.
  const place = (file) => path.relative(srcDir, file).split(path.sep)[0];
  for (const [file, targets] of importGraph(srcDir)) {
    for (const target of targets) {
      const from = place(file);
      const to = place(target);
      if (from === to || !rank.has(from) || !rank.has(to) || rank.get(from) >= rank.get(to)) continue;
      violations.push(
        `packages/${pkg}/src/${path.relative(srcDir, file)} imports ${path.relative(srcDir, target)}: ${from} is below ${to} in the folder order`,
      );
    }
  }
}

if (violations.length > 0) {
  console.error(violations.join("\n"));
  process.exit(1);
}
