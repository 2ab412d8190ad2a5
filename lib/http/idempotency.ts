import { createHash } from 'node:crypto';
import { CatalogError, ErrorCode, InvalidInputError } from '../errors.js';
import type { HttpRequest, HttpResponse } from '../contract/http.js';
import type { OperationDef } from '../contract/operations.js';
import type { Claim, IdempotencyStore, RequestFingerprint } from '../ports/idempotency-store.js';
import { TransportError } from './transport-errors.js';

/**
 * Writes that are safe to retry (docs/operations.md, "Idempotency keys"; the header follows the
 * IETF draft "The Idempotency-Key HTTP Header Field"). A mutating request that carries the
 * header claims the key for its principal before the handler runs, and its answer is stored;
 * a retry with the same key and request gets that answer byte for byte (plus
 * `idempotent-replayed: true`) and nothing runs again. The same key with another request is
 * 422 / code 13 naming what differs; a retry while the first still runs is 409 / code 14 with
 * Retry-After. Only answers that a retry would get again are stored: a transient failure (code
 * 14, 17, 18, 21, any 5xx or 429) gives the key back, so the retry runs.
 */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';

export interface IdempotencyOptions {
  readonly store: IdempotencyStore;
  /** How long an answer is kept (RASK_IDEMPOTENCY_TTL_SECONDS, default 24 h). */
  readonly ttlMs: number;
  /** How long an unfinished claim blocks its key (longer than any request runs). */
  readonly leaseMs: number;
  readonly now?: () => Date;
}

/** Operations that change something: every action but reads and listings (lib/contract/operation-columns.ts). */
export const mutates = (operation: OperationDef): boolean => !/:(read|list)$/.test(operation.action);

const MAX_KEY_LENGTH = 255;

/**
 * The key a request sends, if any: a Structured Field string (`"…"`, as the draft writes it) or
 * a bare token, 1–255 visible ASCII characters. A malformed key is refused (400), never ignored:
 * a client that sent one expects the protection.
 */
export function idempotencyKeyOf(headers: Readonly<Record<string, string>>): string | undefined {
  const raw = headers[IDEMPOTENCY_HEADER];
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  const key = trimmed.length >= 2 && trimmed.startsWith('"') && trimmed.endsWith('"') ? trimmed.slice(1, -1) : trimmed;
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new InvalidInputError(`header Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters (a UUID is a good key); got ${JSON.stringify(raw.slice(0, 64))}`);
  }
  return key;
}

export function fingerprintOf(operation: OperationDef, request: HttpRequest): RequestFingerprint {
  return {
    operation: operation.operationId,
    target: `${request.method.toUpperCase()} ${request.rawPath}${request.rawQuery ? `?${request.rawQuery}` : ''}`,
    bodyDigest: createHash('sha256').update(request.body).digest('hex'),
  };
}

/** Codes a retry may well not get again: the answer is not kept. */
const TRANSIENT_CODES: ReadonlySet<number> = new Set([ErrorCode.ConcurrentModification, ErrorCode.ServiceUnavailable, ErrorCode.Internal, ErrorCode.Throttling]);

const keepable = (err: unknown): err is CatalogError => err instanceof CatalogError && !TRANSIENT_CODES.has(err.code) && err.status < 500 && err.status !== 429;

export interface IdempotentCall {
  readonly principal: string;
  readonly key: string;
  readonly fingerprint: RequestFingerprint;
  readonly requestId: string;
  /** Runs the operation: its answer, or it throws. */
  readonly run: () => Promise<HttpResponse>;
  /** The one error mapping (lib/http/respond.ts), for a refusal worth keeping. */
  readonly answerOf: (err: CatalogError) => HttpResponse;
  readonly log?: (message: string, fields: Record<string, unknown>) => void;
}

export async function runIdempotent(options: IdempotencyOptions, call: IdempotentCall): Promise<HttpResponse> {
  const now = options.now ?? (() => new Date());
  const claim = await options.store.claim({
    principal: call.principal,
    key: call.key,
    fingerprint: call.fingerprint,
    requestId: call.requestId,
    now: now(),
    ttlMs: options.ttlMs,
    leaseMs: options.leaseMs,
  });
  if (claim.kind !== 'claimed') return answerWithout(claim, call);
  let answer: HttpResponse;
  try {
    answer = await call.run();
  } catch (err) {
    if (!keepable(err)) {
      await claim.release().catch((e: unknown) => call.log?.('idempotency key not released', { requestId: call.requestId, err: String(e) }));
      throw err;
    }
    answer = call.answerOf(err);
  }
  try {
    await claim.complete({ status: answer.status, headers: answer.headers, body: answer.body }, now());
  } catch (err) {
    // The write is done and this answer is right; a retry within the lease answers 409, after
    // it runs again. Logged: the key's record could not be written.
    call.log?.('idempotency answer not stored', { requestId: call.requestId, err: String(err) });
  }
  return answer;
}

function answerWithout(claim: Exclude<Claim, { kind: 'claimed' }>, call: IdempotentCall): HttpResponse {
  switch (claim.kind) {
    case 'replay':
      return { status: claim.answer.status, headers: { ...claim.answer.headers, [REPLAYED_HEADER]: 'true' }, body: claim.answer.body };
    case 'running':
      throw new TransportError(
        ErrorCode.ConcurrentModification,
        409,
        `a request with Idempotency-Key ${JSON.stringify(call.key)} is still running; retry after ${claim.retryAfterSeconds} s for its answer`,
        { 'retry-after': String(claim.retryAfterSeconds) },
      );
    case 'mismatch': {
      const differs = (['operation', 'target', 'bodyDigest'] as const).filter((f) => claim.first[f] !== call.fingerprint[f]);
      const what = differs.map((f) => (f === 'operation' ? `operation (first ${claim.first.operation}, now ${call.fingerprint.operation})` : f === 'target' ? `method, path or query (first ${claim.first.target})` : 'body'));
      throw new TransportError(
        ErrorCode.InvalidInput,
        422,
        `Idempotency-Key ${JSON.stringify(call.key)} was already used with another request: its ${what.join(' and ')} differ; use a new key for a new request`,
      );
    }
  }
}
