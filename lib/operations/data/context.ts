/**
 * What every data-plane handler shares: the composition's engine, the limits, the table lookup and
 * strict readers for query-string parameters (the REST binding moves Arrow operations' request
 * fields into the query, where everything arrives as a string).
 */
import { dataLimitsOf } from '../../catalog/data/limits.js';
import { type CatalogServices, dataEngineOf } from '../../catalog/services.js';
import { resolveTable, type ResolvedTable } from '../../catalog/protocols/lookup.js';
import { InvalidInputError } from '../../errors.js';
import type { OperationRequest } from '../../contract/request.js';
import type { DataEngine } from '../../ports/data-engine.js';

/** The composition's data engine (CatalogServices.data). */
export const engine = (services: CatalogServices): DataEngine => dataEngineOf(services);

export const limits = dataLimitsOf;

/** The table the request names: registry record, warehouse, storage and absolute location. */
export function table(req: OperationRequest, services: CatalogServices): Promise<ResolvedTable> {
  return resolveTable(services, req.id);
}

// ---- query parameters ----

/** One value or none; a parameter given twice is ambiguous and refused. */
export function queryString(query: URLSearchParams, name: string): string | undefined {
  const all = query.getAll(name);
  if (all.length > 1) throw new InvalidInputError(`query parameter ${name} is given ${all.length} times; give it once`);
  return all[0];
}

export function queryBool(query: URLSearchParams, name: string): boolean | undefined {
  const raw = queryString(query, name);
  if (raw === undefined) return undefined;
  const lower = raw.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw new InvalidInputError(`query parameter ${name} must be true or false (got ${JSON.stringify(raw)})`);
}

export function queryInt(query: URLSearchParams, name: string, min = 0): number | undefined {
  const raw = queryString(query, name);
  if (raw === undefined || raw === '') return undefined;
  const n = /^-?\d+$/.test(raw.trim()) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min) {
    throw new InvalidInputError(`query parameter ${name} must be an integer of at least ${min} (got ${JSON.stringify(raw)})`);
  }
  return n;
}

/** A map sent as one JSON-encoded parameter, e.g. `properties={"team":"eng"}`; values must be strings. */
export function queryJsonMap(query: URLSearchParams, name: string): Record<string, string> | undefined {
  const raw = queryString(query, name);
  if (raw === undefined || raw === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new InvalidInputError(`query parameter ${name} must be a JSON object of strings, e.g. ${name}={"k":"v"}`);
  }
  if (value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidInputError(`query parameter ${name} must be a JSON object of strings`);
  }
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new InvalidInputError(`query parameter ${name}: value of ${JSON.stringify(k)} must be a string`);
  }
  return value as Record<string, string>;
}

export { defined } from './inputs.js';
