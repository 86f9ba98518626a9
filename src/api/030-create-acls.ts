// CreateAcls v1-3 (Kafka 4 dropped v0, KIP-896): stores ACLs in the metadata store (src/security/acl/acl-store.ts),
// each creation answered on its own as Kafka's AclApis.handleCreateAcls and AclControlManager check it. Needs
// ALTER on the cluster; with no authorizer configured, SECURITY_DISABLED for every creation.
import { ErrorCode } from '../../protocol/error-codes.js';
import { CreateAclsApi, createCreateAclsResponse } from '../../protocol/messages/030-create-acls.gen.js';
import { knownOperation, knownPatternType, knownPermissionType, knownResourceType } from '../security/acl/model.js';
import { AclOperation } from './access.js';
import { defineHandler } from './handler.js';

export const createAcls = defineHandler({
  api: CreateAclsApi,
  uses: ['acls'],
  versions: { min: 1, max: 3 },
  async handle(req, ctx) {
    const all = (errorCode: number, errorMessage: string | null) => createCreateAclsResponse({ results: req.creations.map(() => ({ errorCode, errorMessage })) });
    if (!ctx.access.authorizeCluster(AclOperation.ALTER)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, null);
    const acls = ctx.services.acls;
    if (!acls) return all(ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured.');
    const results = await acls.create(
      req.creations.map((c) => ({
        pattern: { resourceType: knownResourceType(c.resourceType), name: c.resourceName, patternType: knownPatternType(c.resourcePatternType) },
        entry: { principal: c.principal, host: c.host, operation: knownOperation(c.operation), permissionType: knownPermissionType(c.permissionType) },
      })),
    );
    return createCreateAclsResponse({ results: results.map((r) => ({ errorCode: r.errorCode, errorMessage: r.errorMessage })) });
  },
});
