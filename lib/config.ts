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

const common = {
  RASK_MAX_BODY_BYTES: bytes.default(DEFAULT_MAX_BODY_BYTES),
  RASK_MANAGED_VERSIONING: bool.default(true),
  RASK_TRASH_GRACE_DAYS: z.coerce.number().int().min(0).default(0),
  RASK_PROJECT: z.string().min(1).default('default'),
  RASK_WAREHOUSE: z.string().min(1).default('default'),
};

const localSchema = z.object({
  RASK_HOST: z.string().min(1).default('127.0.0.1'),
  RASK_PORT: port.default(2333),
  RASK_DATA_DIR: z.string().min(1).default('./.rask'),
  ...common,
});

const awsSchema = z.object({
  RASK_REGISTRY_BUCKET: z.string().min(3),
  RASK_REGISTRY_PREFIX: z.string().default('registry/'),
  RASK_WAREHOUSE_BUCKET: z.string().min(3),
  RASK_WAREHOUSE_PREFIX: z.string().default('warehouse/'),
  AWS_REGION: z.string().min(1).optional(),
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
