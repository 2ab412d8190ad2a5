/**
 * S3 failing the way S3 fails, inside the SDK's retry loop (issue #35). `attachS3Fake` makes a
 * real S3Client's own middleware stack serve from the stateful S3 fake (test/support/s3-fake.ts)
 * instead of the network, so everything the client does around a request — the retry strategy
 * and its backoff, the retry quota, the abort signal, middleware added by the code under test —
 * runs for real; `createS3Faults` decides, per attempt, whether that attempt fails and how:
 *
 * - `slowdown`  503 SlowDown (throttling; S3 wrote nothing)
 * - `internal`  500 InternalError
 * - `timeout`   the SDK's TimeoutError (what @smithy/node-http-handler throws)
 * - `reset`     a socket reset (ECONNRESET)
 * - `conflict`  409 ConditionalRequestConflict (a concurrent conditional write; nothing written)
 *
 * `internal`, `timeout` and `reset` can strike before the request reaches the fake (nothing
 * applied) or `afterApply`: the fake served the request — a write is in the bucket — and then the
 * answer was lost. Random faults come from a seeded PRNG (the same seed and the same request
 * order give the same faults); `place` puts one fault on the next request that matches a
 * predicate, for tests of one finding.
 *
 * Why not aws-sdk-client-mock alone: it replaces `send`, so no middleware (and no retry) runs.
 */
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { FinalizeHandlerArguments, HandlerExecutionContext, MetadataBearer } from '@smithy/types';
import { prng } from './prng.js';
import { s3Error, type S3Fake, type S3Op } from './s3-fake.js';

export type FaultKind = 'slowdown' | 'internal' | 'timeout' | 'reset' | 'conflict';

export interface Fault {
  readonly kind: FaultKind;
  /** The fake served the request (a write applied), then the answer was lost. internal / timeout / reset only. */
  readonly afterApply?: boolean;
  /** Milliseconds the attempt takes before it fails (a real timeout waits its timeout); default 0. */
  readonly delayMs?: number;
}

/** One attempt as the fault injector sees it. */
export interface FaultRequest {
  /** The SDK command name, e.g. `PutObjectCommand`. */
  readonly command: string;
  readonly op: S3Op;
  readonly bucket: string;
  readonly key: string;
  /** PUT / COPY / DELETE. */
  readonly write: boolean;
  /** If-None-Match / If-Match / CopySourceIfMatch was sent. */
  readonly conditional: boolean;
  /** 1 for the first attempt of a `send`, 2 for the SDK's first retry, … */
  readonly attempt: number;
  readonly input: Readonly<Record<string, unknown>>;
}

export interface InjectedFault {
  readonly request: FaultRequest;
  readonly fault: Fault;
  /** Placed with `place` (rather than drawn). */
  readonly placed: boolean;
}

/** Weights of the fault kinds random faults are drawn from (applied-then-lost counted apart). */
export type FaultMix = Partial<Record<FaultKind | 'internal-after' | 'timeout-after' | 'reset-after', number>>;

/** Every kind, applied-then-lost included, equally likely: the issue's "as S3 does fail". */
export const ALL_FAULTS: FaultMix = {
  slowdown: 1,
  internal: 1,
  'internal-after': 1,
  timeout: 1,
  'timeout-after': 1,
  reset: 1,
  'reset-after': 1,
  conflict: 1,
};

export interface S3FaultOptions {
  readonly seed: number;
  /** Probability that an attempt gets a random fault; default 0 (placed faults only). */
  readonly p?: number;
  /** Kinds to draw from; default ALL_FAULTS. `conflict` is only drawn for conditional writes. */
  readonly mix?: FaultMix;
  /** Only attempts this accepts get random faults (placed faults have their own predicate). */
  readonly only?: (request: FaultRequest) => boolean;
}

export interface S3Faults {
  /** Changes p (e.g. 0 to read the state back after a run). */
  setProbability(p: number): void;
  /**
   * The next `times` attempts (default 1) that `match` accepts get `fault`. Placed faults are
   * consulted before random ones, in the order placed, and do not consume the PRNG.
   */
  place(match: (request: FaultRequest) => boolean, fault: Fault, times?: number): void;
  /** Placed faults not yet used. */
  pending(): number;
  /** Faults injected so far, in order. */
  injected(): readonly InjectedFault[];
  /** Every attempt seen (faulted or not), in order. */
  attempts(): readonly FaultRequest[];
  /** Forgets the injected / attempt logs (not the placed faults or the PRNG state). */
  clearLog(): void;
  /** Decides one attempt's fault; used by `attachS3Fake`. */
  decide(request: FaultRequest): Fault | undefined;
}

export function createS3Faults(options: S3FaultOptions): S3Faults {
  const random = prng(options.seed);
  let p = options.p ?? 0;
  const mix = Object.entries(options.mix ?? ALL_FAULTS).filter(([, w]) => (w ?? 0) > 0) as [keyof FaultMix, number][];
  const placed: { match: (r: FaultRequest) => boolean; fault: Fault; left: number }[] = [];
  const injected: InjectedFault[] = [];
  const attempts: FaultRequest[] = [];

  const draw = (request: FaultRequest): Fault | undefined => {
    if (p <= 0 || (options.only && !options.only(request))) return undefined;
    if (random() >= p) return undefined;
    // 409 is S3's answer to concurrent *conditional* writes only.
    const kinds = mix.filter(([k]) => k !== 'conflict' || (request.write && request.conditional));
    const total = kinds.reduce((sum, [, w]) => sum + w, 0);
    let r = random() * total;
    for (const [name, w] of kinds) {
      if ((r -= w) < 0) return faultNamed(name);
    }
    return faultNamed(kinds[kinds.length - 1][0]);
  };

  return {
    setProbability(next) {
      p = next;
    },
    place(match, fault, times = 1) {
      if (fault.afterApply && (fault.kind === 'slowdown' || fault.kind === 'conflict')) {
        throw new Error(`a ${fault.kind} fault means S3 wrote nothing; it cannot be afterApply`);
      }
      placed.push({ match, fault, left: times });
    },
    pending: () => placed.reduce((n, f) => n + f.left, 0),
    injected: () => [...injected],
    attempts: () => [...attempts],
    clearLog() {
      injected.length = 0;
      attempts.length = 0;
    },
    decide(request) {
      attempts.push(request);
      const i = placed.findIndex((f) => f.left > 0 && f.match(request));
      let fault: Fault | undefined;
      if (i >= 0) {
        fault = placed[i].fault;
        if (--placed[i].left === 0) placed.splice(i, 1);
      } else {
        fault = draw(request);
      }
      if (fault) injected.push({ request, fault, placed: i >= 0 });
      return fault;
    },
  };
}

function faultNamed(name: keyof FaultMix): Fault {
  if (name.endsWith('-after')) return { kind: name.slice(0, -'-after'.length) as FaultKind, afterApply: true };
  return { kind: name as FaultKind };
}

/** The error the SDK would surface to its retry strategy for `fault`. */
export function faultError(fault: Fault): Error {
  switch (fault.kind) {
    case 'slowdown':
      return s3Error('SlowDown', 503, 'Please reduce your request rate.');
    case 'internal':
      return s3Error('InternalError', 500, 'We encountered an internal error. Please try again.');
    case 'conflict':
      return s3Error('ConditionalRequestConflict', 409, 'A conflicting operation occurred. Retry the request.');
    case 'timeout':
      return Object.assign(new Error('@smithy/node-http-handler - a request has exceeded the configured requestTimeout.'), {
        name: 'TimeoutError',
        code: 'ETIMEDOUT',
      });
    case 'reset':
      // node-http-handler renames socket resets to TimeoutError and keeps the code.
      return Object.assign(new Error('socket hang up'), { name: 'TimeoutError', code: 'ECONNRESET' });
  }
}

const OPS: Readonly<Record<string, S3Op>> = {
  PutObjectCommand: 'PUT',
  CopyObjectCommand: 'COPY',
  GetObjectCommand: 'GET',
  HeadObjectCommand: 'HEAD',
  DeleteObjectCommand: 'DELETE',
  ListObjectsV2Command: 'LIST',
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Makes `client` serve every command from `fake`, through its own middleware stack, with
 * `faults` (if given) deciding each attempt. The middleware sits in the `deserialize` step at
 * high priority: inside the retry middleware (`finalizeRequest`, high), so every SDK retry is a
 * new attempt here, and outside the deserializer, so it answers the fake's output directly
 * (no HTTP, no XML). Do not also intercept this client with aws-sdk-client-mock.
 */
export function attachS3Fake(client: S3Client, fake: S3Fake, faults?: S3Faults): S3Client {
  client.middlewareStack.add(
    (_next, context: HandlerExecutionContext) => async (args) => {
      const input = args.input as Record<string, unknown>;
      const command = context.commandName ?? 'unknown';
      const op = OPS[command];
      if (op === undefined) throw new Error(`S3 fake: command not supported: ${command}`);
      const request: FaultRequest = {
        command,
        op,
        bucket: String(input.Bucket ?? ''),
        key: String(input.Key ?? input.Prefix ?? ''),
        write: op === 'PUT' || op === 'COPY' || op === 'DELETE',
        conditional: input.IfNoneMatch !== undefined || input.IfMatch !== undefined || input.CopySourceIfMatch !== undefined,
        attempt: attemptOf(args as FinalizeHandlerArguments<object>),
        input,
      };
      const fault = faults?.decide(request);
      // Like the HTTP handler, a wait ends when the send's abort signal fires (a request deadline).
      if (fault?.delayMs) await abortable(sleep(fault.delayMs), abortSignalOf(context));
      if (fault && !fault.afterApply) throw faultError(fault);
      const output = await fake.serve(command, input);
      if (fault) throw faultError(fault);
      return { output: output as MetadataBearer, response: { statusCode: 200, headers: {} } };
    },
    { step: 'deserialize', priority: 'high', name: 'raskS3FakeWithFaults' },
  );
  return client;
}

/** The `abortSignal` given to `send`, where the SDK keeps it for its handlers. */
function abortSignalOf(context: HandlerExecutionContext): AbortSignal | undefined {
  return (context as { __smithy_context?: { abortSignal?: AbortSignal } }).__smithy_context?.abortSignal;
}

/** `wait`, or an AbortError (as node-http-handler throws) once `signal` fires. */
function abortable(wait: Promise<unknown>, signal: AbortSignal | undefined): Promise<unknown> {
  if (signal === undefined) return wait;
  const aborted = () => Object.assign(new Error('Request aborted'), { name: 'AbortError' });
  if (signal.aborted) return Promise.reject(aborted());
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(aborted());
    signal.addEventListener('abort', onAbort, { once: true });
    wait.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The retry middleware numbers attempts in the `amz-sdk-request` header ("attempt=2; max=3"). */
function attemptOf(args: FinalizeHandlerArguments<object>): number {
  const header = (args.request as { headers?: Record<string, string> } | undefined)?.headers?.['amz-sdk-request'];
  const n = Number(/attempt=(\d+)/.exec(header ?? '')?.[1]);
  return Number.isInteger(n) && n > 0 ? n : 1;
}

/**
 * A fresh S3Client (not stubbed) served by `fake` with `faults`. `config` is the client
 * configuration under test (retry mode, attempts, …); region and credentials default to fakes.
 */
export function faultyS3Client(fake: S3Fake, faults?: S3Faults, config: S3ClientConfig = {}): S3Client {
  const client = new S3Client({
    region: 'us-east-1',
    credentials: { accessKeyId: 'fake', secretAccessKey: 'fake' },
    ...config,
  });
  return attachS3Fake(client, fake, faults);
}

/**
 * For code that builds its own S3Client (the Lambda entries, functions/*.ts): every S3Client
 * constructed or used while this is installed is attached to `fake` with `faults` on its first
 * `send`. Returns the uninstall. Pass a fake made without `target: S3Client` (that stub would
 * replace `send` itself, and no middleware would run).
 */
export function interceptS3Clients(fake: S3Fake, faults?: S3Faults): () => void {
  const original = Object.getOwnPropertyDescriptor(S3Client.prototype, 'send');
  const send = S3Client.prototype.send;
  const attached = new WeakSet<S3Client>();
  S3Client.prototype.send = function (this: S3Client, ...args: Parameters<typeof send>) {
    if (!attached.has(this)) {
      attached.add(this);
      attachS3Fake(this, fake, faults);
    }
    return (send as (...a: unknown[]) => ReturnType<typeof send>).apply(this, args);
  } as typeof send;
  return () => {
    if (original) Object.defineProperty(S3Client.prototype, 'send', original);
    else delete (S3Client.prototype as { send?: unknown }).send;
  };
}
