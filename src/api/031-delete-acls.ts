// DeleteAcls v1-3 (Kafka 4 dropped v0, KIP-896): removes every ACL each filter matches, answering per filter with
// the ACLs it removed (Kafka's AclApis.handleDeleteAcls, AclControlManager.deleteAcls). Needs ALTER on the
// cluster; with no authorizer configured, SECURITY_DISABLED for every filter.
import { ErrorCode } from '../../protocol/error-codes.js';
import { DeleteAclsApi, createDeleteAclsResponse } from '../../protocol/messages/031-delete-acls.gen.js';
import { knownOperation, knownPatternType, knownPermissionType, knownResourceType } from '../security/acl/model.js';
import { AclOperation } from './access.js';
import { defineHandler } from './handler.js';

export const deleteAcls = defineHandler({
  api: DeleteAclsApi,
  uses: ['acls'],
  versions: { min: 1, max: 3 },
  async handle(req, ctx) {
    const all = (errorCode: number, errorMessage: string | null) => createDeleteAclsResponse({ filterResults: req.filters.map(() => ({ errorCode, errorMessage, matchingAcls: [] })) });
    if (!ctx.access.authorizeCluster(AclOperation.ALTER)) return all(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, null);
    const acls = ctx.services.acls;
    if (!acls) return all(ErrorCode.SECURITY_DISABLED, 'No Authorizer is configured.');
    const results = await acls.delete(
      req.filters.map((f) => ({
        pattern: { resourceType: knownResourceType(f.resourceTypeFilter), name: f.resourceNameFilter, patternType: knownPatternType(f.patternTypeFilter) },
        entry: { principal: f.principalFilter, host: f.hostFilter, operation: knownOperation(f.operation), permissionType: knownPermissionType(f.permissionType) },
      })),
    );
    return createDeleteAclsResponse({
      filterResults: results.map((r) => ({
        errorCode: r.errorCode,
        errorMessage: r.errorMessage,
        matchingAcls: r.deleted.map((b) => ({
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          resourceType: b.pattern.resourceType,
          resourceName: b.pattern.name,
          patternType: b.pattern.patternType,
          principal: b.entry.principal,
          host: b.entry.host,
          operation: b.entry.operation,
          permissionType: b.entry.permissionType,
        })),
      })),
    });
  },
});
