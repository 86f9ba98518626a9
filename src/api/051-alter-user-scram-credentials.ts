// AlterUserScramCredentials v0 (KIP-554): adds, replaces and deletes users' SCRAM credentials in the metadata
// store with ScramControlManager's validation and per-user results (src/security/scram-credentials.ts). The
// request carries salted passwords (Hi(password, salt, i)); the broker derives and stores StoredKey and
// ServerKey only. `kafka-configs --alter --entity-type users --add-config 'SCRAM-SHA-512=[password=...]'`
// sends it. Any broker serves it (Kafka's brokers forward it to the controller; here the store is shared).
//
// Authorization (Kafka's ControllerApis.handleAlterUserScramCredentials): ALTER on the cluster
// (authorizeClusterOperation), else the error response: CLUSTER_AUTHORIZATION_FAILED for every user named.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  AlterUserScramCredentialsApi,
  createAlterUserScramCredentialsResponse,
  type AlterUserScramCredentialsResponse,
} from '../../protocol/messages/051-alter-user-scram-credentials.gen.js';
import { AclOperation } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';

export const alterUserScramCredentials = defineHandler({
  api: AlterUserScramCredentialsApi,
  uses: ['scramCredentials'],
  versions: { min: 0, max: 0 },
  async handle(req, ctx) {
    if (!ctx.access.authorizeCluster(AclOperation.ALTER)) {
      return errorResponse(AlterUserScramCredentialsApi.apiKey, ctx.apiVersion, req, { code: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message: null }) as AlterUserScramCredentialsResponse;
    }
    const results = await ctx.services.scramCredentials.alter(req.deletions, req.upsertions);
    return createAlterUserScramCredentialsResponse({ results: results.map((r) => ({ user: r.user, errorCode: r.errorCode, errorMessage: r.errorMessage })) });
  },
});
