/**
 * Tag and branch bodies decoded into the engine's inputs (lib/ports/data-inputs.ts). Tag and
 * branch names become file names, so they follow lib/data/names.ts's REF_NAME.
 */
import { optRefName, reqRefName } from '../../data/names.js';
import { type Json, optInt, reqInt } from '../../data/validate.js';
import type { BranchInput, NewBranchInput, TagInput, TagVersionInput } from '../../ports/data-inputs.js';
import { defined } from './inputs.js';

export const tagInput = (body: Json): TagInput => ({ tag: reqRefName(body.tag, 'tag') });

export function tagVersionInput(body: Json): TagVersionInput {
  const tag = reqRefName(body.tag, 'tag');
  const version = reqInt(body.version, 'version');
  return defined({ tag, version, branch: optRefName(body.branch, 'branch') });
}

export const branchInput = (body: Json): BranchInput => ({ name: reqRefName(body.name, 'name') });

export function newBranchInput(body: Json): NewBranchInput {
  const name = reqRefName(body.name, 'name');
  const fromBranch = optRefName(body.from_branch, 'from_branch');
  const fromVersion = optInt(body.from_version, 'from_version');
  return defined({ name, fromBranch, fromVersion });
}
