// ConsumerGroupDescribe v0-1 (KIP-848): group and assignment epochs, the assignor, and every member's current
// and target assignment · v1: each member's type, classic or consumer (KIP-1099). GROUP_ID_NOT_FOUND for
// unknown groups and for classic groups.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  ConsumerGroupDescribeApi,
  createConsumerGroupDescribeResponse,
  createConsumerGroupDescribeResponseDescribedGroup,
} from '../../protocol/messages/069-consumer-group-describe.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { AUTHORIZED_OPERATIONS_OMITTED, GROUP_OPERATIONS } from './authorized-operations.js';
import { defineHandler } from './handler.js';

export const consumerGroupDescribe = defineHandler({
  api: ConsumerGroupDescribeApi,
  uses: ['groups'],
  versions: { min: 0, max: 1 },
  async handle(req, ctx) {
    const groups = groupCoordinatorOf(ctx);
    const described = groups
      ? await groups.consumerGroupDescribe(req.groupIds)
      : req.groupIds.map((groupId) => createConsumerGroupDescribeResponseDescribedGroup({ groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }));
    for (const g of described) g.authorizedOperations = req.includeAuthorizedOperations && g.errorCode === ErrorCode.NONE ? GROUP_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED;
    return createConsumerGroupDescribeResponse({ groups: described });
  },
});
