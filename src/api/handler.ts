/**
 * What an API handler is: one file per API key under src/api/ (`000-produce.ts`, ...) exports a handler
 * that names its API, the versions it serves, the services it uses (src/api/services.ts) and a function
 * from request to response. Kafka errors are data: a handler sets `errorCode` fields and returns. A thrown
 * error is an unexpected failure: the dispatch seam answers with the API's error response carrying
 * `kafkaErrorOf(err, UNKNOWN_SERVER_ERROR)` (src/api/error-response.ts), as Kafka answers with
 * `getErrorResponse`; only a request that does not parse closes the connection.
 */
import type { ApiDescriptor, VersionRange } from '../../protocol/api.js';
import type { RequestHeader } from '../../protocol/headers.js';
import type { Access } from './access.js';
import type { Principal, ServiceName, Services } from './services.js';

/** Returned by a handler that must not answer (Produce with acks=0). */
export const NO_RESPONSE: unique symbol = Symbol('no response');

export interface ConnectionInfo {
  readonly id: number;
  readonly remoteAddress: string;
  readonly listenerName: string;
  /** KIP-511: set from ApiVersions v3+. */
  clientSoftwareName: string | null;
  clientSoftwareVersion: string | null;
}

/** A request's context; `S` names the services the handler uses, and only those are in `services`. */
export interface RequestContext<S extends ServiceName = ServiceName> {
  readonly services: Pick<Services, S>;
  /** Who sent the request (User:ANONYMOUS on a listener without authentication). */
  readonly principal: Principal;
  /** The requester's rights under the configured authorizer (src/api/access.ts): every check KafkaApis makes goes here. */
  readonly access: Access;
  readonly header: RequestHeader;
  readonly apiVersion: number;
  readonly connection: ConnectionInfo;
  /** Aborted when the connection closes or the broker shuts down, so long waits (Fetch, JoinGroup) end early. */
  readonly signal: AbortSignal;
  /**
   * States why this request is refused (answered, but not done as asked): the dispatch seam logs it once,
   * with the client, API and correlation id (src/server/refusals.ts). Responses carrying a refusal code
   * (INVALID_REQUEST, POLICY_VIOLATION, ...) are logged without it, with their errorMessage or Kafka's text
   * for the code; a handler calls this when the code alone would not tell an operator why.
   */
  refuse(reason: string): void;
}

export type HandlerResult<Res> = Res | typeof NO_RESPONSE;

export interface Handler<Req = any, Res = any, S extends ServiceName = ServiceName> {
  readonly api: ApiDescriptor<Req, Res>;
  /** The services the handler uses: its context holds these and no others. */
  readonly uses: readonly S[];
  /** Versions this broker parses and answers. */
  readonly versions: VersionRange;
  /**
   * Lowest version advertised in ApiVersions when it is below `versions.min`: librdkafka ≤ 2.11 only
   * enables features when v0 is in the advertised range (KAFKA-18659, KAFKA-18270). Requests in
   * [advertisedMin, versions.min) are refused as Kafka 4 refuses them.
   */
  readonly advertisedMin?: number;
  handle(request: Req, ctx: RequestContext<S>): HandlerResult<Res> | Promise<HandlerResult<Res>>;
}

export function defineHandler<Req, Res, S extends ServiceName = never>(h: Handler<Req, Res, S>): Handler<Req, Res, S> {
  if (h.versions.min < h.api.validVersions.min || h.versions.max > h.api.validVersions.max) {
    throw new Error(`${h.api.name}: versions ${h.versions.min}-${h.versions.max} outside the schema's ${h.api.validVersions.min}-${h.api.validVersions.max}`);
  }
  return h;
}

/** Which listeners an API is served on: Kafka's schema `listeners` (ApiMessageType.listeners). */
export type ListenerRole = 'broker' | 'controller';

/**
 * The handlers a listener of this role serves: those whose API's schema names the role, as Kafka's
 * SocketServer enables on a controller listener only the APIs of ApiKeys.controllerApis().
 */
export function handlersFor(handlers: ReadonlyMap<number, Handler>, role: ListenerRole): ReadonlyMap<number, Handler> {
  return new Map([...handlers].filter(([, h]) => h.api.listeners.includes(role)));
}
