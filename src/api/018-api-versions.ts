// ApiVersions v0-5 · v1: throttleTimeMs · v3+: flexible, client software name/version (KIP-511), features
// (KIP-584, src/api/features.ts) · v4: supported features may have a minimum of 0 (KAFKA-17011) · v5: the
// client may name the cluster and node it means to reach (KIP-1242): naming one without the other is
// INVALID_REQUEST, naming another cluster or node is REBOOTSTRAP_REQUIRED · the response header is always
// v0 so any client can read it.
import { ApiVersionsApi, type ApiVersionsResponse, createApiVersionsResponse, createApiVersionsResponseApiVersion } from '../../protocol/messages/018-api-versions.gen.js';
import { encodeResponseFrame, type RequestHeader } from '../../protocol/headers.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { FINALIZED_FEATURES_EPOCH, finalizedFeatures, supportedFeatures } from './features.js';
import { defineHandler, handlersFor, type Handler } from './handler.js';
import type { ApiCatalog } from './services.js';

/** The ApiVersions list, built from the handlers' declared ranges. */
export function supportedApiVersions(handlers: Iterable<Handler>): ApiVersionsResponse['apiKeys'] {
  return [...handlers]
    .sort((a, b) => a.api.apiKey - b.api.apiKey)
    .map((h) => createApiVersionsResponseApiVersion({ apiKey: h.api.apiKey, minVersion: h.advertisedMin ?? h.versions.min, maxVersion: h.versions.max }));
}

/** ApiVersions' lists: a controller listener's holds the controller APIs, the others' the broker APIs. */
export function apiCatalog(handlers: ReadonlyMap<number, Handler>, controllerListeners: ReadonlySet<string>): ApiCatalog {
  const broker = supportedApiVersions(handlersFor(handlers, 'broker').values());
  const controller = supportedApiVersions(handlersFor(handlers, 'controller').values());
  return { versionsFor: (listenerName) => (controllerListeners.has(listenerName) ? controller : broker) };
}

/** KIP-511: a client-software name or version must match this to be recorded. */
const SOFTWARE_PATTERN = /^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$/;

export const apiVersions = defineHandler({
  api: ApiVersionsApi,
  uses: ['apis', 'node'],
  versions: { min: 0, max: 5 },
  handle(req, ctx) {
    const v = ctx.apiVersion;
    // Kafka's ApiVersionsRequest.getErrorResponse: an error code and, for these errors, no API list.
    const refused = (errorCode: number): ApiVersionsResponse => createApiVersionsResponse({ errorCode });
    if (v >= 5 && (req.clusterId === null) !== (req.nodeId === -1)) return refused(ErrorCode.INVALID_REQUEST);
    if (v >= 3) {
      // KIP-511: invalid names are answered with INVALID_REQUEST.
      if (!SOFTWARE_PATTERN.test(req.clientSoftwareName) || !SOFTWARE_PATTERN.test(req.clientSoftwareVersion)) return refused(ErrorCode.INVALID_REQUEST);
    }
    // KIP-1242: a client that reached the wrong cluster or node (an address reused after a move) rebootstraps.
    const { node } = ctx.services;
    if (v >= 5 && req.clusterId !== null && (req.clusterId !== node.clusterId || req.nodeId !== node.nodeId)) return refused(ErrorCode.REBOOTSTRAP_REQUIRED);
    const res = createApiVersionsResponse({ apiKeys: ctx.services.apis.versionsFor(ctx.connection.listenerName).map((k) => ({ ...k })) });
    if (v >= 3) {
      ctx.connection.clientSoftwareName = req.clientSoftwareName;
      ctx.connection.clientSoftwareVersion = req.clientSoftwareVersion;
      res.supportedFeatures = supportedFeatures(v);
      res.finalizedFeaturesEpoch = FINALIZED_FEATURES_EPOCH;
      res.finalizedFeatures = finalizedFeatures();
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
