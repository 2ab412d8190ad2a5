import type { AssumeRoleCommandInput, AssumeRoleCommandOutput } from '@aws-sdk/client-sts';

/**
 * What a mocked AssumeRole answers: the `n`th distinct key set, expiring DurationSeconds after
 * `now`, so tests can tell fresh credentials from cached ones and move time past expiry.
 */
export function mintedCredentials(n: number, now: number, input: AssumeRoleCommandInput): Partial<AssumeRoleCommandOutput> {
  return {
    Credentials: {
      AccessKeyId: `ASIA${n}`,
      SecretAccessKey: `secret-${n}`,
      SessionToken: `token-${n}`,
      Expiration: new Date(now + input.DurationSeconds! * 1000),
    },
  };
}
