import { createHash } from 'node:crypto';
import { AssumeRoleCommand, type STSClient } from '@aws-sdk/client-sts';
import { InternalError, ServiceUnavailableError, ThrottlingError } from '../../errors.js';
import type { Identity } from '../../contract/request.js';
import type { AccessMode, CredentialVendor, VendRequest } from '../../ports/credential-vendor.js';
import { signal } from '../../signals.js';
import { partitionOf, sessionPolicy } from './session-policy.js';

export interface StsVendorOptions {
  readonly client: STSClient;
  /** The vending role; its own policy is the ceiling, the session policy narrows it per table. */
  readonly roleArn: string;
  /** Used when the warehouse root names no region. */
  readonly region?: string;
  /**
   * Session length. Lambda roles assuming another role is role chaining, which AWS caps at one
   * hour, so that is also our ceiling; STS's floor is 15 minutes.
   */
  readonly durationSeconds?: number;
  /** Cached credentials are handed out until this long before they expire. */
  readonly refreshMarginMs?: number;
  readonly maxCacheEntries?: number;
  readonly now?: () => number;
}

const MAX_DURATION = 3600;
const MIN_DURATION = 900;
/** Lance refreshes 60 s before expiry by default; our margin is wider so a refresh gets new keys. */
const DEFAULT_MARGIN_MS = 5 * 60_000;

interface Cached {
  readonly options: Readonly<Record<string, string>>;
  readonly expiresAt: number;
}

/**
 * Credential vending with STS AssumeRole and an inline session policy scoped to the table's
 * prefix (read-only or read-write). Credentials are cached per (principal, table, mode) until
 * `refreshMarginMs` before expiry, so a burst of opens costs one STS call, and concurrent
 * requests for the same key share one in-flight call.
 *
 * The principal is a hash of the caller's api key / bearer token: the raw secret is never a
 * cache key, never sent to STS and never logged. Nothing here logs the credentials either; they
 * leave only in the response body.
 */
export class StsCredentialVendor implements CredentialVendor {
  readonly #options: StsVendorOptions;
  readonly #duration: number;
  readonly #margin: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  readonly #cache = new Map<string, Cached>();
  readonly #inFlight = new Map<string, Promise<Cached>>();

  constructor(options: StsVendorOptions) {
    this.#options = options;
    this.#duration = Math.min(MAX_DURATION, Math.max(MIN_DURATION, options.durationSeconds ?? MAX_DURATION));
    this.#margin = options.refreshMarginMs ?? DEFAULT_MARGIN_MS;
    this.#maxEntries = options.maxCacheEntries ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  async vend(request: VendRequest): Promise<Record<string, string> | undefined> {
    const { root } = request;
    if (root.kind !== 's3') return undefined;
    const prefix = joinPrefix(root.prefix, request.tablePath);
    const principal = principalOf(request.identity);
    const key = JSON.stringify([principal, root.bucket, prefix, request.mode]);

    signal('CredentialVend');
    const cached = this.#cache.get(key);
    if (cached && this.#now() < cached.expiresAt - this.#margin) return { ...cached.options };

    let pending = this.#inFlight.get(key);
    if (!pending) {
      pending = this.#assume(principal, root.bucket, prefix, request.mode, root.region ?? this.#options.region);
      this.#inFlight.set(key, pending);
      pending.finally(() => this.#inFlight.delete(key)).catch(() => undefined);
    }
    const fresh = await pending;
    this.#remember(key, fresh);
    return { ...fresh.options };
  }

  async #assume(principal: string, bucket: string, prefix: string, mode: AccessMode, region: string | undefined): Promise<Cached> {
    let out;
    signal('CredentialVendSts');
    try {
      out = await this.#options.client.send(
        new AssumeRoleCommand({
          RoleArn: this.#options.roleArn,
          // Visible in CloudTrail: who (hashed) and nothing secret.
          RoleSessionName: `rask-${principal.slice(0, 32)}`,
          DurationSeconds: this.#duration,
          Policy: sessionPolicy({ bucket, prefix, mode, partition: partitionOf(region) }),
        }),
      );
    } catch (err) {
      throw stsFailure(err);
    }
    const c = out.Credentials;
    if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || !c.Expiration) {
      throw new InternalError('STS AssumeRole answered without complete credentials');
    }
    const expiresAt = c.Expiration.getTime();
    // Lance reads storage_options as a string map; every value must be a JSON string.
    const options: Record<string, string> = {
      aws_access_key_id: c.AccessKeyId,
      aws_secret_access_key: c.SecretAccessKey,
      aws_session_token: c.SessionToken,
      expires_at_millis: String(expiresAt),
    };
    if (region) options.aws_region = region;
    return { options, expiresAt };
  }

  #remember(key: string, entry: Cached): void {
    this.#cache.delete(key);
    this.#cache.set(key, entry);
    // Map iteration is insertion order: the first keys are the least recently vended.
    for (const oldest of this.#cache.keys()) {
      if (this.#cache.size <= this.#maxEntries) break;
      this.#cache.delete(oldest);
    }
  }
}

/**
 * A stable, non-reversible name for the caller: sha256 over the credentials it presented. The
 * domain prefix keeps it distinct from any other hash of the same secret.
 */
export function principalOf(identity: Identity): string {
  const h = createHash('sha256').update('rask-principal\0');
  h.update(`k:${identity.apiKey ?? ''}\0b:${identity.bearerToken ?? ''}`);
  return h.digest('hex');
}

function joinPrefix(rootPrefix: string, tablePath: string): string {
  const base = rootPrefix.replace(/\/+$/, '');
  return (base ? `${base}/${tablePath}` : tablePath).replace(/\/+$/, '');
}

/** STS errors carry no secrets, but say only the error name: the caller needs the kind, not details. */
function stsFailure(err: unknown): Error {
  const name = (err as { name?: string } | undefined)?.name ?? 'Error';
  const status = (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
  if (/throttl/i.test(name) || status === 429) {
    return new ThrottlingError('credential vending is being throttled by STS; retry with backoff', { cause: err });
  }
  if (status !== undefined && status >= 500) {
    return new ServiceUnavailableError(`credential vending is unavailable (STS ${name}); retry`, { cause: err });
  }
  return new InternalError(`credential vending failed (STS ${name}); check the vending role's trust and policy`, {
    cause: err,
  });
}

/**
 * The client class, re-exported for callers that load this adapter with a dynamic `import()`
 * (lib/app/aws.ts, functions/api-meta.ts): importing the SDK package itself dynamically would
 * keep every one of its commands in the bundle, since a module namespace cannot be tree-shaken.
 */
export { STSClient } from '@aws-sdk/client-sts';
