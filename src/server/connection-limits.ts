/**
 * Connection limits (KIP-308, KIP-402), as Kafka's ConnectionQuotas applies them, read at every accept from the
 * configs that may change at runtime (per broker, or for the cluster: kafka-configs --entity-type brokers):
 *
 *   max.connections.per.ip (+ max.connections.per.ip.overrides "ip:limit,..."): a connection past its address's
 *     limit is closed ("Too many connections from <ip> (maximum = N)");
 *   max.connections: a connection past the broker's limit is closed; the inter-broker listener is exempt.
 *     (Kafka's acceptor waits instead, leaving the connection in the accept backlog until one closes.)
 */
import { parseOverrides } from '../cluster/config-defs.js';

export class ConnectionLimits {
  private total = 0;
  private readonly perIp = new Map<string, number>();
  private overridesText = '';
  private overrides = new Map<string, number>();

  constructor(
    /** A config's current value (dynamic per broker, dynamic cluster-wide, static or default). */
    private readonly value: (name: string) => string | null,
    /** Listeners exempt from max.connections (the inter-broker listener). */
    private readonly exempt: (listenerName: string) => boolean,
  ) {}

  /** Counts a new connection from `ip`, or says why it is refused (nothing counted then). */
  admit(ip: string, listenerName: string): string | null {
    const perIp = this.ipLimit(ip);
    const count = this.perIp.get(ip) ?? 0;
    if (count >= perIp) return `Too many connections from ${ip} (maximum = ${perIp})`;
    const max = Number(this.value('max.connections') ?? 2147483647);
    if (!this.exempt(listenerName) && this.total >= max) return `max.connections (${max}) reached`;
    this.perIp.set(ip, count + 1);
    this.total++;
    return null;
  }

  release(ip: string): void {
    const count = this.perIp.get(ip) ?? 0;
    if (count <= 1) this.perIp.delete(ip);
    else this.perIp.set(ip, count - 1);
    this.total = Math.max(0, this.total - 1);
  }

  private ipLimit(ip: string): number {
    const text = this.value('max.connections.per.ip.overrides') ?? '';
    if (text !== this.overridesText) {
      this.overridesText = text;
      try {
        this.overrides = parseOverrides(text);
      } catch {
        this.overrides = new Map();
      }
    }
    return this.overrides.get(ip) ?? Number(this.value('max.connections.per.ip') ?? 2147483647);
  }
}
