/**
 * What an error body may not carry: storage paths and source locations (issue #8, defect 11).
 * Messages name objects by their id; a message that still holds a path (LanceDB's own, which
 * quote dataset files) has it replaced here, the last step before the body is written, and the
 * full message goes to the log with the request id instead.
 */

/** Rust source locations LanceDB appends (`/usr/local/cargo/registry/…/dataset.rs:123:45`). */
const SOURCE_LOCATION = /,?\s*(?:location:\s*)?[^\s,'"()]*\.rs:\d+(?::\d+)?/g;
/** Storage URIs: whatever follows the scheme is a bucket, a host path or a key layout. */
const STORAGE_URI = /\b(?:file|s3|s3a|gs|az|abfss?):\/\/[^\s'",)\]]*/gi;

export const REDACTED_PATH = '<storage>';

/**
 * `text` without source locations, storage URIs or any of `roots` (absolute local directories
 * such as the data directory; also matched without their leading `/`, as LanceDB's object store
 * writes paths).
 */
export function redactText(text: string, roots: readonly string[] = []): string {
  let out = text.replace(SOURCE_LOCATION, '').replace(STORAGE_URI, REDACTED_PATH);
  const variants = roots
    .filter((r) => r.replace(/^\/+/, '').length > 1)
    .flatMap((r) => [r, r.replace(/^\/+/, '')])
    .sort((a, b) => b.length - a.length);
  for (const root of variants) out = out.split(root).join(REDACTED_PATH);
  return out;
}
