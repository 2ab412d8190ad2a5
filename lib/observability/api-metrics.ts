import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { accessLog, type AccessLogger } from '../http/access-log.js';
import { RouteMatcher } from '../http/match.js';
import type { ResponseObserver } from '../http/node-adapter.js';
import { OPERATIONS } from '../contract/operations.js';

/**
 * What one API invocation records: the request line (lib/http/access-log.ts, as the local
 * server writes it) and EMF metrics with dimension `operation` (the spec's operationId, or
 * `Unrouted` for a path no operation matches): `Latency` (ms), `Requests`, `ClientErrors`
 * (4xx) and `ServerErrors` (5xx), the latter two written as 0 or 1 so averages are rates.
 * One request per invocation, so the dimension is the invocation's.
 */
export function apiObserver(logger: AccessLogger, metrics: Metrics): ResponseObserver {
  const matcher = new RouteMatcher(OPERATIONS);
  const log = accessLog(logger);
  return (request, response, ms) => {
    log(request, response, ms);
    const found = matcher.match(request.method.toUpperCase(), request.url.split('?')[0]);
    metrics.addDimension('operation', found.kind === 'found' ? found.match.operation.operationId : 'Unrouted');
    metrics.addMetric('Latency', MetricUnit.Milliseconds, ms);
    metrics.addMetric('Requests', MetricUnit.Count, 1);
    metrics.addMetric('ClientErrors', MetricUnit.Count, response.status >= 400 && response.status < 500 ? 1 : 0);
    metrics.addMetric('ServerErrors', MetricUnit.Count, response.status >= 500 ? 1 : 0);
  };
}
