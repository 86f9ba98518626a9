import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { listenerConfig, parseSecurityProtocolMap } from '../../../src/security/listener-security.js';

const load = (overrides: [string, string][]) => loadConfig({ overrides: [['log.dirs', '/d'], ...overrides] });

describe('listener security protocols', () => {
  it('maps the four protocols to themselves by default', () => {
    const c = load([['listeners', 'PLAINTEXT://:9092,SSL://:9093,SASL_PLAINTEXT://:9094,SASL_SSL://:9095']]);
    expect(Object.fromEntries(c.securityProtocols)).toEqual({ PLAINTEXT: 'PLAINTEXT', SSL: 'SSL', SASL_PLAINTEXT: 'SASL_PLAINTEXT', SASL_SSL: 'SASL_SSL' });
  });

  it('takes other listener names from listener.security.protocol.map, case-insensitively', () => {
    const c = load([['listeners', 'internal://:9092,EXTERNAL://:9093'], ['listener.security.protocol.map', 'INTERNAL:SASL_PLAINTEXT, external:ssl']]);
    expect(Object.fromEntries(c.securityProtocols)).toEqual({ INTERNAL: 'SASL_PLAINTEXT', EXTERNAL: 'SSL' });
  });

  it('refuses a listener the map does not name, as KafkaConfig does', () => {
    expect(() => load([['listeners', 'PLAINTEXT://:9092,EXTERNAL://:9093']])).toThrow(/No security protocol defined for listener EXTERNAL/);
  });

  it('lets a controller listener speak PLAINTEXT while the map is left at its default, and only then', () => {
    const c = load([['listeners', 'PLAINTEXT://:9092,CONTROLLER://:9093'], ['controller.listener.names', 'CONTROLLER']]);
    expect(c.securityProtocols.get('CONTROLLER')).toBe('PLAINTEXT');
    expect(() => load([['listeners', 'PLAINTEXT://:9092,CONTROLLER://:9093'], ['controller.listener.names', 'CONTROLLER'], ['listener.security.protocol.map', 'PLAINTEXT:PLAINTEXT']])).toThrow(
      /No security protocol defined for listener CONTROLLER/,
    );
  });

  it('refuses a malformed map', () => {
    expect(() => parseSecurityProtocolMap('A:TLS')).toThrow(/TLS is not a security protocol/);
    expect(() => parseSecurityProtocolMap('A')).toThrow(/is not LISTENER_NAME:SECURITY_PROTOCOL/);
    expect(() => parseSecurityProtocolMap('A:SSL,a:PLAINTEXT')).toThrow(/appears more than once/);
  });

  it('reads a listener-scoped config over the unscoped one', () => {
    const values = new Map<string, string | null>([
      ['ssl.client.auth', 'none'],
      ['listener.name.external.ssl.client.auth', 'required'],
      ['sasl.enabled.mechanisms', 'PLAIN'],
    ]);
    expect(listenerConfig(values, 'EXTERNAL')('ssl.client.auth')).toBe('required');
    expect(listenerConfig(values, 'INTERNAL')('ssl.client.auth')).toBe('none');
    expect(listenerConfig(values, 'EXTERNAL')('sasl.enabled.mechanisms')).toBe('PLAIN');
    expect(listenerConfig(values, 'EXTERNAL')('ssl.keystore.location')).toBeNull();
  });
});
