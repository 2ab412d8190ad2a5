/**
 * Field checks for decoded JSON request bodies. LanceDB's napi layer coerces silently (a limit
 * of 2^32 wraps to 0 rows, -1 to 4294967295, 1.5 to 1), so numbers are checked here, before
 * they reach it.
 */
import { InvalidInputError } from '../errors.js';

export type Json = Record<string, unknown>;

function fail(field: string, expected: string): never {
  throw new InvalidInputError(`"${field}" must be ${expected}`);
}

export function asObject(value: unknown, field = 'request'): Json {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) fail(field, 'an object');
  return value as Json;
}

export function optString(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') fail(field, 'a string');
  return value;
}

export function reqString(value: unknown, field: string): string {
  const s = optString(value, field);
  if (s === undefined || s === '') fail(field, 'a non-empty string');
  return s;
}

export function optBool(value: unknown, field: string): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') fail(field, 'a boolean');
  return value;
}

export function optNumber(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(field, 'a finite number');
  return value;
}

export interface IntRange {
  readonly min?: number;
  readonly max?: number;
}

export function optInt(value: unknown, field: string, range: IntRange = {}): number | undefined {
  if (value === undefined || value === null) return undefined;
  const { min = 0, max = Number.MAX_SAFE_INTEGER } = range;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    fail(field, `an integer from ${min} to ${max}`);
  }
  return value;
}

export function reqInt(value: unknown, field: string, range?: IntRange): number {
  const n = optInt(value, field, range);
  if (n === undefined) fail(field, 'present');
  return n;
}

export function optStringArray(value: unknown, field: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v === '')) {
    fail(field, 'an array of non-empty strings');
  }
  return value as string[];
}

export function optStringMap(value: unknown, field: string): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  const obj = asObject(value, field);
  for (const v of Object.values(obj)) if (typeof v !== 'string') fail(field, 'a map of strings');
  return obj as Record<string, string>;
}

/** Numeric vector; NaN/Infinity are rejected (LanceDB returns no rows for them, without an error). */
export function numberArray(value: unknown, field: string): number[] {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'number' || !Number.isFinite(v))) {
    fail(field, 'an array of finite numbers');
  }
  return value as number[];
}

/** Case-insensitive enum value; accepts snake_case and PascalCase as the spec asks. */
export function optEnum<T extends string>(value: unknown, field: string, allowed: readonly T[]): T | undefined {
  const s = optString(value, field);
  if (s === undefined) return undefined;
  const norm = s.replace(/_/g, '').toLowerCase();
  const hit = allowed.find((a) => a.replace(/_/g, '').toLowerCase() === norm);
  if (!hit) fail(field, `one of ${allowed.join(', ')}`);
  return hit;
}

/** Reads a duration such as "30s", "5m", "1h30m", "250ms" (the spec's merge-insert timeout). */
export function parseDuration(value: unknown, field: string): number | undefined {
  const s = optString(value, field);
  if (s === undefined || s.trim() === '') return undefined;
  const unitMs: Record<string, number> = { ms: 1, s: 1000, sec: 1000, m: 60_000, min: 60_000, h: 3_600_000 };
  let total = 0;
  let rest = s.trim();
  while (rest.length > 0) {
    const m = /^(\d+(?:\.\d+)?)\s*(ms|sec|min|s|m|h)\s*/.exec(rest);
    if (!m) fail(field, 'a duration like "30s", "5m" or "1h30m"');
    total += Number(m[1]) * unitMs[m[2]];
    rest = rest.slice(m[0].length);
  }
  return Math.round(total);
}
