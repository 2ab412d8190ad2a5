/**
 * The deployed app, offline: every function of the synthesized assembly in its own Lambda-like
 * sandbox, wired the way the template wires them (the API's OpenAPI routes by operationId to the
 * function their integration names, schedules to their targets, the Lambda invoke of one function by
 * another), all against one AWS fake that records each call as an IAM request.
 */
import { FAKE_ACCOUNT, FAKE_REGION, readAssembly, type Assembly, type FunctionArtifact } from './assembly.js';
import { createSandbox, type InvokeResult, type Sandbox } from './lambda-sandbox.js';
import { CreateTableCommand, DynamoDBClient, type CreateTableCommandInput, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import type { AddressInfo } from 'node:net';
import { startAwsHttpFake, type AwsHttpFake, type EcsTaskDefinition } from '../support/aws-http-fake.js';
import { readTaskDefinitions, startContainer, type ContainerProcess, type TaskDefinitionArtifact } from './containers.js';
import { readSpecApis, type SpecApi } from './spec-api.js';
import { matchesPattern } from './event-pattern.js';

export interface ApiRoute {
  readonly operation: string;
  readonly method: string;
  readonly fn: FunctionArtifact;
}

export interface ScheduledTarget {
  readonly rule: string;
  readonly schedule: string;
  readonly fn: FunctionArtifact;
  readonly input?: unknown;
}

/**
 * A rule on the default bus that takes events matching its pattern to an SQS queue the template
 * lets a function poll (an event source mapping): how S3 Event Notifications reach the change relay.
 */
export interface QueueRoute {
  readonly rule: string;
  readonly pattern: unknown;
  readonly queue: string;
  /** The queue's DelaySeconds: a message is received no sooner. */
  readonly delaySeconds: number;
  /** Receives before the queue's redrive policy moves a message to its dead-letter queue. */
  readonly maxReceiveCount: number;
  readonly batchSize: number;
  readonly fn: FunctionArtifact;
}

export interface NotificationDelivery {
  /** Recorded notifications delivered (each once per rule that matched it). */
  readonly delivered: number;
  /** Invocations of the polling functions. */
  readonly batches: number;
  /** Messages that failed every receive (the dead-letter queue's). */
  readonly deadLetters: readonly unknown[];
}

export interface World {
  readonly assembly: Assembly;
  readonly fake: AwsHttpFake;
  /** The spec-defined REST API (routes, authorizer, binary media types, gateway responses). */
  readonly api?: SpecApi;
  /** One route per operation id (its POST where it has two methods). */
  readonly routes: ReadonlyMap<string, ApiRoute>;
  readonly schedules: readonly ScheduledTarget[];
  /** Rules that deliver events to a queue a function polls (the change relay's notifications). */
  readonly queueRoutes: readonly QueueRoute[];
  /**
   * Takes the S3 notifications the fake recorded since the last call through the template's
   * rules to their queues and on to the polling function, as SQS batches once each message's
   * delay has passed (waiting for it). A record the function reports in `batchItemFailures` is
   * received again, up to the queue's maxReceiveCount, then counted as a dead letter.
   */
  deliverNotifications(): Promise<NotificationDelivery>;
  /** The function authorizing API requests (the API's custom authorizer). */
  readonly authorizer?: FunctionArtifact;
  /** The assembly's ECS task definitions (`rask:jobsTaskTier=on`); a RunTask of one starts its container (./containers.ts). */
  readonly taskDefinitions: readonly TaskDefinitionArtifact[];
  /** Containers started by RunTask, by task ARN. */
  readonly containers: ReadonlyMap<string, ContainerProcess>;
  /** The next `n` RunTask calls leave their task PROVISIONING (no container) until StopTask: a slow start. */
  holdTasks(n: number): void;
  sandbox(fn: FunctionArtifact): Sandbox;
  invoke(fn: FunctionArtifact, event: unknown): Promise<InvokeResult>;
  close(): Promise<void>;
}

export interface WorldOptions {
  readonly cdkOut: string;
  /** Secrets Manager contents, given the assembly (secret ids come from the template). */
  readonly secrets?: (assembly: Assembly) => Readonly<Record<string, string>>;
  readonly dropFromLayers?: readonly string[];
}

export async function startWorld(options: WorldOptions): Promise<World> {
  const assembly = readAssembly(options.cdkOut);
  const byArn = new Map(assembly.functions.map((f) => [`arn:aws:lambda:${FAKE_REGION}:${FAKE_ACCOUNT}:function:${f.name}`, f]));
  const byName = new Map(assembly.functions.map((f) => [f.name, f]));
  const sandboxes = new Map<string, Sandbox>();
  // eslint-disable-next-line prefer-const
  let fake: AwsHttpFake;
  const sandbox = (fn: FunctionArtifact): Sandbox => {
    let s = sandboxes.get(fn.logicalId);
    if (!s) {
      s = createSandbox(fn, { endpoint: fake.endpoint, credentials: fake.principal(fn.name), dropFromLayers: options.dropFromLayers });
      sandboxes.set(fn.logicalId, s);
    }
    return s;
  };
  const dynamo = await startDynamo(assembly);
  const taskDefinitions = readTaskDefinitions(assembly);
  const containers = new Map<string, ContainerProcess>();
  let held = 0;
  const asEcs = (t: TaskDefinitionArtifact): EcsTaskDefinition => ({ arn: t.arn, passRoles: t.passRoles, container: t.container.name });
  fake = await startAwsHttpFake({
    ecs: {
      taskDefinition: (arn) => {
        const found = taskDefinitions.find((t) => t.arn === arn);
        return found && asEcs(found);
      },
      run: (launch) => {
        if (held > 0) {
          held--;
          return undefined;
        }
        const definition = taskDefinitions.find((t) => t.arn === launch.taskDefinition.arn)!;
        const container = startContainer(definition, { taskArn: launch.taskArn, environment: launch.environment, endpoint: fake.endpoint, credentials: fake.principal(definition.taskRoleLogicalId) });
        containers.set(launch.taskArn, container);
        return container;
      },
    },
    dynamodbEndpoint: dynamo.endpoint,
    region: FAKE_REGION,
    account: FAKE_ACCOUNT,
    secrets: options.secrets?.(assembly),
    invoke: async (name, payload) => {
      const fn = byName.get(name) ?? byArn.get(name);
      if (!fn) throw new Error(`Lambda invoke of ${name}, which the assembly does not define`);
      const result = await sandbox(fn).invoke(payload);
      if (!result.ok) throw new Error(result.error);
      return result.value;
    },
  });

  // The API's routes come from its OpenAPI body, as API Gateway imports them (./spec-api.ts).
  const apis = readSpecApis(assembly, byArn);
  if (apis.length > 1) throw new Error(`the assembly defines ${apis.length} REST APIs; the world drives one`);
  const api = apis[0];
  const routes = new Map<string, ApiRoute>();
  for (const r of api?.routes ?? []) {
    const existing = routes.get(r.operationId);
    if (!existing || r.method === 'POST') routes.set(r.operationId, { operation: r.operationId, method: r.method, fn: r.fn });
  }
  const authorizer = api?.authorizer?.fn;
  // Buckets as the template configures them: versioning, and S3 Event Notifications to EventBridge.
  for (const stack of assembly.stacks) {
    for (const [id, r] of Object.entries(stack.resources)) {
      if (r.Type !== 'AWS::S3::Bucket') continue;
      const p = r.Properties as { VersioningConfiguration?: { Status?: string }; NotificationConfiguration?: { EventBridgeConfiguration?: { EventBridgeEnabled?: boolean } } } | undefined;
      const name = String(assembly.resolve(stack.stackName, { Ref: id }));
      if (p?.VersioningConfiguration?.Status === 'Enabled') fake.versioning(name);
      if (p?.NotificationConfiguration?.EventBridgeConfiguration?.EventBridgeEnabled === true) fake.notify(name);
    }
  }
  const queueRoutes = readQueueRoutes(assembly, byName, byArn);
  let notificationsSeen = 0;
  const deliverNotifications = async (): Promise<NotificationDelivery> => {
    const events = fake.s3Events.slice(notificationsSeen);
    notificationsSeen += events.length;
    let delivered = 0;
    let batches = 0;
    const deadLetters: unknown[] = [];
    for (const route of queueRoutes) {
      const matched = events.filter((e) => matchesPattern(route.pattern, e));
      delivered += matched.length;
      if (matched.length === 0) continue;
      // Received no sooner than the queue's delay after the last of them was sent.
      const visibleAt = Math.max(...matched.map((e) => Date.parse((e as { time: string }).time))) + 1000 + route.delaySeconds * 1000;
      if (visibleAt > Date.now()) await new Promise((r) => setTimeout(r, visibleAt - Date.now()));
      let messages = matched.map((event, i) => ({ messageId: `msg-${notificationsSeen}-${route.rule}-${i}`, body: JSON.stringify(event), receives: 0 }));
      while (messages.length > 0) {
        const retry: typeof messages = [];
        for (let at = 0; at < messages.length; at += route.batchSize) {
          const batch = messages.slice(at, at + route.batchSize);
          for (const m of batch) m.receives++;
          batches++;
          const result = await sandbox(route.fn).invoke(sqsBatch(route.queue, batch));
          if (!result.ok) throw new Error(`${route.fn.logicalId} failed on a batch from ${route.queue}: ${result.error}`);
          const failed = new Set(((result.value as { batchItemFailures?: { itemIdentifier: string }[] } | null)?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
          for (const m of batch) if (failed.has(m.messageId)) (m.receives >= route.maxReceiveCount ? deadLetters.push(JSON.parse(m.body)) : retry.push(m));
        }
        messages = retry;
      }
    }
    return { delivered, batches, deadLetters };
  };

  const schedules: ScheduledTarget[] = [];
  for (const stack of assembly.stacks) {
    for (const [id, r] of Object.entries(stack.resources)) {
      if (r.Type === 'AWS::Events::Rule') {
        const props = r.Properties as { ScheduleExpression?: string; Targets?: { Arn: unknown; Input?: string }[] };
        if (!props.ScheduleExpression) continue;
        for (const target of props.Targets ?? []) {
          const fn = byArn.get(String(assembly.resolve(stack.stackName, target.Arn)));
          if (fn) schedules.push({ rule: id, schedule: props.ScheduleExpression, fn, input: target.Input ? JSON.parse(target.Input) : undefined });
        }
      }
    }
  }
  return {
    assembly,
    fake,
    api,
    routes,
    schedules,
    queueRoutes,
    deliverNotifications,
    authorizer,
    taskDefinitions,
    containers,
    holdTasks: (n) => {
      held = n;
    },
    sandbox,
    invoke: (fn, event) => sandbox(fn).invoke(event),
    close: async () => {
      await Promise.all([...sandboxes.values()].map((s) => s.dispose()));
      await Promise.all([...containers.values()].map((c) => c.dispose()));
      await fake.close();
      await dynamo.close();
    },
  };
}

/** The template's rules that target an SQS queue some function polls. */
function readQueueRoutes(assembly: Assembly, byName: ReadonlyMap<string, FunctionArtifact>, byArn: ReadonlyMap<string, FunctionArtifact>): QueueRoute[] {
  const out: QueueRoute[] = [];
  for (const stack of assembly.stacks) {
    const resources = stack.resources;
    for (const [id, r] of Object.entries(resources)) {
      if (r.Type !== 'AWS::Events::Rule') continue;
      const props = r.Properties as { EventPattern?: unknown; EventBusName?: unknown; Targets?: { Arn: unknown }[] };
      // S3 sends its events to the account's default bus: rules elsewhere never see them.
      if (!props.EventPattern || props.EventBusName !== undefined) continue;
      for (const target of props.Targets ?? []) {
        const queue = (target.Arn as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt']?.[0];
        if (!queue || resources[queue]?.Type !== 'AWS::SQS::Queue') continue;
        const q = resources[queue].Properties as { DelaySeconds?: number; RedrivePolicy?: { maxReceiveCount?: number } } | undefined;
        for (const m of Object.values(resources)) {
          if (m.Type !== 'AWS::Lambda::EventSourceMapping') continue;
          const mp = m.Properties as { EventSourceArn?: { 'Fn::GetAtt'?: [string, string] }; FunctionName?: unknown; BatchSize?: number };
          if (mp.EventSourceArn?.['Fn::GetAtt']?.[0] !== queue) continue;
          const name = String(assembly.resolve(stack.stackName, mp.FunctionName));
          const fn = byName.get(name) ?? byArn.get(name);
          if (!fn) throw new Error(`${queue}'s event source mapping names ${name}, which the assembly does not define`);
          out.push({
            rule: id,
            pattern: assembly.resolve(stack.stackName, props.EventPattern),
            queue,
            delaySeconds: q?.DelaySeconds ?? 0,
            maxReceiveCount: q?.RedrivePolicy?.maxReceiveCount ?? Number.POSITIVE_INFINITY,
            batchSize: mp.BatchSize ?? 10,
            fn,
          });
        }
      }
    }
  }
  return out;
}

/** What Lambda's SQS poller hands a function: the messages' bodies are the EventBridge events as sent. */
function sqsBatch(queue: string, messages: readonly { messageId: string; body: string; receives: number }[]): unknown {
  return {
    Records: messages.map((m) => ({
      messageId: m.messageId,
      receiptHandle: `rh-${m.messageId}-${m.receives}`,
      body: m.body,
      attributes: { ApproximateReceiveCount: String(m.receives), SentTimestamp: String(Date.now()), ApproximateFirstReceiveTimestamp: String(Date.now()) },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:${FAKE_REGION}:${FAKE_ACCOUNT}:${queue}`,
      awsRegion: FAKE_REGION,
    })),
  };
}

/** What EventBridge sends a scheduled target that has no fixed input. */
export function scheduledEvent(rule: string): unknown {
  return {
    version: '0',
    id: `smoke-${Date.now()}`,
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: FAKE_ACCOUNT,
    time: new Date().toISOString(),
    region: FAKE_REGION,
    resources: [`arn:aws:events:${FAKE_REGION}:${FAKE_ACCOUNT}:rule/${rule}`],
    detail: {},
  };
}

/** dynalite (a DynamoDB implementation) holding every table the template defines, by its fake name. */
async function startDynamo(assembly: Assembly): Promise<{ endpoint: string; close(): Promise<void> }> {
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new DynamoDBClient({ endpoint, region: FAKE_REGION, credentials: { accessKeyId: 'world', secretAccessKey: 'world' } });
  for (const stack of assembly.stacks) {
    for (const [id, r] of Object.entries(stack.resources)) {
      if (r.Type !== 'AWS::DynamoDB::Table' && r.Type !== 'AWS::DynamoDB::GlobalTable') continue;
      const p = r.Properties as Pick<CreateTableCommandInput, 'KeySchema' | 'AttributeDefinitions'> & {
        GlobalSecondaryIndexes?: { IndexName: string; KeySchema: CreateTableCommandInput['KeySchema']; Projection?: { ProjectionType?: string } }[];
      };
      const tableName = String(assembly.resolve(stack.stackName, { Ref: id }));
      await client.send(
        new CreateTableCommand({
          TableName: tableName,
          KeySchema: p.KeySchema,
          AttributeDefinitions: p.AttributeDefinitions,
          BillingMode: 'PAY_PER_REQUEST',
          GlobalSecondaryIndexes: p.GlobalSecondaryIndexes?.map((g) => ({
            IndexName: g.IndexName,
            KeySchema: g.KeySchema,
            Projection: { ProjectionType: (g.Projection?.ProjectionType ?? 'ALL') as 'ALL' },
          })),
        }),
      );
      // dynalite flips a table to ACTIVE on a timer: a busy machine's first write would miss it.
      await waitUntilTableExists({ client, minDelay: 0.01, maxDelay: 0.05, maxWaitTime: 10 }, { TableName: tableName });
    }
  }
  client.destroy();
  return { endpoint, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
