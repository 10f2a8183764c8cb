/**
 * Logging to stderr only: in stdio mode stdout is the protocol. Sinks can be added (the MCP
 * server adds one that forwards records as logging notifications).
 */
import { terminalText } from "./terminal-text.js";

export type LogLevel = "debug" | "info" | "warning" | "error";

export interface LogRecord {
  level: LogLevel;
  scope: string;
  message: string;
  time: Date;
}

type Sink = (record: LogRecord) => void;

const order: Record<LogLevel, number> = { debug: 10, info: 20, warning: 30, error: 40 };
const sinks = new Set<Sink>();
let threshold: LogLevel =
  (process.env.DRYDOCK_LOG_LEVEL as LogLevel | undefined) ?? (process.env.DRYDOCK_DEBUG ? "debug" : "info");
let redactors: Array<(text: string) => string> = [];

export function setLogLevel(level: LogLevel): void {
  threshold = level;
}

/** Adds a sink; returns a function that removes it. */
export function addLogSink(sink: Sink): () => void {
  sinks.add(sink);
  return () => sinks.delete(sink);
}

/** Redactors run over every message before any sink sees it (host secrets never reach a log). */
export function addLogRedactor(redact: (text: string) => string): () => void {
  redactors.push(redact);
  return () => {
    redactors = redactors.filter((r) => r !== redact);
  };
}

/** Text as every log sees it: each redactor applied (the audit log uses it for its lines too). */
export function redactLogText(text: string): string {
  let out = text;
  for (const redact of redactors) out = redact(out);
  return out;
}

/**
 * A log line that cannot be written (stderr is a pipe whose reader died) is dropped: an
 * unhandled EPIPE would crash the process before it removes its boxes.
 */
let stderrGuarded = false;
function writeStderr(line: string): void {
  if (!stderrGuarded) {
    stderrGuarded = true;
    process.stderr.on("error", () => undefined);
  }
  if (process.stderr.writable) process.stderr.write(line);
}

function emit(level: LogLevel, scope: string, message: string): void {
  if (order[level] < order[threshold]) return;
  const text = redactLogText(message);
  const record: LogRecord = { level, scope, message: text, time: new Date() };
  // A message may quote a box or a repository: escaped for the terminal (sinks get it as it is).
  writeStderr(terminalText(`[drydock ${scope}] ${level === "info" ? "" : level + ": "}${text}\n`));
  for (const sink of sinks) {
    try {
      sink(record);
    } catch {
      // A failing sink must never break the operation that logged.
    }
  }
}

export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export function logger(scope: string): Logger {
  return {
    debug: (m) => emit("debug", scope, m),
    info: (m) => emit("info", scope, m),
    warn: (m) => emit("warning", scope, m),
    error: (m) => emit("error", scope, m),
  };
}
