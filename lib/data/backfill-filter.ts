/** The rows a backfill computes when the caller names none: those not computed yet. */
export function defaultBackfillFilter(column: string): string {
  return `${quoteIdentifier(column)} IS NULL`;
}

/** Lance SQL quotes identifiers with backticks, doubling any inside. */
export function quoteIdentifier(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `\`${name.replace(/`/g, '``')}\``;
}
