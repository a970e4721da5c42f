// Loaded into every test file's process (`--import`) by run-tests.mjs when it shuffles (`--shuffle[=SEED]` or
// CROW_TEST_SHUFFLE=SEED): the tests of each `describe`, and a file's top-level tests and suites, are registered in
// an order drawn from the seed and the file's path, so a test that only passes after another one (state an earlier
// test left: a file, a ref, a session) fails here, and the same seed replays the same order. Hooks keep their place
// (a `before` still runs first). Node 20's runner has no shuffle of its own: this wraps `node:test`'s named exports
// (`test`, `it`, `describe`, `suite`, which every test file imports by name) and updates them for ES modules with
// `syncBuiltinESMExports`. A suite's callback must register its tests synchronously, as node:test itself requires.
import { createRequire, syncBuiltinESMExports } from "node:module";
import path from "node:path";

const require = createRequire(import.meta.url);
const nodeTest = require("node:test");
const root = path.resolve(import.meta.dirname, "..");
const seed = Number(process.env.CROW_TEST_SHUFFLE_SEED);
const file = process.argv[1] ? path.relative(root, process.argv[1]) : "";

/** mulberry32: a small seeded generator, enough to draw orders from. */
function generator(state) {
  let a = state >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The seed mixed with the file's path (FNV-1a), so each file's order depends on the seed but not on other files. */
function fileState() {
  let h = 0x811c9dc5 ^ seed;
  for (const char of file) h = Math.imul(h ^ char.charCodeAt(0), 0x01000193);
  return h >>> 0;
}
const random = generator(fileState());

function shuffled(items) {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** Registrations collected while a suite's callback runs, innermost last; flushed shuffled before it returns. */
const frames = [];
/** The file's top-level registrations, flushed shuffled once its module has run. */
let topLevel;

function register(registerNow) {
  const frame = frames.at(-1);
  if (frame) {
    frame.push(registerNow);
    return;
  }
  if (!topLevel) {
    topLevel = [];
    setImmediate(() => {
      const queued = topLevel;
      topLevel = undefined;
      for (const each of shuffled(queued)) each();
    });
  }
  topLevel.push(registerNow);
}

/** A suite callback that collects what it registers and registers it shuffled, still inside the suite. */
function collecting(fn) {
  return function suiteBody(...args) {
    const frame = [];
    frames.push(frame);
    let result;
    try {
      result = fn.apply(this, args);
    } finally {
      frames.pop();
    }
    for (const each of shuffled(frame)) each();
    return result;
  };
}

function wrapTest(original) {
  const wrapped = (...args) => register(() => original(...args));
  for (const variant of ["skip", "todo", "only"]) {
    if (typeof original[variant] === "function")
      wrapped[variant] = (...args) => register(() => original[variant](...args));
  }
  return wrapped;
}

function wrapSuite(original) {
  const withBody = (args) => {
    const at = args.findLastIndex((arg) => typeof arg === "function");
    if (at >= 0) args[at] = collecting(args[at]);
    return args;
  };
  const wrapped = (...args) => register(() => original(...withBody(args)));
  for (const variant of ["skip", "todo", "only"]) {
    if (typeof original[variant] === "function")
      wrapped[variant] = (...args) => register(() => original[variant](...withBody(args)));
  }
  return wrapped;
}

if (Number.isInteger(seed)) {
  nodeTest.test = wrapTest(nodeTest.test);
  nodeTest.it = wrapTest(nodeTest.it);
  nodeTest.describe = wrapSuite(nodeTest.describe);
  nodeTest.suite = wrapSuite(nodeTest.suite);
  syncBuiltinESMExports();
}
