import { InvokeCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import { CatalogError, InternalError, type ErrorCodeValue } from '../../errors.js';
import type { DatasetDetails, DatasetInspector, InspectEvent, InspectResult } from '../../ports/dataset-inspector.js';

/**
 * The dataset inspector for the metadata function: it cannot load LanceDB, so it invokes the
 * data function directly (not through API Gateway) with an InspectEvent. Errors come back as
 * codes and are rethrown as the same CatalogError, so DescribeTable answers exactly what the
 * local server answers. Only roles granted lambda:InvokeFunction can send such an event.
 */
export function lambdaInspector(client: LambdaClient, functionName: string): DatasetInspector {
  return {
    async inspect(location, options): Promise<DatasetDetails> {
      const event: InspectEvent = {
        rask: 'inspect',
        location,
        selection: { version: options.version, tag: options.tag, branch: options.branch },
      };
      const out = await client.send(
        new InvokeCommand({ FunctionName: functionName, Payload: Buffer.from(JSON.stringify(event)) }),
      );
      const text = out.Payload ? Buffer.from(out.Payload).toString('utf8') : '';
      if (out.FunctionError) {
        throw new InternalError(`the data function failed while reading ${location}`, { detail: text.slice(0, 500) });
      }
      let result: InspectResult;
      try {
        result = JSON.parse(text) as InspectResult;
      } catch {
        throw new InternalError('the data function answered an unreadable inspection result');
      }
      if (result.ok) return result.details;
      throw new CatalogError(result.code as ErrorCodeValue, result.message, result.detail ? { detail: result.detail } : {});
    },
  };
}

/**
 * The client class, re-exported for callers that load this adapter with a dynamic `import()`
 * (lib/app/aws.ts, functions/api-meta.ts): importing the SDK package itself dynamically would
 * keep every one of its commands in the bundle, since a module namespace cannot be tree-shaken.
 */
export { LambdaClient } from '@aws-sdk/client-lambda';
