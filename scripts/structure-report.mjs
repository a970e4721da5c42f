// Prints what makes the source harder to change than it should be, so a refactor can count it before and after
// (`npm run structure`; not part of `npm test`: these are smells to react to, not limits to meet):
// - functions, methods and arrow functions over 80 lines (file:line name length);
// - top-level names (function, class, interface, type, const) declared in more than one source file of
//   packages/*/src: one concept with two definitions, or two concepts with one name;
// - inline copies of `error instanceof Error ? error.message : String(error)` beside core's `errorText()` (and
//   crow-mcp's own, which cannot import core);
// - `sessionUpdate:` properties per file (the places that build an ACP update payload);
// - files over 350 lines;
// - the rooms: each package's folders (and top-level files), bottom first in the folder order of
//   scripts/folder-order.mjs, with how many source files each holds.
// `--root <dir>` reports on another checkout (e.g. a `git worktree` of an older commit).
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { folderOrder } from "./folder-order.mjs";

const cliArgs = process.argv.slice(2);
const rootArg = cliArgs.indexOf("--root");
const root =
  rootArg >= 0 && cliArgs[rootArg + 1] ? path.resolve(cliArgs[rootArg + 1]) : path.resolve(import.meta.dirname, "..");

const LONG_FUNCTION = 80;
const LONG_FILE = 350;
// Names every entry file declares for itself, one per executable: the same name by convention, not one concept
// defined twice.
const CONVENTIONAL = new Set(["main"]);

function sources(dir) {
  return readdirSync(dir).flatMap((entry) => {
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) return sources(full);
    return entry.endsWith(".ts") && !entry.endsWith(".d.ts") ? [full] : [];
  });
}

const packagesDir = path.join(root, "packages");
const files = readdirSync(packagesDir)
  .map((pkg) => path.join(packagesDir, pkg, "src"))
  .filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory())
  .flatMap(sources)
  .sort();

/** A readable name for a function-like node: its declaration's, its variable's or property's, or where it is passed. */
function functionName(node, sourceFile) {
  if (node.name) return node.name.getText(sourceFile);
  if (ts.isConstructorDeclaration(node)) return "constructor";
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText(sourceFile);
  }
  if (ts.isCallExpression(parent) || ts.isNewExpression(parent)) {
    return `(passed to ${parent.expression.getText(sourceFile).slice(0, 40)})`;
  }
  return "(anonymous)";
}

const longFunctions = [];
const declarations = new Map(); // name -> Set of files
const exported = new Set(); // names some file exports
const errorCopies = [];
const updateBuilders = [];
const longFiles = [];
const errorCopy = /(\w+(?:\.\w+)*)\s+instanceof\s+Error\s*\?\s*\1\.message\s*:\s*String\(\s*\1\s*\)/g;

for (const file of files) {
  const rel = path.relative(root, file);
  const text = readFileSync(file, "utf8");
  const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const lineOf = (pos) => sourceFile.getLineAndCharacterOfPosition(pos).line + 1;

  const lines = text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
  if (lines > LONG_FILE) longFiles.push({ rel, lines });

  // error-text.ts is the helper itself (core's, and crow-mcp's own).
  const copies = path.basename(file) === "error-text.ts" ? 0 : (text.match(errorCopy)?.length ?? 0);
  if (copies > 0) errorCopies.push({ rel, count: copies });

  for (const statement of sourceFile.statements) {
    const names = [];
    if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement)) &&
      statement.name
    ) {
      names.push(statement.name.text);
    } else if (ts.isVariableStatement(statement) && statement.declarationList.flags & ts.NodeFlags.Const) {
      for (const declaration of statement.declarationList.declarations) {
        if (ts.isIdentifier(declaration.name)) names.push(declaration.name.text);
      }
    }
    const isExported = ts.getCombinedModifierFlags(statement) & ts.ModifierFlags.Export;
    for (const name of names) {
      if (!declarations.has(name)) declarations.set(name, new Set());
      declarations.get(name).add(rel);
      if (isExported) exported.add(name);
    }
  }

  let updates = 0;
  // `enclosing` is the length of the function around this node: a function that is all but the whole of the one
  // around it (`return (crow) => { ... }`) is that function, counted once.
  const visit = (node, enclosing) => {
    let length = enclosing;
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const start = lineOf(node.getStart(sourceFile));
      length = lineOf(node.getEnd()) - start + 1;
      if (length > LONG_FUNCTION && enclosing - length > 3) {
        longFunctions.push({ where: `${rel}:${start}`, name: functionName(node, sourceFile), length });
      }
    }
    if (ts.isPropertyAssignment(node) && node.name.getText(sourceFile) === "sessionUpdate") updates++;
    ts.forEachChild(node, (child) => visit(child, length));
  };
  visit(sourceFile, Number.POSITIVE_INFINITY);
  if (updates > 0) updateBuilders.push({ rel, count: updates });
}

const twice = [...declarations]
  .filter(([name, where]) => where.size > 1 && !CONVENTIONAL.has(name))
  .sort(([a], [b]) => a.localeCompare(b));

function section(title, rows) {
  console.log(`\n## ${title}: ${rows.length}`);
  for (const row of rows) console.log(`  ${row}`);
}

console.log(
  `Structure of ${path.relative(process.cwd(), root) || "."}: ${files.length} source files in packages/*/src`,
);
section(
  `functions over ${LONG_FUNCTION} lines`,
  longFunctions.sort((a, b) => b.length - a.length).map((f) => `${f.where} ${f.name} ${f.length}`),
);
section(
  "top-level names declared in more than one file (* = exported by one of them)",
  twice.map(([name, where]) => `${exported.has(name) ? "*" : " "}${name}: ${[...where].join(", ")}`),
);
console.log(`  (${twice.filter(([name]) => exported.has(name)).length} of them exported somewhere)`);
const copies = errorCopies.reduce((sum, f) => sum + f.count, 0);
section(
  `inline error-message copies (${copies} in all), files`,
  errorCopies.map((f) => `${f.rel} ${f.count}`),
);
const updates = updateBuilders.reduce((sum, f) => sum + f.count, 0);
section(
  `sessionUpdate: properties (${updates} in all), files`,
  updateBuilders.sort((a, b) => b.count - a.count).map((f) => `${f.rel} ${f.count}`),
);
section(
  `files over ${LONG_FILE} lines`,
  longFiles.sort((a, b) => b.lines - a.lines).map((f) => `${f.rel} ${f.lines}`),
);

/** One package's rooms: its folder-order layers (a layer's rooms joined by commas), or its top-level entries. */
function rooms(pkg) {
  const srcDir = path.join(packagesDir, pkg, "src");
  const count = (entry) => {
    const full = path.join(srcDir, entry);
    return statSync(full).isDirectory() ? sources(full).length : 1;
  };
  const label = (entry) => (entry.endsWith(".ts") ? entry : `${entry}/ (${count(entry)})`);
  const entries = readdirSync(srcDir).filter((e) => e.endsWith(".ts") || statSync(path.join(srcDir, e)).isDirectory());
  const layers = folderOrder[pkg] ?? [entries.sort()];
  return `${pkg}: ${layers
    .map((names) =>
      names
        .filter((name) => entries.includes(name))
        .map(label)
        .join(", "),
    )
    .filter(Boolean)
    .join(" → ")}`;
}
section(
  "rooms (each package's folders and top-level files, bottom first; (n) = source files), packages",
  readdirSync(packagesDir)
    .filter((pkg) => statSync(path.join(packagesDir, pkg, "src"), { throwIfNoEntry: false })?.isDirectory())
    .map(rooms),
);
