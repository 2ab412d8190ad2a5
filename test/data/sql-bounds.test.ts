import { describe, expect, it } from 'vitest';
import { checkSql, optSql, reqSql, SQL_LIMITS, sqlShape } from '../../lib/data/sql-bounds.js';
import { CatalogError } from '../../lib/errors.js';

function refusal(fn: () => unknown): CatalogError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(CatalogError);
    return err as CatalogError;
  }
  throw new Error('expected a refusal');
}

describe('sqlShape', () => {
  it('counts symbolic, two-character and keyword operators', () => {
    expect(sqlShape('a + b * c').operators).toBe(2);
    expect(sqlShape('a <= 1 AND b <> 2 OR c != 3').operators).toBe(5);
    expect(sqlShape('a IS NOT NULL and b like \'x%\'').operators).toBe(4);
    expect(sqlShape("s || 'x' = 'y'").operators).toBe(2);
    expect(sqlShape('x BETWEEN 1 AND 2').operators).toBe(2);
  });

  it('does not count operators inside literals and quoted identifiers', () => {
    expect(sqlShape("name = 'a+b-c OR d'").operators).toBe(1);
    expect(sqlShape('"weird+name" > 1').operators).toBe(1);
    expect(sqlShape('`a-b` > 1').operators).toBe(1);
    expect(sqlShape("x = 'it''s + fine'").operators).toBe(1);
  });

  it('takes the largest count over every reading of quotes and comments', () => {
    // Read with backslash escapes, the quote never closes and hides the ORs; read without, it
    // closes right away and the ORs are code. The scanner must count them.
    const hidden = `x = '\\' OR ${Array.from({ length: 10 }, () => 'a = 1').join(' OR ')}`;
    expect(sqlShape(hidden).operators).toBeGreaterThanOrEqual(20);
    // A comment that would hide code from a scanner that does not know comments (and the reverse).
    expect(sqlShape("a = 1 -- it's\n OR b = 2 OR c = 3 -- '").operators).toBeGreaterThanOrEqual(5);
    expect(sqlShape('a = 1 /* + + + */').operators).toBeGreaterThanOrEqual(4);
  });

  it('measures nesting of parentheses, brackets and CASE', () => {
    expect(sqlShape('((a))').depth).toBe(2);
    expect(sqlShape('abs(abs(abs(x)))').depth).toBe(3);
    expect(sqlShape('v[1][2]').depth).toBe(1);
    expect(sqlShape('CASE WHEN a THEN CASE WHEN b THEN 1 END END').depth).toBe(2);
    expect(sqlShape("')))(((' = x").depth).toBe(0);
  });
});

describe('checkSql', () => {
  it('refuses text beyond each limit with code 13, naming the field and the limits', () => {
    const ops = refusal(() => checkSql(`id${' + 1'.repeat(SQL_LIMITS.maxOperators + 1)}`, 'filter'));
    expect(ops.code).toBe(13);
    expect(ops.message).toMatch(/^"filter" has 257 operators; limits on SQL text: 65536 characters, 256 operators, nesting depth 32$/);
    const deep = refusal(() => checkSql(`${'('.repeat(33)}1${')'.repeat(33)}`, 'predicate'));
    expect(deep.message).toContain('"predicate" nests 33 levels deep');
    const long = refusal(() => checkSql(`'${'x'.repeat(SQL_LIMITS.maxLength)}'`, 'where'));
    expect(long.message).toContain(`"where" is ${SQL_LIMITS.maxLength + 2} characters long`);
  });

  it('passes text within the limits through unchanged', () => {
    const atLimit = `id${' + 1'.repeat(SQL_LIMITS.maxOperators - 1)} > 0`;
    expect(checkSql(atLimit, 'filter')).toBe(atLimit);
    const inList = `id IN (${Array.from({ length: 5000 }, (_, i) => i).join(', ')})`;
    expect(checkSql(inList, 'filter')).toBe(inList);
  });

  it('optSql / reqSql read the field like the other validators', () => {
    expect(optSql(undefined, 'f')).toBeUndefined();
    expect(optSql('', 'f')).toBeUndefined();
    expect(optSql('a > 1', 'f')).toBe('a > 1');
    expect(refusal(() => optSql(5, 'f')).message).toBe('"f" must be a string');
    expect(refusal(() => reqSql('', 'predicate')).message).toBe('"predicate" must be a non-empty string');
  });
});
