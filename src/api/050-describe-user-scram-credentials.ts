// DescribeUserScramCredentials v0 (KIP-554): the SCRAM mechanisms and iteration counts of users, never their
// keys, from the metadata store (src/security/scram-credentials.ts, Kafka's ScramImage.describe). Served by
// every broker, as Kafka's brokers answer it from their metadata cache. `kafka-configs --describe
// --entity-type users` sends it.
import { DescribeUserScramCredentialsApi, createDescribeUserScramCredentialsResponse } from '../../protocol/messages/050-describe-user-scram-credentials.gen.js';
import { defineHandler } from './handler.js';

export const describeUserScramCredentials = defineHandler({
  api: DescribeUserScramCredentialsApi,
  uses: ['scramCredentials'],
  versions: { min: 0, max: 0 },
  async handle(req, ctx) {
    const described = await ctx.services.scramCredentials.describe(req.users === null ? null : req.users.map((u) => u.name));
    return createDescribeUserScramCredentialsResponse({
      results: described.map((d) => ({ user: d.user, errorCode: d.errorCode, errorMessage: d.errorMessage, credentialInfos: d.credentials.map((c) => ({ mechanism: c.mechanism, iterations: c.iterations })) })),
    });
  },
});
