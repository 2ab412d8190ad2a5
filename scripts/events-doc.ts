/**
 * Regenerates the generated part of docs/events.md (the type list and the JSON Schema) from
 * lib/events/. `npm run docs:events`; test/unit/events-vocabulary.test.ts fails when it drifts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { eventJsonSchema } from '../lib/events/schema.js';
import { JOB_COMMIT_EVENT, JOB_COMMIT_EVENTS, OPERATION_EVENTS, allEventTypes } from '../lib/events/vocabulary.js';

export const BEGIN = '<!-- generated: npm run docs:events -->';
export const END = '<!-- end generated -->';

export function generatedSection(): string {
  const byType = new Map<string, string[]>();
  for (const [op, type] of Object.entries(OPERATION_EVENTS)) if (type) byType.set(type, [...(byType.get(type) ?? []), op]);
  for (const [job, type] of Object.entries(JOB_COMMIT_EVENTS)) byType.set(type, [...(byType.get(type) ?? []), `a \`${job}\` job, per version it commits`]);
  byType.set(JOB_COMMIT_EVENT, ['a job of another type, per version it commits']);
  const rows = allEventTypes().map((t) => `| \`${t}\` | ${(byType.get(t) ?? []).join(', ') || (t.startsWith('dev.rask.maintenance.') ? 'the maintenance pass, when it did material work' : 'any door refused with 403 / code 15')} |`);
  return [
    BEGIN,
    '',
    '| type | emitted by |',
    '|---|---|',
    ...rows,
    '',
    'JSON Schema of one event (each NDJSON line, each EventBridge `Detail`):',
    '',
    '```json',
    JSON.stringify(eventJsonSchema(), null, 2),
    '```',
    '',
    END,
  ].join('\n');
}

export function renderEventsDoc(current: string): string {
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  if (start < 0 || end < 0) throw new Error(`docs/events.md lacks the ${BEGIN} … ${END} markers`);
  return current.slice(0, start) + generatedSection() + current.slice(end + END.length);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = new URL('../docs/events.md', import.meta.url);
  writeFileSync(file, renderEventsDoc(readFileSync(file, 'utf8')));
}
