/**
 * What each listener speaks: Kafka's `listener.security.protocol.map` and the listener-scoped configs.
 *
 *   listeners=PLAINTEXT://:9092,SSL://:9093,SASL_SSL://:9094,INTERNAL://:9095
 *   listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_SSL:SASL_SSL,INTERNAL:SASL_PLAINTEXT
 *   listener.name.sasl_ssl.ssl.keystore.location=...              (over ssl.keystore.location)
 *   listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512   (over sasl.enabled.mechanisms)
 *   listener.name.internal.plain.sasl.jaas.config=...             (per listener and mechanism, as Kafka's)
 *
 * As Kafka's KafkaConfig: the map's default names the four protocols after themselves; a listener the map does
 * not name is refused ("No security protocol defined for listener X"), except a controller listener while the
 * map was left at its default, which speaks PLAINTEXT (KafkaConfig.effectiveListenerSecurityProtocolMap). A
 * listener-scoped config `listener.name.<listener, lower case>.<config>` wins over the unscoped one
 * (ListenerName.configPrefix, AbstractConfig.valuesWithPrefixOverride).
 */
import { ConfigError, type Listener } from '../config.js';

export type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';
const PROTOCOLS: readonly SecurityProtocol[] = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

/** Kafka's default of listener.security.protocol.map. */
export const DEFAULT_SECURITY_PROTOCOL_MAP = 'PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL';

export const usesTls = (p: SecurityProtocol): boolean => p === 'SSL' || p === 'SASL_SSL';
export const usesSasl = (p: SecurityProtocol): boolean => p === 'SASL_PLAINTEXT' || p === 'SASL_SSL';

/** Parses `NAME:PROTOCOL,...` (listener names upper-cased, as listeners are). */
export function parseSecurityProtocolMap(value: string): Map<string, SecurityProtocol> {
  const out = new Map<string, SecurityProtocol>();
  for (const item of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9_]+):([A-Za-z_]+)$/.exec(item);
    if (!m) throw new ConfigError(`listener.security.protocol.map: ${JSON.stringify(item)} is not LISTENER_NAME:SECURITY_PROTOCOL`);
    const protocol = m[2]!.toUpperCase() as SecurityProtocol;
    if (!PROTOCOLS.includes(protocol)) throw new ConfigError(`listener.security.protocol.map: ${m[2]} is not a security protocol (${PROTOCOLS.join(', ')})`);
    const name = m[1]!.toUpperCase();
    if (out.has(name)) throw new ConfigError(`listener.security.protocol.map: listener ${name} appears more than once`);
    out.set(name, protocol);
  }
  return out;
}

/** The security protocol of every listener, checked as Kafka's KafkaConfig checks it. */
export function listenerProtocols(listeners: readonly Listener[], values: ReadonlyMap<string, string | null>, explicit: ReadonlySet<string>, controllerListenerNames: readonly string[]): Map<string, SecurityProtocol> {
  const map = parseSecurityProtocolMap(values.get('listener.security.protocol.map') ?? DEFAULT_SECURITY_PROTOCOL_MAP);
  const mapIsDefault = !explicit.has('listener.security.protocol.map');
  const out = new Map<string, SecurityProtocol>();
  for (const l of listeners) {
    const p = map.get(l.name) ?? (mapIsDefault && controllerListenerNames.includes(l.name) ? 'PLAINTEXT' : undefined);
    if (!p) throw new ConfigError(`Error creating broker listeners from '${listeners.map((x) => `${x.name}://${x.host}:${x.port}`).join(',')}': No security protocol defined for listener ${l.name}`);
    out.set(l.name, p);
  }
  return out;
}

/** The effective value of `name` on a listener: `listener.name.<listener>.<name>` over `<name>`, null when unset. */
export function listenerConfig(values: ReadonlyMap<string, string | null>, listenerName: string): (name: string) => string | null {
  const prefix = `listener.name.${listenerName.toLowerCase()}.`;
  return (name) => {
    const scoped = values.get(prefix + name);
    if (scoped !== undefined && scoped !== null) return scoped;
    return values.get(name) ?? null;
  };
}
