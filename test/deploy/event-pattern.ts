/**
 * EventBridge's event-pattern matching, for the rules the template defines (the world delivers
 * recorded S3 notifications through them; test/infra checks their patterns against real event
 * shapes). The subset rask's rules use, with EventBridge's semantics: a pattern's field names an
 * object (recurse) or an array of alternatives; an alternative is a literal (equal) or one of
 * `{ prefix }`, `{ suffix }`, `{ wildcard }` (`*` matches any run of characters, `/` included),
 * `{ exists }`. A field the pattern names must be in the event; a field of the event the pattern
 * does not name is not looked at. Anything else throws, so an unsupported pattern is noticed.
 */
export function matchesPattern(pattern: unknown, event: unknown): boolean {
  if (pattern === null || typeof pattern !== 'object' || Array.isArray(pattern)) throw new Error(`not an event pattern: ${JSON.stringify(pattern)}`);
  for (const [field, want] of Object.entries(pattern as Record<string, unknown>)) {
    const value = event !== null && typeof event === 'object' ? (event as Record<string, unknown>)[field] : undefined;
    if (Array.isArray(want)) {
      if (!want.some((alternative) => matchesValue(alternative, value))) return false;
    } else if (want !== null && typeof want === 'object') {
      if (!matchesPattern(want, value)) return false;
    } else throw new Error(`pattern field ${field}: ${JSON.stringify(want)} is neither an array nor an object`);
  }
  return true;
}

function matchesValue(alternative: unknown, value: unknown): boolean {
  if (alternative === null || typeof alternative !== 'object') {
    return Array.isArray(value) ? value.includes(alternative) : value === alternative;
  }
  const [op, arg, ...rest] = Object.entries(alternative as Record<string, unknown>).flat();
  if (rest.length > 0) throw new Error(`unsupported pattern ${JSON.stringify(alternative)}`);
  switch (op) {
    case 'exists':
      return (value !== undefined) === arg;
    case 'prefix':
      return typeof value === 'string' && value.startsWith(String(arg));
    case 'suffix':
      return typeof value === 'string' && value.endsWith(String(arg));
    case 'wildcard': {
      const re = new RegExp(`^${String(arg).split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
      return typeof value === 'string' && re.test(value);
    }
    default:
      throw new Error(`unsupported pattern operator ${JSON.stringify(alternative)}`);
  }
}
