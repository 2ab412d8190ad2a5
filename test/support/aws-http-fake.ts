/**
 * AWS over HTTP on loopback, for code we cannot reach in-process: the bundled Lambda artifacts
 * from `cdk.out` (their own copy of the SDK) and LanceDB's Rust object store. One server answers
 * S3 (path-style REST, with S3's conditional writes: If-None-Match / If-Match → 412, also on
 * copies and their source; byte-order listing, ranges, multipart, batch delete), STS AssumeRole,
 * Secrets Manager GetSecretValue, Lambda Invoke, EventBridge PutEvents, ECS RunTask /
 * DescribeTasks / StopTask (the container run by the caller's `ecs.run`) and DynamoDB (forwarded
 * to dynalite), and records every call as the IAM request it is (principal, action, resource,
 * condition keys) so test/deploy/iam.ts can check it against the synthesized policies.
 *
 * Callers are told apart by access key id: each artifact runs with its own key
 * (`principals`), and credentials issued by AssumeRole map to the assumed role and the session
 * policy passed with them. With `authorize`, S3 also decides each request at the time it is made,
 * as IAM would (403 AccessDenied, nothing read or written): the data-plane test enforces the
 * session policy of vended credentials there, while the deploy suite checks its recorded calls
 * afterwards and leaves it unset.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedCall {
  /** The principal's name as registered (a function), or `session:<access key id>` for credentials AssumeRole issued. */
  readonly principal: string;
  readonly action: string;
  readonly resource: string;
  /** Condition keys IAM would evaluate for this request (e.g. `s3:prefix` on ListBucket). */
  readonly context: Readonly<Record<string, string>>;
  /** The HTTP status the fake answered. */
  readonly status: number;
}

export interface AssumedSession {
  readonly roleArn: string;
  readonly sessionName: string;
  /** The inline session policy sent with AssumeRole, parsed; absent when none was sent. */
  readonly policy?: unknown;
  readonly assumedBy: string;
  /** The session token issued with the credentials, which every request with them must carry. */
  readonly sessionToken: string;
}

/** One S3 request as IAM would see it, with the credentials that signed it. */
export interface S3Authorization {
  readonly accessKeyId: string;
  /** `x-amz-security-token` as sent. */
  readonly sessionToken?: string;
  /** The AssumeRole session the key was issued by, if any. */
  readonly session?: AssumedSession;
  readonly action: string;
  readonly resource: string;
  readonly context: Readonly<Record<string, string>>;
}

export interface AwsHttpFakeOptions {
  readonly region?: string;
  readonly account?: string;
  /** Secrets Manager contents by secret id (name or ARN). */
  readonly secrets?: Readonly<Record<string, string>>;
  /** Answers Lambda Invoke (function name → payload in, payload out). */
  readonly invoke?: (functionName: string, payload: unknown) => Promise<unknown>;
  /** A DynamoDB endpoint (dynalite) that DynamoDB requests are forwarded to, and recorded. */
  readonly dynamodbEndpoint?: string;
  /** Decides each S3 request before it runs (false → 403 AccessDenied); unset, all are allowed. */
  readonly authorize?: (request: S3Authorization) => boolean;
  /** ECS RunTask / DescribeTasks / StopTask: which task definitions exist and how a task's container runs. */
  readonly ecs?: EcsFakeOptions;
}

/** What ECS knows of a registered task definition. */
export interface EcsTaskDefinition {
  readonly arn: string;
  /** The roles a RunTask of it passes (task role, execution role): each is an `iam:PassRole` of the caller. */
  readonly passRoles: readonly string[];
  /** The essential container's name. */
  readonly container: string;
}

/** One task's container, as the world runs it. */
export interface EcsContainerRun {
  /** Resolves with the container's exit code once it has exited. */
  readonly exited: Promise<number | null>;
  /** StopTask: SIGTERM to the container. */
  stop(): void;
}

export interface EcsLaunch {
  readonly taskArn: string;
  readonly clusterArn: string;
  readonly taskDefinition: EcsTaskDefinition;
  /** The container override's environment (RunTask's `overrides.containerOverrides`). */
  readonly environment: Readonly<Record<string, string>>;
}

export interface EcsFakeOptions {
  taskDefinition(arnOrFamily: string): EcsTaskDefinition | undefined;
  /** Starts the task's container; undefined leaves the task PROVISIONING (a slow start) until StopTask. */
  run(launch: EcsLaunch): EcsContainerRun | undefined;
}

/** A task as the fake's ECS holds it (DescribeTasks answers these fields). */
export interface EcsTask {
  readonly taskArn: string;
  readonly clusterArn: string;
  readonly taskDefinitionArn: string;
  readonly clientToken?: string;
  readonly startedBy?: string;
  readonly environment: Readonly<Record<string, string>>;
  lastStatus: 'PROVISIONING' | 'RUNNING' | 'STOPPED';
  desiredStatus: 'RUNNING' | 'STOPPED';
  stopCode?: string;
  stoppedReason?: string;
  exitCode?: number;
  /** Resolves once the task is STOPPED. */
  readonly stopped: Promise<void>;
}

export interface AwsHttpFake {
  readonly endpoint: string;
  readonly calls: RecordedCall[];
  /** Sessions issued by AssumeRole, by access key id. */
  readonly sessions: Map<string, AssumedSession>;
  /** Entries put on EventBridge buses, in order. */
  readonly busEvents: { bus: string; source: string; detailType: string; detail: unknown }[];
  /** ECS tasks started by RunTask, by task ARN. */
  readonly ecsTasks: Map<string, EcsTask>;
  /**
   * S3 Event Notifications to EventBridge, in the order of the writes: one "Object Created" event
   * (s3ObjectCreatedEvent) per object written to a bucket `notify` was called for.
   */
  readonly s3Events: unknown[];
  /** Turns on versioning of a bucket: every write gets a version id, GET ?versionId= reads it (`s3:GetObjectVersion`). */
  versioning(bucket: string): void;
  /** Turns on S3 Event Notifications to EventBridge for a bucket (NotificationConfiguration.EventBridgeConfiguration). */
  notify(bucket: string): void;
  /** Registers a caller: requests signed with `accessKeyId` are recorded under `name`. */
  principal(name: string): { accessKeyId: string; secretAccessKey: string };
  /** Keys of one bucket in listing order. */
  keys(bucket: string): string[];
  close(): Promise<void>;
}

interface StoredObject {
  readonly body: Buffer;
  readonly etag: string;
  readonly lastModified: Date;
  /** In a versioned bucket. */
  readonly versionId?: string;
}

/** What S3 sends EventBridge for a write (detail-type "Object Created"), as documented for S3's EventBridge events. */
export function s3ObjectCreatedEvent(o: {
  bucket: string;
  key: string;
  size: number;
  etag: string;
  versionId?: string;
  sequencer: string;
  time: Date;
  reason?: 'PutObject' | 'CopyObject' | 'CompleteMultipartUpload';
  region?: string;
  account?: string;
}): unknown {
  const account = o.account ?? '123456789012';
  return {
    version: '0',
    id: randomBytes(16).toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})/, '$1-$2-$3-$4-'),
    'detail-type': 'Object Created',
    source: 'aws.s3',
    account,
    time: o.time.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region: o.region ?? 'us-east-1',
    resources: [`arn:aws:s3:::${o.bucket}`],
    detail: {
      version: '0',
      bucket: { name: o.bucket },
      object: { key: o.key, size: o.size, etag: o.etag.replace(/"/g, ''), ...(o.versionId ? { 'version-id': o.versionId } : {}), sequencer: o.sequencer },
      'request-id': randomBytes(8).toString('hex').toUpperCase(),
      requester: account,
      'source-ip-address': '127.0.0.1',
      reason: o.reason ?? 'PutObject',
    },
  };
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function startAwsHttpFake(options: AwsHttpFakeOptions = {}): Promise<AwsHttpFake> {
  const region = options.region ?? 'us-east-1';
  const account = options.account ?? '123456789012';
  const buckets = new Map<string, Map<string, StoredObject>>();
  const uploads = new Map<string, { bucket: string; key: string; parts: Map<number, Buffer> }>();
  const principals = new Map<string, string>();
  const sessions = new Map<string, AssumedSession>();
  const calls: RecordedCall[] = [];
  const busEvents: AwsHttpFake['busEvents'] = [];
  const ecsTasks = new Map<string, EcsTask>();
  const runs = new Map<string, { run: EcsContainerRun | undefined; markStopped: () => void }>();
  const s3Events: unknown[] = [];
  const versionedBuckets = new Set<string>();
  const notifiedBuckets = new Set<string>();
  /** Every version of every key of a versioned bucket, by version id. */
  const versions = new Map<string, Map<string, StoredObject & { key: string }>>();
  let sequencer = 0x50000000n;

  const objects = (bucket: string) => {
    let map = buckets.get(bucket);
    if (!map) buckets.set(bucket, (map = new Map()));
    return map;
  };
  const put = (bucket: string, key: string, body: Buffer, reason: 'PutObject' | 'CopyObject' | 'CompleteMultipartUpload'): StoredObject => {
    const versionId = versionedBuckets.has(bucket) ? randomBytes(16).toString('base64url') : undefined;
    const object: StoredObject = { body, etag: `"${createHash('md5').update(body).digest('hex')}"`, lastModified: new Date(), ...(versionId ? { versionId } : {}) };
    objects(bucket).set(key, object);
    if (versionId) {
      let byId = versions.get(bucket);
      if (!byId) versions.set(bucket, (byId = new Map()));
      byId.set(versionId, { ...object, key });
    }
    // S3's sequencer grows with the writes of a key (here: with every write of the fake).
    sequencer++;
    if (notifiedBuckets.has(bucket)) {
      s3Events.push(s3ObjectCreatedEvent({ bucket, key, size: body.length, etag: object.etag, versionId, sequencer: sequencer.toString(16).toUpperCase().padStart(18, '0'), time: object.lastModified, reason, region, account }));
    }
    return object;
  };
  const versionHeader = (o: StoredObject): Record<string, string> => (o.versionId ? { 'x-amz-version-id': o.versionId } : {});

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error: unknown) => {
      const e = error instanceof HttpError ? error : new HttpError(500, 'InternalError', String(error));
      if (!res.headersSent) {
        res.writeHead(e.status, { 'content-type': 'application/xml' });
        res.end(req.method === 'HEAD' ? undefined : `<?xml version="1.0"?><Error><Code>${e.code}</Code><Message>${xml(e.message)}</Message></Error>`);
      } else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const auth = req.headers.authorization ?? '';
    const scope = /Credential=([^/]+)\/[^/]+\/[^/]+\/([^/]+)\//.exec(auth);
    const accessKey = scope?.[1] ?? '';
    const service = scope?.[2] ?? '';
    const session = sessions.get(accessKey);
    const caller = { accessKeyId: accessKey, sessionToken: header(req, 'x-amz-security-token'), session };
    const principal = principals.get(accessKey) ?? (session ? `session:${accessKey}` : `unknown:${accessKey}`);
    const record = (action: string, resource: string, status: number, context: Record<string, string> = {}) =>
      calls.push({ principal, action, resource, context, status });
    if (service === 'sts') return sts(req, res, body, principal, record);
    if (service === 'secretsmanager') return secretsManager(req, res, body, record);
    if (service === 'lambda') return lambdaInvoke(req, res, body, record);
    if (service === 's3') return s3(req, res, body, record, caller);
    if (service === 'dynamodb') return dynamodb(req, res, body, record);
    if (service === 'events') return eventBridge(req, res, body, record);
    if (service === 'ecs') return ecs(req, res, body, record);
    throw new HttpError(400, 'UnknownService', `the fake does not serve "${service}" (authorization: ${auth.slice(0, 80)})`);
  }

  type Record_ = (action: string, resource: string, status: number, context?: Record<string, string>) => void;

  type Caller = Pick<S3Authorization, 'accessKeyId' | 'sessionToken' | 'session'>;

  function s3(req: IncomingMessage, res: ServerResponse, body: Buffer, record: Record_, caller: Caller): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const [, bucket = '', ...rest] = url.pathname.split('/');
    const key = rest.map(decodeURIComponent).join('/');
    const q = url.searchParams;
    const method = req.method ?? 'GET';
    const objectArn = `arn:aws:s3:::${bucket}/${key}`;
    const reply = (status: number, headers: Record<string, string | number>, payload?: Buffer | string) => {
      res.writeHead(status, headers);
      res.end(payload);
    };
    const fail = (action: string, resource: string, error: HttpError, context?: Record<string, string>): never => {
      record(action, resource, error.status, context);
      throw error;
    };
    const allowed = (action: string, resource: string, context: Record<string, string> = {}) =>
      options.authorize?.({ ...caller, action, resource, context }) ?? true;
    const permit = (action: string, resource: string, context?: Record<string, string>) => {
      if (!allowed(action, resource, context)) fail(action, resource, new HttpError(403, 'AccessDenied', 'Access Denied'), context);
    };
    if (!bucket) throw new HttpError(400, 'InvalidRequest', 'path-style requests only');

    if (key === '') {
      if (method === 'GET' && q.get('list-type') === '2') {
        const prefix = q.get('prefix') ?? '';
        const delimiter = q.get('delimiter') ?? '';
        const maxKeys = Math.min(Number(q.get('max-keys') ?? 1000), 1000);
        const context: Record<string, string> = { 's3:prefix': prefix, 's3:max-keys': String(maxKeys) };
        if (delimiter) context['s3:delimiter'] = delimiter;
        permit('s3:ListBucket', `arn:aws:s3:::${bucket}`, context);
        record('s3:ListBucket', `arn:aws:s3:::${bucket}`, 200, context);
        reply(200, { 'content-type': 'application/xml' }, listXml(bucket, objects(bucket), q, prefix, delimiter, maxKeys));
        return;
      }
      if (method === 'GET' && q.has('location')) {
        permit('s3:GetBucketLocation', `arn:aws:s3:::${bucket}`);
        record('s3:GetBucketLocation', `arn:aws:s3:::${bucket}`, 200);
        reply(200, { 'content-type': 'application/xml' }, `<?xml version="1.0"?><LocationConstraint>${region}</LocationConstraint>`);
        return;
      }
      if (method === 'HEAD') {
        permit('s3:ListBucket', `arn:aws:s3:::${bucket}`);
        record('s3:ListBucket', `arn:aws:s3:::${bucket}`, 200);
        reply(200, { 'x-amz-bucket-region': region });
        return;
      }
      if (method === 'POST' && q.has('delete')) {
        const keysToDelete = [...body.toString().matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => unxml(m[1]));
        // S3 decides each key of a batch on its own and reports the refused ones in the result.
        const results = keysToDelete.map((k) => {
          const arn = `arn:aws:s3:::${bucket}/${k}`;
          if (!allowed('s3:DeleteObject', arn)) {
            record('s3:DeleteObject', arn, 403);
            return `<Error><Key>${xml(k)}</Key><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`;
          }
          record('s3:DeleteObject', arn, 200);
          objects(bucket).delete(k);
          return `<Deleted><Key>${xml(k)}</Key></Deleted>`;
        });
        reply(200, { 'content-type': 'application/xml' }, `<?xml version="1.0"?><DeleteResult>${results.join('')}</DeleteResult>`);
        return;
      }
      throw new HttpError(501, 'NotImplemented', `bucket operation ${method} ${url.search}`);
    }

    const uploadId = q.get('uploadId');
    const reading = method === 'GET' || method === 'HEAD';
    const versionId = q.get('versionId');
    if (versionId !== null && !reading) throw new HttpError(501, 'NotImplemented', `${method} of an object version`);
    // Reading a version is its own IAM action.
    const readAction = versionId !== null ? 's3:GetObjectVersion' : 's3:GetObject';
    permit(reading ? readAction : method !== 'DELETE' ? 's3:PutObject' : uploadId !== null ? 's3:AbortMultipartUpload' : 's3:DeleteObject', objectArn);
    const stored = versions.get(bucket)?.get(versionId ?? '');
    const current = versionId !== null ? (stored?.key === key ? stored : undefined) : objects(bucket).get(key);
    const ifNoneMatch = header(req, 'if-none-match');
    const ifMatch = header(req, 'if-match');
    const checkWrite = (action: string) => {
      if (ifNoneMatch !== undefined && current) fail(action, objectArn, new HttpError(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold'));
      if (ifMatch !== undefined) {
        if (!current) fail(action, objectArn, new HttpError(404, 'NoSuchKey', 'The specified key does not exist.'));
        if (ifMatch !== '*' && ifMatch !== current!.etag) fail(action, objectArn, new HttpError(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold'));
      }
    };

    if (method === 'POST' && q.has('uploads')) {
      const uploadId = randomBytes(8).toString('hex');
      uploads.set(uploadId, { bucket, key, parts: new Map() });
      record('s3:PutObject', objectArn, 200);
      reply(200, { 'content-type': 'application/xml' }, `<?xml version="1.0"?><InitiateMultipartUploadResult><Bucket>${xml(bucket)}</Bucket><Key>${xml(key)}</Key><UploadId>${uploadId}</UploadId></InitiateMultipartUploadResult>`);
      return;
    }
    if (uploadId !== null) {
      const upload = uploads.get(uploadId);
      if (!upload) return fail('s3:PutObject', objectArn, new HttpError(404, 'NoSuchUpload', 'no such upload'));
      if (method === 'PUT') {
        const data = decodeChunked(req, body);
        upload.parts.set(Number(q.get('partNumber')), data);
        record('s3:PutObject', objectArn, 200);
        reply(200, { etag: `"${createHash('md5').update(data).digest('hex')}"` });
        return;
      }
      if (method === 'DELETE') {
        uploads.delete(uploadId);
        record('s3:AbortMultipartUpload', objectArn, 204);
        reply(204, {});
        return;
      }
      if (method === 'POST') {
        checkWrite('s3:PutObject');
        const order = [...body.toString().matchAll(/<PartNumber>(\d+)<\/PartNumber>/g)].map((m) => Number(m[1]));
        const object = put(bucket, key, Buffer.concat(order.map((n) => upload.parts.get(n) ?? Buffer.alloc(0))), 'CompleteMultipartUpload');
        uploads.delete(uploadId);
        record('s3:PutObject', objectArn, 200);
        reply(200, { 'content-type': 'application/xml', ...versionHeader(object) }, `<?xml version="1.0"?><CompleteMultipartUploadResult><Bucket>${xml(bucket)}</Bucket><Key>${xml(key)}</Key><ETag>${xml(object.etag)}</ETag></CompleteMultipartUploadResult>`);
        return;
      }
    }

    if (method === 'PUT') {
      const copySource = header(req, 'x-amz-copy-source');
      if (copySource !== undefined) {
        const [, srcBucket = '', ...srcRest] = decodeURIComponent(copySource.startsWith('/') ? copySource : `/${copySource}`).split('/');
        const srcKey = srcRest.join('/');
        permit('s3:GetObject', `arn:aws:s3:::${srcBucket}/${srcKey}`);
        const source = objects(srcBucket).get(srcKey);
        if (!source) return fail('s3:GetObject', `arn:aws:s3:::${srcBucket}/${srcKey}`, new HttpError(404, 'NoSuchKey', 'The specified key does not exist.'));
        const sourceIfMatch = header(req, 'x-amz-copy-source-if-match');
        if (sourceIfMatch !== undefined && sourceIfMatch !== source.etag) fail('s3:GetObject', `arn:aws:s3:::${srcBucket}/${srcKey}`, new HttpError(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold'));
        record('s3:GetObject', `arn:aws:s3:::${srcBucket}/${srcKey}`, 200);
        checkWrite('s3:PutObject');
        const object = put(bucket, key, source.body, 'CopyObject');
        record('s3:PutObject', objectArn, 200);
        reply(200, { 'content-type': 'application/xml', ...versionHeader(object) }, `<?xml version="1.0"?><CopyObjectResult><ETag>${xml(object.etag)}</ETag><LastModified>${object.lastModified.toISOString()}</LastModified></CopyObjectResult>`);
        return;
      }
      checkWrite('s3:PutObject');
      const object = put(bucket, key, decodeChunked(req, body), 'PutObject');
      record('s3:PutObject', objectArn, 200);
      reply(200, { etag: object.etag, ...versionHeader(object) });
      return;
    }
    if (method === 'DELETE') {
      checkWrite('s3:DeleteObject');
      objects(bucket).delete(key);
      record('s3:DeleteObject', objectArn, 204);
      reply(204, {});
      return;
    }
    if (reading) {
      if (!current) {
        return fail(readAction, objectArn, versionId !== null ? new HttpError(404, 'NoSuchVersion', 'The specified version does not exist.') : new HttpError(404, 'NoSuchKey', 'The specified key does not exist.'));
      }
      if (ifMatch !== undefined && ifMatch !== current.etag) return fail(readAction, objectArn, new HttpError(412, 'PreconditionFailed', 'If-Match failed'));
      if (ifNoneMatch !== undefined && ifNoneMatch === current.etag) {
        record(readAction, objectArn, 304);
        reply(304, { etag: current.etag });
        return;
      }
      const headers: Record<string, string | number> = {
        etag: current.etag,
        'last-modified': current.lastModified.toUTCString(),
        'accept-ranges': 'bytes',
        'content-type': 'application/octet-stream',
        ...versionHeader(current),
      };
      const range = /^bytes=(\d*)-(\d*)$/.exec(header(req, 'range') ?? '');
      let payload = current.body;
      let status = 200;
      if (range) {
        const size = current.body.length;
        const start = range[1] === '' ? Math.max(0, size - Number(range[2])) : Number(range[1]);
        const end = range[1] === '' || range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
        if (start >= size && size > 0) return fail(readAction, objectArn, new HttpError(416, 'InvalidRange', 'The requested range is not satisfiable'));
        payload = current.body.subarray(start, end + 1);
        headers['content-range'] = `bytes ${start}-${end}/${size}`;
        status = 206;
      }
      headers['content-length'] = payload.length;
      record(readAction, objectArn, status);
      reply(status, headers, method === 'HEAD' ? undefined : payload);
      return;
    }
    throw new HttpError(501, 'NotImplemented', `${method} on an object`);
  }

  function sts(req: IncomingMessage, res: ServerResponse, body: Buffer, principal: string, record: Record_): void {
    const form = new URLSearchParams(body.toString());
    if (form.get('Action') !== 'AssumeRole') throw new HttpError(400, 'InvalidAction', `STS ${form.get('Action')}`);
    const roleArn = form.get('RoleArn') ?? '';
    const sessionName = form.get('RoleSessionName') ?? '';
    record('sts:AssumeRole', roleArn, 200);
    const accessKeyId = `ASIA${randomBytes(8).toString('hex').toUpperCase()}`;
    const policy = form.get('Policy');
    const sessionToken = randomBytes(24).toString('hex');
    sessions.set(accessKeyId, { roleArn, sessionName, policy: policy ? JSON.parse(policy) : undefined, assumedBy: principal, sessionToken });
    const expiration = new Date(Date.now() + Number(form.get('DurationSeconds') ?? 3600) * 1000).toISOString();
    res.writeHead(200, { 'content-type': 'text/xml' });
    res.end(
      `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>` +
        `<AccessKeyId>${accessKeyId}</AccessKeyId><SecretAccessKey>${randomBytes(16).toString('hex')}</SecretAccessKey>` +
        `<SessionToken>${sessionToken}</SessionToken><Expiration>${expiration}</Expiration></Credentials>` +
        `<AssumedRoleUser><AssumedRoleId>AROA:${xml(sessionName)}</AssumedRoleId><Arn>${xml(roleArn)}/${xml(sessionName)}</Arn></AssumedRoleUser>` +
        `</AssumeRoleResult><ResponseMetadata><RequestId>${randomBytes(8).toString('hex')}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
    );
    void req;
  }

  function secretsManager(req: IncomingMessage, res: ServerResponse, body: Buffer, record: Record_): void {
    const target = header(req, 'x-amz-target') ?? '';
    if (target !== 'secretsmanager.GetSecretValue') throw new HttpError(400, 'UnknownOperation', target);
    const { SecretId: id } = JSON.parse(body.toString()) as { SecretId: string };
    const arn = id.startsWith('arn:') ? id : `arn:aws:secretsmanager:${region}:${account}:secret:${id}`;
    const value = options.secrets?.[id];
    if (value === undefined) {
      record('secretsmanager:GetSecretValue', arn, 400);
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ __type: 'ResourceNotFoundException', message: 'Secrets Manager can’t find the specified secret.' }));
      return;
    }
    record('secretsmanager:GetSecretValue', arn, 200);
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify({ ARN: arn, Name: id, SecretString: value, VersionId: 'v1', VersionStages: ['AWSCURRENT'] }));
  }

  async function lambdaInvoke(req: IncomingMessage, res: ServerResponse, body: Buffer, record: Record_): Promise<void> {
    const match = /^\/2015-03-31\/functions\/([^/]+)\/invocations/.exec(req.url ?? '');
    if (!match) throw new HttpError(400, 'UnknownOperation', req.url ?? '');
    const name = decodeURIComponent(match[1]);
    const arn = name.startsWith('arn:') ? name : `arn:aws:lambda:${region}:${account}:function:${name}`;
    if (!options.invoke) {
      record('lambda:InvokeFunction', arn, 404);
      throw new HttpError(404, 'ResourceNotFoundException', `no function ${name} in the fake`);
    }
    record('lambda:InvokeFunction', arn, 200);
    const out = await options.invoke(name, JSON.parse(body.toString() || 'null'));
    res.writeHead(200, { 'content-type': 'application/json', 'x-amz-executed-version': '$LATEST' });
    res.end(JSON.stringify(out));
  }

  function eventBridge(req: IncomingMessage, res: ServerResponse, body: Buffer, record: Record_): void {
    const target = header(req, 'x-amz-target') ?? '';
    if (target !== 'AWSEvents.PutEvents') throw new HttpError(400, 'UnknownOperation', target);
    const { Entries = [] } = JSON.parse(body.toString()) as { Entries?: { EventBusName?: string; Source: string; DetailType: string; Detail: string }[] };
    for (const bus of new Set(Entries.map((e) => e.EventBusName ?? 'default'))) {
      record('events:PutEvents', bus.startsWith('arn:') ? bus : `arn:aws:events:${region}:${account}:event-bus/${bus}`, 200);
    }
    for (const e of Entries) busEvents.push({ bus: e.EventBusName ?? 'default', source: e.Source, detailType: e.DetailType, detail: JSON.parse(e.Detail) });
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify({ FailedEntryCount: 0, Entries: Entries.map(() => ({ EventId: randomBytes(8).toString('hex') })) }));
  }

  // ECS's JSON protocol (awsJson1_1). A RunTask is `ecs:RunTask` on the task definition with
  // `ecs:cluster`, and one `iam:PassRole` per role the definition names, as IAM evaluates it;
  // a repeated clientToken returns the first task, as ECS does.
  function ecs(req: IncomingMessage, res: ServerResponse, body: Buffer, record: Record_): void {
    const target = (header(req, 'x-amz-target') ?? '').split('.').pop() ?? '';
    const input = JSON.parse(body.toString() || '{}') as Record<string, unknown>;
    const reply = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify(payload));
    };
    const clusterName = String(input.cluster ?? 'default').split('/').pop()!;
    const clusterArn = `arn:aws:ecs:${region}:${account}:cluster/${clusterName}`;
    const context = { 'ecs:cluster': clusterArn };
    const view = (t: EcsTask, container: string) => ({
      taskArn: t.taskArn,
      clusterArn: t.clusterArn,
      taskDefinitionArn: t.taskDefinitionArn,
      startedBy: t.startedBy,
      lastStatus: t.lastStatus,
      desiredStatus: t.desiredStatus,
      ...(t.stopCode ? { stopCode: t.stopCode } : {}),
      ...(t.stoppedReason ? { stoppedReason: t.stoppedReason } : {}),
      containers: [{ name: container, lastStatus: t.lastStatus === 'PROVISIONING' ? 'PENDING' : t.lastStatus, ...(t.exitCode === undefined ? {} : { exitCode: t.exitCode }) }],
    });
    const definitionOf = (t: EcsTask) => options.ecs?.taskDefinition(t.taskDefinitionArn)?.container ?? 'main';
    if (target === 'RunTask') {
      const definition = options.ecs?.taskDefinition(String(input.taskDefinition ?? ''));
      const resource = definition?.arn ?? String(input.taskDefinition);
      if (!definition) {
        record('ecs:RunTask', resource, 400, context);
        return reply(400, { __type: 'InvalidParameterException', message: 'Unable to find task definition.' });
      }
      record('ecs:RunTask', definition.arn, 200, context);
      for (const role of definition.passRoles) record('iam:PassRole', role, 200, { 'iam:PassedToService': 'ecs-tasks.amazonaws.com' });
      const token = input.clientToken as string | undefined;
      const known = token ? [...ecsTasks.values()].find((t) => t.clientToken === token && t.clusterArn === clusterArn) : undefined;
      if (known) return reply(200, { tasks: [view(known, definition.container)], failures: [] });
      const overrides = ((input.overrides as { containerOverrides?: { name: string; environment?: { name: string; value: string }[] }[] } | undefined)?.containerOverrides ?? []).find(
        (o) => o.name === definition.container,
      );
      const environment = Object.fromEntries((overrides?.environment ?? []).map((e) => [e.name, e.value]));
      let markStopped!: () => void;
      const task: EcsTask = {
        taskArn: `arn:aws:ecs:${region}:${account}:task/${clusterName}/${randomBytes(16).toString('hex')}`,
        clusterArn,
        taskDefinitionArn: definition.arn,
        clientToken: token,
        startedBy: input.startedBy as string | undefined,
        environment,
        lastStatus: 'PROVISIONING',
        desiredStatus: 'RUNNING',
        stopped: new Promise<void>((resolve) => (markStopped = resolve)),
      };
      ecsTasks.set(task.taskArn, task);
      const run = options.ecs!.run({ taskArn: task.taskArn, clusterArn, taskDefinition: definition, environment });
      runs.set(task.taskArn, { run, markStopped });
      if (run) {
        task.lastStatus = 'RUNNING';
        void run.exited.then((code) => {
          task.lastStatus = 'STOPPED';
          task.desiredStatus = 'STOPPED';
          task.stopCode ??= 'EssentialContainerExited';
          task.stoppedReason ??= 'Essential container in task exited';
          if (code !== null) task.exitCode = code;
          markStopped();
        });
      }
      return reply(200, { tasks: [view(task, definition.container)], failures: [] });
    }
    if (target === 'DescribeTasks') {
      const arns = (input.tasks as string[] | undefined) ?? [];
      const found: unknown[] = [];
      const failures: unknown[] = [];
      for (const arn of arns) {
        record('ecs:DescribeTasks', arn, 200, context);
        const t = ecsTasks.get(arn);
        if (t && t.clusterArn === clusterArn) found.push(view(t, definitionOf(t)));
        else failures.push({ arn, reason: 'MISSING' });
      }
      return reply(200, { tasks: found, failures });
    }
    if (target === 'StopTask') {
      const arn = String(input.task ?? '');
      const t = ecsTasks.get(arn);
      if (!t || t.clusterArn !== clusterArn) {
        record('ecs:StopTask', arn, 400, context);
        return reply(400, { __type: 'InvalidParameterException', message: 'The referenced task was not found.' });
      }
      record('ecs:StopTask', arn, 200, context);
      if (t.desiredStatus !== 'STOPPED') {
        t.desiredStatus = 'STOPPED';
        t.stopCode = 'UserInitiated';
        t.stoppedReason = String(input.reason ?? 'Task stopped by user');
        const { run, markStopped } = runs.get(arn)!;
        if (run) run.stop();
        else {
          t.lastStatus = 'STOPPED';
          markStopped();
        }
      }
      return reply(200, { task: view(t, definitionOf(t)) });
    }
    throw new HttpError(400, 'UnknownOperation', `ECS ${target}`);
  }

  async function dynamodb(req: IncomingMessage, res: ServerResponse, body: Buffer, record: Record_): Promise<void> {
    if (!options.dynamodbEndpoint) throw new HttpError(400, 'UnknownService', 'no DynamoDB endpoint configured for the fake');
    const target = header(req, 'x-amz-target') ?? '';
    const request = JSON.parse(body.toString() || '{}') as { TableName?: string; IndexName?: string; Key?: { pk?: { S?: string } } };
    const table = `arn:aws:dynamodb:${region}:${account}:table/${request.TableName ?? ''}`;
    const forwarded = await fetch(options.dynamodbEndpoint, {
      method: 'POST',
      headers: { 'content-type': header(req, 'content-type') ?? 'application/x-amz-json-1.0', 'x-amz-target': target, authorization: header(req, 'authorization') ?? '', 'x-amz-date': header(req, 'x-amz-date') ?? '' },
      body,
    });
    const answer = Buffer.from(await forwarded.arrayBuffer());
    // An item operation names its partition key: IAM's dynamodb:LeadingKeys (the rate buckets' grant is confined by it).
    const leading = request.Key?.pk?.S;
    record(`dynamodb:${target.split('.').pop()}`, request.IndexName ? `${table}/index/${request.IndexName}` : table, forwarded.status, leading === undefined ? {} : { 'dynamodb:LeadingKeys': leading });
    res.writeHead(forwarded.status, { 'content-type': forwarded.headers.get('content-type') ?? 'application/x-amz-json-1.0' });
    res.end(answer);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    calls,
    sessions,
    busEvents,
    ecsTasks,
    s3Events,
    versioning(bucket) {
      versionedBuckets.add(bucket);
    },
    notify(bucket) {
      notifiedBuckets.add(bucket);
    },
    principal(name) {
      const accessKeyId = `AKIA${createHash('sha256').update(name).digest('hex').slice(0, 16).toUpperCase()}`;
      principals.set(accessKeyId, name);
      return { accessKeyId, secretAccessKey: 'fake-secret' };
    },
    keys(bucket) {
      return [...objects(bucket).keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    },
    close: () =>
      new Promise<void>((resolve) => {
        // Clients (LanceDB's object store, the SDK) keep connections alive: close them, or
        // close() waits for their idle timeout.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The SDK streams some bodies as `aws-chunked` (size;signature lines, then trailers). */
function decodeChunked(req: IncomingMessage, body: Buffer): Buffer {
  const encoding = header(req, 'content-encoding') ?? '';
  const sha = header(req, 'x-amz-content-sha256') ?? '';
  if (!encoding.includes('aws-chunked') && !sha.startsWith('STREAMING-')) return body;
  const out: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) break;
    const size = parseInt(body.subarray(at, eol).toString().split(';')[0], 16);
    if (!Number.isFinite(size) || size === 0) break;
    out.push(body.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

function listXml(bucket: string, objects: Map<string, StoredObject>, q: URLSearchParams, prefix: string, delimiter: string, maxKeys: number): string {
  const encode = q.get('encoding-type') === 'url';
  const token = q.get('continuation-token');
  const start = token !== null ? Buffer.from(token, 'base64url').toString() : (q.get('start-after') ?? undefined);
  const after = (s: string) => start === undefined || Buffer.compare(Buffer.from(s), Buffer.from(start)) > 0;
  const contents: string[] = [];
  const prefixes: string[] = [];
  let last: string | undefined;
  let truncated = false;
  const sorted = [...objects.keys()].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  for (const key of sorted) {
    if (!key.startsWith(prefix) || !after(key)) continue;
    const cut = delimiter ? key.indexOf(delimiter, prefix.length) : -1;
    const common = cut >= 0 ? key.slice(0, cut + delimiter.length) : undefined;
    if (common !== undefined && (common === prefixes.at(-1) || !after(common))) continue;
    if (contents.length + prefixes.length >= maxKeys) {
      truncated = true;
      break;
    }
    const name = (s: string) => xml(encode ? encodeURIComponent(s).replace(/%2F/g, '/') : s);
    if (common !== undefined) {
      prefixes.push(common);
      last = common;
    } else {
      const o = objects.get(key)!;
      contents.push(`<Contents><Key>${name(key)}</Key><LastModified>${o.lastModified.toISOString()}</LastModified><ETag>${xml(o.etag)}</ETag><Size>${o.body.length}</Size><StorageClass>STANDARD</StorageClass></Contents>`);
      last = key;
    }
  }
  const name = (s: string) => xml(encode ? encodeURIComponent(s).replace(/%2F/g, '/') : s);
  return (
    `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>${xml(bucket)}</Name><Prefix>${name(prefix)}</Prefix>` +
    `<KeyCount>${contents.length + prefixes.length}</KeyCount><MaxKeys>${maxKeys}</MaxKeys>${delimiter ? `<Delimiter>${name(delimiter)}</Delimiter>` : ''}` +
    (encode ? '<EncodingType>url</EncodingType>' : '') +
    `<IsTruncated>${truncated}</IsTruncated>` +
    (truncated && last !== undefined ? `<NextContinuationToken>${Buffer.from(last).toString('base64url')}</NextContinuationToken>` : '') +
    contents.join('') +
    prefixes.map((p) => `<CommonPrefixes><Prefix>${name(p)}</Prefix></CommonPrefixes>`).join('') +
    `</ListBucketResult>`
  );
}

function xml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function unxml(s: string): string {
  return s.replace(/&quot;/g, '"').replace(/&gt;/g, '>').replace(/&lt;/g, '<').replace(/&amp;/g, '&');
}
