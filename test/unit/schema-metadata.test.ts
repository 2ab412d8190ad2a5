/** Table schema metadata kept in the registry record (lib/catalog/tables/schema-metadata.ts). */
import { afterEach, describe, expect, it } from 'vitest';
import { createNamespace } from '../../lib/catalog/namespaces/create.js';
import { declareTable } from '../../lib/catalog/tables/declare.js';
import { readTable } from '../../lib/catalog/protocols/lookup.js';
import {
  effectiveMetadata,
  MAX_METADATA_KEYS,
  mergeOverlay,
  updateSchemaMetadata,
} from '../../lib/catalog/tables/schema-metadata.js';
import { CatalogError } from '../../lib/errors.js';
import { parseMetadataUpdate } from '../../lib/operations/data/schema.js';
import { servicesOver, type ServicesFixture } from '../support/services.js';

describe('merge rules', () => {
  it('a string sets, null records a deletion that hides the dataset\'s own key', () => {
    const overlay = mergeOverlay({ a: '1', b: '2' }, { b: null, c: '3' });
    expect(overlay).toEqual({ a: '1', b: null, c: '3' });
    expect(effectiveMetadata({ b: 'from-dataset', d: '4' }, overlay)).toEqual({ a: '1', c: '3', d: '4' });
    expect(effectiveMetadata(undefined, undefined)).toEqual({});
  });

  it('accepts only string or null values, non-empty keys and a human-sized description', () => {
    expect(parseMetadataUpdate({ a: 'x', b: null, description: 'Fruit, one row each.' })).toEqual({ a: 'x', b: null, description: 'Fruit, one row each.' });
    for (const bad of [{ a: 1 }, { a: { b: 'c' } }, { a: ['x'] }, { '': 'x' }, { description: 'x'.repeat(5000) }]) {
      expect(() => parseMetadataUpdate(bad)).toThrow(CatalogError);
    }
  });

  it('refuses a map that would outgrow the record', () => {
    const many = Object.fromEntries(Array.from({ length: MAX_METADATA_KEYS + 1 }, (_, i) => [`k${i}`, 'v']));
    expect(() => mergeOverlay({}, many)).toThrow(/at most/);
    expect(() => mergeOverlay({}, { big: 'x'.repeat(70_000) })).toThrow(/bytes/);
    // Deleting keys is always allowed.
    expect(mergeOverlay(Object.fromEntries(Object.keys(many).slice(1).map((k) => [k, 'v'])), { k1: null })).toMatchObject({ k1: null });
  });
});

describe('updateSchemaMetadata under concurrency', () => {
  let f: ServicesFixture;
  afterEach(() => f?.cleanup());

  it('parallel updates of different keys on a jittery store all land; none is lost', async () => {
    f = await servicesOver('memory', { jitterMs: 3 });
    const s = f.services;
    await createNamespace(s, { id: ['ns'], mode: 'create', properties: {} });
    await declareTable(s, { id: ['ns', 't'], properties: { keep: 'me' }, identity: {} });
    const noDataset = async () => undefined;
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => updateSchemaMetadata(s, ['ns', 't'], { [`k${i}`]: String(i) }, noDataset)),
    );
    const all = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`, String(i)]));
    expect((await readTable(s, ['ns', 't']))?.value.schemaMetadata).toEqual(all);
    // Each answer is the map as of its own write: it holds its key, and the last one holds all.
    answers.forEach((a, i) => expect(a[`k${i}`]).toBe(String(i)));
    expect(answers.some((a) => Object.keys(a).length === 12)).toBe(true);
    // The rest of the record is untouched.
    expect((await readTable(s, ['ns', 't']))?.value.properties).toEqual({ keep: 'me' });
  });
});
