import type { Context } from 'aws-lambda';

/** A Lambda context as the runtime passes it, for calling entry handlers directly. */
export function lambdaContext(over: Partial<Context> = {}): Context {
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: 'rask-test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:eu-west-1:123456789012:function:rask-test',
    memoryLimitInMB: '1024',
    awsRequestId: 'lambda-req-1',
    logGroupName: '/aws/lambda/rask-test',
    logStreamName: 'stream',
    getRemainingTimeInMillis: () => 60_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
    ...over,
  };
}
