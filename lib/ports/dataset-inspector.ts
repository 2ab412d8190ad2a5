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

/**
 * A direct invocation of the data function by the metadata function (never an API Gateway
 * event: those always carry `httpMethod`), asking it to open a dataset for DescribeTable's
 * detailed metadata. The wire shape between lib/adapters/aws/lambda-inspector.ts and
 * lib/app/inspect-event.ts, owned by the port both sides implement.
 */
export interface InspectEvent {
  readonly rask: 'inspect';
  readonly location: string;
  readonly selection: { readonly version?: number; readonly tag?: string; readonly branch?: string };
}

export type InspectResult =
  | { readonly ok: true; readonly details: DatasetDetails }
  | { readonly ok: false; readonly code: number; readonly message: string; readonly detail?: string };
