import type { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { createLogger, type LogLevelName } from './logger.js';
import { setSignalRecorder } from '../signals.js';

/**
 * Powertools for every Lambda entry (functions/*.ts), created once per container:
 * - Logger: structured JSON, the Lambda request id, the API's request id as correlation id,
 *   the cold-start flag, level from RASK_LOG_LEVEL;
 * - Metrics: CloudWatch EMF in namespace `rask`, dimension `service` (meta, data, jobs,
 *   authorizer), flushed after each invocation, with the cold-start metric;
 * - Tracer: X-Ray subsegments around the AWS SDK clients (`instrument`), off outside Lambda.
 * Deep signals (CAS conflicts, credential vends) become Count metrics of the current invocation.
 */
export interface Observability {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly tracer: Tracer;
  /** Wraps an AWS SDK v3 client so each call is an X-Ray subsegment (the client itself when tracing is off). */
  instrument<T>(client: T): T;
}

export const METRICS_NAMESPACE = 'rask';

const LEVELS: readonly LogLevelName[] = ['debug', 'info', 'warn', 'error', 'silent'];

/** RASK_LOG_LEVEL, read before the configuration is (a bad value fails that load with its message). */
export function logLevelFrom(env: NodeJS.ProcessEnv): LogLevelName {
  const level = env.RASK_LOG_LEVEL?.toLowerCase();
  return LEVELS.includes(level as LogLevelName) ? (level as LogLevelName) : 'info';
}

export function lambdaObservability(service: string, env: NodeJS.ProcessEnv = process.env): Observability {
  const logger = createLogger({ service: `rask-${service}`, level: logLevelFrom(env) });
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: service });
  const tracer = new Tracer({ serviceName: `rask-${service}` });
  setSignalRecorder((name, value) => metrics.addMetric(name, MetricUnit.Count, value));
  return {
    logger,
    metrics,
    tracer,
    instrument: <T>(client: T): T => (tracer.isTracingEnabled() ? (tracer.captureAWSv3Client(client as never) as T) : client),
  };
}
