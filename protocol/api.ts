/**
 * The shape of a generated API module: one object per API key tying its request and response codecs to
 * the versions Kafka's schema declares.
 */
import type { Reader } from './wire/reader.js';
import type { Writer } from './wire/writer.js';

export interface MessageCodec<T> {
  /** Kafka's message name, e.g. `JoinGroupRequest`. */
  readonly name: string;
  encode(w: Writer, message: T, version: number): void;
  decode(r: Reader, version: number): T;
  /** A message with every field at its schema default, overridden by `init`. */
  create(init?: Partial<T>): T;
}

export interface VersionRange {
  readonly min: number;
  readonly max: number;
}

export interface ApiDescriptor<Req = unknown, Res = unknown> {
  readonly apiKey: number;
  /** Kafka's API name without the Request/Response suffix, e.g. `JoinGroup`. */
  readonly name: string;
  readonly validVersions: VersionRange;
  /** First flexible version (KIP-482), or null when no version is flexible. */
  readonly firstFlexibleVersion: number | null;
  /** Versions the schema marks deprecated (KIP-896), or null. */
  readonly deprecatedVersions: VersionRange | null;
  /** True when the schema's newest version is not yet stable and is not advertised by Kafka by default. */
  readonly latestVersionUnstable: boolean;
  /** Where Kafka serves the API: `broker`, `controller`, `zkBroker`. */
  readonly listeners: readonly string[];
  readonly request: MessageCodec<Req>;
  readonly response: MessageCodec<Res>;
}

export function isFlexible(api: ApiDescriptor, version: number): boolean {
  return api.firstFlexibleVersion !== null && version >= api.firstFlexibleVersion;
}

/**
 * Request header version for an API version (Kafka's `ApiMessageType.requestHeaderVersion`): v2 for
 * flexible versions, v1 otherwise, except ControlledShutdown v0 which predates client ids (v0).
 */
export function requestHeaderVersion(api: ApiDescriptor, version: number): number {
  if (api.apiKey === 7 && version === 0) return 0;
  return isFlexible(api, version) ? 2 : 1;
}

/**
 * Response header version (Kafka's `ApiMessageType.responseHeaderVersion`): v1 for flexible versions, v0
 * otherwise, and always v0 for ApiVersions so a client can parse the response whatever version it sent.
 */
export function responseHeaderVersion(api: ApiDescriptor, version: number): number {
  if (api.apiKey === 18) return 0;
  return isFlexible(api, version) ? 1 : 0;
}
