/**
 * Tags and branches (ListTableTags … DeleteTableBranch).
 *
 * LanceDB 0.31.0 exposes less than the spec wants: TagContents has no branch, BranchContents no
 * createAt or metadata. The tag's branch is recovered by checking the tag out (the handle then
 * reports its branch); the branch's createAt and metadata only exist in the ref file
 * `_refs/branches/<name>.json`, read through `readTableFile` when one is available.
 */
import { TableBranchAlreadyExistsError } from '../../errors.js';
import type { Table } from './lancedb.js';
import { page, type Page } from '../../data/paging.js';
import type { BranchContents, NewBranchInput, Paging, TagContents, TagVersionInput } from '../../ports/data-engine.js';
export type { TagContents, BranchContents };

/** Reads a small file inside the table directory; undefined when it cannot be read. */
export type TableFileReader = (relativePath: string) => Promise<string | undefined>;

const MAIN = 'main';
const isMain = (branch: string | undefined): boolean => !branch || branch === MAIN;

export async function listTags(table: Table, paging: Paging): Promise<{ tags: Record<string, TagContents> } & Page> {
  const all = Object.entries(await (await table.tags()).list());
  const { items, page_token } = page(all, ([name]) => name, paging);
  const tags: Record<string, TagContents> = {};
  for (const [name, contents] of items) {
    // TagContents is a class instance; JSON.stringify would print {}.
    const tag: TagContents = { version: contents.version, manifestSize: contents.manifestSize };
    const branch = await tagBranch(table, name);
    if (branch) tag.branch = branch;
    tags[name] = tag;
  }
  return page_token === undefined ? { tags } : { tags, page_token };
}

/** Moves `table` to the tag; callers use a handle of their own. */
async function tagBranch(table: Table, tag: string): Promise<string | undefined> {
  try {
    await table.checkout(tag);
    return table.currentBranch() ?? undefined;
  } catch {
    // A tag whose branch was deleted cannot be checked out; it still lists.
    return undefined;
  }
}

export async function getTagVersion(table: Table, tag: string): Promise<{ version: number; branch?: string }> {
  const version = await (await table.tags()).getVersion(tag);
  const branch = await tagBranch(table, tag);
  return branch === undefined || isMain(branch) ? { version } : { version, branch };
}

export async function createTag(table: Table, { tag, version, branch }: TagVersionInput): Promise<Record<string, never>> {
  // A tag records the branch of the handle that creates it.
  await onBranch(table, branch, async (t) => (await t.tags()).create(tag, version));
  return {};
}

export async function updateTag(table: Table, { tag, version, branch }: TagVersionInput): Promise<Record<string, never>> {
  await onBranch(table, branch, async (t) => (await t.tags()).update(tag, version));
  return {};
}

export async function deleteTag(table: Table, tag: string): Promise<Record<string, never>> {
  await (await table.tags()).delete(tag);
  return {};
}

async function onBranch<T>(table: Table, branch: string | undefined, fn: (t: Table) => Promise<T>): Promise<T> {
  if (isMain(branch)) return fn(table);
  const handle = await (await table.branches()).checkout(branch as string);
  try {
    return await fn(handle);
  } finally {
    handle.close();
  }
}

// ---- branches ----

interface BranchRefFile {
  createAt?: number;
  metadata?: Record<string, string>;
}

export async function listBranches(
  table: Table,
  paging: Paging,
  readFile: TableFileReader,
): Promise<{ branches: Record<string, BranchContents> } & Page> {
  const all = Object.entries(await (await table.branches()).list());
  const { items, page_token } = page(all, ([name]) => name, paging);
  const branches: Record<string, BranchContents> = {};
  for (const [name, contents] of items) {
    const ref = await readBranchRef(readFile, name);
    const out: BranchContents = {
      parentVersion: contents.parentVersion,
      createAt: ref?.createAt ?? 0,
      manifestSize: contents.manifestSize,
    };
    if (contents.parentBranch) out.parentBranch = contents.parentBranch;
    if (ref?.metadata && Object.keys(ref.metadata).length > 0) out.metadata = ref.metadata;
    branches[name] = out;
  }
  return page_token === undefined ? { branches } : { branches, page_token };
}

async function readBranchRef(readFile: TableFileReader, name: string): Promise<BranchRefFile | undefined> {
  try {
    const text = await readFile(`_refs/branches/${name}.json`);
    return text === undefined ? undefined : (JSON.parse(text) as BranchRefFile);
  } catch {
    return undefined;
  }
}

export async function createBranch(table: Table, { name, fromBranch, fromVersion }: NewBranchInput): Promise<Record<string, never>> {
  const branches = await table.branches();
  const exists = async () => name === MAIN || name in (await branches.list());
  // Lance 8 has no clean error for a duplicate name: it reports an internal error, or a missing
  // manifest under tree/<name>/ once the source version has moved on. So look first, and look
  // again after a failure (another writer may have won the race).
  if (await exists()) throw new TableBranchAlreadyExistsError(`branch "${name}" already exists`);
  try {
    const created = await branches.create(name, isMain(fromBranch) ? undefined : fromBranch, fromVersion);
    created.close();
  } catch (err) {
    if (await exists().catch(() => false)) {
      throw new TableBranchAlreadyExistsError(`branch "${name}" already exists`, { cause: err });
    }
    throw err;
  }
  return {};
}

export async function deleteBranch(table: Table, name: string): Promise<Record<string, never>> {
  await (await table.branches()).delete(name);
  return {};
}
