import { InvalidInputError } from '../errors.js';

/**
 * Request limits the router applies while decoding, so every door gets them and none has to
 * remember (docs/governance.md, "Names and limits"). Configured by RASK_MAX_JSON_DEPTH,
 * RASK_MAX_PROPERTIES_BYTES and RASK_MAX_PROPERTIES (lib/config.ts).
 */
export interface RequestLimits {
  /** Deepest nesting of `[` and `{` a JSON body may have. */
  readonly maxJsonDepth: number;
  /** Most UTF-8 bytes of keys and values together in one `properties` map. */
  readonly maxPropertiesBytes: number;
  /** Most entries in one `properties` map. */
  readonly maxProperties: number;
}

export const DEFAULT_REQUEST_LIMITS: RequestLimits = {
  maxJsonDepth: 64,
  maxPropertiesBytes: 64 * 1024,
  maxProperties: 1024,
};

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Refuses a body nested deeper than `max` before JSON.parse sees it: one linear pass over the
 * bytes counting `[`/`{` outside strings, stopping at the first level too deep. JSON.parse of a
 * 4 MB body nested 2,000,000 deep took seconds to refuse (and a deep object parsed fine, only to
 * be walked again later); this pass stops after `max` bytes of such a body. It does not validate
 * JSON — JSON.parse still does — it only bounds the depth.
 */
export function checkJsonDepth(bytes: Uint8Array, max: number, what = 'request body'): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (++depth > max) throw new InvalidInputError(`${what} is nested deeper than ${max} levels of [ and { (RASK_MAX_JSON_DEPTH)`);
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
      depth--;
    }
  }
}

/**
 * A `properties` map is stored in the object's registry record and served back by every describe:
 * bounded in entries and in bytes (keys and values, UTF-8). Only objects are measured here; their
 * shape (string values) is checked by the door (lib/catalog/params.ts stringMap).
 */
export function checkProperties(value: unknown, where: string, limits: RequestLimits): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  let count = 0;
  let bytes = 0;
  for (const [k, v] of Object.entries(value)) {
    count++;
    bytes += Buffer.byteLength(k, 'utf8') + (typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8'));
  }
  if (count > limits.maxProperties) {
    throw new InvalidInputError(`${where} has ${count} entries; at most ${limits.maxProperties} properties are allowed (RASK_MAX_PROPERTIES)`);
  }
  if (bytes > limits.maxPropertiesBytes) {
    throw new InvalidInputError(
      `${where} holds ${bytes} bytes of keys and values; at most ${limits.maxPropertiesBytes} bytes of properties are allowed (RASK_MAX_PROPERTIES_BYTES)`,
    );
  }
}
