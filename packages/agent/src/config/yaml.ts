/**
 * The YAML parser of config.yaml, loaded only when there is one. `preloadYaml()` loads it as an ES module — in the
 * bundle a lazily loaded chunk of its own, ~10 ms on Node 20 — and the CLI calls it before loading the
 * configuration. Without it (a library user calling `loadConfig` directly), the first parse require()s the `yaml`
 * package synchronously, resolving and compiling its ~80 files one by one: 50-100 ms on Node 20.
 */
import { createRequire } from "node:module";

type Yaml = typeof import("yaml");

let loaded: Yaml | undefined;

/** Loads the parser now (asynchronously), so that `yaml()` finds it. */
export async function preloadYaml(): Promise<void> {
  // A CommonJS package: Node's namespace has its exports as `default` (and as names), the bundle's only as `default`.
  const namespace: Yaml | { default: Yaml } = await import("yaml");
  loaded ??= "default" in namespace ? namespace.default : namespace;
}

/** The parser: the preloaded one, else required synchronously. */
export function yaml(): Yaml {
  loaded ??= createRequire(import.meta.url)("yaml") as Yaml;
  return loaded;
}
