import { CatalogError, ErrorCode } from '../errors.js';
import type { ErrorLogger } from '../http/respond.js';
import type { DatasetInspector, InspectEvent, InspectResult } from '../ports/dataset-inspector.js';

export function isInspectEvent(event: unknown): event is InspectEvent {
  const e = event as Partial<InspectEvent> & { httpMethod?: unknown };
  return e?.rask === 'inspect' && typeof e.location === 'string' && e.httpMethod === undefined;
}

/**
 * Runs the inspection; catalog errors travel back as codes, anything else as code 18, logged
 * through the function's logger (so RASK_LOG_LEVEL and the format hold for it).
 */
export async function handleInspectEvent(event: InspectEvent, inspector: DatasetInspector, logger: Pick<ErrorLogger, 'error'>): Promise<InspectResult> {
  try {
    return { ok: true, details: await inspector.inspect(event.location, event.selection ?? {}) };
  } catch (err) {
    if (err instanceof CatalogError) {
      return { ok: false, code: err.code, message: err.message, ...(err.detail ? { detail: err.detail } : {}) };
    }
    logger.error('inspection failed', { err: String(err) });
    return { ok: false, code: ErrorCode.Internal, message: 'the dataset could not be read' };
  }
}
