/** The command line of `crow acp --listen` (see listen.ts). */
import { errorText } from "@crow/core";
import { parseArgs } from "@crow/mcp/parse-args";
import { loadAcpConfigOrExit } from "../acp/load-config.js";
import { checkListenToken, configuredToken, newToken, TokenError, tokenFileWarning } from "./token.js";

export const LISTEN_HELP = `Usage: crow acp --listen [HOST:]PORT [--token-file FILE] [--allowed-host NAME]…

Serves ACP over the network (Streamable HTTP and WebSocket at /acp, several clients at once), instead of stdio.
  --listen [HOST:]PORT   where to listen (host 127.0.0.1 when only a port is given; port 0 picks a free one)
  --token-file FILE      the token clients must send as 'Authorization: Bearer <token>' (its first line, at least
                         32 characters; keep the file mode 600); or set CROW_ACP_TOKEN. Without either, a random
                         token is made and printed on stderr.
  --allowed-host NAME    also accept NAME in the Host and Origin headers (repeatable; localhost, 127.0.0.1, ::1
                         and the address listened on always are)
Off loopback, put a reverse proxy with TLS in front (crow speaks plain HTTP). See docs/remote-acp.md.`;

/** Runs `crow acp --listen …` (`args` after "acp"); resolves with the exit code. */
export async function runAcpListen(args: readonly string[]): Promise<number> {
  const usage = (message: string) => {
    process.stderr.write(`crow acp: ${message}\nRun 'crow acp --help' for usage.\n`);
    return 2;
  };
  if (args.some((a) => a === "--token" || a.startsWith("--token="))) {
    return usage(
      "the token is never taken on the command line (every user of this machine can read it there): use --token-file FILE or CROW_ACP_TOKEN",
    );
  }
  let values: {
    listen?: string;
    "token-file"?: string;
    "allowed-host"?: string[];
    "allow-host"?: string[];
    help?: boolean;
  };
  try {
    values = parseArgs({
      args: [...args],
      options: {
        listen: { type: "string" },
        "token-file": { type: "string" },
        // The spelling of `crow sessions serve` and crow-mcp; --allow-host, this command's first one, still works.
        "allowed-host": { type: "string", multiple: true },
        "allow-host": { type: "string", multiple: true },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    return usage(errorText(error));
  }
  if (values.help) {
    process.stdout.write(`${LISTEN_HELP}\n`);
    return 0;
  }
  if (values.listen === undefined) return usage("--token-file and --allowed-host only apply with --listen");
  const { parseListenAddress, runListen } = await import("./listen.js");
  let address: ReturnType<typeof parseListenAddress>;
  let given: string | undefined;
  try {
    address = parseListenAddress(values.listen);
    const file = values["token-file"];
    given = configuredToken(file);
    if (given !== undefined) checkListenToken(given, file !== undefined ? `--token-file ${file}` : "CROW_ACP_TOKEN");
    const warning = file === undefined ? undefined : tokenFileWarning(file);
    if (warning) process.stderr.write(`crow acp: ${warning}\n`);
  } catch (error) {
    if (error instanceof TokenError || error instanceof Error) return usage(error.message);
    throw error;
  }
  const config = await loadAcpConfigOrExit();
  if (config === 2) return 2;
  try {
    await runListen(config, {
      ...address,
      token: given ?? newToken(),
      generated: given === undefined,
      allowHosts: [...(values["allowed-host"] ?? []), ...(values["allow-host"] ?? [])],
    });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "EADDRINUSE" || code === "EACCES" || code === "EADDRNOTAVAIL") {
      process.stderr.write(`crow acp: cannot listen on ${values.listen}: ${errorText(error)}\n`);
      return 1;
    }
    throw error;
  }
  return 0;
}
