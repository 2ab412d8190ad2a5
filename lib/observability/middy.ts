import middy from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { Observability } from './lambda.js';

/**
 * A Lambda entry on middy with the three Powertools middlewares: the tracer's handler segment
 * (responses are NOT captured: they carry vended credentials), the logger's Lambda context
 * (request id, cold start, function name; `correlationId` picks the event field that
 * identifies the request end to end, e.g. API Gateway's request id, which error bodies carry
 * as `instance`), and the metrics flush with the cold-start metric after every invocation.
 * The correlation id is set directly rather than by a JMESPath expression, which would add
 * Powertools' JMESPath engine to every bundle.
 */
export function withPowertools<E, R>(
  handler: (event: E, context: never) => Promise<R>,
  o: Observability,
  options: { correlationId?: (event: E) => unknown } = {},
) {
  const pick = options.correlationId;
  return middy(handler as (event: E) => Promise<R>)
    .use(captureLambdaHandler(o.tracer, { captureResponse: false }))
    .use(injectLambdaContext(o.logger, { resetKeys: true }))
    .use({
      before: (request) => {
        const id = pick?.(request.event as E);
        if (typeof id === 'string' && id !== '') o.logger.setCorrelationId(id);
      },
    })
    .use(logMetrics(o.metrics, { captureColdStartMetric: true, throwOnEmptyMetrics: false }));
}

/** API Gateway events (REST v1 and the REQUEST authorizer): the request id the catalog also answers as `instance`. */
export const apiRequestId = (event: unknown): unknown =>
  (event as { requestContext?: { requestId?: unknown } } | null)?.requestContext?.requestId;
