import { Logger } from '@aws-lambda-powertools/logger';
import type { LogItem } from '@aws-lambda-powertools/logger';

/**
 * One logger for every entry point: Powertools Logger (structured JSON with level, message,
 * service, timestamp, and on Lambda the request id, cold-start flag and X-Ray trace id). The
 * local server uses the same class, printing either the same JSON or a one-line human format.
 *
 * Nothing that could carry a secret is printed: keys that name one are replaced by
 * `[redacted]` at any depth, whatever the caller passed.
 */

export type LogLevelName = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFormat = 'json' | 'pretty';
/** Where a finished line goes (tests capture it; default: stdout, warnings and errors to stderr). */
export type LogSink = (line: string, level: string) => void;

export interface LoggerOptions {
  readonly service: string;
  readonly level?: LogLevelName;
  readonly format?: LogFormat;
  readonly sink?: LogSink;
  readonly persistentKeys?: Record<string, string>;
}

/** Key names whose values are never logged (case-insensitive, substring match). */
const SECRET_KEY = /secret|token|password|authorization|api[-_]?key|credential|cookie|signature/i;

export function redactSecrets(key: string, value: unknown): unknown {
  if (key !== '' && SECRET_KEY.test(key) && value !== undefined && value !== null && typeof value !== 'object') {
    return '[redacted]';
  }
  return value;
}

const defaultSink: LogSink = (line, level) => {
  const stream = level === 'WARN' || level === 'ERROR' || level === 'CRITICAL' ? process.stderr : process.stdout;
  stream.write(`${line}\n`);
};

/** Powertools' Logger with our printing: a sink instead of the console, and an optional human format. */
class RaskLogger extends Logger {
  #sink?: LogSink;
  #pretty = false;

  configure(sink: LogSink, pretty: boolean): this {
    this.#sink = sink;
    this.#pretty = pretty;
    return this;
  }

  protected override printLog(logLevel: number, log: LogItem): void {
    if (!this.#sink) return super.printLog(logLevel, log);
    log.prepareForPrint();
    const attributes = log.getAttributes();
    const level = String(attributes.level ?? '');
    const json = JSON.stringify(attributes, this.getJsonReplacer());
    this.#sink(this.#pretty ? prettyLine(JSON.parse(json) as Record<string, unknown>) : json, level);
  }
}

/**
 * `18:59:01.123 INFO  POST /v1/namespace/list 200 3ms req=…` for request lines, otherwise
 * `time LEVEL message key=value …`. Values come already redacted from the JSON form.
 */
export function prettyLine(a: Record<string, unknown>): string {
  const { level, message, timestamp, service: _s, sampling_rate: _r, ...rest } = a;
  const time = typeof timestamp === 'string' ? timestamp.slice(11, 23) : '';
  const head = `${time} ${String(level).padEnd(5)}`;
  if (message === 'request') {
    const { method, path, status, code, ms, requestId, ...more } = rest;
    const codePart = code === undefined ? '' : ` code=${String(code)}`;
    return `${head} ${String(method)} ${String(path)} ${String(status)}${codePart} ${String(ms)}ms req=${String(requestId)}${fields(more)}`;
  }
  return `${head} ${String(message)}${fields(rest)}`;
}

function fields(rest: Record<string, unknown>): string {
  return Object.entries(rest)
    .map(([k, v]) => ` ${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`)
    .join('');
}

export function createLogger(options: LoggerOptions): Logger {
  const logger = new RaskLogger({
    serviceName: options.service,
    logLevel: (options.level ?? 'info').toUpperCase() as 'INFO',
    jsonReplacerFn: redactSecrets,
    ...(options.persistentKeys ? { persistentKeys: options.persistentKeys } : {}),
  });
  if (options.sink || options.format === 'pretty') logger.configure(options.sink ?? defaultSink, options.format === 'pretty');
  return logger;
}
