import { request as httpRequest, type IncomingHttpHeaders } from "node:http";

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body as it arrived, chunk by chunk. */
  chunks: string[];
}

/** One HTTP request over a unix socket (or to a TCP base URL), reading the whole answer. */
export function send(
  target: { socketPath: string } | { baseUrl: string },
  options: {
    method?: string;
    path: string;
    body?: unknown;
    headers?: Record<string, string>;
    onChunk?: (chunk: string) => void;
  },
): Promise<Reply> {
  const payload =
    options.body === undefined
      ? undefined
      : typeof options.body === "string"
        ? options.body
        : JSON.stringify(options.body);
  const location =
    "socketPath" in target
      ? { socketPath: target.socketPath, path: options.path }
      : (() => {
          const url = new URL(target.baseUrl + options.path);
          return { host: url.hostname, port: Number(url.port), path: url.pathname + url.search };
        })();
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        ...location,
        method: options.method ?? (payload === undefined ? "GET" : "POST"),
        agent: false,
        headers: { "content-type": "application/json", ...options.headers },
      },
      (response) => {
        const chunks: string[] = [];
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          chunks.push(chunk);
          options.onChunk?.(chunk);
        });
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: chunks.join(""),
            chunks,
          }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(payload);
  });
}

/** The `data` payloads of an SSE body, parsed where JSON. */
export function sseData(body: string): unknown[] {
  return body
    .split(/\n\n/)
    .flatMap((block) => block.split("\n").filter((line) => line.startsWith("data: ")))
    .map((line) => line.slice(6))
    .map((data) => {
      try {
        return JSON.parse(data) as unknown;
      } catch {
        return data;
      }
    });
}
