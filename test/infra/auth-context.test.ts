import { beforeAll, describe, expect, it } from 'vitest';
import { logicalId, resourcesOfType, synthRask } from './helpers.js';

/**
 * `rask:jwt*` context sets the authorizer's mode and OIDC settings (infra/constructs/auth.ts):
 * nothing to set by hand on the function after a deploy.
 */
const JWT = {
  jwtIssuer: 'https://login.example.com/',
  jwtAudience: 'rask-api',
  jwtJwksUrl: 'https://login.example.com/.well-known/jwks.json',
  jwtPrincipalClaim: 'email',
};

function authorizerEnvironment(built: ReturnType<typeof synthRask>): Record<string, unknown> {
  const id = logicalId(built.template, 'AWS::Lambda::Function', 'AuthAuthorizer');
  return resourcesOfType(built.template, 'AWS::Lambda::Function')[id].Properties!.Environment.Variables;
}

describe('authorizer settings from context', () => {
  // One synth per file (a synth takes seconds); keys mode without them: test/infra/stack.test.ts.
  let withJwt: ReturnType<typeof synthRask>;
  beforeAll(() => {
    withJwt = synthRask(JWT);
  });

  it('runs it in jwt mode with the issuer, audience, JWKS URL and principal claim given as context', () => {
    expect(authorizerEnvironment(withJwt)).toMatchObject({
      RASK_AUTH: 'jwt',
      RASK_JWT_ISSUER: JWT.jwtIssuer,
      RASK_JWT_AUDIENCE: JWT.jwtAudience,
      RASK_JWT_JWKS_URL: JWT.jwtJwksUrl,
      RASK_JWT_PRINCIPAL_CLAIM: 'email',
    });
  });

  it('sets them on the authorizer only: no other function sees the token settings', () => {
    const authorizer = logicalId(withJwt.template, 'AWS::Lambda::Function', 'AuthAuthorizer');
    for (const [id, fn] of Object.entries(resourcesOfType(withJwt.template, 'AWS::Lambda::Function'))) {
      if (id === authorizer) continue;
      const vars = Object.keys((fn.Properties?.Environment?.Variables ?? {}) as Record<string, unknown>);
      expect(vars.filter((k) => k.startsWith('RASK_JWT_') || k === 'RASK_AUTH'), id).toEqual([]);
    }
  });
});
