/**
 * Authentications per listener, as Kafka's socket-server metrics count them
 * (kafka.server:type=socket-server-metrics,listener=<name> successful-authentication-total /
 * failed-authentication-total): a completed TLS handshake on an SSL listener, a SASL exchange on a SASL one; a
 * TLS handshake that fails, a certificate no mapping rule accepts, a SASL exchange refused for any reason.
 */
import { Counter, type Registry } from 'prom-client';
import type { AuthenticationMetrics } from '../security/listener-setup.js';

export function registerAuthenticationMetrics(registry: Registry): AuthenticationMetrics {
  const registers = [registry];
  const succeeded = new Counter({ name: 'kafka_server_socket_server_metrics_successful_authentication_total', help: 'Successful authentications, by listener.', labelNames: ['listener'], registers });
  const failed = new Counter({ name: 'kafka_server_socket_server_metrics_failed_authentication_total', help: 'Failed authentications, by listener.', labelNames: ['listener'], registers });
  // KIP-368: successful-reauthentication-total, failed-reauthentication-total, expired-connections-killed-count.
  const reauthenticated = new Counter({ name: 'kafka_server_socket_server_metrics_successful_reauthentication_total', help: 'Successful re-authentications (KIP-368), by listener.', labelNames: ['listener'], registers });
  const reauthFailed = new Counter({ name: 'kafka_server_socket_server_metrics_failed_reauthentication_total', help: 'Failed re-authentications (KIP-368), by listener.', labelNames: ['listener'], registers });
  const expired = new Counter({ name: 'kafka_server_socket_server_metrics_expired_connections_killed_count', help: 'Connections closed because their SASL session expired (KIP-368), by listener.', labelNames: ['listener'], registers });
  return {
    succeeded: (listener) => succeeded.inc({ listener }),
    failed: (listener) => failed.inc({ listener }),
    reauthenticated: (listener, ok) => (ok ? reauthenticated : reauthFailed).inc({ listener }),
    expiredSessionClosed: (listener) => expired.inc({ listener }),
  };
}
