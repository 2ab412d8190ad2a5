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

export interface World {
  readonly assembly: Assembly;
  readonly fake: AwsHttpFake;
  /** The spec-defined REST API (routes, authorizer, binary media types, gateway responses). */
  readonly api?: SpecApi;
  /** One route per operation id (its POST where it has two methods). */
  readonly routes: ReadonlyMap<string, ApiRoute>;
  readonly schedules: readonly ScheduledTarget[];
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
