/**
 * One running language server for one language in one workspace: its process, the documents crow-mcp opened in it,
 * and how to ask it for a document's diagnostics.
 *
 * Three ways to ask, picked from what the server offers at initialize:
 * - `tsserver`: typescript-language-server forwards tsserver's `syntacticDiagnosticsSync`/`semanticDiagnosticsSync`
 *   (`typescript.tsserverRequest`): an answer for the current text, with no debounce to guess at. (Its pushed
 *   diagnostics cannot tell "nothing changed" from "not checked yet": an unchanged empty list is never published.)
 * - `pull`: LSP 3.17's `textDocument/diagnostic` (pyright answers it).
 * - `push`: `textDocument/publishDiagnostics`, waited for per document version (gopls, rust-analyzer).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { log } from "../log.js";
import type { SandboxPolicy } from "../sandbox/policy.js";
import { fromLsp, fromTsserver } from "./convert.js";
import type { Diagnostic } from "./diagnostics.js";
import type { Language } from "./languages.js";
import { type Launched, launchServer } from "./launch.js";
import { RpcConnection, RpcError } from "./rpc.js";

type Strategy = "tsserver" | "pull" | "push";

/** Documents kept open per server; the least recently changed is closed past it. */
const MAX_OPEN = 24;
/** After a pushed list for the changed document, how long other documents' lists may keep arriving. */
const PUSH_SETTLE_MS = 150;

interface OpenDocument {
  version: number;
  text: string;
  /** When it was last opened or changed (for closing the oldest). */
  touched: number;
}

interface Pushed {
  version: number | undefined;
  diagnostics: Diagnostic[];
  serial: number;
}

/** What a server that ended said about it: its first line naming an error, else its last three lines. */
function gist(stderr: string): string {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  return (lines.find((line) => /\berror\b/i.test(line)) ?? lines.slice(-3).join(" ")).slice(0, 300);
}

function uriOf(file: string): string {
  return pathToFileURL(file).href;
}

/** A language server process and the documents open in it. */
export class LanguageClient {
  /** Resolves once the server answered initialize; rejects when it could not start. */
  readonly ready: Promise<void>;
  private readonly launched: Launched;
  private readonly rpc: RpcConnection;
  private strategy: Strategy = "pull";
  private readonly documents = new Map<string, OpenDocument>();
  private readonly pushed = new Map<string, Pushed>();
  private pushSerial = 0;
  private pushWaiters: Array<() => void> = [];
  private stderrTail = "";
  /** Bumped by every document message sent: diagnostics collected at one generation hold until the next. */
  private generation = 0;
  private collected: { generation: number; diagnostics: Promise<Diagnostic[]> } | undefined;
  /** Set once the process has ended (the pool then starts a new one on the next change). */
  exited: string | undefined;
  /** When a change or a read last used it (ms since epoch): the pool stops it after a long idle time. */
  lastUsed = Date.now();
  /** Whether it ever answered initialize (a server that ends before is broken, not crashed). */
  initialized = false;
  /** Resolves, with a sentence saying how (`was killed by SIGKILL`), when the process has ended. */
  readonly ended: Promise<string>;

  constructor(
    readonly language: Language,
    readonly root: string,
    executable: string,
    policy: SandboxPolicy,
  ) {
    this.launched = launchServer(executable, this.language.args, root, policy);
    const { child } = this.launched;
    const stdout = child.stdout;
    const stdin = child.stdin;
    if (!stdout || !stdin) throw new Error("the language server has no stdio");
    this.rpc = new RpcConnection(stdout, stdin);
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (text: string) => {
      this.stderrTail = (this.stderrTail + text).slice(-2000);
    });
    const ended = new Promise<string>((resolve) => {
      child.once("error", (error) => resolve(`could not start: ${error.message}`));
      child.once("exit", (code, signal) =>
        resolve(
          signal
            ? `was killed by ${signal}`
            : `exited with code ${code}${this.stderrTail ? `: ${gist(this.stderrTail)}` : ""}`,
        ),
      );
    });
    this.ended = ended;
    void ended.then((why) => {
      this.exited = why;
      this.rpc.close(new Error(`the ${this.language.name} language server ${why}`));
      this.launched.cleanup();
      for (const wake of this.pushWaiters.splice(0)) wake();
      log.info(`${this.language.name} language server in ${root} ${why}`);
    });
    this.rpc.onNotification("textDocument/publishDiagnostics", (params) => this.receivePush(params));
    this.rpc.onRequest("workspace/configuration", (params) => {
      const items = (params as { items?: unknown[] } | undefined)?.items ?? [];
      return items.map(() => null);
    });
    this.ready = this.initialize(policy.mode === "off");
    this.ready.then(
      () => {
        this.initialized = true;
      },
      () => {},
    );
  }

  private async initialize(sharesPidSpace: boolean): Promise<void> {
    const rootUri = uriOf(this.root);
    const result = (await this.rpc.request("initialize", {
      // A confined server lives in its own PID namespace, where crow-mcp's pid means nothing.
      processId: sharesPidSpace ? process.pid : null,
      clientInfo: { name: "crow-mcp" },
      rootUri,
      rootPath: this.root,
      workspaceFolders: [{ uri: rootUri, name: this.root }],
      capabilities: {
        textDocument: {
          synchronization: { didSave: false },
          publishDiagnostics: { versionSupport: true },
          diagnostic: { dynamicRegistration: false },
        },
        workspace: { configuration: true, workspaceFolders: true },
        general: { positionEncodings: ["utf-16"] },
      },
      // typescript-language-server: no typings downloads (nothing is fetched on the user's behalf).
      initializationOptions: { disableAutomaticTypingAcquisition: true },
    })) as { capabilities?: { diagnosticProvider?: unknown; executeCommandProvider?: { commands?: unknown } } };
    const commands = result.capabilities?.executeCommandProvider?.commands;
    if (Array.isArray(commands) && commands.includes("typescript.tsserverRequest")) this.strategy = "tsserver";
    else this.strategy = "pull";
    this.rpc.notify("initialized", {});
  }

  private queue: Promise<unknown> = Promise.resolve();

  /**
   * Runs `work` after every earlier one has settled: a change's before/after comparison must not interleave with
   * another's (two edits sent in parallel would each see the other's change as their own).
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }

  isOpen(file: string): boolean {
    return this.documents.has(file);
  }

  /** The open documents, most recently changed last. */
  openFiles(): string[] {
    return [...this.documents.entries()].sort((a, b) => a[1].touched - b[1].touched).map(([file]) => file);
  }

  /** Opens `file` with `text`, or changes it to `text`; closes the oldest document past the cap. */
  setText(file: string, text: string): void {
    const open = this.documents.get(file);
    const touched = performance.now();
    if (open) {
      if (open.text === text) {
        open.touched = touched;
        return;
      }
      open.version++;
      open.text = text;
      this.generation++;
      open.touched = touched;
      this.rpc.notify("textDocument/didChange", {
        textDocument: { uri: uriOf(file), version: open.version },
        contentChanges: [{ text }],
      });
      return;
    }
    this.documents.set(file, { version: 1, text, touched });
    this.generation++;
    this.rpc.notify("textDocument/didOpen", {
      textDocument: { uri: uriOf(file), languageId: this.language.languageId(file), version: 1, text },
    });
    if (this.documents.size > MAX_OPEN) {
      const oldest = this.openFiles()[0];
      if (oldest !== undefined && oldest !== file) this.close(oldest);
    }
  }

  /** Opens each of `files` with its text on disk (those that cannot be read are skipped). */
  reopenFromDisk(files: readonly string[]): void {
    for (const file of files) {
      try {
        this.setText(file, readFileSync(file, "utf8"));
      } catch {
        // Gone or unreadable since: nothing to check.
      }
    }
  }

  /** Brings every open document other than `except` up to date with the disk (changed through the terminal, say). */
  resyncFromDisk(except: string): void {
    for (const file of this.openFiles()) {
      if (file === except) continue;
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch {
        this.close(file);
        continue;
      }
      const open = this.documents.get(file);
      if (open && open.text !== text) {
        const touched = open.touched;
        this.setText(file, text);
        open.touched = touched;
      }
    }
  }

  private close(file: string): void {
    if (!this.documents.delete(file)) return;
    this.pushed.delete(file);
    this.generation++;
    this.rpc.notify("textDocument/didClose", { textDocument: { uri: uriOf(file) } });
  }

  /**
   * The current diagnostics of every open document (rejects when the server fails or ends); asked once per state of
   * the documents.
   */
  diagnostics(): Promise<Diagnostic[]> {
    if (this.collected?.generation !== this.generation) {
      const diagnostics = this.collect();
      diagnostics.catch(() => {
        if (this.collected?.diagnostics === diagnostics) this.collected = undefined;
      });
      this.collected = { generation: this.generation, diagnostics };
    }
    return this.collected.diagnostics;
  }

  private async collect(): Promise<Diagnostic[]> {
    const files = this.openFiles();
    if (this.strategy === "push") return this.waitForPushes(files);
    const lists = await Promise.all(files.map((file) => this.pull(file)));
    // A pull refused as unknown switched to waiting for pushes.
    if ((this.strategy as Strategy) === "push") return this.waitForPushes(files);
    return lists.flat();
  }

  private async pull(file: string): Promise<Diagnostic[]> {
    if (this.strategy === "tsserver") {
      const ask = async (command: string) => {
        const answer = (await this.rpc.request("workspace/executeCommand", {
          command: "typescript.tsserverRequest",
          arguments: [command, { file }],
        })) as { body?: unknown[] } | undefined;
        return (answer?.body ?? []).map((raw) => fromTsserver(file, raw)).filter((d) => d !== undefined);
      };
      const [syntactic, semantic] = await Promise.all([
        ask("syntacticDiagnosticsSync"),
        ask("semanticDiagnosticsSync"),
      ]);
      return [...syntactic, ...semantic];
    }
    if (this.strategy === "pull") {
      try {
        const report = (await this.rpc.request("textDocument/diagnostic", { textDocument: { uri: uriOf(file) } })) as
          | { items?: unknown[] }
          | undefined;
        return (report?.items ?? []).map((raw) => fromLsp(file, raw)).filter((d) => d !== undefined);
      } catch (error) {
        if (!(error instanceof RpcError) || error.code !== -32601) throw error;
        // It only pushes: from now on wait for what it publishes.
        this.strategy = "push";
        return [];
      }
    }
    return [];
  }

  private receivePush(params: unknown): void {
    const p = params as { uri?: string; version?: number; diagnostics?: unknown[] } | undefined;
    if (typeof p?.uri !== "string") return;
    let file: string;
    try {
      file = fileURLToPath(p.uri);
    } catch {
      return;
    }
    if (!this.documents.has(file)) return;
    const diagnostics = (p.diagnostics ?? []).map((raw) => fromLsp(file, raw)).filter((d) => d !== undefined);
    this.pushed.set(file, { version: p.version, diagnostics, serial: ++this.pushSerial });
    for (const wake of this.pushWaiters.splice(0)) wake();
  }

  /** Waits until each of `files` has a pushed list for its current version, then a short settle; all lists. */
  private async waitForPushes(files: readonly string[]): Promise<Diagnostic[]> {
    const current = (file: string) => {
      const pushed = this.pushed.get(file);
      const open = this.documents.get(file);
      return pushed !== undefined && (pushed.version === undefined || pushed.version === open?.version);
    };
    while (!files.every(current) && !this.exited) {
      await new Promise<void>((resolve) => this.pushWaiters.push(resolve));
    }
    if (this.exited) throw new Error(`the ${this.language.name} language server ${this.exited}`);
    await new Promise((resolve) => setTimeout(resolve, PUSH_SETTLE_MS));
    return files.flatMap((file) => this.pushed.get(file)?.diagnostics ?? []);
  }

  /** Asks the server to shut down, then ends it (a confined one with bwrap's --die-with-parent too). */
  async stop(): Promise<void> {
    if (this.exited) return;
    const { child } = this.launched;
    const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 2000);
    timer.unref();
    try {
      await Promise.race([this.rpc.request("shutdown"), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
      this.rpc.notify("exit");
    } catch {
      // Already gone or not answering: the kill below ends it.
    }
    setTimeout(() => child.kill("SIGTERM"), 300).unref();
    await gone;
    clearTimeout(timer);
  }

  /** Ends the process now (at crow-mcp's exit, when there is no time to ask). */
  kill(): void {
    if (!this.exited) this.launched.child.kill("SIGKILL");
  }

  /** The process id (of bwrap, for a confined server). */
  get pid(): number | undefined {
    return this.launched.child.pid;
  }
}
