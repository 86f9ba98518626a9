// ApiVersions v0-4 · v1: throttleTimeMs · v3+: flexible, client software name/version (KIP-511), features
// (KIP-584) · the response header is always v0 so any client can read it.
import { ApiVersionsApi, type ApiVersionsResponse, createApiVersionsResponse, createApiVersionsResponseApiVersion } from '../../protocol/messages/018-api-versions.gen.js';
import { encodeResponseFrame, type RequestHeader } from '../../protocol/headers.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { defineHandler, type Handler } from './handler.js';

/** The ApiVersions list, built from the handlers' declared ranges. */
export function supportedApiVersions(handlers: Iterable<Handler>): ApiVersionsResponse['apiKeys'] {
  return [...handlers]
    .sort((a, b) => a.api.apiKey - b.api.apiKey)
    .map((h) => createApiVersionsResponseApiVersion({ apiKey: h.api.apiKey, minVersion: h.advertisedMin ?? h.versions.min, maxVersion: h.versions.max }));
}

/** KIP-511: a client-software name or version must match this to be recorded. */
const SOFTWARE_PATTERN = /^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$/;

export const apiVersions = defineHandler({
  api: ApiVersionsApi,
  uses: ['apis'],
  versions: { min: 0, max: 4 },
  handle(req, ctx) {
    const res = createApiVersionsResponse({ apiKeys: ctx.services.apis.versions.map((k) => ({ ...k })) });
    if (ctx.apiVersion >= 3) {
      // KIP-511: invalid names are answered with INVALID_REQUEST.
      if (!SOFTWARE_PATTERN.test(req.clientSoftwareName) || !SOFTWARE_PATTERN.test(req.clientSoftwareVersion)) {
        res.errorCode = ErrorCode.INVALID_REQUEST;
        return res;
      }
      ctx.connection.clientSoftwareName = req.clientSoftwareName;
      ctx.connection.clientSoftwareVersion = req.clientSoftwareVersion;
    }
    return res;
  },
});

/**
 * The answer to an ApiVersions request whose version the broker does not serve: v0 layout (what every
 * client can parse) with UNSUPPORTED_VERSION and, as Kafka's ApiVersionsRequest.getErrorResponse does,
 * the ApiVersions range alone, so the client retries with the highest version it finds there (KIP-511).
 */
export function apiVersionsFallback(handlers: Iterable<Handler>, header: RequestHeader): Buffer[] {
  const own = supportedApiVersions(handlers).filter((k) => k.apiKey === ApiVersionsApi.apiKey);
  const res = createApiVersionsResponse({ errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: own });
  return encodeResponseFrame(ApiVersionsApi, 0, header.correlationId, res);
}
