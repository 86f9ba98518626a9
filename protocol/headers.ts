/**
 * Request and response headers, and the frames around them.
 *
 *   request frame:  int32 size | RequestHeader (v0/v1/v2) | request body
 *   response frame: int32 size | ResponseHeader (v0/v1)   | response body
 *
 * The header version follows from the API and its version (see api.ts). A request for a version this codec
 * does not know is still given a header: the newest version's header when the version is above the range
 * (what Kafka does so that ApiVersions can answer UNSUPPORTED_VERSION, KIP-511), v1 below it.
 */
import type { ApiDescriptor } from './api.js';
import { requestHeaderVersion, responseHeaderVersion } from './api.js';
import { apiByKey } from './messages/index.gen.js';
import { decodeRequestHeader, encodeRequestHeader, type RequestHeader } from './messages/request-header.gen.js';
import { decodeResponseHeader, encodeResponseHeader } from './messages/response-header.gen.js';
import { Reader } from './wire/reader.js';
import { Writer } from './wire/writer.js';

export type { RequestHeader };

export interface ParsedRequestHeader {
  header: RequestHeader;
  /** The API, or undefined for an API key the schema set does not have. */
  api: ApiDescriptor | undefined;
  /** True when the version is within the API's valid versions. */
  versionKnown: boolean;
}

/**
 * Reads a request header from the start of `r` (the frame body, after the size prefix). On success the
 * reader stands at the first byte of the request body. Decode failures are left in the reader (`r.ok`).
 */
export function readRequestHeader(r: Reader): ParsedRequestHeader {
  const start = r.pos;
  const apiKey = r.int16();
  const apiVersion = r.int16();
  r.pos = r.ok ? start : r.pos;
  const api = apiByKey(apiKey);
  let headerVersion = 1;
  let versionKnown = false;
  if (api) {
    versionKnown = apiVersion >= api.validVersions.min && apiVersion <= api.validVersions.max;
    if (versionKnown) headerVersion = requestHeaderVersion(api, apiVersion);
    else if (apiVersion > api.validVersions.max) headerVersion = requestHeaderVersion(api, api.validVersions.max);
  }
  const header = decodeRequestHeader(r, headerVersion);
  return { header, api, versionKnown };
}

/** Encodes a complete request frame (size prefix included) as chunks ready for a socket. */
export function encodeRequestFrame<Req>(api: ApiDescriptor<Req, unknown>, version: number, correlationId: number, clientId: string | null, body: Req): Buffer[] {
  const w = new Writer(512);
  w.int32(0); // size, patched below
  encodeRequestHeader(
    w,
    { requestApiKey: api.apiKey, requestApiVersion: version, correlationId, clientId },
    requestHeaderVersion(api, version),
  );
  api.request.encode(w, body, version);
  return patchSize(w);
}

/** Encodes a complete response frame (size prefix included) as chunks ready for a socket. */
export function encodeResponseFrame<Res>(api: ApiDescriptor<unknown, Res>, version: number, correlationId: number, body: Res): Buffer[] {
  const w = new Writer(256);
  w.int32(0);
  encodeResponseHeader(w, { correlationId }, responseHeaderVersion(api, version));
  api.response.encode(w, body, version);
  return patchSize(w);
}

function patchSize(w: Writer): Buffer[] {
  const chunks = w.chunks();
  chunks[0]!.writeInt32BE(w.length - 4, 0);
  return chunks;
}

/**
 * Decodes a response frame body (after the size prefix) for a request of `api` at `version`. Throws a
 * DecodeError when the bytes do not form exactly one response.
 */
export function decodeResponseFrame<Res>(api: ApiDescriptor<unknown, Res>, version: number, body: Buffer): { correlationId: number; response: Res } {
  const r = new Reader(body);
  const { correlationId } = decodeResponseHeader(r, responseHeaderVersion(api, version));
  const response = api.response.decode(r, version);
  r.complete();
  return { correlationId, response };
}
