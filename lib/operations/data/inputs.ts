/**
 * The pieces of the data plane's request bodies that many operations share, decoded into the
 * engine's typed inputs (lib/ports/data-inputs.ts): which snapshot a read sees, which branch a
 * write goes to, a listing's page. Field names and messages are the spec's and the engine's
 * own (issue 25 item 2: decoding moved up from lib/adapters/lance, the answers did not change).
 */
import { optRefName } from '../../data/names.js';
import { type Json, optInt, optString } from '../../data/validate.js';
import { InvalidInputError } from '../../errors.js';
import type { Paging, ReadSelection, WriteTarget } from '../../ports/data-inputs.js';

/** A branch name; main is the default, so it is left out. */
export function branchOf(body: Json): string | undefined {
  const branch = optRefName(body.branch, 'branch');
  return branch === 'main' ? undefined : branch;
}

/** `branch` of a write (absent: main). */
export function writeTarget(body: Json): WriteTarget {
  return defined({ branch: branchOf(body) });
}

/** `version`, `tag` (one of them) and `branch` of a read. */
export function readSelection(body: Json): ReadSelection {
  const version = optInt(body.version, 'version');
  const tag = optRefName(body.tag, 'tag');
  if (tag !== undefined && version !== undefined) throw new InvalidInputError('give either "version" or "tag", not both');
  return defined({ branch: branchOf(body), version, tag });
}

/** `page_token` and `limit` of a listing (docs/data-plane.md: an exclusive start-after key). */
export function paging(body: Json): Paging {
  return defined({ pageToken: optString(body.page_token, 'page_token') || undefined, limit: optInt(body.limit, 'limit') });
}

/** Leaves out what is undefined, so a typed input holds only what the caller set. */
export function defined<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}
