import { type AddressInfo, createServer } from "node:net";

/** A port on 127.0.0.1 where nothing listens (bound, then closed): "connection refused" for tests. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
