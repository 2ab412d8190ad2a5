import { InternalError, InvalidInputError } from '../../errors.js';
import type { ObjectStore } from '../../ports/object-store.js';

/**
 * Lance's own ref files, read straight from the dataset directory so the metadata bundle never
 * needs LanceDB. Formats as LanceDB 0.31 writes them (checked by creating a tag and a branch):
 *
 *   _refs/tags/<tag>.json         {"branch": null | "<name>", "version": N, "manifestSize": …, …}
 *   _refs/branches/<name>.json    {"parentBranch": null | "<name>", "parentVersion": N, …}
 *
 * Older Lance wrote tags without `branch`; absent and null both mean the main branch.
 */

export const MAIN = 'main';

export const isMain = (branch: string | undefined): boolean => branch === undefined || branch === MAIN;

/** Branch names become path segments under `tree/`; refuse anything that could escape it. */
export function validateBranch(branch: string | undefined): string | undefined {
  if (isMain(branch)) return undefined;
  const parts = branch!.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..') || /[\u0000-\u001f]/.test(branch!)) {
    throw new InvalidInputError(`branch ${JSON.stringify(branch)} is not a valid branch name`);
  }
  return branch;
}

export interface BranchRef {
  readonly parentVersion: number;
  readonly parentBranch?: string;
}

/** The branch's ref file, or undefined when the branch does not exist. */
export async function readBranch(store: ObjectStore, tablePath: string, branch: string): Promise<BranchRef | undefined> {
  const obj = await store.get(`${tablePath}/_refs/branches/${branch}.json`);
  if (!obj) return undefined;
  const value = parseRef(obj.body, `branch ${branch}`);
  if (!Number.isSafeInteger(value.parentVersion)) {
    throw new InternalError(`branch ref ${JSON.stringify(branch)} has no integer parentVersion`);
  }
  return {
    parentVersion: value.parentVersion as number,
    ...(typeof value.parentBranch === 'string' ? { parentBranch: value.parentBranch } : {}),
  };
}

export interface TagRef {
  readonly name: string;
  readonly version: number;
  /** undefined = main. */
  readonly branch?: string;
}

/**
 * Every tag of the dataset. A tag file we cannot parse is an error, not a skip: callers use
 * this to decide what may be deleted, and a destructive decision must never be made on a record
 * it could not read (docs/rules.md rule 8).
 */
export async function listTags(store: ObjectStore, tablePath: string): Promise<TagRef[]> {
  const prefix = `${tablePath}/_refs/tags/`;
  const page = await store.list({ prefix });
  const tags: TagRef[] = [];
  for (const info of page.objects) {
    if (!info.key.endsWith('.json')) continue;
    const name = info.key.slice(prefix.length, -'.json'.length);
    const obj = await store.get(info.key);
    if (!obj) continue; // deleted while we listed: no longer protects anything
    const value = parseRef(obj.body, `tag ${name}`);
    if (!Number.isSafeInteger(value.version)) throw new InternalError(`tag ${JSON.stringify(name)} has no integer version`);
    const branch = typeof value.branch === 'string' && !isMain(value.branch) ? value.branch : undefined;
    tags.push({ name, version: value.version as number, ...(branch ? { branch } : {}) });
  }
  return tags;
}

function parseRef(body: Buffer, what: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new InternalError(`the ref file of ${what} is unreadable`);
}
