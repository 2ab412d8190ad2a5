import { spec } from './spec.js';

/**
 * A small validator for the OpenAPI 3.0 schema subset the spec's response schemas use: `$ref`,
 * `type`, `nullable`, `required`, `properties`, `items`, `additionalProperties`, `allOf`.
 * It answers the paths that break the schema, so a test shows what a strictly generated client
 * would reject (e.g. `storage_options: null` where the spec types an object that is not nullable).
 */
interface Schema {
  $ref?: string;
  type?: string;
  nullable?: boolean;
  required?: string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: boolean | Schema;
  allOf?: Schema[];
}

const schemas = spec.components.schemas as unknown as Record<string, Schema>;

function resolve(schema: Schema): Schema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  const target = schemas[name];
  if (!target) throw new Error(`unknown schema ${schema.$ref}`);
  // A `$ref` sibling like `nullable: true` still applies (the spec writes `stats` that way).
  return { ...resolve(target), ...(schema.nullable ? { nullable: true } : {}) };
}

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function check(schemaIn: Schema, value: unknown, at: string, problems: string[]): void {
  const schema = resolve(schemaIn);
  for (const part of schema.allOf ?? []) check(part, value, at, problems);
  if (value === null) {
    if (!schema.nullable && schema.type !== undefined) problems.push(`${at}: null where the spec says ${schema.type}`);
    return;
  }
  const actual = typeOf(value);
  if (schema.type && !(actual === schema.type || (schema.type === 'number' && actual === 'integer'))) {
    problems.push(`${at}: ${actual} where the spec says ${schema.type}`);
    return;
  }
  if (actual === 'array' && schema.items) {
    (value as unknown[]).forEach((v, i) => check(schema.items!, v, `${at}[${i}]`, problems));
  }
  if (actual === 'object') {
    const obj = value as Record<string, unknown>;
    for (const name of schema.required ?? []) if (!(name in obj)) problems.push(`${at}.${name}: required`);
    for (const [name, v] of Object.entries(obj)) {
      const prop = schema.properties?.[name];
      if (prop) check(prop, v, `${at}.${name}`, problems);
      else if (typeof schema.additionalProperties === 'object') check(schema.additionalProperties, v, `${at}.${name}`, problems);
    }
  }
}

/** The ways `value` breaks `components.schemas[name]`; empty when it conforms. */
export function schemaProblems(name: string, value: unknown): string[] {
  const schema = schemas[name];
  if (!schema) throw new Error(`the spec has no schema ${name}`);
  const problems: string[] = [];
  check(schema, value, name, problems);
  return problems;
}
