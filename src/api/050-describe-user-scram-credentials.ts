// DescribeUserScramCredentials v0 (KIP-554): the SCRAM mechanisms and iteration counts of users, never their
// keys, from the metadata store (src/security/scram-credentials.ts, Kafka's ScramImage.describe). Served by
// every broker, as Kafka's brokers answer it from their metadata cache. `kafka-configs --describe
// --entity-type users` sends it.
//
// Authorization (KafkaApis.handleDescribeUserScramCredentialsRequest): DESCRIBE on the cluster, else the error
// response: CLUSTER_AUTHORIZATION_FAILED at the top level and for each user named.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  DescribeUserScramCredentialsApi,
  createDescribeUserScramCredentialsResponse,
  type DescribeUserScramCredentialsResponse,
} from '../../protocol/messages/050-describe-user-scram-credentials.gen.js';
import { AclOperation } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';

export const describeUserScramCredentials = defineHandler({
  api: DescribeUserScramCredentialsApi,
  uses: ['scramCredentials'],
  versions: { min: 0, max: 0 },
  async handle(req, ctx) {
    if (!ctx.access.authorizeCluster(AclOperation.DESCRIBE)) {
      return errorResponse(DescribeUserScramCredentialsApi.apiKey, ctx.apiVersion, req, { code: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message: null }) as DescribeUserScramCredentialsResponse;
    }
    const described = await ctx.services.scramCredentials.describe(req.users === null ? null : req.users.map((u) => u.name));
    return createDescribeUserScramCredentialsResponse({
      results: described.map((d) => ({ user: d.user, errorCode: d.errorCode, errorMessage: d.errorMessage, credentialInfos: d.credentials.map((c) => ({ mechanism: c.mechanism, iterations: c.iterations })) })),
    });
  },
});
