// SaslHandshake v0-1 outside the SASL exchange. On a SASL listener the exchange itself is the authenticator's
// (src/security/sasl/authenticator.ts) and never reaches here; a SaslHandshake that does reach a handler came on
// a connection already authenticated, or on a PLAINTEXT/SSL listener, and is ILLEGAL_SASL_STATE with no
// mechanisms, as Kafka's KafkaApis.handleSaslHandshakeRequest answers it.
import { ErrorCode } from '../../protocol/error-codes.js';
import { SaslHandshakeApi, createSaslHandshakeResponse } from '../../protocol/messages/017-sasl-handshake.gen.js';
import { defineHandler } from './handler.js';

export const saslHandshake = defineHandler({
  api: SaslHandshakeApi,
  uses: [],
  versions: { min: 0, max: 1 },
  handle() {
    return createSaslHandshakeResponse({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] });
  },
});
