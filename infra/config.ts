import { RemovalPolicy } from 'aws-cdk-lib';
import type { Node } from 'constructs';

/**
 * Deployment settings. Every field can be set as CDK context (`cdk.json` or
 * `cdk deploy -c rask:<name>=<value>`); tests pass them as props. Values from the command line
 * arrive as strings, so each one is parsed and checked here, once, with a message that names the
 * context key — a typo must fail the synth, not produce a half-configured catalog.
 */
export interface RaskConfig {
  /** CloudFormation stack name. */
  readonly stackName: string;
  /** API Gateway stage; it is the first path segment of the endpoint URL. */
  readonly stageName: string;
  /** An existing bucket to use as the default warehouse; when absent the stack creates one. */
  readonly warehouseBucketName?: string;
  /** Table data lives under this prefix of the warehouse bucket; it is what credentials can be vended for. */
  readonly warehousePrefix: string;
  /** Registry records live under this prefix of the (always stack-owned) registry bucket. */
  readonly registryPrefix: string;
  /** What happens to the data buckets and the work queue when the stack is deleted. */
  readonly removalPolicy: RemovalPolicy.RETAIN | RemovalPolicy.DESTROY;
  /** Versioning for a stack-created warehouse bucket, noncurrent versions kept for the trash grace (docs/deploy.md, "Storage and IAM decisions"). */
  readonly warehouseVersioning: boolean;
  /** Default trash grace period for drops (0 = drops are immediate). */
  readonly trashGraceDays: number;
  /** Days the registry bucket keeps noncurrent versions: how far back `rask registry restore` reaches (docs/operations.md). */
  readonly registryNoncurrentDays: number;
  /** An existing versioned bucket (ARN) the registry is replicated to (infra/constructs/registry-backup.ts). */
  readonly registryReplicaBucketArn?: string;
  /** Whether the default warehouse lets the catalog arbitrate commits (managed versioning). */
  readonly managedVersioning: boolean;
  /** Names of the default project and warehouse that the catalog bootstraps. */
  readonly project: string;
  readonly warehouse: string;
  /** Stage-wide steady-state request rate (requests/second) and burst. */
  readonly throttleRateLimit: number;
  readonly throttleBurstLimit: number;
  /** Seconds API Gateway caches an authorizer verdict; > 0 requires every client to send x-api-key. */
  readonly authorizerCacheSeconds: number;
  /**
   * Requests per second (and burst, default twice the rate) per principal and per project, in
   * each function container; 0 = off (RASK_RATE_*, docs/operations.md, "Rate limits"). A platform
   * administrator sets a project's or a principal's own through the limits doors.
   */
  readonly ratePrincipalPerSecond: number;
  readonly ratePrincipalBurst?: number;
  readonly rateProjectPerSecond: number;
  readonly rateProjectBurst?: number;
  /**
   * Object quotas: namespaces and tables per project, principals per deployment, unrevoked API keys
   * per principal; 0 = no quota (RASK_QUOTA_*, docs/operations.md, "Object quotas").
   */
  readonly quotaNamespaces: number;
  readonly quotaTables: number;
  readonly quotaPrincipals: number;
  readonly quotaKeysPerPrincipal: number;
  /** Retention of function and access logs, in days (must be a CloudWatch Logs retention value). */
  readonly logRetentionDays: number;
  /** Memory of the data-plane function (LanceDB wants CPU, and CPU scales with memory). */
  readonly dataMemoryMb: number;
  /** Memory of the metadata function. */
  readonly metaMemoryMb: number;
  /**
   * `grouped` (default): one metadata and one data function serve every operation.
   * `per-operation`: one function per operation of the operation table, each with its own
   * bundle and a role derived from the operation's facts (infra/constructs/operation-functions.ts).
   */
  readonly functionMode: 'grouped' | 'per-operation';
  /** Memory of the scheduled jobs function (index builds want CPU: ~2.3 vCPU at 4096 MB, 6 at 10240). */
  readonly jobsMemoryMb: number;
  /**
   * Reserved concurrency of the scheduled jobs function: at most this many run at once, and the
   * API always keeps the rest of the account's concurrency (docs/deploy.md, "Concurrency caps").
   * `none` reserves nothing (needed on an account whose concurrency limit is still 10).
   */
  readonly jobsReservedConcurrency: number | 'none';
  /** Reserved concurrency of each maintenance pass's function (the same, per pass). */
  readonly maintenanceReservedConcurrency: number | 'none';
  /** An existing SNS topic for the alarms; when absent the stack creates one (constructs/monitoring.ts). */
  readonly alarmTopicArn?: string;
  /** An e-mail address subscribed to the stack's alarm topic (confirm the subscription mail once). */
  readonly alarmEmail?: string;
  /** WAFv2 web ACL to associate with the API stage (instead of the stack's own). */
  readonly webAclArn?: string;
  /**
   * Requests one client IP may send in 5 minutes before the stack's own web ACL blocks it (429 /
   * code 21); `off`: no web ACL. Ignored with `webAclArn` (that ACL's rules apply instead).
   */
  readonly wafRateLimit: number | 'off';
  /** Whether API Gateway's account-level CloudWatch role is created by this stack (one per account and region). */
  readonly createApiGatewayCloudWatchRole: boolean;
  /**
   * Keep the stateful stack's old named CloudFormation exports (`<stack>-State-RegistryBucketArn`,
   * …) for one deploy. The stateless stack reads the stateful values from SSM parameters; a
   * deployment made before that still imports the exports, and CloudFormation refuses to delete an
   * export in use. Deploy once with `true` (the stateless stack moves to SSM), then again without
   * (the exports go). docs/deploy.md, "Upgrading from exports to SSM parameters".
   */
  readonly legacyExports: boolean;
  /**
   * OIDC bearer tokens (docs/governance.md): the issuer (`iss`), audience (`aud`) and JWKS URL the
   * authorizer verifies tokens against. All three or none; with them the authorizer runs in
   * `jwt` mode (API keys and tokens), without them in `keys` mode.
   */
  readonly jwtIssuer?: string;
  readonly jwtAudience?: string;
  readonly jwtJwksUrl?: string;
  /** The token claim that names the principal (default `sub`). */
  readonly jwtPrincipalClaim?: string;
  /** Oldest accepted token by its `iat`, in seconds (default a day; lib/governance/jwt.ts). */
  readonly jwtMaxAgeSeconds?: number;
  // --- Storage allotment (docs/governance.md, "Storage allotment"; issue 24) ---
  /**
   * The storage projects' warehouses may use, as comma-separated key prefixes inside
   * `warehousePrefix` (so the functions' and the vending role's IAM, scoped to that prefix, cover
   * them): `projects/,teams/` declares `s3://<warehouse bucket>/<warehousePrefix>projects/` and
   * `…teams/` (RASK_STORAGE_ROOTS). Absent: `projects/`, the catalog's own default.
   */
  readonly storagePrefixes?: readonly string[];
  // --- Custom domain (docs/deploy.md, "A custom domain") ---
  /**
   * The host name clients use (`catalog.example.com`): a regional API Gateway domain with a base
   * path mapping to the stage, so replacing the API never changes the URL clients hold. Needs
   * `certificateArn` (an ACM certificate in the stack's region covering the name).
   */
  readonly domainName?: string;
  readonly certificateArn?: string;
  /** A Route 53 hosted zone (id and name, both) in which the stack creates the alias record for `domainName`. */
  readonly hostedZoneId?: string;
  readonly hostedZoneName?: string;
  /** Path under the domain that maps to the stage (default: the domain's root). */
  readonly domainBasePath?: string;
}

export const DEFAULT_CONFIG: RaskConfig = {
  stackName: 'Rask',
  stageName: 'prod',
  warehousePrefix: 'warehouse/',
  registryPrefix: 'registry/',
  removalPolicy: RemovalPolicy.RETAIN,
  warehouseVersioning: true,
  trashGraceDays: 0,
  registryNoncurrentDays: 30,
  managedVersioning: true,
  project: 'default',
  warehouse: 'default',
  throttleRateLimit: 100,
  throttleBurstLimit: 200,
  authorizerCacheSeconds: 0,
  ratePrincipalPerSecond: 0,
  rateProjectPerSecond: 0,
  quotaNamespaces: 0,
  quotaTables: 0,
  quotaPrincipals: 0,
  quotaKeysPerPrincipal: 0,
  logRetentionDays: 90,
  dataMemoryMb: 2048,
  metaMemoryMb: 1024,
  functionMode: 'grouped',
  jobsMemoryMb: 4096,
  wafRateLimit: 3000,
  jobsReservedConcurrency: 5,
  maintenanceReservedConcurrency: 2,
  createApiGatewayCloudWatchRole: true,
  legacyExports: false,
};

/** The retention values CloudWatch Logs accepts. */
const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
];

export class RaskConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RaskConfigError';
  }
}

type Raw = Readonly<Record<string, unknown>>;

const CONTEXT_PREFIX = 'rask:';

/** Settings with no default (absent means "not used"). */
const OPTIONAL_KEYS = ['ratePrincipalBurst', 'rateProjectBurst', 'registryReplicaBucketArn', 'warehouseBucketName', 'alarmTopicArn', 'alarmEmail', 'webAclArn', 'jwtIssuer', 'jwtAudience', 'jwtJwksUrl', 'jwtPrincipalClaim', 'jwtMaxAgeSeconds', 'storagePrefixes', 'domainName', 'certificateArn', 'hostedZoneId', 'hostedZoneName', 'domainBasePath'];

/** Reads every `rask:*` context key from a construct node (the App's, normally). */
export function configFromContext(node: Node): RaskConfig {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(DEFAULT_CONFIG).concat(OPTIONAL_KEYS)) {
    const value = node.tryGetContext(CONTEXT_PREFIX + key);
    if (value !== undefined && value !== null && value !== '') raw[key] = value;
  }
  return resolveConfig(raw);
}

/** Applies defaults to partial settings and validates the result. */
export function resolveConfig(raw: Raw = {}): RaskConfig {
  const known = new Set([...Object.keys(DEFAULT_CONFIG), ...OPTIONAL_KEYS]);
  for (const key of Object.keys(raw)) {
    if (!known.has(key)) throw new RaskConfigError(`unknown setting ${CONTEXT_PREFIX}${key}`);
  }
  const d = DEFAULT_CONFIG;
  const config: RaskConfig = {
    stackName: str(raw, 'stackName', d.stackName, /^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'a CloudFormation stack name'),
    stageName: str(raw, 'stageName', d.stageName, /^[A-Za-z0-9_-]{1,128}$/, 'letters, digits, "-" and "_"'),
    warehouseBucketName: optStr(raw, 'warehouseBucketName', /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket name'),
    warehousePrefix: prefix(raw, 'warehousePrefix', d.warehousePrefix),
    registryPrefix: prefix(raw, 'registryPrefix', d.registryPrefix),
    removalPolicy: removal(raw),
    warehouseVersioning: bool(raw, 'warehouseVersioning', d.warehouseVersioning),
    trashGraceDays: int(raw, 'trashGraceDays', d.trashGraceDays, 0, 3650),
    registryNoncurrentDays: int(raw, 'registryNoncurrentDays', d.registryNoncurrentDays, 1, 3650),
    registryReplicaBucketArn: optStr(raw, 'registryReplicaBucketArn', /^arn:aws[a-z-]*:s3:::[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'an S3 bucket ARN (arn:aws:s3:::name)'),
    managedVersioning: bool(raw, 'managedVersioning', d.managedVersioning),
    project: str(raw, 'project', d.project, /^[A-Za-z0-9_.-]{1,128}$/, 'letters, digits, "_", "." and "-"'),
    warehouse: str(raw, 'warehouse', d.warehouse, /^[A-Za-z0-9_.-]{1,128}$/, 'letters, digits, "_", "." and "-"'),
    throttleRateLimit: int(raw, 'throttleRateLimit', d.throttleRateLimit, 1, 10_000),
    throttleBurstLimit: int(raw, 'throttleBurstLimit', d.throttleBurstLimit, 1, 5_000),
    authorizerCacheSeconds: int(raw, 'authorizerCacheSeconds', d.authorizerCacheSeconds, 0, 3600),
    // The same bounds as lib/config.ts checks in the functions, so a bad value fails the synth.
    ratePrincipalPerSecond: int(raw, 'ratePrincipalPerSecond', d.ratePrincipalPerSecond, 0, 100_000),
    ...(raw.ratePrincipalBurst === undefined ? {} : { ratePrincipalBurst: int(raw, 'ratePrincipalBurst', 0, 1, 1_000_000) }),
    rateProjectPerSecond: int(raw, 'rateProjectPerSecond', d.rateProjectPerSecond, 0, 100_000),
    ...(raw.rateProjectBurst === undefined ? {} : { rateProjectBurst: int(raw, 'rateProjectBurst', 0, 1, 1_000_000) }),
    quotaNamespaces: int(raw, 'quotaNamespaces', d.quotaNamespaces, 0, 100_000_000),
    quotaTables: int(raw, 'quotaTables', d.quotaTables, 0, 100_000_000),
    quotaPrincipals: int(raw, 'quotaPrincipals', d.quotaPrincipals, 0, 100_000_000),
    quotaKeysPerPrincipal: int(raw, 'quotaKeysPerPrincipal', d.quotaKeysPerPrincipal, 0, 100_000_000),
    logRetentionDays: int(raw, 'logRetentionDays', d.logRetentionDays, 1, 3653),
    dataMemoryMb: int(raw, 'dataMemoryMb', d.dataMemoryMb, 512, 10_240),
    metaMemoryMb: int(raw, 'metaMemoryMb', d.metaMemoryMb, 128, 10_240),
    jobsMemoryMb: int(raw, 'jobsMemoryMb', d.jobsMemoryMb, 1024, 10_240),
    wafRateLimit: wafRate(raw),
    jobsReservedConcurrency: reserved(raw, 'jobsReservedConcurrency', d.jobsReservedConcurrency),
    maintenanceReservedConcurrency: reserved(raw, 'maintenanceReservedConcurrency', d.maintenanceReservedConcurrency),
    functionMode: oneOf(raw, 'functionMode', d.functionMode, ['grouped', 'per-operation'] as const),
    alarmTopicArn: optStr(raw, 'alarmTopicArn', /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]+$/, 'an SNS topic ARN'),
    alarmEmail: optStr(raw, 'alarmEmail', /^[^@\s]+@[^@\s]+\.[^@\s]+$/, 'an e-mail address'),
    webAclArn: optStr(raw, 'webAclArn', /^arn:aws[a-z-]*:wafv2:[a-z0-9-]+:\d{12}:regional\/webacl\/.+$/, 'a regional WAFv2 web ACL ARN'),
    createApiGatewayCloudWatchRole: bool(raw, 'createApiGatewayCloudWatchRole', d.createApiGatewayCloudWatchRole),
    legacyExports: bool(raw, 'legacyExports', d.legacyExports),
    // An issuer is compared byte for byte with the token's `iss`: any visible characters.
    jwtIssuer: optStr(raw, 'jwtIssuer', /^\S{1,2048}$/, 'the token issuer (the `iss` value, e.g. https://login.example.com/)'),
    jwtAudience: optStr(raw, 'jwtAudience', /^\S{1,2048}$/, 'the token audience (the `aud` value)'),
    jwtJwksUrl: optStr(raw, 'jwtJwksUrl', /^https:\/\/[^\s/?#]+[^\s]*$/, 'an https:// URL of the issuer\'s JWKS'),
    jwtPrincipalClaim: optStr(raw, 'jwtPrincipalClaim', /^[A-Za-z0-9_:./-]{1,256}$/, 'a claim name such as "sub" or "email"'),
    ...(raw.jwtMaxAgeSeconds === undefined ? {} : { jwtMaxAgeSeconds: int(raw, 'jwtMaxAgeSeconds', 0, 60, 30 * 24 * 60 * 60) }),
    ...storagePrefixes(raw),
    domainName: optStr(raw, 'domainName', HOST_NAME, 'a DNS host name such as catalog.example.com'),
    certificateArn: optStr(raw, 'certificateArn', /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/, 'an ACM certificate ARN'),
    hostedZoneId: optStr(raw, 'hostedZoneId', /^Z[A-Z0-9]{1,31}$/, 'a Route 53 hosted zone id (Z…)'),
    hostedZoneName: optStr(raw, 'hostedZoneName', HOST_NAME, 'the hosted zone\'s domain name such as example.com'),
    domainBasePath: optStr(raw, 'domainBasePath', /^[A-Za-z0-9._-]{1,128}$/, 'one path segment (letters, digits, ".", "_", "-")'),
  };
  checkDomain(config);
  const jwt = { jwtIssuer: config.jwtIssuer, jwtAudience: config.jwtAudience, jwtJwksUrl: config.jwtJwksUrl };
  const given = Object.entries(jwt).filter(([, v]) => v !== undefined).map(([k]) => k);
  if (given.length > 0 && given.length < 3) {
    const missing = Object.keys(jwt).filter((k) => !given.includes(k));
    throw new RaskConfigError(`OIDC tokens need ${CONTEXT_PREFIX}jwtIssuer, ${CONTEXT_PREFIX}jwtAudience and ${CONTEXT_PREFIX}jwtJwksUrl together; missing ${missing.map((k) => CONTEXT_PREFIX + k).join(', ')}`);
  }
  if (config.jwtMaxAgeSeconds !== undefined && given.length === 0) {
    throw new RaskConfigError(`${CONTEXT_PREFIX}jwtMaxAgeSeconds only applies with ${CONTEXT_PREFIX}jwtIssuer, ${CONTEXT_PREFIX}jwtAudience and ${CONTEXT_PREFIX}jwtJwksUrl`);
  }
  if (config.jwtPrincipalClaim !== undefined && given.length === 0) {
    throw new RaskConfigError(`${CONTEXT_PREFIX}jwtPrincipalClaim only applies with ${CONTEXT_PREFIX}jwtIssuer, ${CONTEXT_PREFIX}jwtAudience and ${CONTEXT_PREFIX}jwtJwksUrl`);
  }
  if (given.length === 3 && config.authorizerCacheSeconds > 0) {
    // A cached verdict is keyed by x-api-key alone (infra/constructs/api.ts), so a cached
    // authorizer must ignore every other credential: a bearer token would never be looked at.
    throw new RaskConfigError(`${CONTEXT_PREFIX}authorizerCacheSeconds must be 0 with OIDC tokens (${CONTEXT_PREFIX}jwtIssuer …): the cache is keyed by x-api-key and cannot cover a bearer token`);
  }
  if (config.alarmTopicArn && config.alarmEmail) {
    // The e-mail is subscribed to the topic the stack creates; an existing topic's subscriptions are its owner's.
    throw new RaskConfigError(`${CONTEXT_PREFIX}alarmEmail only applies to the topic the stack creates; with ${CONTEXT_PREFIX}alarmTopicArn subscribe the address to that topic instead`);
  }
  if (!LOG_RETENTION_DAYS.includes(config.logRetentionDays)) {
    throw new RaskConfigError(`${CONTEXT_PREFIX}logRetentionDays must be one of ${LOG_RETENTION_DAYS.join(', ')}`);
  }
  if (config.throttleBurstLimit < config.throttleRateLimit) {
    throw new RaskConfigError(`${CONTEXT_PREFIX}throttleBurstLimit must be at least throttleRateLimit`);
  }
  return config;
}

/** A DNS host name: dot-separated labels of letters, digits and inner hyphens, lower case. */
const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** The custom domain's settings belong together: a name needs its certificate, a zone needs both of its parts and a name inside it. */
function checkDomain(config: RaskConfig): void {
  const k = (key: string) => CONTEXT_PREFIX + key;
  if (!config.domainName) {
    const stray = (['certificateArn', 'hostedZoneId', 'hostedZoneName', 'domainBasePath'] as const).filter((key) => config[key] !== undefined);
    if (stray.length) throw new RaskConfigError(`${stray.map(k).join(', ')} only apply with ${k('domainName')}`);
    return;
  }
  if (!config.certificateArn) throw new RaskConfigError(`${k('domainName')} needs ${k('certificateArn')} (an ACM certificate in the stack's region covering ${config.domainName})`);
  if ((config.hostedZoneId === undefined) !== (config.hostedZoneName === undefined)) {
    throw new RaskConfigError(`${k('hostedZoneId')} and ${k('hostedZoneName')} go together`);
  }
  if (config.hostedZoneName && !config.domainName.endsWith(`.${config.hostedZoneName}`) && config.domainName !== config.hostedZoneName) {
    throw new RaskConfigError(`${k('domainName')} ${config.domainName} is not inside the hosted zone ${config.hostedZoneName}`);
  }
}

function fail(key: string, expected: string, value: unknown): never {
  throw new RaskConfigError(`${CONTEXT_PREFIX}${key} must be ${expected}; got ${JSON.stringify(value)}`);
}

function str(raw: Raw, key: string, fallback: string, pattern: RegExp, expected: string): string {
  return optStr(raw, key, pattern, expected) ?? fallback;
}

function optStr(raw: Raw, key: string, pattern: RegExp, expected: string): string | undefined {
  const value = raw[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !pattern.test(value)) fail(key, expected, value);
  return value;
}

/**
 * A key prefix: non-empty, ends with "/", no leading "/" and no "." or ".." segment. IAM
 * statements are scoped to `<prefix>*`, so an empty prefix would silently widen them to the
 * whole bucket.
 */
function prefix(raw: Raw, key: string, fallback: string): string {
  const value = str(raw, key, fallback, /^[A-Za-z0-9_.\-/]+\/$/, 'a key prefix such as "warehouse/"');
  if (value.startsWith('/') || value.split('/').some((s, i, all) => (s === '' && i < all.length - 1) || s === '.' || s === '..')) {
    fail(key, 'a key prefix such as "warehouse/" (no empty, "." or ".." segments)', value);
  }
  return value;
}

/** `storagePrefixes`: a list (or a comma-separated string from the command line) of key prefixes. */
function storagePrefixes(raw: Raw): { storagePrefixes?: readonly string[] } {
  const value = raw.storagePrefixes;
  if (value === undefined) return {};
  const list = typeof value === 'string' ? value.split(',').map((v) => v.trim()) : value;
  if (!Array.isArray(list) || list.length === 0) fail('storagePrefixes', 'key prefixes inside warehousePrefix such as "projects/"', value);
  return { storagePrefixes: list.map((p) => prefix({ storagePrefixes: p }, 'storagePrefixes', '')) };
}

function bool(raw: Raw, key: string, fallback: boolean): boolean {
  const value = raw[key];
  if (value === undefined) return fallback;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return fail(key, 'true or false', value);
}

function int(raw: Raw, key: string, fallback: number, min: number, max: number): number {
  const value = raw[key];
  if (value === undefined) return fallback;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) fail(key, `an integer from ${min} to ${max}`, value);
  return n;
}

/**
 * Reserved concurrency: a whole number from 1 to 1000, or `none`. Never 0, which Lambda reads as
 * "throttle every invocation" (the function would never run).
 */
function reserved(raw: Raw, key: string, fallback: number | 'none'): number | 'none' {
  if (raw[key] === 'none') return 'none';
  if (raw[key] === undefined) return fallback;
  const value = raw[key];
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 1000) fail(key, 'a whole number of concurrent executions from 1 to 1000, or "none"', value);
  return n;
}

/** WAF's rate-based rule takes 10 to 2,000,000,000 requests per evaluation window. */
function wafRate(raw: Raw): number | 'off' {
  const value = raw.wafRateLimit;
  if (value === 'off' || value === false || value === 'false') return 'off';
  if (value === undefined) return DEFAULT_CONFIG.wafRateLimit;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 10 || n > 2_000_000_000) fail('wafRateLimit', 'a whole number of requests per client IP in 5 minutes from 10 to 2000000000, or "off"', value);
  return n;
}

function removal(raw: Raw): RaskConfig['removalPolicy'] {
  const value = raw.removalPolicy ?? 'retain';
  if (value === 'retain' || value === RemovalPolicy.RETAIN) return RemovalPolicy.RETAIN;
  if (value === 'destroy' || value === RemovalPolicy.DESTROY) return RemovalPolicy.DESTROY;
  return fail('removalPolicy', '"retain" or "destroy"', value);
}

function oneOf<T extends string>(raw: Raw, key: string, fallback: T, allowed: readonly T[]): T {
  const value = raw[key] ?? fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  return fail(key, allowed.map((a) => `"${a}"`).join(' or '), value);
}
