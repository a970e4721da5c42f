/**
 * How Crow imports the module of an extension (or anything else of the user's, by URL): `import()`, unless the process
 * installed another importer. A `crow` started from its startup snapshot has to: its code was compiled as a classic
 * script while the snapshot was built, where `import()` has no module loader behind it, so the snapshot's main function
 * installs one that goes through Node's own loader (packages/agent/src/snapshot/entry.ts).
 */
export type ModuleImporter = (url: string) => Promise<unknown>;

let importer: ModuleImporter = (url) => import(url);

/** Replaces the importer for the rest of the process. */
export function setModuleImporter(next: ModuleImporter): void {
  importer = next;
}

/** Imports the module at `url` (a file: URL or a bare specifier) and resolves to its namespace. */
export function importModule(url: string): Promise<unknown> {
  return importer(url);
}
