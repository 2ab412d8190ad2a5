/**
 * The job task tier's containers, offline (`rask:jobsTaskTier=on`; infra/constructs/job-tasks.ts):
 * each ECS task definition of the assembly with its roles, environment and image, the image
 * being the synthesized Docker build context (a `dockerImages` asset of the stack's asset
 * manifest). A RunTask on the AWS fake starts the container as Docker would run the image:
 * the context's `app/` at the Dockerfile's WORKDIR, the packages `npm ci` would install there
 * from the LanceDB layer's lockfile taken from the layer asset built from that same lockfile,
 * the Dockerfile's CMD, the task definition's environment plus RunTask's overrides, and
 * the task role's credentials (the fake's principal named after the role).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FAKE_REGION, type Assembly } from './assembly.js';

export interface TaskDefinitionArtifact {
  readonly stack: string;
  readonly logicalId: string;
  /** What `Ref` gives: the ARN the Jobs function is told (RASK_JOBS_TASK_DEFINITION). */
  readonly arn: string;
  readonly taskRoleLogicalId: string;
  readonly executionRoleLogicalId: string;
  /** The role ARNs a RunTask passes. */
  readonly passRoles: readonly string[];
  readonly container: { readonly name: string; readonly image: string; readonly environment: Readonly<Record<string, string>> };
  /** The image's build context in the assembly. */
  readonly imageDir: string;
  /** node_modules of the layer asset whose lockfile the image installs. */
  readonly nodeModules: string;
}

export function readTaskDefinitions(assembly: Assembly): TaskDefinitionArtifact[] {
  const images = dockerImages(assembly.dir);
  const out: TaskDefinitionArtifact[] = [];
  for (const stack of assembly.stacks) {
    for (const [logicalId, r] of Object.entries(stack.resources)) {
      if (r.Type !== 'AWS::ECS::TaskDefinition') continue;
      const raw = r.Properties as { TaskRoleArn: { 'Fn::GetAtt': [string, string] }; ExecutionRoleArn: { 'Fn::GetAtt': [string, string] } };
      const props = assembly.resolve(stack.stackName, r.Properties) as {
        TaskRoleArn: string;
        ExecutionRoleArn: string;
        ContainerDefinitions: { Name: string; Image: string; Essential?: boolean; Environment?: { Name: string; Value: string }[] }[];
      };
      const container = props.ContainerDefinitions.find((c) => c.Essential !== false) ?? props.ContainerDefinitions[0]!;
      const tag = container.Image.slice(container.Image.lastIndexOf(':') + 1);
      const imageDir = images.get(tag);
      if (!imageDir) throw new Error(`${logicalId}: image ${container.Image} is no Docker image asset of the assembly`);
      const lock = readFileSync(path.join(imageDir, 'layer', 'package-lock.json'), 'utf8');
      const layer = [...new Set(assembly.functions.flatMap((f) => f.layerDirs))].find((dir) => {
        const file = path.join(dir, 'nodejs', 'package-lock.json');
        return existsSync(file) && readFileSync(file, 'utf8') === lock;
      });
      if (!layer) throw new Error(`${logicalId}: no layer asset was installed from the image's lockfile (layer/package-lock.json)`);
      out.push({
        stack: stack.stackName,
        logicalId,
        arn: String(assembly.resolve(stack.stackName, { Ref: logicalId })),
        taskRoleLogicalId: raw.TaskRoleArn['Fn::GetAtt'][0],
        executionRoleLogicalId: raw.ExecutionRoleArn['Fn::GetAtt'][0],
        passRoles: [props.TaskRoleArn, props.ExecutionRoleArn],
        container: { name: container.Name, image: container.Image, environment: Object.fromEntries((container.Environment ?? []).map((e) => [e.Name, String(e.Value)])) },
        imageDir,
        nodeModules: path.join(layer, 'nodejs', 'node_modules'),
      });
    }
  }
  return out;
}

/** Image tag → build context directory, from every stack's asset manifest. */
function dockerImages(dir: string): Map<string, string> {
  const images = new Map<string, string>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.assets.json'))) {
    const manifest = JSON.parse(readFileSync(path.join(dir, file), 'utf8')) as {
      dockerImages?: Record<string, { source: { directory: string }; destinations: Record<string, { imageTag: string }> }>;
    };
    for (const image of Object.values(manifest.dockerImages ?? {})) {
      for (const d of Object.values(image.destinations)) images.set(d.imageTag, path.join(dir, image.source.directory));
    }
  }
  return images;
}

export interface ContainerProcess {
  readonly exited: Promise<number | null>;
  stop(): void;
  /** Everything the container wrote (its CloudWatch log stream). */
  output(): string;
  dispose(): Promise<void>;
}

export interface ContainerLaunch {
  readonly taskArn: string;
  /** RunTask's container overrides. */
  readonly environment: Readonly<Record<string, string>>;
  readonly endpoint: string;
  readonly credentials: { accessKeyId: string; secretAccessKey: string };
}

export function startContainer(definition: TaskDefinitionArtifact, launch: ContainerLaunch): ContainerProcess {
  const dockerfile = readFileSync(path.join(definition.imageDir, 'Dockerfile'), 'utf8');
  const workdir = /^WORKDIR (.+)$/m.exec(dockerfile)?.[1]?.trim();
  const cmd = JSON.parse(/^CMD (.*)$/m.exec(dockerfile)?.[1] ?? 'null') as string[] | null;
  if (!workdir || !cmd?.length) throw new Error(`${definition.imageDir}/Dockerfile names no WORKDIR or CMD`);
  if (!/^COPY app\/ \.\/$/m.test(dockerfile)) throw new Error('the Dockerfile no longer copies app/ into its WORKDIR: update test/deploy/containers.ts');
  const root = mkdtempSync(path.join(tmpdir(), `rask-task-${definition.logicalId}-`));
  const work = path.join(root, workdir);
  cpSync(path.join(definition.imageDir, 'app'), work, { recursive: true });
  symlinkSync(definition.nodeModules, path.join(work, 'node_modules'));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: work,
    ...definition.container.environment,
    ...launch.environment,
    // What ECS adds, and the fake's endpoints and the task role's credentials.
    ECS_CONTAINER_METADATA_URI_V4: `http://169.254.170.2/v4/${launch.taskArn.split('/').pop()}`,
    AWS_REGION: FAKE_REGION,
    AWS_DEFAULT_REGION: FAKE_REGION,
    AWS_ACCESS_KEY_ID: launch.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: launch.credentials.secretAccessKey,
    AWS_SESSION_TOKEN: 'fake-task-session-token',
    AWS_ENDPOINT_URL: launch.endpoint,
    AWS_ENDPOINT: launch.endpoint,
    AWS_ALLOW_HTTP: 'true',
    AWS_VIRTUAL_HOSTED_STYLE_REQUEST: 'false',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  // The image's Node (22, the functions' runtime) stands in as this machine's node, as in the Lambda sandbox.
  const child: ChildProcess = spawn(cmd[0] === 'node' ? process.execPath : cmd[0]!, cmd.slice(1), { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let logs = '';
  child.stdout!.on('data', (d: Buffer) => (logs += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (logs += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    exited,
    stop: () => {
      child.kill('SIGTERM');
    },
    output: () => logs,
    dispose: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      rmSync(root, { recursive: true, force: true });
    },
  };
}
