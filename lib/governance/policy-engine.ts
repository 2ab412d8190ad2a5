import type * as CedarModule from '@cedar-policy/cedar-wasm/nodejs';
import { setFlagsFromString } from 'node:v8';
import { InternalError } from '../errors.js';
import type { Action } from '../contract/operations.js';
import { CEDAR_ACTION_PARENTS, CEDAR_POLICY_FILES } from './policy-text.js';
import type { Grant } from '../registry/principal-records.js';
import { splitPolicyFiles } from './policy-parts.js';

/** Splits the policy files into policies keyed by their @id annotation; `?`-slots make templates. */
export function policyParts(files: Readonly<Record<string, string>> = CEDAR_POLICY_FILES) {
  return splitPolicyFiles(files);
}

/**
 * The policy engine: Cedar (cedar-wasm) over the policies in policies/*.cedar. What a cold
 * container pays for it, and how little (issue #37, docs/benchmarks.md "Cold starts against the
 * floor"):
 * - no schema on the request path: the policies are validated against it at build time and in
 *   tests (scripts/policy-text.ts), and the one thing a decision needs from it, the action
 *   hierarchy, is passed as action entities (`CEDAR_ACTION_PARENTS`). Parsing the schema was
 *   131 ms of every cold container;
 * - the policy set without grant links is parsed once per container (`BASE_SET`), each distinct
 *   set of links once (the LRU below);
 * - `preparePolicyEngine()` compiles the module and parses the base set; the guard calls it as
 *   soon as a request needs the engine, so it runs beside that request's registry reads. No entry
 *   compiles it during init: that cost every platform administrator's cold start a fifth of its
 *   CPU and gained a member's nothing (measured, issue #37);
 * - the WebAssembly is compiled with V8's baseline compiler only (`--liftoff-only`, set through
 *   `node:v8` before the module compiles): V8 otherwise re-compiles the hot functions with its
 *   optimizing compiler on background threads, which took the CPU from LanceDB's load (its
 *   `require` 371 ms instead of 120 ms after a decision). A decision is sub-millisecond either way;
 * - a platform administrator's request with no grants and no quarantine needs no engine
 *   (`decidesWithoutEngine`), so it never waits for one.
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

let engine: Promise<typeof CedarModule> | undefined;
const parts = policyParts();

export function loadEngine(): Promise<typeof CedarModule> {
  if (!engine) {
    // Before the module compiles (it compiles synchronously on import): baseline code only, no
    // background tier-up competing with the rest of a cold start (see above).
    setFlagsFromString('--liftoff-only');
    engine = import('@cedar-policy/cedar-wasm/nodejs');
  }
  return engine;
}

/** The policy set without grant links (platform administrators, own keys): parsed once per container. */
const BASE_SET = 'base';
let baseParsed = false;

/**
 * Compiles the engine and parses the base policy set, off the first request: the Lambda entries
 * call it during init. Idempotent; a failure is left for the first decision to report.
 */
export function preparePolicyEngine(): Promise<void> {
  return loadEngine().then(
    (cedar) => void policySetId(cedar, []),
    () => undefined,
  );
}

/**
 * Cedar keeps each preparsed set in the module's own (WASM) memory under its id, and has no call
 * to remove one; preparsing under an id already used replaces that set. So ids come from a fixed
 * pool: the least recently used set gives its id to the next new one, and the engine never holds
 * more than MAX_POLICY_SETS sets (the base set included) however many distinct grant lists it
 * meets (issue #36; with a fresh id per set, the WASM memory grew with every principal × project
 * ever seen).
 */
export const MAX_POLICY_SETS = 500;
const policySets = new Map<string, string>();
let policySetCounter = 0;

function preparse(cedar: typeof CedarModule, id: string, links: CedarModule.TemplateLink[]): void {
  const answer = cedar.preparsePolicySet(id, { staticPolicies: parts.staticPolicies, templates: parts.templates, templateLinks: links });
  if (answer.type === 'failure') throw new InternalError(`the Cedar policies do not parse: ${answer.errors.map((e) => e.message).join('; ')}`);
}

function policySetId(cedar: typeof CedarModule, links: CedarModule.TemplateLink[]): string {
  if (links.length === 0) {
    if (!baseParsed) {
      preparse(cedar, BASE_SET, []);
      baseParsed = true;
    }
    return BASE_SET;
  }
  const key = JSON.stringify(links);
  const hit = policySets.get(key);
  if (hit) {
    policySets.delete(key);
    policySets.set(key, hit);
    return hit;
  }
  let id: string;
  if (policySets.size >= MAX_POLICY_SETS - 1) {
    const [oldestKey, oldestId] = policySets.entries().next().value!;
    policySets.delete(oldestKey);
    id = oldestId;
  } else {
    id = `set-${++policySetCounter}`;
  }
  preparse(cedar, id, links);
  policySets.set(key, id);
  return id;
}

/** An action and every action group above it, as entities (what the schema would otherwise supply). */
function actionEntities(action: string): CedarModule.EntityJson[] {
  const out = new Map<string, CedarModule.EntityJson>();
  const visit = (name: string) => {
    if (out.has(name)) return;
    const parents = CEDAR_ACTION_PARENTS[name];
    if (!parents) throw new InternalError(`the Cedar schema declares no action ${name}`);
    out.set(name, { uid: { type: 'Rask::Action', id: name }, attrs: {}, parents: parents.map((p) => ({ type: 'Rask::Action', id: p })) });
    parents.forEach(visit);
  };
  visit(action);
  return [...out.values()];
}

/**
 * The decision of a request that needs no engine: a platform administrator holding no grants,
 * outside quarantine, is allowed by `platform-admin` alone (policies/platform-admin.cedar; the
 * only forbid, quarantine, needs `context.quarantined`). test/unit/cedar-policies.test.ts checks
 * it against the engine for every action.
 */
export function decidesWithoutEngine(request: AuthzRequest): AuthzDecision | undefined {
  if (!request.platformAdmin || request.quarantined || request.grants.length > 0) return undefined;
  if (!(request.action in CEDAR_ACTION_PARENTS)) return undefined;
  return { allowed: true, policies: ['platform-admin'] };
}

export async function authorize(request: AuthzRequest): Promise<AuthzDecision> {
  return decidesWithoutEngine(request) ?? decide(await loadEngine(), request);
}

/** A decision by the engine; exported for the test that holds `decidesWithoutEngine` to it. */
export function decide(cedar: typeof CedarModule, request: AuthzRequest): AuthzDecision {
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
    // No schema (see above): the action groups come as entities.
    validateRequest: false,
    preparsedPolicySetId: policySetId(cedar, links),
    entities: [...entities.values(), ...actionEntities(request.action)],
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
