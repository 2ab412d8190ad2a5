import type * as CedarModule from '@cedar-policy/cedar-wasm/nodejs';
import { InternalError } from '../errors.js';
import type { Action } from '../contract/operations.js';
import { CEDAR_POLICY_FILES, CEDAR_SCHEMA } from './policy-text.js';
import type { Grant } from '../registry/principal-records.js';

/**
 * The policy engine: Cedar (cedar-wasm) over the policies in policies/*.cedar. Loaded on the
 * first authorization, not at import: compiling the 4 MB module costs ~180 ms, which a cold
 * start must not pay before it knows it needs it (docs/benchmarks.md).
 */

export interface Uid {
  readonly type: 'Platform' | 'Group' | 'Principal' | 'Project' | 'Warehouse' | 'Namespace' | 'Table';
  readonly id: string;
}

/** A resource and its ancestors, nearest first (a table's namespaces, then its project). */
export interface ResourceChain {
  readonly resource: Uid;
  readonly ancestors: readonly Uid[];
}

export interface AuthzRequest {
  readonly principal: string;
  readonly platformAdmin: boolean;
  readonly action: Action;
  readonly target: ResourceChain;
  /** Grants of the principal in the project of the resource (plus the creator's admin grant). */
  readonly grants: readonly { readonly grant: Grant; readonly on: Uid }[];
  readonly quarantined: boolean;
}

export interface AuthzDecision {
  readonly allowed: boolean;
  /** The ids of the policies that decided (empty for a default deny). */
  readonly policies: readonly string[];
}

const PLATFORM: Uid = { type: 'Platform', id: 'rask' };
const ADMINS: Uid = { type: 'Group', id: 'platform-admins' };
const json = (u: Uid) => ({ type: `Rask::${u.type}`, id: u.id });

/** Splits the policy files into policies keyed by their @id annotation; `?`-slots make templates. */
export function policyParts(files: Readonly<Record<string, string>> = CEDAR_POLICY_FILES) {
  const staticPolicies: Record<string, string> = {};
  const templates: Record<string, string> = {};
  for (const text of Object.values(files)) {
    for (const chunk of text.split(/(?=@id\(")/).filter((c) => c.includes('@id("'))) {
      const id = /@id\("([^"]+)"\)/.exec(chunk)![1];
      if (/\?(principal|resource)/.test(chunk)) templates[id] = chunk;
      else staticPolicies[id] = chunk;
    }
  }
  return { staticPolicies, templates };
}

let engine: Promise<typeof CedarModule> | undefined;
const parts = policyParts();

export function loadEngine(): Promise<typeof CedarModule> {
  engine ??= import('@cedar-policy/cedar-wasm/nodejs');
  return engine;
}

/**
 * Parsing is what costs (~100 ms for schema and policies per call); evaluation is cheap. So the
 * schema is parsed once per process, and each distinct set of grant links once (a principal's
 * grants in a project), kept in a small LRU.
 */
let schemaParsed = false;
function schemaId(cedar: typeof CedarModule): string {
  if (!schemaParsed) {
    const answer = cedar.preparseSchema('rask', CEDAR_SCHEMA);
    if (answer.type === 'failure') throw new InternalError(`the Cedar schema does not parse: ${answer.errors.map((e) => e.message).join('; ')}`);
    schemaParsed = true;
  }
  return 'rask';
}

/**
 * Cedar keeps each preparsed set in the module's own (WASM) memory under its id, and has no call
 * to remove one; preparsing under an id already used replaces that set. So ids come from a fixed
 * pool: the least recently used set gives its id to the next new one, and the engine never holds
 * more than MAX_POLICY_SETS sets however many distinct grant lists it meets (issue #36; with a
 * fresh id per set, the WASM memory grew with every principal × project ever seen).
 */
export const MAX_POLICY_SETS = 500;
const policySets = new Map<string, string>();
let policySetCounter = 0;

function policySetId(cedar: typeof CedarModule, links: CedarModule.TemplateLink[]): string {
  const key = JSON.stringify(links);
  const hit = policySets.get(key);
  if (hit) {
    policySets.delete(key);
    policySets.set(key, hit);
    return hit;
  }
  let id: string;
  if (policySets.size >= MAX_POLICY_SETS) {
    const [oldestKey, oldestId] = policySets.entries().next().value!;
    policySets.delete(oldestKey);
    id = oldestId;
  } else {
    id = `set-${++policySetCounter}`;
  }
  const answer = cedar.preparsePolicySet(id, { staticPolicies: parts.staticPolicies, templates: parts.templates, templateLinks: links });
  if (answer.type === 'failure') throw new InternalError(`the Cedar policies do not parse: ${answer.errors.map((e) => e.message).join('; ')}`);
  policySets.set(key, id);
  return id;
}

export async function authorize(request: AuthzRequest): Promise<AuthzDecision> {
  const cedar = await loadEngine();
  const principal: Uid = { type: 'Principal', id: request.principal };
  const entities = new Map<string, CedarModule.EntityJson>();
  const add = (uid: Uid, parents: readonly Uid[]) => {
    const key = `${uid.type}:${uid.id}`;
    const prior = entities.get(key);
    const merged = [...(prior?.parents ?? []), ...parents.map(json)];
    entities.set(key, { uid: json(uid), attrs: {}, parents: merged });
  };
  add(PLATFORM, []);
  add(ADMINS, []);
  const chain = [request.target.resource, ...request.target.ancestors];
  chain.forEach((uid, i) => add(uid, i + 1 < chain.length ? [chain[i + 1]] : uid.type === 'Platform' ? [] : [PLATFORM]));
  add(principal, [...(request.platformAdmin ? [ADMINS] : []), PLATFORM]);
  for (const g of request.grants) if (!entities.has(`${g.on.type}:${g.on.id}`)) add(g.on, []);

  const links = request.grants.map((g) => ({
    templateId: g.grant.role,
    newId: `grant:${g.grant.role}:${g.on.type}:${g.on.id}`,
    values: { '?principal': json(principal), '?resource': json(g.on) },
  }));
  const answer = cedar.statefulIsAuthorized({
    principal: json(principal),
    action: { type: 'Rask::Action', id: request.action },
    resource: json(request.target.resource),
    context: { quarantined: request.quarantined },
    // The schema gives the action groups (read / write / admin) and checks entities and request.
    preparsedSchemaName: schemaId(cedar),
    validateRequest: false,
    preparsedPolicySetId: policySetId(cedar, links),
    entities: [...entities.values()],
  });
  if (answer.type === 'failure') {
    throw new InternalError(`authorization could not be evaluated: ${answer.errors.map((e) => e.message).join('; ')}`);
  }
  const { decision, diagnostics } = answer.response;
  if (diagnostics.errors.length) {
    throw new InternalError(`authorization policy failed: ${diagnostics.errors.map((e) => `${e.policyId}: ${e.error.message}`).join('; ')}`);
  }
  return { allowed: decision === 'allow', policies: diagnostics.reason };
}
