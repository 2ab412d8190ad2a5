import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allHandlers } from '../../lib/operations/handlers-all.js';
import { ALL_OPERATIONS as OPERATIONS } from '../../lib/contract/operations.js';
import { coveringTests, renderCoverage } from '../../scripts/coverage.js';

describe('docs/COVERAGE.md', () => {
  it('is what the operation table, handlers and @covers annotations say (run npm run docs:coverage)', () => {
    const committed = readFileSync(new URL('../../docs/COVERAGE.md', import.meta.url), 'utf8');
    expect(committed).toBe(renderCoverage());
  });

  it('names a proving test for every backed operation', () => {
    const tests = coveringTests();
    const unproven = OPERATIONS.filter((o) => allHandlers[o.operationId] && !tests.get(o.operationId)?.length);
    expect(unproven.map((o) => o.operationId)).toEqual([]);
  });

  it('only annotates real operation ids', () => {
    const known = new Set<string>(OPERATIONS.map((o) => o.operationId));
    expect([...coveringTests().keys()].filter((id) => !known.has(id))).toEqual([]);
  });
});
