/**
 * `crow sessions serve [--port N] [--host H] [--open] [--token-file FILE] [--allowed-host NAME…]`: starts the viewer on the
 * configured store, prints its address on stdout and serves until SIGINT/SIGTERM.
 */
import { spawn } from "node:child_process";
import type { Store } from "@crow/core";
import { errorText } from "@crow/core";
import { isLoopback } from "../base/hosts.js";
import type { AgentConfig, Price } from "../config/types.js";
import { startViewer } from "./server.js";

export interface ServeOptions {
  port?: number;
  host?: string;
  open?: boolean;
  token?: string;
  /** The token came as `--token T`: warn that every local user can read it (ps, /proc/PID/cmdline). */
  tokenOnCommandLine?: boolean;
  allowedHosts?: string[];
}

/** The browser opener of the platform (xdg-open, open, start); a failure is reported, not fatal. */
function openBrowser(url: string, err: (text: string) => void): void {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  const child = spawn(command, args as string[], { stdio: "ignore", detached: true });
  child.on("error", (error) => err(`could not open a browser (${error.message}); open ${url} yourself\n`));
  child.unref();
}

/** Serves until a signal; resolves to the exit code. */
export async function serve(
  store: Store,
  config: Pick<AgentConfig, "models" | "home">,
  options: ServeOptions,
  io: { out: (text: string) => void; err: (text: string) => void },
): Promise<number> {
  const prices = new Map<string, Price>();
  for (const model of config.models) if (model.price) prices.set(model.name, model.price);
  const host = options.host ?? "127.0.0.1";
  let viewer: Awaited<ReturnType<typeof startViewer>>;
  try {
    viewer = await startViewer({
      store,
      prices,
      host,
      checkpointsHome: config.home,
      ...(options.port !== undefined ? { port: options.port } : {}),
      ...(options.token ? { token: options.token } : {}),
      ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
    });
  } catch (error) {
    io.err(`crow sessions serve: cannot listen on ${host}:${options.port ?? 0}: ${errorText(error)}\n`);
    return 1;
  }
  io.out(`Serving ${store.location} at ${viewer.url}\n`);
  if (options.tokenOnCommandLine) {
    io.err(
      "warning: --token puts the token on the command line, where every user of this machine can read it (ps); use --token-file FILE or CROW_VIEWER_TOKEN\n",
    );
  }
  io.err(
    isLoopback(host)
      ? "The token in the URL is required (any user of this machine can reach a loopback port); keep it private.\n"
      : `bound to ${host}: the token in the URL is required; keep it private.\n`,
  );
  if (options.open) openBrowser(viewer.url, io.err);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await viewer.close();
  return 0;
}
