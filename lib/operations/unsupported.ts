/** Why each operation without a handler answers code 0; shown to callers and in COVERAGE.md. */
export const UNSUPPORTED_REASONS: Readonly<Record<string, string>> = {
  DescribeTransaction: 'rask commits every operation atomically and keeps no long-running transactions',
  AlterTransaction: 'rask commits every operation atomically and keeps no long-running transactions',
};
