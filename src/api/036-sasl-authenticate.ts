// SaslAuthenticate v0-2 outside the SASL exchange (see 017-sasl-handshake.ts): ILLEGAL_SASL_STATE with Kafka's
// message (KafkaApis.handleSaslAuthenticateRequest). KIP-368 re-authentication is not offered (the exchange
// answers a session lifetime of 0), so no client sends one here expecting it to be served.
import { ErrorCode } from '../../protocol/error-codes.js';
import { SaslAuthenticateApi, createSaslAuthenticateResponse } from '../../protocol/messages/036-sasl-authenticate.gen.js';
import { defineHandler } from './handler.js';

export const saslAuthenticate = defineHandler({
  api: SaslAuthenticateApi,
  uses: [],
  versions: { min: 0, max: 2 },
  handle() {
    return createSaslAuthenticateResponse({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, errorMessage: 'SaslAuthenticate request received after successful authentication' });
  },
});
