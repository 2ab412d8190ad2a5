/**
 * AlterTransaction's actions (spec AlterTransactionAction): parsed strictly, then applied in
 * order to one copy of the record. Any invalid action throws before anything is written, so
 * the request applies all of its actions or none (the caller writes the result with one
 * compare-and-swap).
 */
import { InvalidInputError } from '../errors.js';
import { JOB_STATUSES, type JobRecord, type JobStatus } from '../ports/job-record.js';
import { setStatusByRequest } from './transitions.js';
import { RESERVED_PREFIX } from './view.js';

export type AlterAction =
  | { readonly kind: 'setStatus'; readonly status: JobStatus }
  | { readonly kind: 'setProperty'; readonly key: string; readonly value: string; readonly mode: 'overwrite' | 'fail' | 'skip' }
  | { readonly kind: 'unsetProperty'; readonly key: string; readonly mode: 'skip' | 'fail' };

/** Caller properties are kept in the record, read on every claim: keep them small. */
export const MAX_PROPERTIES = 64;
export const MAX_PROPERTY_BYTES = 16 * 1024;

const obj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function parseActions(value: unknown): AlterAction[] {
  if (!Array.isArray(value) || value.length === 0) throw new InvalidInputError('"actions" must be a non-empty array');
  return value.map((raw, i) => {
    const at = `actions[${i}]`;
    if (!obj(raw)) throw new InvalidInputError(`${at} must be an object`);
    const given = (['setStatusAction', 'setPropertyAction', 'unsetPropertyAction'] as const).filter((k) => raw[k] != null);
    if (given.length !== 1) {
      throw new InvalidInputError(`${at} must set exactly one of setStatusAction, setPropertyAction, unsetPropertyAction`);
    }
    const body = raw[given[0]];
    if (!obj(body)) throw new InvalidInputError(`${at}.${given[0]} must be an object`);
    switch (given[0]) {
      case 'setStatusAction':
        return { kind: 'setStatus', status: parseStatus(body.status, `${at}.setStatusAction.status`) };
      case 'setPropertyAction':
        return {
          kind: 'setProperty',
          key: propertyKey(body.key, `${at}.setPropertyAction.key`),
          value: str(body.value, `${at}.setPropertyAction.value`),
          mode: mode(body.mode, `${at}.setPropertyAction.mode`, ['overwrite', 'fail', 'skip'] as const, 'overwrite'),
        };
      case 'unsetPropertyAction':
        return {
          kind: 'unsetProperty',
          key: propertyKey(body.key, `${at}.unsetPropertyAction.key`),
          mode: mode(body.mode, `${at}.unsetPropertyAction.mode`, ['skip', 'fail'] as const, 'skip'),
        };
    }
  });
}

export function applyActions(job: JobRecord, actions: readonly AlterAction[], now: Date): JobRecord {
  let next = job;
  const properties: Record<string, string> = { ...job.properties };
  for (const action of actions) {
    switch (action.kind) {
      case 'setStatus':
        next = setStatusByRequest(next, action.status, now);
        break;
      case 'setProperty':
        if (action.key in properties && action.mode === 'fail') {
          throw new InvalidInputError(`property ${JSON.stringify(action.key)} is already set (mode Fail)`);
        }
        if (!(action.key in properties && action.mode === 'skip')) properties[action.key] = action.value;
        break;
      case 'unsetProperty':
        if (!(action.key in properties) && action.mode === 'fail') {
          throw new InvalidInputError(`property ${JSON.stringify(action.key)} is not set (mode Fail)`);
        }
        delete properties[action.key];
        break;
    }
  }
  if (Object.keys(properties).length > MAX_PROPERTIES || Buffer.byteLength(JSON.stringify(properties)) > MAX_PROPERTY_BYTES) {
    throw new InvalidInputError(`a transaction holds at most ${MAX_PROPERTIES} properties and ${MAX_PROPERTY_BYTES} bytes of them`);
  }
  return { ...next, properties, updatedAt: now.toISOString() };
}

/** TransactionStatus is case-insensitive, PascalCase or snake_case (all one word here). */
export function parseStatus(value: unknown, field: string): JobStatus {
  const raw = str(value, field);
  const found = JOB_STATUSES.find((s) => s.toLowerCase() === raw.replace(/_/g, '').toLowerCase());
  if (!found) throw new InvalidInputError(`${field} must be one of ${JOB_STATUSES.join(', ')} (got ${JSON.stringify(raw)})`);
  return found;
}

function propertyKey(value: unknown, field: string): string {
  const key = str(value, field);
  if (key === '') throw new InvalidInputError(`${field} must not be empty`);
  if (key.startsWith(RESERVED_PREFIX)) {
    throw new InvalidInputError(`${field}: keys starting with "${RESERVED_PREFIX}" are the server's and cannot be set or unset`);
  }
  return key;
}

function mode<M extends string>(value: unknown, field: string, allowed: readonly M[], fallback: M): M {
  if (value == null) return fallback;
  const raw = str(value, field).replace(/_/g, '').toLowerCase();
  const found = allowed.find((m) => m === raw);
  if (!found) throw new InvalidInputError(`${field} must be one of ${allowed.map(pascal).join(', ')} (got ${JSON.stringify(value)})`);
  return found;
}

const pascal = (s: string) => s[0].toUpperCase() + s.slice(1);

function str(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new InvalidInputError(`${field} must be a string`);
  return value;
}
