import * as z from 'zod';
import { allEventTypes } from './vocabulary.js';

/**
 * The change event's schema, written once: docs/events.md embeds its JSON Schema form
 * (`npm run docs:events` regenerates it; a test fails when the page drifts), and the tests
 * validate every NDJSON line against it. Runtime code builds events with lib/events/cloudevent.ts
 * and never loads this module.
 */
export const raskEventSchema = z
  .object({
    specversion: z.literal('1.0'),
    id: z.string().min(1),
    source: z.string().regex(/^rask:\/\/[^/]+$/),
    type: z.enum(allEventTypes() as [string, ...string[]]),
    subject: z.string().regex(/^[a-z_]+:/),
    time: z.iso.datetime(),
    datacontenttype: z.literal('application/json'),
    data: z
      .object({
        project: z.string().min(1),
        warehouse: z.string().min(1).optional(),
        kind: z.enum(['namespace', 'table', 'transaction', 'materialized_view', 'project', 'warehouse', 'principal', 'grant', 'maintenance', 'request']),
        id: z.array(z.string()),
        principal: z.string().min(1),
        operation: z.string().min(1),
        request_id: z.string(),
        version: z.number().int().nonnegative().optional(),
        details: z.record(z.string(), z.unknown()).optional(),
      })
      .strict(),
  })
  .strict();

export function eventJsonSchema(): unknown {
  return z.toJSONSchema(raskEventSchema, { target: 'draft-2020-12' });
}
