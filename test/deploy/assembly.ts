/**
 * Reads the synthesized cloud assembly (`cdk.out`) the way CloudFormation and Lambda would use
 * it: every stack template, each function's asset, handler, layers, environment and role, with
 * CloudFormation intrinsics resolved to stable fake physical names. The same resolution is used
 * for the IAM policies (./iam.ts), so a resource an artifact is told about (an environment
 * variable) and the resource its role grants are compared in one namespace of names.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export const FAKE_REGION = 'us-east-1';
export const FAKE_ACCOUNT = '123456789012';

export interface CfnResource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
}

export interface StackTemplate {
  readonly stackName: string;
  readonly resources: Readonly<Record<string, CfnResource>>;
  /** A nested stack: its parent and the parameter values the parent passes. */
  readonly parent?: { readonly stackName: string; readonly parameters: Readonly<Record<string, unknown>> };
  readonly outputs?: Readonly<Record<string, { Value: unknown }>>;
  /** The template's own parameters (SSM-typed ones are resolved from the SSM parameter of that name). */
  readonly parameters?: Readonly<Record<string, { Type: string; Default?: unknown }>>;
}

export interface FunctionArtifact {
  readonly stack: string;
  readonly logicalId: string;
  /** The physical name the fake world gives it (also its principal name in recorded calls). */
  readonly name: string;
  readonly handler: string;
  readonly runtime: string;
  /** The template's `Timeout` in seconds (Lambda's default, 3, when absent). */
  readonly timeoutSeconds: number;
  readonly assetDir: string;
  readonly layerDirs: readonly string[];
  readonly environment: Readonly<Record<string, string>>;
  /** The logical id of its execution role. */
  readonly roleLogicalId: string;
}

export interface Assembly {
  readonly dir: string;
  readonly stacks: readonly StackTemplate[];
  readonly functions: readonly FunctionArtifact[];
  /** Resolves an intrinsic (or a plain value) from a stack's template to a string. */
  resolve(stack: string, value: unknown): unknown;
  resource(stack: string, logicalId: string): CfnResource;
}

/**
 * Whether a logical id is of the catalog's part `part` (e.g. `ChangeRelay`, `FunctionsJobs`). CDK
 * joins a resource's construct path into its logical id: the standalone app's catalog (construct
 * id `Default`) adds nothing to it, a team's `new RaskCatalog(stack, 'Catalog')` prefixes
 * `Catalog` (test/package runs this suite on such an app).
 */
export function isPart(logicalId: string, part: string): boolean {
  return logicalId.includes(part);
}

/** A stable 17-digit hex id for a logical id (the length of EC2's ids). */
const fakeHex = (id: string) => createHash('sha256').update(id).digest('hex').slice(0, 17);

export function readAssembly(dir: string): Assembly {
  const manifestPath = path.join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) throw new Error(`no cloud assembly at ${dir}: run \`npm run synth\` first`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    artifacts: Record<string, { type: string; properties?: { templateFile?: string } }>;
  };
  const stacks: StackTemplate[] = [];
  for (const [name, artifact] of Object.entries(manifest.artifacts)) {
    if (artifact.type !== 'aws:cloudformation:stack' || !artifact.properties?.templateFile) continue;
    const template = JSON.parse(readFileSync(path.join(dir, artifact.properties.templateFile), 'utf8')) as {
      Resources: Record<string, CfnResource>;
      Parameters?: Record<string, { Type: string; Default?: unknown }>;
    };
    stacks.push({ stackName: name, resources: template.Resources, parameters: template.Parameters });
  }
  // Nested stacks (per-operation mode's functions): their templates are assets of the parent,
  // named `<parent>/<logical id>`; parameters come from the parent's resource, outputs go back.
  for (const parent of [...stacks]) {
    for (const [id, r] of Object.entries(parent.resources)) {
      const file = r.Metadata?.['aws:asset:path'];
      if (r.Type !== 'AWS::CloudFormation::Stack' || typeof file !== 'string') continue;
      const nested = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { Resources: Record<string, CfnResource>; Outputs?: Record<string, { Value: unknown }> };
      stacks.push({
        stackName: `${parent.stackName}/${id}`,
        resources: nested.Resources,
        outputs: nested.Outputs,
        parent: { stackName: parent.stackName, parameters: (r.Properties?.Parameters ?? {}) as Record<string, unknown> },
      });
    }
  }
  if (stacks.length === 0) throw new Error(`the cloud assembly at ${dir} has no stacks`);

  const byStack = new Map(stacks.map((s) => [s.stackName, s]));
  const resource = (stack: string, logicalId: string): CfnResource => {
    const found = byStack.get(stack)?.resources[logicalId];
    if (found) return found;
    // Cross-stack references arrive as imports; look the id up in every stack.
    for (const s of stacks) if (s.resources[logicalId]) return s.resources[logicalId];
    throw new Error(`no resource ${logicalId} in stack ${stack}`);
  };
  const exportsByName = new Map<string, unknown>();
  for (const name of Object.keys(manifest.artifacts)) {
    const file = manifest.artifacts[name].properties?.templateFile;
    if (!file) continue;
    const template = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as { Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }> };
    for (const output of Object.values(template.Outputs ?? {})) {
      if (output.Export && typeof output.Export.Name === 'string') exportsByName.set(output.Export.Name, { stack: name, value: output.Value });
    }
  }

  const resolve = (stack: string, value: unknown): unknown => {
    if (Array.isArray(value)) return value.map((v) => resolve(stack, v));
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length !== 1 || !(entries[0][0] === 'Ref' || entries[0][0].startsWith('Fn::'))) {
      return Object.fromEntries(entries.map(([k, v]) => [k, resolve(stack, v)]));
    }
    const [fn, arg] = entries[0];
    switch (fn) {
      case 'Ref':
        return ref(stack, arg as string);
      case 'Fn::GetAtt': {
        const [id, attribute] = Array.isArray(arg) ? (arg as string[]) : String(arg).split('.');
        return getAtt(stack, id, attribute);
      }
      case 'Fn::Join': {
        const [sep, parts] = arg as [string, unknown[]];
        return (resolve(stack, parts) as unknown[]).map(String).join(sep);
      }
      case 'Fn::Select': {
        const [index, list] = arg as [number, unknown];
        return (resolve(stack, list) as unknown[])[Number(resolve(stack, index))];
      }
      case 'Fn::Split': {
        const [sep, source] = arg as [string, unknown];
        return String(resolve(stack, source)).split(sep);
      }
      case 'Fn::Sub': {
        const [text, vars] = Array.isArray(arg) ? (arg as [string, Record<string, unknown>]) : [arg as string, {}];
        return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
          if (name in vars) return String(resolve(stack, vars[name]));
          const [id, attribute] = name.split('.');
          return String(attribute ? getAtt(stack, id, attribute) : ref(stack, id));
        });
      }
      case 'Fn::ImportValue': {
        const name = resolve(stack, arg);
        const exported = exportsByName.get(String(name)) as { stack: string; value: unknown } | undefined;
        if (!exported) throw new Error(`Fn::ImportValue of unknown export ${String(name)}`);
        return resolve(exported.stack, exported.value);
      }
      default:
        throw new Error(`unsupported intrinsic ${fn} in ${stack}`);
    }
  };

  const ref = (stack: string, id: string): string => {
    const parent = byStack.get(stack)?.parent;
    if (parent && id in parent.parameters) return String(resolve(parent.stackName, parent.parameters[id]));
    const parameter = byStack.get(stack)?.parameters?.[id];
    if (parameter?.Type.startsWith('AWS::SSM::Parameter::Value')) return ssmValue(String(parameter.Default));
    switch (id) {
      case 'AWS::Partition':
        return 'aws';
      case 'AWS::Region':
        return FAKE_REGION;
      case 'AWS::AccountId':
        return FAKE_ACCOUNT;
      case 'AWS::URLSuffix':
        return 'amazonaws.com';
      case 'AWS::StackName':
        return stack;
      case 'AWS::NoValue':
        return '';
    }
    const r = resource(stack, id);
    switch (r.Type) {
      case 'AWS::S3::Bucket':
        return `fake-${id.toLowerCase()}`;
      case 'AWS::SecretsManager::Secret':
        return `arn:aws:secretsmanager:${FAKE_REGION}:${FAKE_ACCOUNT}:secret:${id}-AbCdEf`;
      case 'AWS::SQS::Queue':
        return `https://sqs.${FAKE_REGION}.amazonaws.com/${FAKE_ACCOUNT}/${id}`;
      case 'AWS::SNS::Topic':
        return `arn:aws:sns:${FAKE_REGION}:${FAKE_ACCOUNT}:${id}`;
      case 'AWS::Lambda::LayerVersion':
        return `arn:aws:lambda:${FAKE_REGION}:${FAKE_ACCOUNT}:layer:${id}:1`;
      case 'AWS::ECS::TaskDefinition':
        return `arn:aws:ecs:${FAKE_REGION}:${FAKE_ACCOUNT}:task-definition/${id}:1`;
      // Shaped as EC2 ids: the functions' configuration checks them (lib/config.ts).
      case 'AWS::EC2::Subnet':
        return `subnet-${fakeHex(id)}`;
      default:
        return id;
    }
  };

  // What CloudFormation reads for an SSM-typed parameter at deploy time: the value another stack
  // of the assembly writes under that name (a parameter nobody writes would fail the deploy).
  const ssmValue = (name: string): string => {
    for (const s of stacks) {
      for (const r of Object.values(s.resources)) {
        if (r.Type === 'AWS::SSM::Parameter' && r.Properties?.Name === name) return String(resolve(s.stackName, r.Properties.Value));
      }
    }
    throw new Error(`SSM parameter ${name} is written by no stack of the assembly`);
  };

  const getAtt = (stack: string, id: string, attribute: string): string => {
    const r = resource(stack, id);
    if (r.Type === 'AWS::CloudFormation::Stack' && attribute.startsWith('Outputs.')) {
      const nested = byStack.get(`${stack}/${id}`);
      const output = nested?.outputs?.[attribute.slice('Outputs.'.length)];
      if (!nested || !output) throw new Error(`no output ${attribute} of nested stack ${id}`);
      return String(resolve(nested.stackName, output.Value));
    }
    const name = ref(stack, id);
    const key = `${r.Type}.${attribute}`;
    switch (key) {
      case 'AWS::S3::Bucket.Arn':
        return `arn:aws:s3:::${name}`;
      case 'AWS::DynamoDB::Table.Arn':
      case 'AWS::DynamoDB::GlobalTable.Arn':
        return `arn:aws:dynamodb:${FAKE_REGION}:${FAKE_ACCOUNT}:table/${name}`;
      case 'AWS::Lambda::Function.Arn':
        return `arn:aws:lambda:${FAKE_REGION}:${FAKE_ACCOUNT}:function:${name}`;
      case 'AWS::IAM::Role.Arn':
        return `arn:aws:iam::${FAKE_ACCOUNT}:role/${name}`;
      case 'AWS::SQS::Queue.Arn':
        return `arn:aws:sqs:${FAKE_REGION}:${FAKE_ACCOUNT}:${id}`;
      case 'AWS::SQS::Queue.QueueName':
        return id;
      case 'AWS::SNS::Topic.TopicName':
        return id;
      case 'AWS::Events::EventBus.Arn':
        return `arn:aws:events:${FAKE_REGION}:${FAKE_ACCOUNT}:event-bus/${id}`;
      case 'AWS::Events::EventBus.Name':
        return id;
      case 'AWS::Logs::LogGroup.Arn':
        return `arn:aws:logs:${FAKE_REGION}:${FAKE_ACCOUNT}:log-group:${id}:*`;
      case 'AWS::ApiGateway::RestApi.RootResourceId':
        return `${id}-root`;
      case 'AWS::ECS::Cluster.Arn':
        return `arn:aws:ecs:${FAKE_REGION}:${FAKE_ACCOUNT}:cluster/${name}`;
      case 'AWS::EC2::SecurityGroup.GroupId':
        return `sg-${fakeHex(id)}`;
      default:
        // Anything else is named by its logical id: unique, and stable across the two readers.
        return `${id}.${attribute}`;
    }
  };

  const functions: FunctionArtifact[] = [];
  for (const s of stacks) {
    for (const [logicalId, r] of Object.entries(s.resources)) {
      if (r.Type !== 'AWS::Lambda::Function') continue;
      const props = r.Properties ?? {};
      const assetPath = r.Metadata?.['aws:asset:path'];
      // Functions CDK itself adds (custom-resource providers, log retention) carry no asset of ours.
      if (typeof assetPath !== 'string' || typeof props.Handler !== 'string') continue;
      const layerDirs = ((props.Layers as unknown[] | undefined) ?? []).map((layer) => {
        // A nested stack receives the layer as a parameter: follow it to the parent's resource.
        let owner = s.stackName;
        let layerRef = (layer as { Ref?: string }).Ref;
        const parent = s.parent;
        if (parent && layerRef && layerRef in parent.parameters) {
          owner = parent.stackName;
          layerRef = (parent.parameters[layerRef] as { Ref?: string }).Ref;
        }
        const layerAsset = layerRef ? resource(owner, layerRef).Metadata?.['aws:asset:path'] : undefined;
        if (typeof layerAsset !== 'string') throw new Error(`${logicalId}: layer ${JSON.stringify(layer)} has no asset in the assembly`);
        return path.join(dir, layerAsset);
      });
      const variables = ((props.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {}) as Record<string, unknown>;
      const role = props.Role as { 'Fn::GetAtt'?: [string, string] } | undefined;
      const roleLogicalId = role?.['Fn::GetAtt']?.[0];
      if (!roleLogicalId) throw new Error(`${logicalId}: role is not a role of this app (${JSON.stringify(props.Role)})`);
      functions.push({
        stack: s.stackName,
        logicalId,
        name: logicalId,
        handler: props.Handler,
        runtime: String(props.Runtime),
        timeoutSeconds: typeof props.Timeout === 'number' ? props.Timeout : 3,
        assetDir: path.join(dir, assetPath),
        layerDirs,
        environment: Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, String(resolve(s.stackName, v))])),
        roleLogicalId,
      });
    }
  }
  return { dir, stacks, functions, resolve, resource };
}
