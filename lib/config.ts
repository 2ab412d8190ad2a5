import { z } from 'zod';

/**
 * Configuration from `RASK_*` environment variables, validated once at start-up so a typo
 * fails the process with a message instead of misbehaving later. Defaults make the local
 * server work with nothing set.
 */

const port = z.coerce.number().int().min(0).max(65535);
const bytes = z.coerce.number().int().min(1024);
const bool = z.enum(['true', 'false']).transform((v) => v === 'true');

/** Lambda's synchronous payload cap is 6 MB including base64 overhead. */
export const DEFAULT_MAX_BODY_BYTES = 6 * 1024 * 1024;

/**
 * Largest QueryTable answer. Lambda returns at most 6 MB, and a binary answer travels base64
 * encoded (4/3 larger) inside the proxy response, so about 4.5 MB of Arrow fits; 4 MiB leaves
 * room for the envelope and headers.
 */
export const DEFAULT_MAX_RESULT_BYTES = 4 * 1024 * 1024;

/**
 * Largest table on which CreateTableIndex builds a vector index inside the request: measured
 * builds (docs/index-builds.md) cross API Gateway's 29 s well above this row count.
 */
export const DEFAULT_MAX_SYNC_VECTOR_INDEX_ROWS = 20_000;

const common = {
  RASK_MAX_BODY_BYTES: bytes.default(DEFAULT_MAX_BODY_BYTES),
  RASK_MAX_RESULT_BYTES: bytes.default(DEFAULT_MAX_RESULT_BYTES),
  RASK_MAX_SYNC_VECTOR_INDEX_ROWS: z.coerce.number().int().min(0).default(DEFAULT_MAX_SYNC_VECTOR_INDEX_ROWS),
  RASK_MANAGED_VERSIONING: bool.default(true),
  RASK_TRASH_GRACE_DAYS: z.coerce.number().int().min(0).default(0),
  RASK_PROJECT: z.string().min(1).default('default'),
  RASK_WAREHOUSE: z.string().min(1).default('default'),
};

/** How often the local server's in-process worker looks for queued jobs (docs/jobs.md). */
export const DEFAULT_JOBS_INTERVAL_MS = 2000;

const localSchema = z.object({
  RASK_HOST: z.string().min(1).default('127.0.0.1'),
  RASK_PORT: port.default(2333),
  RASK_DATA_DIR: z.string().min(1).default('./.rask'),
  /** Milliseconds between passes of the in-process job worker; 0 disables it. */
  RASK_JOBS_INTERVAL_MS: z.coerce.number().int().min(0).default(DEFAULT_JOBS_INTERVAL_MS),
  ...common,
});

const awsSchema = z.object({
  RASK_REGISTRY_BUCKET: z.string().min(3),
  RASK_REGISTRY_PREFIX: z.string().default('registry/'),
  RASK_WAREHOUSE_BUCKET: z.string().min(3),
  RASK_WAREHOUSE_PREFIX: z.string().default('warehouse/'),
  AWS_REGION: z.string().min(1).optional(),
  /** The role vended credentials derive from; absent = vend nothing (storage_options null). */
  RASK_VENDING_ROLE_ARN: z
    .string()
    .regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/, 'must be an IAM role ARN')
    .optional(),
  /**
   * The data function, which the metadata function invokes for DescribeTable with
   * `load_detailed_metadata` (it cannot open datasets itself); absent = that flag answers code 0.
   */
  RASK_DATA_FUNCTION_NAME: z.string().min(1).optional(),
  ...common,
});

export type LocalConfig = z.infer<typeof localSchema>;
export type AwsConfig = z.infer<typeof awsSchema>;

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

function parse<T extends z.ZodType>(schema: T, env: NodeJS.ProcessEnv): z.infer<T> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
  throw new ConfigError(`invalid configuration: ${problems}`);
}

export const loadLocalConfig = (env: NodeJS.ProcessEnv = process.env): LocalConfig => parse(localSchema, env);
export const loadAwsConfig = (env: NodeJS.ProcessEnv = process.env): AwsConfig => parse(awsSchema, env);
