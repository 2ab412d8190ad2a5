import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateName, type NameKind } from '../../lib/registry/keys.js';

/**
 * Name hygiene (docs/governance.md, "Names and limits"): no accepted name of any kind holds a
 * control character (Unicode Cc), a format character (Cf: bidi overrides and isolates,
 * zero-width characters, the BOM), a line or paragraph separator, or is `.` or `..`.
 */
const KINDS: readonly NameKind[] = ['project', 'warehouse', 'namespace', 'table'];
const FORBIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

const accepts = (kind: NameKind, name: string): boolean => {
  try {
    validateName(kind, name);
    return true;
  } catch (err) {
    expect(err).toMatchObject({ code: 13 });
    return false;
  }
};

// Names built mostly from the characters that matter here, mixed with ordinary ones.
const risky = fc.constantFrom(
  '\u202E', '\u202D', '\u2066', '\u2069', '\u200B', '\u200D', '\u200E', '\uFEFF', '\u00AD', '\u061C',
  '\u0000', '\u001B', '\u007F', '\u0085', '\u009F', '\u2028', '\u2029', '.', 'a', 'é', '$', ' ', '\u{1F600}',
);
const riskyName = fc.array(risky, { minLength: 1, maxLength: 8 }).map((a) => a.join(''));

describe('name hygiene', () => {
  it('accepts no name with a control, format or separator character, nor "." or ".."', () => {
    fc.assert(
      fc.property(fc.constantFrom(...KINDS), fc.oneof(riskyName, fc.string({ unit: 'binary', minLength: 1, maxLength: 12 })), (kind, name) => {
        if (accepts(kind, name)) {
          expect(name).not.toMatch(FORBIDDEN);
          expect(name === '.' || name === '..').toBe(false);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses each named offender with code 13 and a message saying what is allowed', () => {
    for (const bad of ['\u202Eevil', 'a\u200Bb', '\uFEFFbom', 'x\u2066y\u2069', 'a\u0085b', 'line\u2028sep', '.', '..']) {
      for (const kind of KINDS) {
        expect(() => validateName(kind, bad)).toThrow(expect.objectContaining({ code: 13 }));
        expect(() => validateName(kind, bad)).toThrow(/names are 1 to 80 bytes of UTF-8/);
      }
    }
  });

  it('keeps accepting the names that were valid: dots inside, $, spaces, non-ASCII, emoji', () => {
    for (const ok of ['...', '.hidden', 'a.b', 'v1.2', 'my table', 'a$b', 'é', '日本語', '\u{1F600}', '%2e%2e', 'a/b']) {
      for (const kind of KINDS) expect(accepts(kind, ok)).toBe(true);
    }
  });
});
