/**
 * Counters raised deep inside the catalog (a lost compare-and-swap, a credential vend) without
 * the registry or an adapter knowing about metrics. A no-op until an entry point installs a
 * recorder (the Lambda entries record them as EMF metrics, lib/observability/lambda.ts). This
 * module imports nothing, so any layer may use it.
 */
export type SignalName =
  /** A conditional write lost its race (412/409) and the step is re-run. */
  | 'CasConflict'
  /** Retries ran out: the request answers code 14 ConcurrentModification. */
  | 'CasExhausted'
  /** Credentials were handed out (fresh from STS or from the cache). */
  | 'CredentialVend'
  /** A vend had to call STS. */
  | 'CredentialVendSts'
  /** A request for a project that does not exist was refused: counted, never audited (docs/events.md). */
  | 'DeniedUnknownProject';

export type SignalRecorder = (name: SignalName, value: number) => void;

let recorder: SignalRecorder | undefined;

export function setSignalRecorder(next: SignalRecorder | undefined): void {
  recorder = next;
}

export function signal(name: SignalName, value = 1): void {
  recorder?.(name, value);
}
