/**
 * The runners of the data bundle's job types. They reach LanceDB (through lib/data), so only
 * the worker loads this module, lazily: DescribeTransaction and AlterTransaction (metadata
 * bundle) never do.
 */
import type { JobRunners } from '../runner.js';
import { BACKFILL, backfillRunner } from './backfill.js';
import { CREATE_INDEX, createIndexRunner } from './create-index.js';
import { PURGE_TABLE, purgeTableRunner } from './purge.js';

export const dataRunners: JobRunners = {
  [CREATE_INDEX]: createIndexRunner,
  [BACKFILL]: backfillRunner,
  [PURGE_TABLE]: purgeTableRunner,
};
