/**
 * Kafka's per-API request metrics (kafka.network:type=RequestMetrics, `RequestMetrics.scala`), as
 * Prometheus series labelled by `request` (the API's name, as Kafka's `request=` tag):
 *
 *   kafka_network_requestmetrics_requests_total{request,version}   RequestsPerSec
 *   kafka_network_requestmetrics_errors_total{request,error}        ErrorsPerSec (one per error code occurrence,
 *                                                                   NONE included, as Kafka's errorCounts)
 *   kafka_network_requestmetrics_total_time_seconds                 TotalTimeMs, received → written
 *   kafka_network_requestmetrics_request_queue_time_seconds         RequestQueueTimeMs, received → handler starts
 *   kafka_network_requestmetrics_local_time_seconds                 LocalTimeMs, handler starts → response ready
 *   kafka_network_requestmetrics_response_queue_time_seconds        ResponseQueueTimeMs, ready → its turn to be
 *                                                                   written (responses leave in request order)
 *   kafka_network_requestmetrics_response_send_time_seconds         ResponseSendTimeMs, written → handed to the kernel
 *
 * Kafka reports milliseconds in Yammer histograms; these are Prometheus histograms in seconds, the unit
 * Prometheus names carry. A request handled locally has no RemoteTimeMs (Kafka's purgatory wait for
 * followers); a Fetch long-poll's wait is part of its local time here.
 *
 * Every series of one API is created once and kept (`ApiRequestMetrics`), so the request path does no
 * label lookups.
 */
import { Counter, Histogram, type Registry } from 'prom-client';

/** 0.1 ms … 30 s: fsync'd produces sit around 1-10 ms, long-polls up to the client's max wait. */
const BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The times of one request, from `performance.now()` (milliseconds). */
export interface RequestTimes {
  readonly received: number;
  readonly started: number;
  readonly ready: number;
  readonly written: number;
  readonly sent: number;
}

export interface ApiRequestMetrics {
  /** A request of this API was read, at this version. */
  request(version: number): void;
  /** One error code occurred in a response (Kafka counts NONE too). */
  error(code: number, count?: number): void;
  times(t: RequestTimes): void;
}

export class RequestMetrics {
  private readonly requests: Counter<'request' | 'version'>;
  private readonly errors: Counter<'request' | 'error'>;
  private readonly total: Histogram<'request'>;
  private readonly queue: Histogram<'request'>;
  private readonly local: Histogram<'request'>;
  private readonly responseQueue: Histogram<'request'>;
  private readonly responseSend: Histogram<'request'>;
  private readonly byApi = new Map<number, ApiRequestMetrics>();

  constructor(
    registry: Registry,
    /** The name of an error code as Kafka's Errors enum spells it (NONE, NOT_LEADER_OR_FOLLOWER, ...). */
    private readonly errorName: (code: number) => string,
  ) {
    const registers = [registry];
    const histogram = (name: string, help: string): Histogram<'request'> => new Histogram({ name, help, labelNames: ['request'], buckets: BUCKETS, registers });
    this.requests = new Counter({ name: 'kafka_network_requestmetrics_requests_total', help: 'Requests read, by API and version (Kafka RequestMetrics RequestsPerSec).', labelNames: ['request', 'version'], registers });
    this.errors = new Counter({ name: 'kafka_network_requestmetrics_errors_total', help: 'Error codes in responses, by API and error, NONE included (Kafka RequestMetrics ErrorsPerSec).', labelNames: ['request', 'error'], registers });
    this.total = histogram('kafka_network_requestmetrics_total_time_seconds', 'From a request read to its response handed to the kernel (Kafka TotalTimeMs).');
    this.queue = histogram('kafka_network_requestmetrics_request_queue_time_seconds', 'From a request read to its handler starting (Kafka RequestQueueTimeMs).');
    this.local = histogram('kafka_network_requestmetrics_local_time_seconds', 'From a handler starting to its response ready, waits included (Kafka LocalTimeMs).');
    this.responseQueue = histogram('kafka_network_requestmetrics_response_queue_time_seconds', 'From a response ready to its turn to be written, behind earlier responses of its connection (Kafka ResponseQueueTimeMs).');
    this.responseSend = histogram('kafka_network_requestmetrics_response_send_time_seconds', 'From a response written to the socket to its bytes handed to the kernel (Kafka ResponseSendTimeMs).');
  }

  /** The metrics of one API, created on first use. */
  of(apiKey: number, name: string): ApiRequestMetrics {
    let m = this.byApi.get(apiKey);
    if (m) return m;
    const byVersion = new Map<number, Counter.Internal>();
    const byError = new Map<number, Counter.Internal>();
    const total = this.total.labels(name);
    const queue = this.queue.labels(name);
    const local = this.local.labels(name);
    const responseQueue = this.responseQueue.labels(name);
    const responseSend = this.responseSend.labels(name);
    m = {
      request: (version) => {
        let c = byVersion.get(version);
        if (!c) byVersion.set(version, (c = this.requests.labels(name, String(version))));
        c.inc();
      },
      error: (code, count = 1) => {
        let c = byError.get(code);
        if (!c) byError.set(code, (c = this.errors.labels(name, this.errorName(code))));
        c.inc(count);
      },
      times: (t) => {
        total.observe((t.sent - t.received) / 1000);
        queue.observe((t.started - t.received) / 1000);
        local.observe((t.ready - t.started) / 1000);
        responseQueue.observe((t.written - t.ready) / 1000);
        responseSend.observe((t.sent - t.written) / 1000);
      },
    };
    this.byApi.set(apiKey, m);
    return m;
  }
}

/** How deep errorCounts looks: response → topics → partitions → one more level. */
const MAX_DEPTH = 4;

/**
 * Kafka's `AbstractResponse.errorCounts()`: every `errorCode` of a response, top level and per resource,
 * counted by code. Record sets (Buffers) are not entered; arrays of resources are, to MAX_DEPTH.
 */
export function errorCounts(res: unknown, into: Map<number, number> = new Map()): Map<number, number> {
  countIn(res, 0, into);
  return into;
}

function countIn(v: unknown, depth: number, into: Map<number, number>): void {
  if (typeof v !== 'object' || v === null || ArrayBuffer.isView(v)) return;
  if (Array.isArray(v)) {
    if (depth >= MAX_DEPTH) return;
    for (const item of v) countIn(item, depth + 1, into);
    return;
  }
  const o = v as Record<string, unknown>;
  for (const k in o) {
    const x = o[k];
    if (k === 'errorCode' && typeof x === 'number') into.set(x, (into.get(x) ?? 0) + 1);
    else if (Array.isArray(x) && x.length > 0 && typeof x[0] === 'object' && x[0] !== null && !ArrayBuffer.isView(x[0])) countIn(x, depth, into);
  }
}
