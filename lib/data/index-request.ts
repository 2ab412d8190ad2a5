/**
 * A CreateTableIndex / CreateTableScalarIndex request, decoded (issue 25 item 2, "one shape per
 * operation"). Three doors hand the engine an index request: the handler (a request body), the
 * index builder (a maintenance policy's desired index) and the `create_index` job runner (the
 * fields a queued build was recorded with). All three decode it here, with the same answers, so
 * the engine only ever sees an `IndexRequest`.
 *
 * Everything that can be checked without the table is checked here, in the order the engine has
 * always checked it; what needs the table (the column exists, "hamming" on a binary vector,
 * `target_partition_size` against the row count) stays with the engine
 * (lib/adapters/lance/indexes.ts). Some invalid parameters make the native module panic rather
 * than fail (an unknown FTS language aborts the process), hence the closed lists.
 */
import { type CatalogError, InvalidInputError } from '../errors.js';
import { optRefName } from './names.js';
import { optBool, optEnum, optInt, optString, reqString } from './validate.js';

const I32 = { min: 1, max: 2 ** 31 - 1 };

/** Spec index type → what it needs. Aliases map the names LanceDB itself reports. */
export const INDEX_KINDS = {
  BTREE: 'scalar',
  BITMAP: 'scalar',
  LABEL_LIST: 'scalar',
  FTS: 'fts',
  FM: 'scalar',
  IVF_FLAT: 'ivf',
  IVF_PQ: 'ivf',
  IVF_RQ: 'ivf',
  IVF_HNSW_SQ: 'hnsw',
  IVF_HNSW_PQ: 'hnsw',
} as const;
export type IndexKind = keyof typeof INDEX_KINDS;

const ALIASES: Record<string, IndexKind> = {
  INVERTED: 'FTS',
  LABELLIST: 'LABEL_LIST',
  HNSW_SQ: 'IVF_HNSW_SQ',
  HNSW_PQ: 'IVF_HNSW_PQ',
  IVFHNSWSQ: 'IVF_HNSW_SQ',
  IVFHNSWPQ: 'IVF_HNSW_PQ',
  IVFPQ: 'IVF_PQ',
  IVFFLAT: 'IVF_FLAT',
  IVFRQ: 'IVF_RQ',
};

/** Which optional request fields each index type accepts. */
const PARAMS: Record<IndexKind, readonly string[]> = {
  BTREE: [],
  BITMAP: [],
  LABEL_LIST: [],
  FM: [],
  FTS: ['with_position', 'base_tokenizer', 'language', 'max_token_length', 'lower_case', 'stem', 'remove_stop_words', 'ascii_folding'],
  IVF_FLAT: ['distance_type', 'num_partitions', 'sample_rate', 'max_iterations', 'target_partition_size'],
  IVF_PQ: ['distance_type', 'num_partitions', 'num_sub_vectors', 'num_bits', 'sample_rate', 'max_iterations', 'target_partition_size'],
  IVF_RQ: ['distance_type', 'num_partitions', 'num_bits', 'sample_rate', 'max_iterations', 'target_partition_size'],
  IVF_HNSW_SQ: ['distance_type', 'num_partitions', 'sample_rate', 'max_iterations', 'target_partition_size', 'm', 'ef_construction'],
  IVF_HNSW_PQ: ['distance_type', 'num_partitions', 'num_sub_vectors', 'sample_rate', 'max_iterations', 'target_partition_size', 'm', 'ef_construction'],
};
const ALL_PARAMS = [...new Set(Object.values(PARAMS).flat())];

// The tokenizer's language list in Lance 8; anything else panics and kills the process.
const FTS_LANGUAGES = [
  'Arabic', 'Danish', 'Dutch', 'English', 'Finnish', 'French', 'German', 'Greek', 'Hungarian',
  'Italian', 'Norwegian', 'Portuguese', 'Romanian', 'Russian', 'Spanish', 'Swedish', 'Tamil', 'Turkish',
] as const;
const BASE_TOKENIZERS = ['simple', 'whitespace', 'raw', 'ngram'] as const;
const DISTANCE_TYPES = ['l2', 'cosine', 'dot', 'hamming'] as const;

export interface FtsParams {
  readonly withPosition?: boolean;
  readonly baseTokenizer?: (typeof BASE_TOKENIZERS)[number];
  readonly language?: (typeof FTS_LANGUAGES)[number];
  readonly maxTokenLength?: number;
  readonly lowercase?: boolean;
  readonly stem?: boolean;
  readonly removeStopWords?: boolean;
  readonly asciiFolding?: boolean;
}

export interface VectorParams {
  readonly distanceType?: (typeof DISTANCE_TYPES)[number];
  readonly numPartitions?: number;
  readonly targetPartitionSize?: number;
  readonly sampleRate?: number;
  readonly maxIterations?: number;
  readonly numSubVectors?: number;
  readonly numBits?: number;
  readonly m?: number;
  readonly efConstruction?: number;
}

export interface IndexRequest {
  readonly column: string;
  readonly indexType: IndexKind;
  /** Absent: LanceDB's own name for it (`<column>_idx`). */
  readonly name?: string;
  /** Absent: main. */
  readonly branch?: string;
  /** Set for FTS indices only. */
  readonly fts?: FtsParams;
  /** Set for IVF_* and HNSW indices only. */
  readonly vector?: VectorParams;
}

/** The request's index fields, decoded (the fields of a CreateTableIndexRequest, snake_case). */
export function readIndexRequest(fields: Readonly<Record<string, unknown>>): IndexRequest {
  const b = fields;
  const branch = optRefName(b.branch, 'branch');
  const column = reqString(b.column, 'column');
  const indexType = readIndexType(b.index_type);
  const name = optString(b.name, 'name') || undefined;
  const extra = ALL_PARAMS.filter((p) => b[p] != null && !PARAMS[indexType].includes(p));
  if (extra.length > 0) {
    throw new InvalidInputError(`index type ${indexType} does not take ${extra.map((p) => `"${p}"`).join(', ')}`);
  }
  const base = { column, indexType, ...defined({ name, branch: branch === 'main' ? undefined : branch }) };
  const kind = INDEX_KINDS[indexType];
  if (kind === 'scalar') return base;
  if (kind === 'fts') {
    return {
      ...base,
      fts: defined({
        withPosition: optBool(b.with_position, 'with_position'),
        baseTokenizer: optEnum(b.base_tokenizer, 'base_tokenizer', BASE_TOKENIZERS),
        language: optEnum(b.language, 'language', FTS_LANGUAGES),
        maxTokenLength: optInt(b.max_token_length, 'max_token_length', { min: 1, max: I32.max }),
        lowercase: optBool(b.lower_case, 'lower_case'),
        stem: optBool(b.stem, 'stem'),
        removeStopWords: optBool(b.remove_stop_words, 'remove_stop_words'),
        asciiFolding: optBool(b.ascii_folding, 'ascii_folding'),
      }),
    };
  }
  const distanceType = optEnum(b.distance_type, 'distance_type', DISTANCE_TYPES);
  // "hamming" only makes sense for packed binary vectors (the engine checks the column); on
  // anything but IVF_FLAT the index builder panics, so that much is refused here.
  if (distanceType === 'hamming' && indexType !== 'IVF_FLAT') throw hammingRefused();
  const numPartitions = optInt(b.num_partitions, 'num_partitions', I32);
  const targetPartitionSize = optInt(b.target_partition_size, 'target_partition_size', I32);
  if (targetPartitionSize !== undefined && numPartitions !== undefined) {
    throw new InvalidInputError('give num_partitions or target_partition_size, not both');
  }
  return {
    ...base,
    vector: defined({
      distanceType,
      numPartitions,
      targetPartitionSize,
      sampleRate: optInt(b.sample_rate, 'sample_rate', I32),
      maxIterations: optInt(b.max_iterations, 'max_iterations', I32),
      numSubVectors: optInt(b.num_sub_vectors, 'num_sub_vectors', I32),
      numBits: optInt(b.num_bits, 'num_bits', I32),
      m: optInt(b.m, 'm', I32),
      efConstruction: optInt(b.ef_construction, 'ef_construction', I32),
    }),
  };
}

/** The refusal of "hamming" where it cannot be built (here, and by the engine for the column). */
export function hammingRefused(): CatalogError {
  return new InvalidInputError('distance_type "hamming" needs an IVF_FLAT index on a fixed_size_list<uint8> column');
}

/** The request as the spec's fields again: what a queued build is recorded with (docs/jobs.md). */
export function indexRequestFields(request: IndexRequest): Record<string, string | number | boolean> {
  const { fts = {}, vector = {} } = request;
  return defined({
    column: request.column,
    index_type: request.indexType,
    name: request.name,
    branch: request.branch,
    with_position: fts.withPosition,
    base_tokenizer: fts.baseTokenizer,
    language: fts.language,
    max_token_length: fts.maxTokenLength,
    lower_case: fts.lowercase,
    stem: fts.stem,
    remove_stop_words: fts.removeStopWords,
    ascii_folding: fts.asciiFolding,
    distance_type: vector.distanceType,
    num_partitions: vector.numPartitions,
    target_partition_size: vector.targetPartitionSize,
    sample_rate: vector.sampleRate,
    max_iterations: vector.maxIterations,
    num_sub_vectors: vector.numSubVectors,
    num_bits: vector.numBits,
    m: vector.m,
    ef_construction: vector.efConstruction,
  });
}

/** IVF_* and HNSW variants train over the whole column; scalar and FTS builds are one pass. */
export function isVectorIndex(type: IndexKind): boolean {
  const kind = INDEX_KINDS[type];
  return kind === 'ivf' || kind === 'hnsw';
}

function readIndexType(value: unknown): IndexKind {
  const raw = reqString(value, 'index_type').toUpperCase().replace(/-/g, '_');
  const type = raw in INDEX_KINDS ? (raw as IndexKind) : (ALIASES[raw.replace(/_/g, '')] ?? ALIASES[raw]);
  if (!type) {
    throw new InvalidInputError(`unsupported index_type "${String(value)}"; supported: ${Object.keys(INDEX_KINDS).join(', ')}`);
  }
  return type;
}

function defined<T extends object>(obj: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as { [K in keyof T]: Exclude<T[K], undefined> };
}
