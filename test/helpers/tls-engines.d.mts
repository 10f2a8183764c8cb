// Types of tls-engines.mjs (plain JavaScript so bench/eval-engines.mjs can start the same engines).
/**
 * Docker Engines of the test's own, each reachable only over verified TLS on an address of a
 * private /30: a network namespace per engine joined to the host by a veth pair, a dockerd inside
 * it listening on tcp://10.231.X.2:2376 with certificates the test makes (a CA, a server
 * certificate for that IP, one client certificate for all). No bridge and no iptables rules, so
 * the host's engine and network are left alone. Needs root, `ip`, `openssl` and dockerd.
 */
export declare class TlsEngines implements AsyncDisposable {
  readonly dir: string;
  /** The client's TLS folder (ca.pem, cert.pem, key.pem), as --engine-tls-dir takes it. */
  readonly clientTlsDir: string;
  readonly engines: TlsEngine[];
  private constructor();
  static start(count: number): Promise<TlsEngines>;
  [Symbol.asyncDispose](): Promise<void>;
}
export declare class TlsEngine {
  private readonly set;
  readonly index: number;
  readonly octet: number;
  readonly dir: string;
  readonly ns: string;
  readonly hostVeth: string;
  readonly address: string;
  constructor(set: TlsEngines, index: number, octet: number);
  /** `tcp://10.231.X.2:2376`, for --engine (with the client's TLS folder). */
  get url(): string;
  /** The namespace, the veth pair and the server's certificate. */
  plumb(): void;
  up(): Promise<void>;
  get cgroupParent(): string;
  answers(): boolean;
  /** The docker CLI against this engine, over TLS with the client certificate. */
  docker(args: string[]): string;
  pid(): number | undefined;
  /** The engine dies as a crash would: dockerd gets SIGKILL; its containerd and boxes are left. */
  kill(): void;
  /** Every process of this engine (dockerd, containerd, shims, boxes) is killed; then its files, veth and namespace go. */
  dispose(): Promise<void>;
}
