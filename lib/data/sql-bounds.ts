/**
 * Bounds on SQL text before it reaches LanceDB's SQL parser and planner.
 *
 * LanceDB 0.31.0 (DataFusion underneath) walks expressions recursively on a native stack. A
 * left-deep chain of about 680 binary operators (`id + 1 + 1 …` or `a = 0 OR a = 1 OR …`, a
 * few KB) overflows that stack and the process ends with SIGSEGV: no error, no log, every
 * in-flight request lost. Nothing in JavaScript can catch that, so every door that hands SQL
 * text to LanceDB reads it through `optSql` / `reqSql`, which refuse text beyond three limits
 * with code 13 naming the field and the limits (docs/data-plane.md):
 *
 * - length: the parser and planner cost grows with the text;
 * - operators (binary, unary and keyword operators, counted once each): bounds the depth of any
 *   expression tree built from them, whatever its shape, at well under the measured crash;
 * - nesting depth (parentheses, brackets, CASE … END): bounds nested calls and sub-expressions.
 *
 * The check is a tokenizer-level scan, not a parser: it must never count fewer operators than the
 * real parser sees. Quoting is where a scanner can be fooled (text it takes for a string
 * literal or a comment the parser takes for code), so the scan runs under each reading of
 * quotes and comments (backslash escapes in strings or not; `--` and `/* *\/` comments or not)
 * and the largest counts decide. Over-counting is harmless; the limits leave room for it.
 */
import { InvalidInputError } from '../errors.js';
import { optString } from './validate.js';

export const SQL_LIMITS = {
  /** Characters of one SQL text (a 10,000-id `IN (…)` list fits). */
  maxLength: 64 * 1024,
  /** Operators in one SQL text; LanceDB 0.31.0 crashed from about 680 chained ones. */
  maxOperators: 256,
  /** Nesting of parentheses, brackets and CASE … END. */
  maxDepth: 32,
} as const;

export interface SqlShape {
  readonly operators: number;
  readonly depth: number;
}

/** Keyword operators: each builds (at least) one node of the expression tree. */
const KEYWORD_OPERATORS = new Set(['AND', 'OR', 'NOT', 'IS', 'LIKE', 'ILIKE', 'IN', 'BETWEEN', 'WHEN', 'SIMILAR', 'XOR', 'DIV']);
const TWO_CHAR_OPERATORS = new Set(['<=', '>=', '<>', '!=', '==', '||', '::', '<<', '>>', '->', '=>', '@>', '<@', '~~', '!~']);
const OPERATOR_CHARS = new Set([...'+-*/%<>=!|&^~@#']);

interface Reading {
  readonly backslashEscapes: boolean;
  readonly comments: boolean;
}

const READINGS: readonly Reading[] = [
  { backslashEscapes: false, comments: true },
  { backslashEscapes: true, comments: true },
  { backslashEscapes: false, comments: false },
  { backslashEscapes: true, comments: false },
];

/** Operator count and nesting depth, the largest over every reading of quotes and comments. */
export function sqlShape(text: string): SqlShape {
  let operators = 0;
  let depth = 0;
  for (const reading of READINGS) {
    const shape = scan(text, reading);
    operators = Math.max(operators, shape.operators);
    depth = Math.max(depth, shape.depth);
  }
  return { operators, depth };
}

function scan(text: string, reading: Reading): SqlShape {
  let operators = 0;
  let depth = 0;
  let maxDepth = 0;
  const open = () => (maxDepth = Math.max(maxDepth, ++depth));
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text[i];
    const two = text.slice(i, i + 2);
    if (c === "'" || c === '"' || c === '`') {
      i = skipQuoted(text, i, c, reading.backslashEscapes && c === "'");
    } else if (reading.comments && two === '--') {
      const end = text.indexOf('\n', i);
      i = end < 0 ? n : end + 1;
    } else if (reading.comments && two === '/*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === '(' || c === '[') {
      open();
      i++;
    } else if (c === ')' || c === ']') {
      depth = Math.max(0, depth - 1);
      i++;
    } else if (TWO_CHAR_OPERATORS.has(two)) {
      operators++;
      i += 2;
    } else if (OPERATOR_CHARS.has(c)) {
      operators++;
      i++;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$]/.test(text[j])) j++;
      const word = text.slice(i, j).toUpperCase();
      if (KEYWORD_OPERATORS.has(word)) operators++;
      else if (word === 'CASE') {
        operators++;
        open();
      } else if (word === 'END') depth = Math.max(0, depth - 1);
      i = j;
    } else {
      i++;
    }
  }
  return { operators, depth: maxDepth };
}

/** Index just after the quoted run starting at `start`; a doubled quote stays inside it. */
function skipQuoted(text: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (backslashEscapes && c === '\\') {
      i += 2;
    } else if (c === quote) {
      if (text[i + 1] === quote) i += 2;
      else return i + 1;
    } else {
      i++;
    }
  }
  return text.length;
}

const limitsText = `limits on SQL text: ${SQL_LIMITS.maxLength} characters, ${SQL_LIMITS.maxOperators} operators, nesting depth ${SQL_LIMITS.maxDepth}`;

/** Refuses (code 13) SQL text beyond the limits; returns it unchanged otherwise. */
export function checkSql(text: string, field: string): string {
  if (text.length > SQL_LIMITS.maxLength) {
    throw new InvalidInputError(`"${field}" is ${text.length} characters long; ${limitsText}`);
  }
  const { operators, depth } = sqlShape(text);
  if (operators > SQL_LIMITS.maxOperators) {
    throw new InvalidInputError(`"${field}" has ${operators} operators; ${limitsText}`);
  }
  if (depth > SQL_LIMITS.maxDepth) {
    throw new InvalidInputError(`"${field}" nests ${depth} levels deep; ${limitsText}`);
  }
  return text;
}

/** An optional SQL text field (absent, null or empty: undefined), within the limits. */
export function optSql(value: unknown, field: string): string | undefined {
  const text = optString(value, field);
  return text ? checkSql(text, field) : undefined;
}

/** A required, non-empty SQL text field, within the limits. */
export function reqSql(value: unknown, field: string): string {
  const text = optString(value, field);
  if (!text) throw new InvalidInputError(`"${field}" must be a non-empty string`);
  return checkSql(text, field);
}
