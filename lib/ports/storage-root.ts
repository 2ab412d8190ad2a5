/**
 * Where a warehouse's (or the registry's) bytes live: a directory on local disk or a prefix in an
 * S3 bucket. A value type of the ports (credential vending, object stores) and of the registry's
 * records; stored as JSON in them, so changing it needs a layout migration.
 */
export type StorageRoot =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 's3'; readonly bucket: string; readonly prefix: string; readonly region?: string };
