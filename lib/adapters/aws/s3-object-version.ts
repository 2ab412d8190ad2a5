import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { statusOf, storageFailure } from './s3-errors.js';

/**
 * Reads one version of an object (GetObject with VersionId: `s3:GetObjectVersion` in IAM), as an
 * S3 event notification names it: the bytes that write put there, whatever was written to the key
 * since. Without a version id (a bucket without versioning) the current object. Undefined when
 * that version (or the key) is gone.
 */
export async function readObjectVersion(client: S3Client, bucket: string, key: string, versionId: string | undefined): Promise<Buffer | undefined> {
  try {
    const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key, ...(versionId === undefined ? {} : { VersionId: versionId }) }));
    return Buffer.from((await res.Body?.transformToByteArray()) ?? []);
  } catch (error) {
    const name = (error as { name?: string } | undefined)?.name;
    if (name === 'NoSuchKey' || name === 'NoSuchVersion' || (name !== 'NoSuchBucket' && statusOf(error) === 404)) return undefined;
    throw storageFailure(error);
  }
}
