/**
 * stdio transport: one client, stdout carries nothing but protocol. When the client goes away
 * (stdin closes, or stdout breaks because nobody reads it any more) or a signal arrives, every
 * session is removed and the process exits.
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { logger } from "../util/log.js";
import type { DrydockServer } from "./drydock-server.js";

const log = logger("stdio");

export async function serveStdio(server: DrydockServer): Promise<void> {
  const mcp = server.connectClient("stdio");
  const transport = new StdioServerTransport();
  let stopping = false;
  const stop = async (why: string) => {
    if (stopping) return;
    stopping = true;
    log.info(`shutting down (${why})`);
    await server.shutdown();
    process.exit(0);
  };
  // A client that died leaves a broken pipe: writing a reply or a log notification to it fails
  // with EPIPE, which without a listener would crash the process before it removes its boxes.
  process.stdout.on("error", () => void stop("the client stopped reading stdout"));
  process.stdin.on("error", () => void stop("stdin failed"));
  process.stdin.on("end", () => void stop("the client closed stdin"));
  process.stdin.on("close", () => void stop("the client closed stdin"));
  transport.onclose = () => void stop("the transport closed");
  process.once("SIGINT", () => void stop("SIGINT"));
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGHUP", () => void stop("SIGHUP"));
  await mcp.connect(transport);
}
