/**
 * Reads what only the dataset itself knows (version, schema, metadata) for DescribeTable with
 * `load_detailed_metadata`. The metadata bundle does not load LanceDB, so this is a port: the
 * local server and the data Lambda inspect in-process; a metadata Lambda without one answers
 * Unsupported for that flag.
 */
export interface DatasetDetails {
  readonly version: number;
  readonly schema: unknown;
  readonly metadata?: Record<string, string>;
}

export interface DatasetInspector {
  inspect(location: string, options: { version?: number; tag?: string; branch?: string; storageOptions?: Record<string, string> }): Promise<DatasetDetails>;
}
