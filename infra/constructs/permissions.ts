import * as iam from 'aws-cdk-lib/aws-iam';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { acknowledgeWildcardResource } from '../nag.js';

/**
 * Prefix-scoped S3 permissions. CDK's `bucket.grantReadWrite` covers the whole bucket; every
 * grant here names a key prefix instead, so the registry and the warehouse stay apart even
 * when they share nothing but an account, and so no role can touch objects outside the
 * catalog's prefixes of a shared (existing) warehouse bucket.
 */

/** `*-read`: what a function serving only reads gets (per-operation mode): objects read and listed, never written. */
export type ObjectAccess = 'registry' | 'warehouse' | 'registry-read' | 'warehouse-read';

const OBJECT_ACTIONS: Readonly<Record<ObjectAccess, string[]>> = {
  'registry-read': ['s3:GetObject'],
  'warehouse-read': ['s3:GetObject'],
  // Conditional writes need GetObject as well (If-Match compares against the current ETag).
  registry: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject'],
  // Lance writes data files with multipart uploads and aborts them on failure.
  warehouse: ['s3:GetObject', 's3:PutObject', 's3:DeleteObject', 's3:AbortMultipartUpload', 's3:ListMultipartUploadParts'],
};

export interface PrefixGrant {
  readonly bucket: s3.IBucket;
  /** A key prefix ending in "/". */
  readonly prefix: string;
  readonly access: ObjectAccess;
}

/** The statements for one prefix; the object ARN is returned too so its wildcard can be acknowledged. */
export function prefixStatements(grant: PrefixGrant): { statements: iam.PolicyStatement[]; objectsArn: string } {
  const objectsArn = grant.bucket.arnForObjects(`${grant.prefix}*`);
  const statements = [
    new iam.PolicyStatement({ actions: OBJECT_ACTIONS[grant.access], resources: [objectsArn] }),
    new iam.PolicyStatement({
      actions: ['s3:ListBucket'],
      resources: [grant.bucket.bucketArn],
      // Listing is allowed only at or below the prefix ("registry/*" also matches "registry/").
      conditions: { StringLike: { 's3:prefix': [`${grant.prefix}*`] } },
    }),
  ];
  if (grant.access.startsWith('warehouse')) {
    // Lets Lance's object store resolve a bucket's region; reveals nothing about objects.
    statements.push(new iam.PolicyStatement({ actions: ['s3:GetBucketLocation'], resources: [grant.bucket.bucketArn] }));
  }
  return { statements, objectsArn };
}

/** Adds prefix grants to a role and acknowledges the one wildcard each grant must have. */
export function grantPrefixes(role: iam.Role, grants: readonly PrefixGrant[]): void {
  for (const grant of grants) {
    const { statements, objectsArn } = prefixStatements(grant);
    for (const statement of statements) role.addToPrincipalPolicy(statement);
    acknowledgeWildcardResource(
      role,
      objectsArn,
      `Object actions are scoped to the catalog's ${grant.access} key prefix "${grant.prefix}"; the trailing * stands for the object keys the catalog creates under it (table names and record keys are not known at deploy time).`,
    );
  }
}
