/**
 * What a build of better-sqlite3 needs and what of it this machine lacks, for the message that says why the store has
 * no driver on a Node without `node:sqlite` (open.ts). Where no prebuilt binary can be downloaded (offline, a new
 * Node) its install script compiles it with node-gyp, which needs python3, make, a C and a C++ compiler and this
 * Node's headers: from `npm_config_nodedir` when set, else from node-gyp's cache (`~/.cache/node-gyp/<version>`),
 * downloaded there from nodejs.org when missing. Looked for as node-gyp looks (PATH, $PYTHON, $MAKE, $CC, $CXX), now:
 * the install ran as the same user in much the same environment, and a wrong guess only misnames the missing piece.
 */
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";

/** Where the build looks: the environment, the user's home, this Node's version and executable. */
export interface BuildPlace {
  env: NodeJS.ProcessEnv;
  home: string;
  nodeVersion: string;
  execPath: string;
  /** Where else this Node's headers may be, besides beside its executable: /usr (Debian's libnode-dev). */
  systemPrefix?: string;
}

/** What the build lacks here. */
export interface BuildNeeds {
  /** The programs not found, as a person names them: `python3`, `make`, `a C compiler (cc)`, `a C++ compiler (g++)`. */
  missingTools: string[];
  /** The Debian/Ubuntu packages that bring the missing programs (those with a known package). */
  packages: string[];
  /** Where node-gyp looked for this Node's headers and found none; undefined when they are there. */
  missingHeaders?: string;
  /** A directory holding this Node's headers in include/node (its own prefix, /usr): one to give as npm_config_nodedir. */
  localHeaders?: string;
  /** With headers missing and this Node the distribution's (/usr/bin/node): the package that brings its headers. */
  headersPackage?: string;
}

function isRunnable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Whether the program `command` (a path, or a name looked up on PATH) is there to run. */
function programThere(command: string, env: NodeJS.ProcessEnv): boolean {
  if (command.includes("/")) return isRunnable(command);
  return (env.PATH ?? "")
    .split(path.delimiter)
    .some((dir) => path.isAbsolute(dir) && isRunnable(path.join(dir, command)));
}

/** The program a variable names (`CXX="ccache g++"` runs ccache), or undefined when it names none. */
function programOf(value: string | undefined): string | undefined {
  return value?.trim().split(/\s+/)[0] || undefined;
}

/** The major version of the Node headers in `dir`/include/node, read from node_version.h. */
function headersMajor(dir: string): number | undefined {
  try {
    const text = readFileSync(path.join(dir, "include", "node", "node_version.h"), "utf8");
    const major = /#define NODE_MAJOR_VERSION (\d+)/.exec(text)?.[1];
    return major === undefined ? undefined : Number(major);
  } catch {
    return undefined;
  }
}

function hasHeaders(dir: string): boolean {
  return isFile(path.join(dir, "include", "node", "node.h")) || isFile(path.join(dir, "src", "node.h"));
}

const HERE: () => BuildPlace = () => ({
  env: process.env,
  home: homedir(),
  nodeVersion: process.versions.node,
  execPath: process.execPath,
});

/** What better-sqlite3's build lacks in `place` (this process's by default). */
export function buildNeeds(place: BuildPlace = HERE()): BuildNeeds {
  const { env } = place;
  const missingTools: string[] = [];
  const packages: string[] = [];
  const tool = (command: string | undefined, fallbacks: string[], label: string, pkg: string | undefined) => {
    if (command ? programThere(command, env) : fallbacks.some((name) => programThere(name, env))) return;
    missingTools.push(label);
    if (pkg) packages.push(pkg);
  };
  // node-gyp's order: --python (npm_config_python), $PYTHON, then python3 and python on PATH.
  const python = programOf(env.npm_config_python) ?? programOf(env.PYTHON);
  tool(python, ["python3", "python"], python ? `python3 (${python})` : "python3", python ? undefined : "python3");
  const make = programOf(env.MAKE);
  tool(make, ["make"], make ? `make (${make})` : "make", make ? undefined : "make");
  // Without $CC and $CXX, the Makefile node-gyp writes runs make's defaults, cc and g++.
  const cc = programOf(env.CC);
  tool(cc, ["cc"], `a C compiler (${cc ?? "cc"})`, cc ? undefined : "gcc");
  const cxx = programOf(env.CXX);
  tool(cxx, ["g++"], `a C++ compiler (${cxx ?? "g++"})`, cxx ? undefined : "g++");

  const needs: BuildNeeds = { missingTools, packages };
  const nodedir = env.npm_config_nodedir || env.NPM_CONFIG_NODEDIR;
  if (nodedir) {
    if (!hasHeaders(nodedir)) needs.missingHeaders = `npm_config_nodedir=${nodedir} holds no include/node/node.h`;
  } else {
    const cache = env.npm_config_devdir || path.join(env.XDG_CACHE_HOME || path.join(place.home, ".cache"), "node-gyp");
    const dir = path.join(cache, place.nodeVersion);
    if (!hasHeaders(dir)) {
      needs.missingHeaders = `npm_config_nodedir is unset and node-gyp's cache, ${dir}, has none (node-gyp downloads them there from nodejs.org when it can reach it)`;
    }
  }
  if (needs.missingHeaders) {
    // Official builds (nvm's too) keep the headers beside bin/; Debian's libnode-dev puts them in /usr/include/node.
    const major = Number(place.nodeVersion.split(".")[0]);
    const local = [path.dirname(path.dirname(place.execPath)), place.systemPrefix ?? "/usr"].find(
      (dir) => hasHeaders(dir) && headersMajor(dir) === major,
    );
    if (local && local !== nodedir) needs.localHeaders = local;
    // Debian's own nodejs has its headers in libnode-dev; another Node's would not match it.
    else if (place.execPath.startsWith("/usr/bin/")) needs.headersPackage = "libnode-dev";
  }
  return needs;
}

/** "a", "a and b", "a, b and c". */
function andList(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/**
 * Why better-sqlite3 is not installed and what to do, from what its build lacks here: `problem` ends the sentence
 * that says the driver is not installed, `fix` is the advice (the message is `problem. fix`).
 */
export function missingDriverText(node: string, needs: BuildNeeds): { problem: string; fix: string } {
  const what = `${node}, and better-sqlite3, the SQLite driver Crow uses there, is not installed`;
  const newer = "Use Node.js 22.13 or later (its built-in SQLite needs nothing compiled), or ";
  const lacking = [...needs.missingTools, ...(needs.missingHeaders ? ["this Node.js's headers"] : [])];
  if (lacking.length === 0) {
    return {
      problem: `${what}: its build at install failed, or the install left it out (--ignore-scripts, --omit=optional)`,
      fix: `${newer}reinstall Crow (npm install -g --foreground-scripts shows the build's output)`,
    };
  }
  const headers = needs.missingHeaders ? `: ${needs.missingHeaders}` : "";
  const problem =
    `${what}: installing Crow compiles it where no prebuilt binary can be downloaded, which needs python3, make, a C ` +
    `and a C++ compiler and this Node.js's headers, and here ${andList(lacking)} ${lacking.length === 1 && !needs.missingHeaders ? "is" : "are"} missing${headers}`;
  const tools =
    needs.missingTools.length === 0
      ? ""
      : `install ${andList(needs.missingTools)}${needs.packages.length > 0 ? ` (Debian/Ubuntu: apt-get install ${needs.packages.join(" ")})` : ""} and `;
  let reinstall = "reinstall Crow";
  if (needs.localHeaders) {
    reinstall = `reinstall Crow with npm_config_nodedir=${needs.localHeaders} set (this Node.js's headers are in ${path.join(needs.localHeaders, "include", "node")})`;
  } else if (needs.missingHeaders) {
    const debian = needs.headersPackage ? ` (Debian/Ubuntu: apt-get install ${needs.headersPackage}, then /usr)` : "";
    reinstall = `reinstall Crow where nodejs.org can be reached (node-gyp downloads the headers from there), or with npm_config_nodedir set to a directory holding this Node.js's headers in include/node${debian}`;
  }
  return { problem, fix: `${newer}${tools}${reinstall}` };
}
