import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stateful S3 endpoint over HTTP, for code that cannot be handed an in-process SDK mock:
 * LanceDB's native object store. Path-style requests only (`/<bucket>/<key>`), the calls Lance
 * makes for small tables (PUT with If-None-Match, GET with Range, HEAD, DELETE, ListObjectsV2),
 * and an access check standing in for IAM: each request must be signed with a key that was
 * granted, carry that key's session token, and touch only keys under the prefixes granted to
 * it, like the session policy of a vended credential. Signatures are not verified (no secret
 * is checked); the key id and token are.
 */
export interface S3HttpFake {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** bucket → key → bytes */
  readonly buckets: Map<string, Map<string, Buffer>>;
  /** Lets requests signed with `accessKeyId` (and carrying `sessionToken`) touch `bucket/prefix*`. */
  grant(accessKeyId: string, sessionToken: string | undefined, bucket: string, prefix: string): void;
  /** Every request, as `<METHOD> <bucket>/<key or ?list> <status>`. */
  readonly log: string[];
  close(): Promise<void>;
}

interface Grant {
  readonly token?: string;
  readonly scopes: { bucket: string; prefix: string }[];
}

const etagOf = (body: Buffer) => `"${createHash('md5').update(body).digest('hex')}"`;
const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function error(res: ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message></Error>`);
}

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  // aws-chunked uploads (STREAMING-*-PAYLOAD) frame the bytes; unframe them.
  if (!String(req.headers['x-amz-content-sha256'] ?? '').startsWith('STREAMING-')) return raw;
  const out: Buffer[] = [];
  let at = 0;
  while (at < raw.length) {
    const eol = raw.indexOf('\r\n', at);
    const size = parseInt(raw.subarray(at, eol).toString().split(';')[0], 16);
    if (!size) break;
    out.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

export async function startS3HttpFake(): Promise<S3HttpFake> {
  const buckets = new Map<string, Map<string, Buffer>>();
  const grants = new Map<string, Grant>();
  const log: string[] = [];

  const allowed = (req: IncomingMessage, bucket: string, key: string): boolean => {
    const auth = String(req.headers.authorization ?? '');
    const keyId = /Credential=([^/]+)\//.exec(auth)?.[1];
    const grant = keyId ? grants.get(keyId) : undefined;
    if (!grant) return false;
    if (grant.token !== undefined && req.headers['x-amz-security-token'] !== grant.token) return false;
    return grant.scopes.some((s) => s.bucket === bucket && key.startsWith(s.prefix));
  };

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const [, bucket = '', ...rest] = url.pathname.split('/');
      const key = decodeURIComponent(rest.join('/'));
      const isList = req.method === 'GET' && key === '' && url.searchParams.get('list-type') === '2';
      const scopeKey = isList ? (url.searchParams.get('prefix') ?? '') : key;
      const done = (status: number) => log.push(`${req.method} ${bucket}/${isList ? `?list ${scopeKey}` : key} ${status}`);
      const body = await bodyOf(req);
      if (!allowed(req, bucket, scopeKey)) {
        done(403);
        return error(res, 403, 'AccessDenied', 'Access Denied');
      }
      const objects = buckets.get(bucket) ?? new Map<string, Buffer>();
      buckets.set(bucket, objects);
      const found = objects.get(key);

      if (isList) {
        const prefix = url.searchParams.get('prefix') ?? '';
        const delimiter = url.searchParams.get('delimiter') ?? '';
        const after = url.searchParams.get('continuation-token') ?? url.searchParams.get('start-after') ?? '';
        const max = Number(url.searchParams.get('max-keys') ?? '1000');
        const keys = [...objects.keys()].filter((k) => k.startsWith(prefix) && k > after).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
        const contents: string[] = [];
        const prefixes = new Set<string>();
        let last = '';
        let truncated = false;
        for (const k of keys) {
          if (contents.length + prefixes.size >= max) {
            truncated = true;
            break;
          }
          const cut = delimiter ? k.indexOf(delimiter, prefix.length) : -1;
          if (cut >= 0) prefixes.add(k.slice(0, cut + delimiter.length));
          else contents.push(k);
          last = k;
        }
        const xml =
          `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>${bucket}</Name><Prefix>${xmlEscape(prefix)}</Prefix>` +
          `<KeyCount>${contents.length + prefixes.size}</KeyCount><MaxKeys>${max}</MaxKeys><IsTruncated>${truncated}</IsTruncated>` +
          (truncated ? `<NextContinuationToken>${xmlEscape(last)}</NextContinuationToken>` : '') +
          contents
            .map((k) => `<Contents><Key>${xmlEscape(k)}</Key><LastModified>2026-03-01T12:00:00.000Z</LastModified><ETag>${xmlEscape(etagOf(objects.get(k)!))}</ETag><Size>${objects.get(k)!.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`)
            .join('') +
          [...prefixes].map((p) => `<CommonPrefixes><Prefix>${xmlEscape(p)}</Prefix></CommonPrefixes>`).join('') +
          `</ListBucketResult>`;
        done(200);
        res.writeHead(200, { 'content-type': 'application/xml' });
        return res.end(xml);
      }
      switch (req.method) {
        case 'PUT': {
          if (req.headers['if-none-match'] === '*' && found) {
            done(412);
            return error(res, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
          }
          const ifMatch = req.headers['if-match'];
          if (ifMatch && (!found || etagOf(found) !== ifMatch)) {
            done(found ? 412 : 404);
            return found ? error(res, 412, 'PreconditionFailed', 'etag mismatch') : error(res, 404, 'NoSuchKey', 'no such key');
          }
          objects.set(key, body);
          done(200);
          res.writeHead(200, { etag: etagOf(body) });
          return res.end();
        }
        case 'GET':
        case 'HEAD': {
          if (!found) {
            done(404);
            if (req.method === 'HEAD') {
              res.writeHead(404);
              return res.end();
            }
            return error(res, 404, 'NoSuchKey', 'The specified key does not exist.');
          }
          const headers = { etag: etagOf(found), 'last-modified': 'Sun, 01 Mar 2026 12:00:00 GMT', 'content-type': 'application/octet-stream' };
          const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ''));
          if (range && req.method === 'GET') {
            const start = Number(range[1]);
            const end = range[2] ? Math.min(Number(range[2]), found.length - 1) : found.length - 1;
            const part = found.subarray(start, end + 1);
            done(206);
            res.writeHead(206, { ...headers, 'content-length': part.length, 'content-range': `bytes ${start}-${end}/${found.length}` });
            return res.end(part);
          }
          done(200);
          res.writeHead(200, { ...headers, 'content-length': found.length });
          return res.end(req.method === 'HEAD' ? undefined : found);
        }
        case 'DELETE':
          objects.delete(key);
          done(204);
          res.writeHead(204);
          return res.end();
        default:
          done(501);
          return error(res, 501, 'NotImplemented', `${req.method} is not implemented by the fake`);
      }
    })().catch((err: unknown) => error(res, 500, 'InternalError', String(err)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    buckets,
    log,
    grant(accessKeyId, sessionToken, bucket, prefix) {
      const grant = grants.get(accessKeyId) ?? { token: sessionToken, scopes: [] };
      grant.scopes.push({ bucket, prefix });
      grants.set(accessKeyId, grant);
    },
    close: () =>
      new Promise<void>((resolve) => {
        // LanceDB's client keeps connections alive: close them, or close() waits for their timeout.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
