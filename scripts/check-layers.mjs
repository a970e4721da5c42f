// Enforces the dependency direction of the packages (DESIGN.md §1): core imports neither ACP nor MCP nor the
// other packages; the toolserver does not import the agent or core; only tests and the test kit import testkit. The
// session viewer is read-only over the store: its server knows nothing of ACP or the agent's session runtime, and its
// page script (bundled for the browser) imports neither Node nor Crow.
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const rules = {
  "agent/src/viewer": [
    /^@agentclientprotocol\//,
    /^@modelcontextprotocol\//,
    /^\.\.\/(acp|session|run\/(?!diff\.js$))/,
  ],
  "agent/viewer-page": [/^node:/, /^@crow\//, /^@agentclientprotocol\//, /^@modelcontextprotocol\//],
  core: [/^@agentclientprotocol\//, /^@modelcontextprotocol\//, /^@crow\/(agent|mcp|testkit)$/],
  mcp: [/^@agentclientprotocol\//, /^@crow\/(agent|core|testkit)$/, /^openai$/],
  // The agent may use crow-mcp's dependency-free read format and V8 settings, never the server itself.
  agent: [/^@crow\/(mcp|testkit)(\/(?!(read-format|v8-flags)$).*)?$/],
};

function sources(dir) {
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
if (violations.length > 0) {
  console.error(violations.join("\n"));
  process.exit(1);
}
