// zod/mini, as lib/config.ts: the metadata bundle carries these doors, and full zod would nearly
// double it (docs/benchmarks.md, "Lambda bundles: size and cold import").
import * as z from 'zod/mini';
import { InvalidInputError } from '../errors.js';
import type { OperationRequest } from '../contract/request.js';

/**
 * Decoding a request into a door's typed input (issue 25, "one shape per operation"): each
 * handler states its input as a zod schema and the layer below receives only what the schema
 * yields. The first issue — in the order the schema lists its fields, which is the order the
 * doors have always checked them — is the 400 (code 13), with the message the doors have always
 * given (lib/catalog/params.ts states the same rules for the spec doors;
 * test/unit/decode-fields.test.ts holds the two to the same answers).
 */
export function decode<T>(schema: z.ZodMiniType<T>, value: unknown): T {
  const result = z.safeParse(schema, value);
  if (result.success) return result.data;
  throw new InvalidInputError(result.error.issues[0]?.message ?? 'invalid request');
}

/** A schema yielding T from any input (`any`, so it can follow another schema in a pipe). */
// biome-ignore lint/suspicious/noExplicitAny: the input side must accept whatever the previous schema in a pipe yields.
export type Schema<T> = z.ZodMiniType<T, any>;

/** A rule that lives in the layer owning it (a name rule, a storage root, a policy) as a schema. */
export function checkedBy<T>(check: (value: unknown) => T): Schema<T> {
  return z.pipe(
    z.unknown(),
    z.transform((value: unknown, ctx) => {
      try {
        return check(value);
      } catch (err) {
        if (!(err instanceof InvalidInputError)) throw err;
        ctx.issues.push({ code: 'custom', message: err.message, input: value });
        return z.NEVER;
      }
    }),
  ) as unknown as Schema<T>;
}

/** `null` is "not given", as everywhere in the API. */
const absent = <S extends z.ZodMiniType>(schema: S) =>
  z.pipe(z.nullish(schema), z.transform((v: z.output<S> | null | undefined) => (v ?? undefined) as z.output<S> | undefined));

/** A string, or absent. */
export const optionalString = (field: string) => absent(z.string({ error: `${field} must be a string` }));

/** `true`/`false`, also spelled as strings (query parameters are strings), or absent. */
export const optionalBoolean = (field: string) =>
  absent(
    z.union(
      [z.boolean(), z.pipe(z.literal('true'), z.transform(() => true)), z.pipe(z.literal('false'), z.transform(() => false))],
      { error: `${field} must be true or false` },
    ),
  );

/** A safe integer, also as a decimal string, or absent (`''` too). */
export const optionalInteger = (field: string, opts: { min?: number } = {}): Schema<number | undefined> => {
  const integer = z.int({ error: `${field} must be an integer` });
  const bounded = opts.min === undefined ? integer : integer.check(z.minimum(opts.min, { error: `${field} must be at least ${opts.min}` }));
  return z.pipe(
    z.transform((v: unknown) => (v === '' ? undefined : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v)),
    absent(bounded),
  );
};

/** A JSON object of string values, `{}` when absent. */
export const stringMap = (field: string): Schema<Record<string, string>> =>
  z.pipe(
    z.nullish(
      z.record(z.string(), z.unknown(), { error: `${field} must be an object` }).check(
        z.superRefine((value, ctx) => {
          for (const [k, v] of Object.entries(value)) {
            if (typeof v !== 'string') ctx.addIssue({ code: 'custom', message: `${field}.${k} must be a string`, input: v });
          }
        }),
      ),
    ),
    z.transform((value) => ({ ...(value ?? {}) }) as Record<string, string>),
  );

/** An array of strings, or absent. */
export const optionalStringArray = (field: string) => {
  const error = `${field} must be an array of strings`;
  return absent(z.array(z.string({ error }), { error }));
};

/** `limit`: absent or negative means everything (lib/catalog/params.ts, pageLimit). */
export const pageLimit: Schema<number | undefined> = z.pipe(
  optionalInteger('limit'),
  z.transform((n: number | undefined) => (n === undefined || n < 0 ? undefined : n)),
);

/** `page_token` and `limit` of a listing door. */
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
