/**
 * The dispatch seam: everything between a connection's frames and the API handlers. A connection
 * (connection.ts) owns the socket, framing, backpressure and response order; a handler (src/api/) owns
 * one API's meaning. Here, for every request:
 *
 *   frame ─► header ─► served? ─► decode ─► ctx (services, principal) ─► handler ─► refusal log ─► encode
 *              │          │          │                                     │
 *              close      close /    close                                 request metrics (Kafka's
 *                         ApiVersions v0 fallback (KIP-511)                RequestMetrics, per API)
 *
 * Client quotas (quota-enforcer.ts) are charged once a request is handled: the response carries the throttle
 * and the connection is muted for it (KIP-219).
 *
 * Authentication state is the connection's `principal` (User:ANONYMOUS on a listener without authentication).
 * The context carries the requester's rights (`access`, src/api/access.ts) under the authorizer when one is
 * configured; each handler authorizes what it touches as KafkaApis does for its API, since what is checked
 * (a topic per partition, a group, the transactional id) and the answer (an error per partition, per
 * resource or for the whole request) differ per API.
 *
 * A listener serves the APIs of its role (Kafka's schema `listeners`): a controller listener
 * (controller.listener.names) only the controller APIs, the others the broker APIs.
 *
 * Kafka's rules for requests it cannot serve: an unknown API key, an API the listener does not serve, a
 * version outside the served range or a body that does not parse closes the connection; ApiVersions with a version it does not know is answered
 * in v0 with UNSUPPORTED_VERSION and the supported ranges (KIP-511).
 *
 * A request whose handler fails unexpectedly (throws, or its response does not encode) is answered, not
 * closed, as Kafka's RequestHandlerHelper.handleError answers with `request.getErrorResponse(e)`: the API's
 * error response (src/api/error-response.ts) with `kafkaErrorOf(err, UNKNOWN_SERVER_ERROR)` at every level,
 * and the failure logged once with the API, version, client and correlation id. Only when that response
 * cannot be built either is the connection closed.
 */
import type { Logger } from 'pino';
import { performance } from 'node:perf_hooks';
import type { ApiDescriptor } from '../../protocol/api.js';
import { CodecError, kafkaErrorOf } from '../../protocol/errors.js';
import { encodeResponseFrame, readRequestHeader, type RequestHeader } from '../../protocol/headers.js';
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import { Reader } from '../../protocol/wire/reader.js';
import { apiVersionsFallback } from '../api/018-api-versions.js';
import { apiErrorOf, errorResponse } from '../api/error-response.js';
import { handlersFor, NO_RESPONSE, type ConnectionInfo, type Handler, type RequestContext } from '../api/handler.js';
import type { Principal, Services } from '../api/services.js';
import { ALLOW_ALL, requestAccess, type Access, type AuditLog } from '../api/access.js';
import { confine } from '../tenants/confinement.js';
import type { AclAuthorizer } from '../security/acl/authorizer.js';
import { errorCounts, type ApiRequestMetrics, type RequestMetrics } from '../observability/request-metrics.js';
import { findRefusal, type RefusalLog } from './refusals.js';
import type { QuotaEnforcer } from './quota-enforcer.js';

/** What a connection tells the dispatcher about itself. */
export interface Session {
  readonly info: ConnectionInfo;
  /** Who is on the other end (Kafka's KafkaPrincipal; anonymous until authentication exists). */
  readonly principal: Principal;
  /** Aborted when the connection closes or the broker stops. */
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/** Called by the connection when a response is written to the socket and when its bytes reached the kernel. */
export type SentHook = (written: number, sent: number) => void;

/** The outcome of one request frame. */
export type Outcome =
  | {
      readonly kind: 'respond';
      /** The response frame, or NO_RESPONSE (Produce acks=0). */
      readonly chunks: Buffer[] | typeof NO_RESPONSE;
      readonly onSent?: SentHook;
      /** Close the connection once this response is written (a failed SASL exchange's last answer). */
      readonly close?: boolean;
      /** A client over its quota: the connection reads no further request for this long (KIP-219 muting). */
      readonly throttleMs?: number;
    }
  | { readonly kind: 'close' };

const CLOSE: Outcome = { kind: 'close' };

export interface DispatcherOptions {
  /** Every API this node serves; a listener serves those its role allows (handlersFor). */
  readonly handlers: ReadonlyMap<number, Handler>;
  /** The listeners that serve the controller APIs (controller.listener.names); the others serve brokers'. */
  readonly controllerListeners?: ReadonlySet<string>;
  readonly services: Services;
  readonly refusals: RefusalLog;
  readonly metrics: RequestMetrics;
  /** The tenant a principal (`User:alice`) is confined to (src/tenants/), if any. */
  readonly tenants?: { tenantOf(principal: string): string | undefined };
  /** Client quotas (src/server/quota-enforcer.ts); absent: no client is throttled. */
  readonly quotas?: QuotaEnforcer;
  /** The ACL authorizer (authorizer.class.name), and where its decisions are logged; absent: everything is allowed. */
  readonly authorizer?: { readonly acls: AclAuthorizer; readonly audit: AuditLog };
}

export class Dispatcher {
  private readonly brokerHandlers: ReadonlyMap<number, Handler>;
  private readonly controllerHandlers: ReadonlyMap<number, Handler>;

  constructor(private readonly o: DispatcherOptions) {
    this.brokerHandlers = handlersFor(o.handlers, 'broker');
    this.controllerHandlers = handlersFor(o.handlers, 'controller');
  }

  /** The handlers a listener serves: a controller listener only the controller APIs, as in Kafka. */
  handlersOn(listenerName: string): ReadonlyMap<number, Handler> {
    return this.o.controllerListeners?.has(listenerName) ? this.controllerHandlers : this.brokerHandlers;
  }

  /**
   * Handles one request frame received at `receivedAt` (performance.now()). Synchronous when the request
   * is refused before its handler runs or its handler answers synchronously.
   */
  dispatch(frame: Buffer, session: Session, receivedAt: number): Outcome | Promise<Outcome> {
    const r = new Reader(frame);
    const { header, api, versionKnown } = readRequestHeader(r);
    if (!r.ok) {
      session.log.warn('closing connection: request header does not parse');
      return CLOSE;
    }
    const handlers = this.handlersOn(session.info.listenerName);
    const handler = handlers.get(header.requestApiKey);
    const version = header.requestApiVersion;
    const served = handler !== undefined && version >= handler.versions.min && version <= handler.versions.max;
    if (!served) {
      if (api !== undefined && api.apiKey === 18 && handler !== undefined) return { kind: 'respond', chunks: apiVersionsFallback(handlers.values(), header) };
      // Kafka closes the connection; the refusal is logged once per client and API, as others are.
      this.o.refusals.report({
        clientId: header.clientId,
        remoteAddress: session.info.remoteAddress,
        apiKey: header.requestApiKey,
        api: api?.name ?? `ApiKey ${header.requestApiKey}`,
        apiVersion: version,
        correlationId: header.correlationId,
        reason: handler
          ? `version ${version} is outside the served ${handler.versions.min}-${handler.versions.max}${versionKnown ? '' : ' (and unknown to the schema)'}; closing the connection`
          : `${!api ? 'unknown API key' : this.o.handlers.has(header.requestApiKey) ? `API not served on listener ${session.info.listenerName}` : 'API not served'}; closing the connection`,
        errorCode: null,
        resource: null,
        level: 'info',
      });
      return CLOSE;
    }
    let request: unknown;
    try {
      request = handler.api.request.decode(r, version);
      // Kafka reads a request body and ignores bytes after it (librdkafka 2.16 sends three after its
      // Metadata v12 request), so trailing bytes are tolerated, not treated as a malformed request.
      r.check();
      if (r.remaining > 0) session.log.debug({ apiKey: header.requestApiKey, apiVersion: version, trailing: r.remaining }, 'ignoring trailing request bytes');
    } catch (e) {
      session.log.warn(
        { err: e instanceof CodecError ? e.message : e, apiKey: header.requestApiKey, apiVersion: version, clientId: header.clientId, head: frame.subarray(0, 128).toString('hex') },
        'closing connection: request body does not parse',
      );
      return CLOSE;
    }

    const metrics = this.o.metrics.of(handler.api.apiKey, handler.api.name);
    metrics.request(version);
    let refusedBecause: string | null = null;
    const ctx: RequestContext = {
      services: this.o.services,
      principal: session.principal,
      access: this.accessOf(session, handler.api.name),
      header,
      apiVersion: version,
      connection: session.info,
      signal: session.signal,
      refuse: (reason) => {
        refusedBecause ??= reason;
      },
    };
    const started = performance.now();
    const failed = (e: unknown): Outcome => this.failed(e, handler.api, version, header, request, session, metrics, receivedAt, started);
    let result;
    try {
      result = handler.handle(request, ctx);
    } catch (e) {
      return failed(e);
    }
    // The event loop's own time on the request (the request quota's measure, quota-enforcer.ts).
    const handlingMs = performance.now() - started;
    const finish = (res: unknown): Outcome => {
      const throttleMs = this.o.quotas?.throttle(handler.api.apiKey, session.principal.name, header.clientId ?? '', frame.length, res === NO_RESPONSE ? null : res, handlingMs) ?? 0;
      return this.finish(handler.api, version, header, res, refusedBecause, session, metrics, receivedAt, started, failed, throttleMs);
    };
    if (result instanceof Promise) return result.then(finish, failed);
    return finish(result);
  }

  /** The requester's rights: the authorizer's (or everything without one), confined to its tenant's names if it has one. */
  private accessOf(session: Session, apiName: string): Access {
    const base = this.o.authorizer ? requestAccess(this.o.authorizer.acls, session.principal, session.info.remoteAddress, apiName, this.o.authorizer.audit) : ALLOW_ALL;
    if (!this.o.tenants) return base;
    const principal = `${session.principal.type}:${session.principal.name}`;
    const tenant = this.o.tenants.tenantOf(principal);
    return tenant === undefined ? base : confine(base, tenant, principal, apiName, this.o.authorizer?.audit ?? session.log);
  }

  /**
   * The error response of `frame`'s API with `code` at every level (Kafka's `request.getErrorResponse(e)`), or
   * null when the frame is not a request this listener serves or does not parse. For the SASL authenticator,
   * which answers a request out of turn so before it closes the connection.
   */
  errorResponseFrame(frame: Buffer, listenerName: string, code: number, message: string): Buffer[] | null {
    const r = new Reader(frame);
    const { header } = readRequestHeader(r);
    const handler = this.handlersOn(listenerName).get(header.requestApiKey);
    const version = header.requestApiVersion;
    if (!r.ok || !handler || version < handler.versions.min || version > handler.versions.max) return null;
    try {
      const request = handler.api.request.decode(r, version);
      r.check();
      const res = errorResponse(handler.api.apiKey, version, request, { code, message });
      return res === NO_RESPONSE ? null : encodeResponseFrame(handler.api, version, header.correlationId, res);
    } catch {
      return null;
    }
  }

  private finish(
    api: ApiDescriptor<unknown, unknown>,
    version: number,
    header: RequestHeader,
    res: unknown,
    refusedBecause: string | null,
    session: Session,
    metrics: ApiRequestMetrics,
    received: number,
    started: number,
    failed: (e: unknown) => Outcome,
    throttleMs: number,
  ): Outcome {
    const ready = performance.now();
    this.noteRefusal(api, version, header, res, refusedBecause, session);
    const onSent = (written: number, sent: number): void => metrics.times({ received, started, ready, written, sent });
    if (res === NO_RESPONSE) {
      onSent(ready, ready);
      return { kind: 'respond', chunks: NO_RESPONSE, throttleMs };
    }
    for (const [code, n] of errorCounts(res)) metrics.error(code, n);
    let chunks: Buffer[];
    try {
      chunks = encodeResponseFrame(api, version, header.correlationId, res);
    } catch (e) {
      return failed(e);
    }
    return { kind: 'respond', chunks, onSent, throttleMs };
  }

  /** The dispatch seam's refusal check: logs (once) a request the handler refused or answered with a refusal code. */
  private noteRefusal(api: { apiKey: number; name: string }, version: number, header: RequestHeader, res: unknown, reason: string | null, session: Session): void {
    const found = res === NO_RESPONSE ? null : findRefusal(res);
    if (reason === null && found === null) return;
    this.o.refusals.report({
      clientId: header.clientId,
      remoteAddress: session.info.remoteAddress,
      apiKey: api.apiKey,
      api: api.name,
      apiVersion: version,
      correlationId: header.correlationId,
      reason: reason ?? found!.errorMessage ?? errorByCode(found!.errorCode).message ?? errorByCode(found!.errorCode).name,
      errorCode: found?.errorCode ?? null,
      resource: found?.resource ?? null,
      level: reason !== null || found!.topLevel ? 'warn' : 'info',
    });
  }

  /**
   * A handler failed unexpectedly: the API's error response with the error's Kafka code (Kafka's
   * getErrorResponse), logged once; the connection stays open.
   */
  private failed(
    e: unknown,
    api: ApiDescriptor<unknown, unknown>,
    version: number,
    header: RequestHeader,
    request: unknown,
    session: Session,
    metrics: ApiRequestMetrics,
    received: number,
    started: number,
  ): Outcome {
    const code = kafkaErrorOf(e, ErrorCode.UNKNOWN_SERVER_ERROR);
    const context = { err: e, api: api.name, apiKey: api.apiKey, apiVersion: version, clientId: header.clientId, correlationId: header.correlationId };
    let res: unknown;
    let chunks: Buffer[] | typeof NO_RESPONSE;
    try {
      res = errorResponse(api.apiKey, version, request, apiErrorOf(e, code));
      chunks = res === NO_RESPONSE ? NO_RESPONSE : encodeResponseFrame(api, version, header.correlationId, res);
    } catch (e2) {
      session.log.error({ ...context, errorResponseErr: e2 }, 'closing connection: handler failed and its error response could not be built');
      return CLOSE;
    }
    session.log.error({ ...context, errorCode: code, errorName: errorByCode(code).name }, 'request failed; answered with its error response');
    const ready = performance.now();
    if (res !== NO_RESPONSE) for (const [c, n] of errorCounts(res)) metrics.error(c, n);
    const onSent = (written: number, sent: number): void => metrics.times({ received, started, ready, written, sent });
    if (chunks === NO_RESPONSE) {
      onSent(ready, ready);
      return { kind: 'respond', chunks };
    }
    return { kind: 'respond', chunks, onSent };
  }
}
