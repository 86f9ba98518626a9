// DescribeAcls v1-3 (Kafka 4 dropped v0, KIP-896): the ACLs a filter matches, grouped by resource pattern
// (Kafka's AclApis.handleDescribeAcls, DescribeAclsResponse.aclsResources). Needs DESCRIBE on the cluster;
// with no authorizer configured, SECURITY_DISABLED.
import { ErrorCode } from '../../protocol/error-codes.js';
import { DescribeAclsApi, createDescribeAclsResponse, createDescribeAclsResponseDescribeAclsResource } from '../../protocol/messages/029-describe-acls.gen.js';
import { knownOperation, knownPatternType, knownPermissionType, knownResourceType } from '../security/acl/model.js';
import { AclOperation } from './access.js';
import { defineHandler } from './handler.js';

export const describeAcls = defineHandler({
  api: DescribeAclsApi,
  uses: ['acls'],
  versions: { min: 1, max: 3 },
  handle(req, ctx) {
    if (!ctx.access.authorizeCluster(AclOperation.DESCRIBE)) return createDescribeAclsResponse({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null });
    const acls = ctx.services.acls;
    if (!acls) return createDescribeAclsResponse({ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No Authorizer is configured on the broker' });
    const { result, acls: found } = acls.describe({
      pattern: { resourceType: knownResourceType(req.resourceTypeFilter), name: req.resourceNameFilter, patternType: knownPatternType(req.patternTypeFilter) },
      entry: { principal: req.principalFilter, host: req.hostFilter, operation: knownOperation(req.operation), permissionType: knownPermissionType(req.permissionType) },
    });
    if (result.errorCode !== ErrorCode.NONE) return createDescribeAclsResponse({ errorCode: result.errorCode, errorMessage: result.errorMessage });
    const byPattern = new Map<string, ReturnType<typeof createDescribeAclsResponseDescribeAclsResource>>();
    for (const b of found) {
      const key = JSON.stringify([b.pattern.resourceType, b.pattern.name, b.pattern.patternType]);
      let resource = byPattern.get(key);
      if (!resource) byPattern.set(key, (resource = createDescribeAclsResponseDescribeAclsResource({ resourceType: b.pattern.resourceType, resourceName: b.pattern.name, patternType: b.pattern.patternType, acls: [] })));
      resource.acls.push({ principal: b.entry.principal, host: b.entry.host, operation: b.entry.operation, permissionType: b.entry.permissionType });
    }
    return createDescribeAclsResponse({ errorMessage: null, resources: [...byPattern.values()] });
  },
});
