/**
 * Loading extensions: a function runs as is; a module spec is imported (an absolute or relative file path, resolved
 * against the base directory, or a package name resolved from it, then from Crow's own installation) and its default
 * export is called with the extension's API. A module that fails to import, has no function as default export, or
 * throws while registering is reported and skipped: the others still load.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { errorText } from "../error-text.js";
import type { Extension, ExtensionSpec } from "./api.js";
import type { ExtensionRegistry } from "./registry.js";

function isPath(spec: string): boolean {
  return spec.startsWith(".") || spec.startsWith("/") || spec.startsWith("~") || path.isAbsolute(spec);
}

/** The URL to import a module spec from. */
function moduleUrl(spec: string, baseDir: string): string {
  if (spec.startsWith("file:")) return spec;
  if (isPath(spec)) return pathToFileURL(path.resolve(baseDir, spec)).href;
  try {
    // A package installed next to the config (or the workspace) first, then one Crow itself can see.
    return pathToFileURL(createRequire(path.join(baseDir, "noop.js")).resolve(spec)).href;
  } catch {
    return spec;
  }
}

function nameOf(spec: ExtensionSpec, index: number): string {
  if (typeof spec === "function") return spec.name || `extension#${index + 1}`;
  if ("extension" in spec) return spec.name ?? (spec.extension.name || `extension#${index + 1}`);
  return spec.module;
}

/** Imports and runs each extension in order; returns one message per failure (already logged). */
export async function loadExtensions(
  specs: readonly ExtensionSpec[],
  registry: ExtensionRegistry,
  options: { baseDir: string; log: (message: string) => void },
): Promise<string[]> {
  const errors: string[] = [];
  for (const [index, spec] of specs.entries()) {
    const name = nameOf(spec, index);
    let extension: Extension;
    let extOptions: Record<string, unknown> = {};
    try {
      if (typeof spec === "function") extension = spec;
      else if ("extension" in spec) {
        extension = spec.extension;
        extOptions = spec.options ?? {};
      } else {
        extOptions = spec.options ?? {};
        const loaded = (await import(moduleUrl(spec.module, options.baseDir))) as { default?: unknown };
        // A CommonJS module's `module.exports = fn` arrives as `default`; `exports.default = fn` one level deeper.
        const exported =
          typeof loaded.default === "function"
            ? loaded.default
            : (loaded.default as { default?: unknown } | undefined)?.default;
        if (typeof exported !== "function") {
          throw new Error("its default export is not a function (expected `export default (api) => { … }`)");
        }
        extension = exported as Extension;
      }
      await extension(registry.apiFor(name, extOptions));
    } catch (error) {
      const message = `Extension "${name}" failed to load: ${errorText(error)}`;
      options.log(message);
      errors.push(message);
    }
  }
  return errors;
}
