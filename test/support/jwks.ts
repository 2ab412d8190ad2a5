import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';

/** A local OIDC issuer for tests: a key pair, its JWKS served over HTTP, and a token signer. */
export interface TestIssuer {
  readonly issuer: string;
  readonly audience: string;
  readonly jwksUrl: string;
  /** `expiresIn: null` leaves `exp` out; `issuedAt` (seconds since the epoch) sets `iat`, null leaves it out. */
  sign(
    claims: JWTPayload & { sub: string },
    options?: { expiresIn?: string | number | null; issuedAt?: number | null; audience?: string; foreignKey?: boolean },
  ): Promise<string>;
  close(): Promise<void>;
}

export async function startTestIssuer(): Promise<TestIssuer> {
  const kid = 'test-key-1';
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  // Same kid, different key: a token signed with it must fail verification.
  const foreign = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const issuer = 'https://issuer.test/';
  const audience = 'rask-test';
  return {
    issuer,
    audience,
    jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    sign: (claims, options = {}) => {
      const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid }).setIssuer(issuer).setAudience(options.audience ?? audience);
      if (options.issuedAt !== null) jwt.setIssuedAt(options.issuedAt);
      if (options.expiresIn !== null) jwt.setExpirationTime(options.expiresIn ?? '5m');
      return jwt.sign(options.foreignKey ? foreign.privateKey : privateKey);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The server settings that make it accept `issuer`'s tokens (RASK_AUTH=jwt), with a bootstrap admin key. */
export function jwtServerEnv(issuer: TestIssuer, adminKey: string): Record<string, string> {
  return {
    RASK_AUTH: 'jwt',
    RASK_ADMIN_KEY: adminKey,
    RASK_JWT_ISSUER: issuer.issuer,
    RASK_JWT_AUDIENCE: issuer.audience,
    RASK_JWT_JWKS_URL: issuer.jwksUrl,
  };
}
