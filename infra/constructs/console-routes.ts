import * as apigw from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { acknowledge } from '../nag.js';

/** The console's API Gateway methods, named apart from the operation table's (docs/console.md). */
export const CONSOLE_OPERATIONS = ['ConsolePage', 'ConsoleFile'] as const;

/**
 * The web console on the deployed API (docs/console.md): `GET /console` and
 * `GET /console/{file}`, served by the metadata function (its bundle carries the built files,
 * infra/bundling.ts) on the API's own origin, so the console needs no CORS and no CDN. These two
 * methods have no authorizer: the files are public and carry no secret, and every API call the
 * page makes is authorized as any client's.
 */
export function addConsoleRoutes(api: apigw.RestApi, meta: lambda.IFunction): void {
  // The same integration settings as the operations' (one API-wide invoke permission, not one per method).
  const integration = new apigw.LambdaIntegration(meta, { proxy: true, scopePermissionToMethod: false });
  const page = api.root.addResource('console');
  const open = { authorizationType: apigw.AuthorizationType.NONE };
  const methods = [
    page.addMethod('GET', integration, { ...open, operationName: CONSOLE_OPERATIONS[0] }),
    page.addResource('{file}').addMethod('GET', integration, { ...open, operationName: CONSOLE_OPERATIONS[1] }),
  ];
  for (const method of methods) {
    acknowledge(method, 'AwsSolutions-APIG4', 'The web console\'s static files (HTML, JS, CSS) are public and carry no secret; every API call the page makes goes through the authorizer.');
    acknowledge(method, 'AwsSolutions-COG4', 'The web console\'s static files need no caller; the API methods they call use the REQUEST Lambda authorizer.');
  }
}
