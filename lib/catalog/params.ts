import { InvalidInputError } from '../errors.js';

/** Small, strict readers for request fields; each failure names the field. */

export function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new InvalidInputError(`${field} must be a string`);
  return value;
}

export function optionalBoolean(value: unknown, field: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new InvalidInputError(`${field} must be true or false`);
}

export function optionalInteger(value: unknown, field: string, opts: { min?: number } = {}): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw new InvalidInputError(`${field} must be an integer`);
  if (opts.min !== undefined && n < opts.min) throw new InvalidInputError(`${field} must be at least ${opts.min}`);
  return n;
}

export function stringMap(value: unknown, field: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidInputError(`${field} must be an object`);
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new InvalidInputError(`${field}.${k} must be a string`);
  }
  return { ...(value as Record<string, string>) };
}

/** Case-insensitive enum accepting PascalCase, snake_case and lower case spellings. */
export function mode<T extends string>(value: unknown, field: string, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') throw new InvalidInputError(`${field} must be a string`);
  const norm = value.replace(/_/g, '').toLowerCase();
  const hit = allowed.find((a) => a.replace(/_/g, '').toLowerCase() === norm);
  if (!hit) throw new InvalidInputError(`${field} must be one of ${allowed.join(', ')} (got ${JSON.stringify(value)})`);
  return hit;
}

/** `limit`: absent or negative means everything (LanceDB never follows page tokens). */
export function pageLimit(value: unknown): number | undefined {
  const n = optionalInteger(value, 'limit');
  return n === undefined || n < 0 ? undefined : n;
}
