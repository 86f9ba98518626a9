/**
 * Requests from this broker to the other brokers of its cluster, the ones Kafka's brokers send each other
 * (Kafka's NodeToNodeChannelManager / InterBrokerSendThread): the transaction coordinator's WriteTxnMarkers
 * to the partitions' leaders (txn-routing.ts) and a partition leader's AddPartitionsToTxn to the transaction
 * coordinator (KIP-890's verification).
 *
 * ```
 *   request(nodeId, api, body) ─► connection of nodeId (opened on first use to its registered endpoint,
 *                                  versions negotiated with ApiVersions) ─► the answer, or an error
 * ```
 *
 * One connection per broker, to the endpoint of the listener named by `listenerName` (Kafka's
 * inter.broker.listener.name; the broker's first registered endpoint when unset). It is dropped when it fails,
 * when a request times out (as Kafka's client closes a connection after request.timeout.ms) and when the
 * broker registers another address (a restart); the next request opens a new one. Errors are the client's
 * (src/client/errors.ts); a broker that is not registered is LL_ERR_CLIENT_CONNECT.
 */
import type { ApiDescriptor } from '../../protocol/api.js';
import { Connection } from '../client/connection.js';
import { ConnectError } from '../client/errors.js';
import type { ClusterView } from './cluster-view.js';

/** The client.id prefix of requests brokers send each other (`ledgerline-broker-<nodeId>`, as the broker names them). */
export const INTER_BROKER_CLIENT_ID_PREFIX = 'ledgerline-broker-';

/** The client.id of broker `nodeId`'s inter-broker requests. */
export function interBrokerClientId(nodeId: number): string {
  return `${INTER_BROKER_CLIENT_ID_PREFIX}${nodeId}`;
}

export interface BrokerChannelsOptions {
  readonly cluster: Pick<ClusterView, 'broker'>;
  /** Kafka's inter.broker.listener.name; unset: each broker's first registered endpoint. */
  readonly listenerName?: string;
  /** client.id of the requests. Default `ledgerline-broker-<nodeId>` is the caller's to choose. */
  readonly clientId: string;
  /** Kafka's request.timeout.ms of the inter-broker clients (30 s). */
  readonly requestTimeoutMs?: number;
  readonly connectTimeoutMs?: number;
}

interface Channel {
  readonly address: string;
  readonly connection: Promise<Connection>;
}

export class BrokerChannels {
  readonly #options: BrokerChannelsOptions;
  readonly #channels = new Map<number, Channel>();
  #closed = false;

  constructor(options: BrokerChannelsOptions) {
    this.#options = options;
  }

  /** Sends `body` to broker `nodeId` at the highest version both know within `versions`. */
  async request<Req, Res>(nodeId: number, api: ApiDescriptor<Req, Res>, body: Req, versions: { min: number; max: number }): Promise<Res> {
    const conn = await this.#connection(nodeId);
    return conn.request(api, body, { version: conn.versionFor(api, versions) });
  }

  /** Closes every connection; requests in flight fail. */
  async close(): Promise<void> {
    this.#closed = true;
    const channels = [...this.#channels.values()];
    this.#channels.clear();
    await Promise.all(channels.map((c) => c.connection.then((conn) => conn.close(), () => undefined)));
  }

  #connection(nodeId: number): Promise<Connection> {
    if (this.#closed) return Promise.reject(new ConnectError(`broker ${nodeId}: this broker is stopping`, { nodeId }));
    const broker = this.#options.cluster.broker(nodeId);
    const endpoints = broker?.endpoints ?? [];
    const wanted = this.#options.listenerName;
    const endpoint = wanted === undefined ? endpoints[0] : endpoints.find((e) => e.listenerName === wanted);
    if (!endpoint) {
      const why = broker ? `registered no endpoint${wanted === undefined ? '' : ` for listener ${wanted}`}` : 'is not a live broker';
      return Promise.reject(new ConnectError(`broker ${nodeId} ${why}`, { nodeId }));
    }
    const address = `${endpoint.host}:${endpoint.port}`;
    const current = this.#channels.get(nodeId);
    if (current && current.address === address) return current.connection;
    if (current) void current.connection.then((c) => c.close(), () => undefined);
    const connection = Connection.connect({
      host: endpoint.host,
      port: endpoint.port,
      nodeId,
      clientId: this.#options.clientId,
      requestTimeoutMs: this.#options.requestTimeoutMs ?? 30_000,
      connectTimeoutMs: this.#options.connectTimeoutMs ?? 10_000,
    });
    const channel: Channel = { address, connection };
    this.#channels.set(nodeId, channel);
    const forget = (): void => {
      if (this.#channels.get(nodeId) === channel) this.#channels.delete(nodeId);
    };
    connection.then((c) => void c.closed.then(forget), forget);
    return connection;
  }
}
