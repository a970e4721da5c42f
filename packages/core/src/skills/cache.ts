/**
 * Skill embeddings cached by skill content hash, in memory and on disk, so an unchanged skill is embedded once per
 * model — not once per session or per process. One JSON file per embedder id under the cache folder; vectors are
 * stored as base64 float32. Entries of other workspaces' skills are kept (the folder is shared by all sessions).
 */
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { errorText } from "../error-text.js";
import { crowHome } from "../store/uri.js";
import { fromBase64, toBase64, type Vector } from "./embedder.js";

/** Per skill: one entry per chunk, each one or several vectors. */
export type SkillVectors = Vector[][];

interface CacheFile {
  version: 1;
  embedder: string;
  entries: Record<string, string[][]>;
}

/** The default cache folder: `<crow home>/cache/skills`. */
export function defaultSkillCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(crowHome(env), "cache", "skills");
}

/** A content-hash → vectors store for one embedder. */
export interface SkillEmbeddingStore {
  get(key: string): SkillVectors | undefined;
  set(key: string, vectors: SkillVectors): void;
  /** Writes entries added since the last flush to disk (a no-op in memory-only mode). Never throws. */
  flush(): Promise<string | undefined>;
}

/** Caches for every embedder id, in memory for the process and optionally persisted in a folder. */
export class SkillEmbeddingCache {
  private readonly stores = new Map<string, Promise<SkillEmbeddingStore>>();

  /** `dir`: the disk folder, or `false` for memory only. */
  constructor(readonly dir: string | false = defaultSkillCacheDir()) {}

  /** The store of `embedderId`, loaded from disk on first use (a missing or unreadable file is an empty cache). */
  store(embedderId: string): Promise<SkillEmbeddingStore> {
    let store = this.stores.get(embedderId);
    if (!store) {
      store = openEmbeddingStore(this.dir, embedderId);
      this.stores.set(embedderId, store);
    }
    return store;
  }
}

async function openEmbeddingStore(dir: string | false, embedderId: string): Promise<SkillEmbeddingStore> {
  const memory = new Map<string, SkillVectors>();
  const added = new Set<string>();
  const file = dir ? path.join(dir, `${createHash("sha256").update(embedderId).digest("hex").slice(0, 16)}.json`) : "";
  if (file)
    for (const [key, value] of Object.entries((await readCacheFile(file, embedderId))?.entries ?? {})) {
      memory.set(key, decode(value));
    }
  return {
    get: (key) => memory.get(key),
    set(key, vectors) {
      memory.set(key, vectors);
      added.add(key);
    },
    async flush() {
      if (!file || added.size === 0) return undefined;
      const keys = [...added];
      added.clear();
      try {
        // Merge with what another process may have written meanwhile, then replace atomically.
        const onDisk = (await readCacheFile(file, embedderId)) ?? { version: 1, embedder: embedderId, entries: {} };
        for (const key of keys) {
          const vectors = memory.get(key);
          if (vectors) onDisk.entries[key] = vectors.map((chunk) => chunk.map(toBase64));
        }
        // 0700 like the Crow home it is in (which this may be the first to create).
        await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
        const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
        await writeFile(temp, JSON.stringify(onDisk));
        await rename(temp, file);
        return undefined;
      } catch (error) {
        return `cannot write the skill embedding cache ${file}: ${errorText(error)}`;
      }
    },
  };
}

async function readCacheFile(file: string, embedderId: string): Promise<CacheFile | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, "utf8")) as Partial<CacheFile>;
    if (parsed.version !== 1 || parsed.embedder !== embedderId || typeof parsed.entries !== "object") return undefined;
    return parsed as CacheFile;
  } catch {
    return undefined;
  }
}

function decode(chunks: string[][]): SkillVectors {
  return chunks.map((vectors) => vectors.map(fromBase64));
}
