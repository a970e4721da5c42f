/**
 * A private PostgreSQL server for tests and benchmarks, from the installed binaries (PostgreSQL 15 on Debian:
 * /usr/lib/postgresql/15/bin, or `CROW_PG_BIN`). It lives in a temp directory, listens on 127.0.0.1 only, on a free
 * port, with trust auth, and starts in about a second:
 *
 *   const pg = await startPostgres();      // pg.url = postgresql://postgres@127.0.0.1:PORT/postgres
 *   const db = await pg.createDatabase();  // a fresh database per test file or suite
 *   await pg.stop();
 *
 * `initdb` refuses to run as root, so as root everything runs as the `postgres` user (the temp directory is chowned
 * to it). A server left running by a crashed test process is stopped at process exit.
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, chown, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface StartPostgresOptions {
  /** Directory of initdb/pg_ctl (default: `CROW_PG_BIN`, else the newest /usr/lib/postgresql/<v>/bin). */
  binDir?: string;
  /** Keep fsync on (benchmarks measuring real commit cost); tests turn it off for speed. */
  fsync?: boolean;
}

export interface PostgresServer {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres`. */
  readonly url: string;
  readonly port: number;
  /** Creates an empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** The PostgreSQL bin directory found on this machine, or undefined when PostgreSQL is not installed. */
export function findPostgresBin(): string | undefined {
  const candidates = [process.env.CROW_PG_BIN, ...[17, 16, 15, 14, 13].map((v) => `/usr/lib/postgresql/${v}/bin`)];
  return candidates.find((dir): dir is string => !!dir && existsSync(path.join(dir, "pg_ctl")));
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

let databases = 0;

/** Starts a throwaway PostgreSQL server. Throws when PostgreSQL is not installed (see {@link findPostgresBin}). */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const bin = options.binDir ?? findPostgresBin();
  if (!bin) throw new Error("PostgreSQL is not installed (apt-get install -y postgresql, or set CROW_PG_BIN)");
  const asRoot = process.getuid?.() === 0;
  const dir = await mkdtemp(path.join(tmpdir(), "crow-pg-"));
  await chmod(dir, 0o700);
  if (asRoot) {
    const ids = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
    const gids = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
    await chown(dir, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
  }
  const exec = (file: string, args: string[]) =>
    asRoot ? run("runuser", ["-u", "postgres", "--", path.join(bin, file), ...args]) : run(path.join(bin, file), args);
  const data = path.join(dir, "data");
  await exec("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-instructions"]);

  let port = 0;
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    const settings = [`-p ${port}`, `-k ${dir}`, "-c listen_addresses=127.0.0.1"];
    if (!options.fsync) settings.push("-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off");
    try {
      await exec("pg_ctl", ["-D", data, "-l", path.join(dir, "log"), "-w", "-o", settings.join(" "), "start"]);
      break;
    } catch (error) {
      // Another process took the port between the probe and the start: try another one.
      if (attempt >= 3) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }

  const stopSync = () => {
    const args = ["-D", data, "-m", "immediate", "-w", "stop"];
    if (asRoot) spawnSync("runuser", ["-u", "postgres", "--", path.join(bin, "pg_ctl"), ...args], { stdio: "ignore" });
    else spawnSync(path.join(bin, "pg_ctl"), args, { stdio: "ignore" });
  };
  process.once("exit", stopSync);

  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  let stopped = false;
  return {
    url,
    port,
    async createDatabase(name = `crow_test_${process.pid}_${++databases}`) {
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name.replace(/"/g, "")}"`);
      } finally {
        await client.end();
      }
      return `postgresql://postgres@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      process.removeListener("exit", stopSync);
      await exec("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]).catch(() => stopSync());
      await rm(dir, { recursive: true, force: true });
    },
  };
}
