// ListPartitionReassignments v0 (KIP-455) · v0+: flexible.
//
// No reassignment is ever in progress on one node (AlterPartitionReassignments can only confirm the
// assignment a partition has), so the answer lists none, for every topic or the ones named, as Kafka's
// controller lists only reassigning partitions (ReplicationControlManager.listPartitionReassignments).
import { ListPartitionReassignmentsApi, createListPartitionReassignmentsResponse } from '../../protocol/messages/046-list-partition-reassignments.gen.js';
import { defineHandler } from './handler.js';

export const listPartitionReassignmentsHandler = defineHandler({
  api: ListPartitionReassignmentsApi,
  uses: [],
  versions: { min: 0, max: 0 },
  handle() {
    return createListPartitionReassignmentsResponse({ errorMessage: null, topics: [] });
  },
});
