import { CatalogError, ErrorCode } from '../errors.js';
import type { DatasetInspector, InspectEvent, InspectResult } from '../ports/dataset-inspector.js';

export function isInspectEvent(event: unknown): event is InspectEvent {
  const e = event as Partial<InspectEvent> & { httpMethod?: unknown };
  return e?.rask === 'inspect' && typeof e.location === 'string' && e.httpMethod === undefined;
}

/** Runs the inspection; catalog errors travel back as codes, anything else as code 18. */
export async function handleInspectEvent(event: InspectEvent, inspector: DatasetInspector): Promise<InspectResult> {
  try {
    return { ok: true, details: await inspector.inspect(event.location, event.selection ?? {}) };
  } catch (err) {
    if (err instanceof CatalogError) {
      return { ok: false, code: err.code, message: err.message, ...(err.detail ? { detail: err.detail } : {}) };
    }
    console.error(JSON.stringify({ level: 'error', message: 'inspection failed', err: String(err) }));
    return { ok: false, code: ErrorCode.Internal, message: 'the dataset could not be read' };
  }
}
