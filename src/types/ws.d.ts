/**
 * The part of the `ws` package (8.x) drydock uses. The package ships no types of its own, and the
 * Kubernetes exec transport is its only user: a few lines here spare a types package.
 */
declare module "ws" {
  import type { ClientRequest, IncomingMessage } from "node:http";
  import type { Duplex } from "node:stream";
  import type { SecureContextOptions } from "node:tls";
  import type { Agent } from "node:http";

  export interface ClientOptions extends SecureContextOptions {
    agent?: Agent;
    headers?: Record<string, string>;
    handshakeTimeout?: number;
    maxPayload?: number;
    rejectUnauthorized?: boolean;
    servername?: string;
    auth?: string;
  }

  export default class WebSocket {
    static readonly CONNECTING: 0;
    static readonly OPEN: 1;
    static readonly CLOSING: 2;
    static readonly CLOSED: 3;
    constructor(address: string, protocols?: string | string[], options?: ClientOptions);
    readonly readyState: 0 | 1 | 2 | 3;
    readonly protocol: string;
    readonly bufferedAmount: number;
    send(data: Buffer, callback?: (error?: Error) => void): void;
    close(code?: number, reason?: string): void;
    terminate(): void;
    /** Stops reading from the socket (backpressure) until resume(). */
    pause(): void;
    resume(): void;
    on(event: "open", listener: () => void): this;
    on(event: "message", listener: (data: Buffer, isBinary: boolean) => void): this;
    on(event: "close", listener: (code: number, reason: Buffer) => void): this;
    on(event: "error", listener: (error: Error & { code?: string }) => void): this;
    on(
      event: "unexpected-response",
      listener: (request: ClientRequest, response: IncomingMessage) => void,
    ): this;
    once(event: "close", listener: (code: number, reason: Buffer) => void): this;
  }

  /** The server side, for tests that stand in for the API server. */
  export class WebSocketServer {
    constructor(options: { noServer: true });
    handleUpgrade(
      request: IncomingMessage,
      socket: Duplex,
      head: Buffer,
      callback: (socket: WebSocket, request: IncomingMessage) => void,
    ): void;
    close(): void;
  }
}
