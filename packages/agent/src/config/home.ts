import path from "node:path";

// From the dependency-free subpath: config loads at startup, before the runtime is (lazily) imported.
export { crowHome, expandTilde, homeDir } from "@crow/core/home";

/** The files of a config home. */
export function configFiles(home: string): { config: string; dotenv: string } {
  return { config: path.join(home, "config.yaml"), dotenv: path.join(home, ".env") };
}
