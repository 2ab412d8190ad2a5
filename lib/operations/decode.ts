import { z } from 'zod';
import { InvalidInputError } from '../errors.js';
import type { OperationRequest } from '../contract/request.js';

/**
 * Decoding a request into a door's typed input (issue 25, "one shape per operation"): each
 * handler states its input as a zod schema and the layer below receives only what the schema
 * yields. The first issue — in the order the schema lists its fields, which is the order the
 * doors have always checked them — is the 400 (code 13), with the message the doors have always
 * given (lib/catalog/params.ts states the same rules for the spec doors).
 */
export function decode<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new InvalidInputError(result.error.issues[0]?.message ?? 'invalid request');
}

/** A rule that lives in the layer owning it (a name rule, a storage root, a policy) as a schema. */
/** Its input is `any`: the check takes whatever it is given (a field, or another schema's output). */
export function checkedBy<T>(check: (value: unknown) => T): z.ZodType<T, any> {
  return z.unknown().transform((value, ctx) => {
    try {
      return check(value);
    } catch (err) {
      if (!(err instanceof InvalidInputError)) throw err;
      ctx.addIssue({ code: 'custom', message: err.message });
      return z.NEVER;
    }
  }) as unknown as z.ZodType<T, any>;
}

const absent = <T>(v: T | null | undefined): T | undefined => v ?? undefined;

/** A string, or absent (`null` counts as absent). */
export const optionalString = (field: string) =>
  z.string({ error: `${field} must be a string` }).nullish().transform(absent);

/** `true`/`false`, also spelled as strings (query parameters are strings); `null` is absent. */
export const optionalBoolean = (field: string) =>
  z
    .union([z.boolean(), z.literal('true').transform(() => true), z.literal('false').transform(() => false)], {
      error: `${field} must be true or false`,
    })
    .nullish()
    .transform(absent);

/** A safe integer, also as a decimal string; `null` and `''` are absent. */
export const optionalInteger = (field: string, opts: { min?: number } = {}): z.ZodType<number | undefined> => {
  const integer = z.number({ error: `${field} must be an integer` }).int({ error: `${field} must be an integer` });
  return z.preprocess(
    (v) => (v === '' ? undefined : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v),
    (opts.min === undefined ? integer : integer.min(opts.min, { error: `${field} must be at least ${opts.min}` })).nullish().transform(absent),
  );
};

/** A JSON object of string values, `{}` when absent. */
export const stringMap = (field: string) =>
  z
    .record(z.string(), z.unknown(), { error: `${field} must be an object` })
    .nullish()
    .superRefine((value, ctx) => {
      for (const [k, v] of Object.entries(value ?? {})) {
        if (typeof v !== 'string') ctx.addIssue({ code: 'custom', message: `${field}.${k} must be a string` });
      }
    })
    .transform((value) => ({ ...(value ?? {}) }) as Record<string, string>);

/** An array of strings, or absent. */
export const optionalStringArray = (field: string) =>
  z.array(z.string(), { error: `${field} must be an array of strings` }).nullish().transform(absent);

/** `limit`: absent or negative means everything (lib/catalog/params.ts, pageLimit). */
export const pageLimit = optionalInteger('limit').transform((n) => (n === undefined || n < 0 ? undefined : n));

/** `page_token` and `limit` of a listing door, from the query string. */
export const pageQuery = z.object({ pageToken: optionalString('page_token'), limit: pageLimit });

/** The query parameters a door reads, by name (first value wins, as `URLSearchParams.get`). */
export function queryFields<K extends string>(req: OperationRequest, ...names: K[]): Record<K, string | undefined> {
  return Object.fromEntries(names.map((n) => [n, req.query.get(n) ?? undefined])) as Record<K, string | undefined>;
}

/** A `{param}` segment of a control-plane route: required and non-empty. */
export function pathParam(req: OperationRequest, name: string): string {
  const value = req.params?.[name];
  if (value === undefined || value.length === 0) throw new InvalidInputError(`${name} is required in the path`);
  return value;
}
