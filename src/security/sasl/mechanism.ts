/**
 * The contract of a server-side SASL mechanism: what javax.security.sasl.SaslServer is to Kafka's
 * SaslServerAuthenticator (RFC 4422 §3: a mechanism is a sequence of challenges and responses that ends in
 * success or failure). One instance serves one exchange on one connection, and is then dropped.
 *
 *   client token ──evaluate──► server token ──► ... ──► complete: authorizationId, extensions
 *                      │
 *                      └─throws──► SaslAuthenticationError (credentials refused; its message is for the client)
 *                                  IllegalSaslStateError   (a token the exchange's state does not allow)
 *
 * After a throw the exchange is over: a mechanism refuses any further token with IllegalSaslStateError.
 * Implementations: plain.ts (PLAIN, RFC 4616), scram.ts (SCRAM-SHA-256/512, RFC 5802 / RFC 7677).
 */

export interface SaslServer {
  readonly mechanism: string;
  /** Evaluates one client token and returns the server's response token (possibly empty). Throws SaslAuthenticationError / IllegalSaslStateError. */
  evaluate(token: Buffer): Promise<Buffer>;
  /** True once the exchange completed successfully. */
  readonly complete: boolean;
  /** The authenticated user (Kafka's authorization id), valid once complete. */
  readonly authorizationId: string;
  /** Negotiated SASL extensions / properties, e.g. SCRAM's tokenauth (empty map if none). */
  readonly extensions: ReadonlyMap<string, string>;
  /**
   * Why the client's credentials were refused while the exchange still waits for it (OAUTHBEARER's error
   * challenge awaits the client's %x01), for the log of a client that goes on without answering.
   */
  readonly refusalReason?: string;
  /**
   * When the credential expires (ms since the epoch), valid once complete: an OAUTHBEARER token's exp (Kafka's
   * CREDENTIAL_LIFETIME_MS_SASL_NEGOTIATED_PROPERTY_KEY), which bounds the KIP-368 session lifetime.
   */
  readonly credentialLifetimeMs?: number;
}

/**
 * The largest client token a mechanism evaluates. PLAIN and SCRAM tokens are a name, a nonce or password and a
 * few attributes: RFC 4616 asks a server to accept 255 octets per PLAIN field. Kafka bounds them only by the
 * frame limit while unauthenticated (sasl.server.max.receive.size, 512 KiB), which the connection applies;
 * mechanisms refuse far less, so no unauthenticated client makes the broker hash or scan more than this.
 */
export const MAX_SASL_TOKEN_BYTES = 8192;
