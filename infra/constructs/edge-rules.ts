import type * as wafv2 from 'aws-cdk-lib/aws-wafv2';

/**
 * Requests the stack's web ACL refuses before API Gateway, so they cost neither an authorizer
 * invocation nor a Lambda invocation (issue 28; docs/deploy.md, "Refused at the edge"). They ride
 * in the web ACL of the per-IP rate rule (infra/constructs/api.ts), after it: absent with
 * `rask:wafRateLimit=off` or `rask:webAclArn` (an ACL of yours may add the same two rules).
 *
 * - `body-too-large`: a `content-length` over EDGE_BODY_LIMIT_BYTES. Every body reaches Lambda
 *   base64-encoded (binary media type `*` `/` `*`), inside Lambda's 6 MB synchronous event: a
 *   larger body would end in API Gateway's generic 5xx. Answered 413 / code 13 naming the limit.
 *   A chunked body (no `content-length`) is not seen here; over 10 MB API Gateway refuses it
 *   (REQUEST_TOO_LARGE → 413 / 13), in between Lambda does (a generic 5xx).
 * - `no-credentials`: neither `x-api-key` nor `Authorization`. Every route needs one, so this is
 *   the 401 the authorizer would answer, without calling it. (API Gateway's own identity sources
 *   cannot say "one of two headers": they require all of them, which is why the authorizer has
 *   none unless its cache is on; the web ACL can.)
 */
export const EDGE_BODY_LIMIT_BYTES = 4_400_000;

const KEY_HELP = 'missing API key: send the key as the x-api-key header or as Authorization: Bearer <key>';

/**
 * A regular expression matching exactly the decimal integers greater than `limit` (leading zeros
 * allowed, nothing else): WAF compares header values as text, so "greater than" is spelt out.
 */
export function integerAbove(limit: number): string {
  const n = String(limit + 1);
  const alternatives = [`[1-9]\\d{${n.length},}`];
  for (let i = 0; i < n.length; i++) {
    const digit = Number(n[i]);
    if (digit === 9) continue;
    const rest = n.length - i - 1;
    alternatives.push(`${n.slice(0, i)}[${digit + 1}-9]${rest > 0 ? `\\d{${rest}}` : ''}`);
  }
  alternatives.push(n);
  return `^0*(?:${alternatives.join('|')})$`;
}

// SingleHeader is untyped JSON in the CloudFormation schema: CDK passes it through as written, so its key is spelt as CloudFormation wants.
const header = (name: string) => ({ singleHeader: { Name: name } });
const none = [{ priority: 0, type: 'NONE' }];
/** True when the header is missing or empty (AWS's own idiom for "header absent"). */
const absent = (name: string): wafv2.CfnWebACL.StatementProperty => ({
  notStatement: { statement: { sizeConstraintStatement: { fieldToMatch: header(name), comparisonOperator: 'GT', size: 0, textTransformations: none } } },
});

export function edgeRules(
  stackName: string,
  firstPriority: number,
  visibility: (name: string) => wafv2.CfnWebACL.VisibilityConfigProperty,
): { rules: wafv2.CfnWebACL.RuleProperty[]; bodies: Record<string, wafv2.CfnWebACL.CustomResponseBodyProperty> } {
  return {
    bodies: {
      tooLarge: {
        contentType: 'APPLICATION_JSON',
        content: JSON.stringify({
          code: 13,
          error: `request body exceeds ${EDGE_BODY_LIMIT_BYTES} bytes, the API's limit (Lambda's 6 MB event holds the body base64-encoded); for larger writes declare the table and write directly to its location with the vended credentials, or send smaller batches`,
        }),
      },
      noCredentials: { contentType: 'APPLICATION_JSON', content: JSON.stringify({ code: 16, error: KEY_HELP }) },
    },
    rules: [
      {
        name: 'body-too-large',
        priority: firstPriority,
        statement: { regexMatchStatement: { fieldToMatch: header('content-length'), regexString: integerAbove(EDGE_BODY_LIMIT_BYTES), textTransformations: none } },
        action: { block: { customResponse: { responseCode: 413, customResponseBodyKey: 'tooLarge' } } },
        visibilityConfig: visibility(`${stackName}-body-too-large`),
      },
      {
        name: 'no-credentials',
        priority: firstPriority + 1,
        statement: { andStatement: { statements: [absent('x-api-key'), absent('authorization')] } },
        action: { block: { customResponse: { responseCode: 401, customResponseBodyKey: 'noCredentials' } } },
        visibilityConfig: visibility(`${stackName}-no-credentials`),
      },
    ],
  };
}
