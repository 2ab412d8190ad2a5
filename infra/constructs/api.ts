import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as route53Targets from 'aws-cdk-lib/aws-route53-targets';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { Bundle } from '../../lib/contract/operations.js';
import type { RaskConfig } from '../config.js';
import { acknowledge, acknowledgeManagedPolicy } from '../nag.js';
import { edgeRules } from './edge-rules.js';
import { catalogRoutes, openApiDocument } from './openapi.js';

export interface CatalogApiProps {
  readonly config: RaskConfig;
  /** The function serving each bundle of the operation table. */
  readonly handlers: Readonly<Record<Bundle, lambda.IFunction>>;
  /** Per-operation mode: the function of each operation that has one (others go to their bundle's function). */
  readonly operationHandlers?: ReadonlyMap<string, lambda.IFunction>;
  readonly authorizer: lambda.IFunction;
}

/**
 * Request bodies are passed to Lambda as base64 for these media types. The wildcard type
 * (star slash star) is what makes Arrow work with the official client: it sends Arrow IPC
 * bodies with NO Content-Type, and API Gateway treats a missing Content-Type as
 * `application/json`; without a wildcard entry that body would be handed over as (UTF-8
 * mangled) text. With the wildcard every body, JSON included, arrives base64-encoded with
 * `isBase64Encoded: true`, which the adapter (lib/http/apigw-adapter.ts) decodes. Responses are
 * unaffected: a Lambda proxy response is decoded from base64 only when it says
 * `isBase64Encoded: true` (our Arrow responses); JSON is returned as text. The two Arrow types
 * are listed to document intent.
 */
export const BINARY_MEDIA_TYPES = ['application/vnd.apache.arrow.stream', 'application/vnd.apache.arrow.file', '*/*'];

/** How each API Gateway-generated error is rewritten into the spec's JSON error contract. */
export interface GatewayErrorMapping {
  readonly type: apigw.ResponseType;
  /** Overrides the status API Gateway would use. */
  readonly statusCode?: string;
  readonly code: number;
  /** A fixed message, or undefined to use API Gateway's own (JSON-quoted by `messageString`). */
  readonly message?: string;
}

const KEY_HELP = 'missing or invalid API key: send the key as the x-api-key header or as Authorization: Bearer <key>';

export const GATEWAY_ERRORS: readonly GatewayErrorMapping[] = [
  // The authorizer denied (wrong key) or API Gateway refused before calling it: both mean
  // "who are you?", which the contract answers with 401 / code 16 (not 403, which is for a
  // known caller without permission).
  { type: apigw.ResponseType.UNAUTHORIZED, statusCode: '401', code: 16, message: KEY_HELP },
  { type: apigw.ResponseType.ACCESS_DENIED, statusCode: '401', code: 16, message: KEY_HELP },
  // No resource/method matches: what the local router answers as 404 / code 0.
  {
    type: apigw.ResponseType.MISSING_AUTHENTICATION_TOKEN,
    statusCode: '404',
    code: 0,
    message: 'no operation at this path with this method (paths have no trailing slash)',
  },
  {
    type: apigw.ResponseType.REQUEST_TOO_LARGE,
    statusCode: '413',
    code: 13,
    message:
      'request body exceeds the API limit; for larger writes declare the table and write directly to its location with the vended credentials',
  },
  { type: apigw.ResponseType.THROTTLED, statusCode: '429', code: 21, message: 'too many requests; retry with backoff' },
  { type: apigw.ResponseType.QUOTA_EXCEEDED, statusCode: '429', code: 21, message: 'request quota exceeded' },
  { type: apigw.ResponseType.WAF_FILTERED, statusCode: '403', code: 15, message: 'request blocked by the web application firewall' },
  { type: apigw.ResponseType.AUTHORIZER_FAILURE, statusCode: '500', code: 18, message: 'the API key could not be checked' },
  { type: apigw.ResponseType.AUTHORIZER_CONFIGURATION_ERROR, statusCode: '500', code: 18, message: 'the API key could not be checked' },
  {
    type: apigw.ResponseType.INTEGRATION_TIMEOUT,
    statusCode: '504',
    code: 18,
    message: 'the operation did not finish within the API time limit; it may or may not have taken effect',
  },
  { type: apigw.ResponseType.DEFAULT_4XX, code: 13 },
  { type: apigw.ResponseType.DEFAULT_5XX, code: 18 },
];

/** The body template: `instance` is API Gateway's request id, like the catalog's own errors. */
export function errorTemplate(mapping: GatewayErrorMapping): string {
  const error = mapping.message === undefined ? '$context.error.messageString' : JSON.stringify(mapping.message);
  return `{"code": ${mapping.code}, "error": ${error}, "instance": "$context.requestId"}`;
}

/**
 * The REST API (v1). REST rather than HTTP API because an HTTP API decodes the path before
 * routing: `%2F` inside an id becomes `/` (404) and `+` vs space is lost. REST keeps
 * `event.path` encoded and the router form-decodes ids itself.
 *
 * The routes are one OpenAPI document generated from the operation table (./openapi.ts), deployed
 * as a SpecRestApi; every method is served by the function of its operation (per-operation
 * mode) or of its bundle and guarded by the admin-key authorizer. API Gateway
 * matches paths exactly, so `/v1/table/` (trailing slash) is not `/v1/table`: it gets the 404
 * JSON error, as there is no way to declare optional trailing slashes on a REST API.
 */
export class CatalogApi extends Construct {
  readonly api: apigw.SpecRestApi;
  /** The OpenAPI document the API is deployed from (./openapi.ts), with CDK tokens in it. */
  readonly document: Record<string, unknown>;
  /** The stack's own web ACL with the per-IP rate rule (absent with rask:webAclArn or rask:wafRateLimit=off). */
  webAcl?: wafv2.CfnWebACL;
  readonly accessLogs: logs.LogGroup;
  readonly executionLogs: logs.LogGroup;
  /** The URI to give clients, without a trailing slash (clients append `/v1/...`): the custom domain's when there is one, else the stage URL. */
  readonly endpoint: string;
  /** The custom domain, when `rask:domainName` is set. */
  readonly domain?: apigw.DomainName;

  constructor(scope: Construct, id: string, props: CatalogApiProps) {
    super(scope, id);
    const { config } = props;

    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: config.logRetentionDays as logs.RetentionDays,
      // The audit trail outlives the stack; it still expires with its retention.
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const restApiName = `${config.stackName}-catalog`;
    const description = 'rask: Lance Namespace REST catalog';
    const perOperation = props.operationHandlers ?? new Map<string, lambda.IFunction>();
    const functions: Record<string, lambda.IFunction> = { ...props.handlers, ...Object.fromEntries(perOperation) };
    const stack = Stack.of(this);
    this.document = openApiDocument({
      title: restApiName,
      description,
      routes: catalogRoutes(new Set(perOperation.keys())),
      functions: Object.fromEntries(Object.entries(functions).map(([target, fn]) => [target, fn.functionArn])),
      authorizer: { functionArn: props.authorizer.functionArn, cacheSeconds: config.authorizerCacheSeconds },
      binaryMediaTypes: BINARY_MEDIA_TYPES,
      gatewayResponses: GATEWAY_ERRORS.map((m) => ({ type: m.type.responseType, statusCode: m.statusCode, template: errorTemplate(m) })),
      lambdaUriPrefix: `arn:${stack.partition}:apigateway:${stack.region}:lambda:path/2015-03-31/functions/`,
    });

    // One document for every route (./openapi.ts): no AWS::ApiGateway::Resource or ::Method per
    // route, so the route count costs no CloudFormation resources.
    this.api = new apigw.SpecRestApi(this, 'Api', {
      restApiName,
      description,
      apiDefinition: apigw.ApiDefinition.fromInline(this.document),
      endpointTypes: [apigw.EndpointType.REGIONAL],
      // Fail the deploy, not the first request, if API Gateway cannot import part of the document.
      failOnWarnings: true,
      cloudWatchRole: config.createApiGatewayCloudWatchRole,
      ...(config.createApiGatewayCloudWatchRole ? { cloudWatchRoleRemovalPolicy: RemovalPolicy.RETAIN } : {}),
      deployOptions: {
        stageName: config.stageName,
        throttlingRateLimit: config.throttleRateLimit,
        throttlingBurstLimit: config.throttleBurstLimit,
        accessLogDestination: new apigw.LogGroupLogDestination(this.accessLogs),
        accessLogFormat: apigw.AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
        // Execution logs for errors only; never request/response bodies (they carry data and
        // the x-api-key header would be logged with them).
        loggingLevel: apigw.MethodLoggingLevel.ERROR,
        dataTraceEnabled: false,
        // Per-method metrics (latency, 4xx, 5xx per resource) and X-Ray from the edge on, so a
        // trace starts at API Gateway and continues into the function.
        metricsEnabled: true,
        tracingEnabled: true,
      },
    });
    // A SpecRestApi's deployment does not follow its body by itself: hashing the document into
    // the deployment's logical id makes a changed document a new deployment of the stage.
    this.api.latestDeployment?.addToLogicalId(this.document);
    this.grantInvoke(functions, props.authorizer);

    // API Gateway creates the execution-log group on first use with no retention; creating it
    // first, under the name API Gateway writes to, gives it one.
    this.executionLogs = new logs.LogGroup(this, 'ExecutionLogs', {
      logGroupName: `API-Gateway-Execution-Logs_${this.api.restApiId}/${config.stageName}`,
      retention: config.logRetentionDays as logs.RetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.api.deploymentStage.node.addDependency(this.executionLogs);

    // CDK's own "Endpoint" output ends with "/", which clients would turn into "//v1/...";
    // the stack outputs `endpoint` instead.
    this.api.node.tryRemoveChild('Endpoint');

    if (config.webAclArn) {
      new wafv2.CfnWebACLAssociation(this, 'WebAcl', {
        resourceArn: this.api.deploymentStage.stageArn,
        webAclArn: config.webAclArn,
      });
    } else if (config.wafRateLimit !== 'off') {
      this.webAcl = perIpRateAcl(this, config.stackName, config.wafRateLimit);
      new wafv2.CfnWebACLAssociation(this, 'WebAcl', { resourceArn: this.api.deploymentStage.stageArn, webAclArn: this.webAcl.attrArn });
    } else {
      acknowledge(
        this.api,
        'AwsSolutions-APIG3',
        'WAF is switched off here (rask:wafRateLimit=off and no rask:webAclArn); every request is still authenticated by the authorizer and the stage is throttled.',
      );
    }
    acknowledge(
      this.api,
      'AwsSolutions-APIG2',
      'Requests are validated by the catalog against the operation table (zod schemas, JSON error contract); API Gateway models cannot describe Arrow IPC bodies and a second copy of the spec would drift.',
    );
    // No AwsSolutions-COG4 / APIG4 to acknowledge: cdk-nag reads those from AWS::ApiGateway::Method
    // resources, and the methods are in the document, where every route but the console's names
    // the REQUEST Lambda authorizer (test/infra/openapi.test.ts holds that).
    if (config.createApiGatewayCloudWatchRole) {
      acknowledgeManagedPolicy(
        this.api,
        'service-role/AmazonAPIGatewayPushToCloudWatchLogs',
        "API Gateway's account-level logging role must carry this AWS-maintained policy for access and execution logs to be delivered.",
      );
    }

    if (config.domainName) this.domain = this.addDomain(config);
    this.endpoint = config.domainName
      ? `https://${config.domainName}${config.domainBasePath ? `/${config.domainBasePath}` : ''}`
      : `https://${this.api.restApiId}.execute-api.${stack.region}.${stack.urlSuffix}/${config.stageName}`;
  }

  /**
   * The custom domain (docs/deploy.md, "A custom domain"): a regional domain mapped to the stage,
   * and its alias record when a hosted zone is given.
   */
  private addDomain(config: RaskConfig): apigw.DomainName {
    const domainName = config.domainName!;
    const domain = new apigw.DomainName(this, 'Domain', {
      domainName,
      certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', config.certificateArn!),
      endpointType: apigw.EndpointType.REGIONAL,
      securityPolicy: apigw.SecurityPolicy.TLS_1_2,
    });
    // The mapping's own path is what clients put before /v1 (the stage name is not in the URL).
    domain.addBasePathMapping(this.api, { basePath: config.domainBasePath, stage: this.api.deploymentStage });
    if (config.hostedZoneId && config.hostedZoneName) {
      const zone = route53.HostedZone.fromHostedZoneAttributes(this, 'Zone', { hostedZoneId: config.hostedZoneId, zoneName: config.hostedZoneName });
      new route53.ARecord(this, 'Alias', { zone, recordName: domainName, target: route53.RecordTarget.fromAlias(new route53Targets.ApiGatewayDomain(domain)) });
    }
    return domain;
  }

  /**
   * API Gateway may invoke each route function and the authorizer: one permission per function
   * whose source ARN pattern covers every stage, method and path of this API (not one per
   * method, which would crowd the 500-resource stack limit and the 20 KB function policy). The
   * permissions live in the API's stack even for the per-operation functions of the nested
   * stack: there they would need the API's id, which already needs their ARNs (a cycle).
   */
  private grantInvoke(functions: Readonly<Record<string, lambda.IFunction>>, authorizer: lambda.IFunction): void {
    const principal = 'apigateway.amazonaws.com';
    for (const [target, fn] of Object.entries(functions)) {
      new lambda.CfnPermission(this, `Invoke${target.charAt(0).toUpperCase()}${target.slice(1)}`, {
        action: 'lambda:InvokeFunction',
        functionName: fn.functionArn,
        principal,
        sourceArn: this.api.arnForExecuteApi('*', '/*', '*'),
      });
    }
    new lambda.CfnPermission(this, 'InvokeAuthorizer', {
      action: 'lambda:InvokeFunction',
      functionName: authorizer.functionArn,
      principal,
      sourceArn: Stack.of(this).formatArn({ service: 'execute-api', resource: this.api.restApiId, resourceName: 'authorizers/*' }),
    });
  }
}

/**
 * Access log fields (one JSON object per request). Deliberately no headers: the API key travels
 * in one.
 */
const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  extendedRequestId: '$context.extendedRequestId',
  requestTime: '$context.requestTime',
  ip: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  httpMethod: '$context.httpMethod',
  path: '$context.path',
  resourcePath: '$context.resourcePath',
  protocol: '$context.protocol',
  status: '$context.status',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationStatus: '$context.integration.status',
  integrationLatency: '$context.integration.latency',
  errorType: '$context.error.responseType',
  errorMessage: '$context.error.message',
  authorizerStatus: '$context.authorizer.status',
  authorizerLatency: '$context.authorizer.latency',
  authorizerError: '$context.authorizer.error',
  principal: '$context.authorizer.principalId',
};

/**
 * The stack's web ACL: one rate-based rule that blocks a client IP sending more than `limit`
 * requests in 5 minutes, answered like every throttle (429 / code 21 with Retry-After) so the
 * client backs off; everything else is allowed through to the stage throttle and the authorizer.
 * It runs before API Gateway, so a flood from one address costs no authorizer invocation.
 * docs/deploy.md, "Rate limits at the edge".
 */
function perIpRateAcl(scope: Construct, stackName: string, limit: number): wafv2.CfnWebACL {
  const visibility = (name: string) => ({ cloudWatchMetricsEnabled: true, metricName: name, sampledRequestsEnabled: true });
  // Oversized bodies and credential-less requests, refused here too (infra/constructs/edge-rules.ts).
  const edge = edgeRules(stackName, 1, visibility);
  return new wafv2.CfnWebACL(scope, 'PerIpRate', {
    scope: 'REGIONAL',
    description: `rask ${stackName}: at most ${limit} requests per client IP in 5 minutes`,
    defaultAction: { allow: {} },
    visibilityConfig: visibility(`${stackName}-web-acl`),
    customResponseBodies: {
      throttled: {
        contentType: 'APPLICATION_JSON',
        content: JSON.stringify({ code: 21, error: `too many requests from this address: at most ${limit} in 5 minutes; retry later` }),
      },
      ...edge.bodies,
    },
    rules: [
      {
        name: 'per-ip-rate',
        priority: 0,
        statement: { rateBasedStatement: { limit, aggregateKeyType: 'IP', evaluationWindowSec: 300 } },
        action: { block: { customResponse: { responseCode: 429, customResponseBodyKey: 'throttled', responseHeaders: [{ name: 'retry-after', value: '60' }] } } },
        visibilityConfig: visibility(`${stackName}-per-ip-rate`),
      },
      ...edge.rules,
    ],
  });
}
