/**
 * What a Lance manifest references, read straight from its bytes: the data files, deletion
 * files, index directories and transaction file of one dataset version, and whether the dataset has external
 * base paths. Only the few protobuf fields the orphan scan needs are decoded (field numbers from
 * Lance's protos/table.proto); every other field is skipped by its wire type, so fields added
 * later cannot break the reading. Anything that does not parse throws: the scan then treats the
 * dataset as unreadable and reports nothing inside it.
 *
 * File layout: ... | Manifest message (u32 LE length, then the bytes) | ... | footer:
 * i64 LE position of the manifest, u16 major, u16 minor, "LANC". The index section, when the
 * manifest names one (field 6), is another u32-length-prefixed message at that position.
 */

export interface ManifestRefs {
  /** Paths relative to the dataset root: `data/<file>`, `_deletions/<file>`. */
  readonly files: string[];
  /** Index directories relative to the dataset root: `_indices/<uuid>`. */
  readonly indexDirs: string[];
  /**
   * The version's transaction file relative to the dataset root, `_transactions/<file>`
   * (Manifest.transaction_file, field 12), when it has one: Lance's cleanup deletes it with the
   * version, and so must the sweep (docs/maintenance.md, "What a sweep reclaims").
   */
  readonly transaction?: string;
  /** The dataset reads files from other locations (shallow clones, imported files). */
  readonly externalBases: boolean;
}

const MAGIC = 'LANC';

type Field = { no: number; wire: number; value: bigint | Uint8Array };

/** The fields of one protobuf message, in order; length-delimited values as bytes. */
function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buf.length) throw new Error('truncated varint');
      const b = buf[pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return result;
      shift += 7n;
      if (shift > 70n) throw new Error('varint too long');
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const no = key >>> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 1) pos += 8;
    else if (wire === 5) pos += 4;
    else if (wire === 2) {
      const len = Number(varint());
      if (pos + len > buf.length) throw new Error('truncated field');
      out.push({ no, wire, value: buf.subarray(pos, pos + len) });
      pos += len;
    } else throw new Error(`unsupported wire type ${wire}`);
    if (pos > buf.length) throw new Error('truncated message');
  }
  return out;
}

const bytesOf = (fs: Field[], no: number) => fs.filter((f) => f.no === no && f.wire === 2).map((f) => f.value as Uint8Array);
const numberOf = (fs: Field[], no: number) => {
  const f = fs.find((x) => x.no === no && x.wire === 0);
  return f ? (f.value as bigint) : undefined;
};
const text = (b: Uint8Array) => new TextDecoder('utf-8', { fatal: true }).decode(b);

/** A u32-length-prefixed message at `pos`. */
function messageAt(file: Uint8Array, pos: number): Uint8Array {
  if (pos < 0 || pos + 4 > file.length) throw new Error('message position outside the file');
  const len = new DataView(file.buffer, file.byteOffset + pos, 4).getUint32(0, true);
  if (pos + 4 + len > file.length) throw new Error('message runs past the end of the file');
  return file.subarray(pos + 4, pos + 4 + len);
}

function uuidString(b: Uint8Array): string {
  const hex = Buffer.from(b).toString('hex');
  if (hex.length !== 32) throw new Error('an index uuid is not 16 bytes');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The Manifest message's fields. */
function manifestOf(file: Uint8Array): Field[] {
  if (file.length < 16 || text(file.subarray(file.length - 4)) !== MAGIC) throw new Error('not a Lance manifest (no LANC footer)');
  const manifestPos = Number(new DataView(file.buffer, file.byteOffset + file.length - 16, 8).getBigInt64(0, true));
  return fields(messageAt(file, manifestPos));
}

/**
 * Live rows of each fragment of this version: DataFragment.physical_rows (field 4) minus its
 * DeletionFile.num_deleted_rows (field 4). The sweep's compaction trigger
 * (`target_rows_per_fragment`, lib/maintenance/sweep.ts) reads it; LanceDB's stats give only
 * percentiles.
 */
export function readFragmentRows(file: Uint8Array): number[] {
  return readFragments(file).map((f) => f.rows);
}

/** One fragment of a version: its live rows (as readFragmentRows) and the bytes of its data files. */
export interface ManifestFragment {
  readonly rows: number;
  /** Sum of its DataFile.file_size_bytes; undefined when a writer did not record one of them. */
  readonly bytes: number | undefined;
}

export function readFragments(file: Uint8Array): ManifestFragment[] {
  return bytesOf(manifestOf(file), 2)
    .map(fields)
    .map((fragment) => {
      const physical = numberOf(fragment, 4);
      if (physical === undefined) throw new Error('a fragment without physical_rows (written by a Lance too old to say)');
      const deleted = bytesOf(fragment, 3).map(fields).reduce((n, d) => n + (numberOf(d, 4) ?? 0n), 0n);
      const sizes = bytesOf(fragment, 2).map((f) => Number(numberOf(fields(f), 6) ?? 0n));
      const bytes = sizes.includes(0) ? undefined : sizes.reduce((n, b) => n + b, 0);
      return { rows: Number(physical - deleted), bytes };
    });
}

export function readManifestRefs(file: Uint8Array): ManifestRefs {
  const manifest = manifestOf(file);
  const files: string[] = [];
  for (const fragment of bytesOf(manifest, 2).map(fields)) {
    const id = numberOf(fragment, 1) ?? 0n;
    for (const dataFile of bytesOf(fragment, 2).map(fields)) {
      const [path] = bytesOf(dataFile, 1);
      if (path) files.push(`data/${text(path)}`);
    }
    for (const deletion of bytesOf(fragment, 3).map(fields)) {
      // DeletionFile: file_type (0 arrow, 1 bitmap), read_version, id → _deletions/<frag>-<read>-<id>.<ext>
      const ext = (numberOf(deletion, 1) ?? 0n) === 1n ? 'bin' : 'arrow';
      files.push(`_deletions/${id}-${numberOf(deletion, 2) ?? 0n}-${numberOf(deletion, 3) ?? 0n}.${ext}`);
    }
  }
  const indexDirs: string[] = [];
  const indexSection = numberOf(manifest, 6);
  if (indexSection !== undefined) {
    for (const index of bytesOf(fields(messageAt(file, Number(indexSection))), 1).map(fields)) {
      const [uuid] = bytesOf(index, 1).map(fields).map((u) => bytesOf(u, 1)[0]);
      if (uuid) indexDirs.push(`_indices/${uuidString(uuid)}`);
    }
  }
  const [transaction] = bytesOf(manifest, 12).map(text).filter((name) => name.length > 0);
  return { files, indexDirs, ...(transaction ? { transaction: `_transactions/${transaction}` } : {}), externalBases: bytesOf(manifest, 18).length > 0 };
}

/** One data file of one fragment: which fields it serves (tombstoned ones excluded) and its size. */
export interface ManifestDataFile {
  readonly fragment: number;
  /** Relative to the dataset root: `data/<file>`. */
  readonly path: string;
  /** Field ids this file serves; a field another file now serves is tombstoned (-2) and left out. */
  readonly fields: readonly number[];
  /** DataFile.file_size_bytes (0 when the writer did not record it). */
  readonly bytes: number;
}

/** Packed `repeated int32`: varints in one length-delimited field; negatives as 10-byte varints. */
function packedInt32(b: Uint8Array): number[] {
  const out: number[] = [];
  let pos = 0;
  while (pos < b.length) {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= b.length) throw new Error('truncated packed varint');
      const byte = b[pos++];
      result |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) break;
      shift += 7n;
      if (shift > 70n) throw new Error('varint too long');
    }
    out.push(Number(BigInt.asIntN(32, result)));
  }
  return out;
}

/**
 * The data files of this version, fragment by fragment (DataFragment.files, field 2; DataFile:
 * path 1, fields 2, file_size_bytes 6). What a write added is the files of its version that the
 * version before did not have (lib/catalog/data/write-effects.ts: `rask.bytes_written`), and
 * which file serves a column is how a test proves a column-only write left the others alone.
 */
export function readDataFiles(file: Uint8Array): ManifestDataFile[] {
  const out: ManifestDataFile[] = [];
  for (const fragment of bytesOf(manifestOf(file), 2).map(fields)) {
    const id = Number(numberOf(fragment, 1) ?? 0n);
    for (const dataFile of bytesOf(fragment, 2).map(fields)) {
      const [path] = bytesOf(dataFile, 1);
      if (!path) continue;
      const served = bytesOf(dataFile, 2).flatMap(packedInt32).filter((f) => f >= 0);
      out.push({ fragment: id, path: `data/${text(path)}`, fields: served, bytes: Number(numberOf(dataFile, 6) ?? 0n) });
    }
  }
  return out;
}

/** Top-level and nested schema fields of this version: name, id, parent id (-1 at the top). */
export function readSchemaFields(file: Uint8Array): { name: string; id: number; parent: number }[] {
  return bytesOf(manifestOf(file), 1)
    .map(fields)
    .map((f) => ({
      name: text(bytesOf(f, 2)[0] ?? new Uint8Array()),
      id: Number(BigInt.asIntN(32, numberOf(f, 3) ?? 0n)),
      parent: Number(BigInt.asIntN(32, numberOf(f, 4) ?? 0n)),
    }));
}

/** The names of the indices a version has (IndexMetadata.name, field 3, in the index section). */
export function readIndexNames(file: Uint8Array): string[] {
  const indexSection = numberOf(manifestOf(file), 6);
  if (indexSection === undefined) return [];
  return bytesOf(fields(messageAt(file, Number(indexSection))), 1)
    .map(fields)
    .flatMap((index) => bytesOf(index, 3).map(text));
}

/** The version's transaction file relative to the dataset root (Manifest.transaction_file, field 12). */
export function readTransactionFile(file: Uint8Array): string | undefined {
  const [name] = bytesOf(manifestOf(file), 12).map(text).filter((n) => n.length > 0);
  return name ? `_transactions/${name}` : undefined;
}

/**
 * Which operation a transaction file (a bare Transaction message) committed: the field number of
 * its `operation` (Lance's protos/transaction.proto: 100 Append, 101 Delete, 102 Overwrite,
 * 103 CreateIndex, which is also how an index is dropped, 104 Rewrite, 105 Merge, 108 Update,
 * 109 Project, 111 DataReplacement, …). Undefined when none is found.
 */
export function readTransactionOperation(bytes: Uint8Array): number | undefined {
  return fields(bytes).find((f) => f.no >= 100 && f.no < 200)?.no;
}
