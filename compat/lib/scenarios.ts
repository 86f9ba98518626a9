/**
 * The scenarios every client program implements, in matrix order. The steps of each are specified in
 * compat/README.md ("Scenarios"); a program prints {"result": ..., "violations": [...]} for one of them.
 */
export interface ScenarioDef {
  readonly id: string;
  readonly title: string;
  /** Hard limit for one run of one client's program; programs bound their own waits well below it. */
  readonly timeoutMs: number;
}

export const SCENARIOS: readonly ScenarioDef[] = [
  { id: 'metadata', title: 'metadata, list topics', timeoutMs: 60_000 },
  { id: 'create-topic', title: 'create topic with configs, create errors', timeoutMs: 60_000 },
  { id: 'produce-consume', title: 'keys, null values, headers, 1 MiB value, every codec', timeoutMs: 150_000 },
  { id: 'consume-offsets', title: 'consume from earliest, latest, timestamp', timeoutMs: 90_000 },
  { id: 'group-resume', title: 'group consume, commit, restart, resume', timeoutMs: 90_000 },
  { id: 'group-split', title: 'two consumers in one group split partitions', timeoutMs: 90_000 },
  { id: 'group-848', title: 'resume and split with the KIP-848 consumer protocol', timeoutMs: 150_000 },
  { id: 'idempotent', title: 'idempotent produce', timeoutMs: 60_000 },
  { id: 'delete-topic', title: 'delete topic, recreate', timeoutMs: 90_000 },
  { id: 'configs', title: 'describe and alter topic configs', timeoutMs: 60_000 },
  { id: 'delete-records', title: 'DeleteRecords', timeoutMs: 60_000 },
  { id: 'groups-admin', title: 'list, describe, delete groups', timeoutMs: 90_000 },
  { id: 'admin-single-node', title: "Kafka 4 admin tools' calls on one node: topic partitions, features, elections, reassignments, quorum", timeoutMs: 60_000 },
  { id: 'kafka-tools', title: "Kafka 4.4's command-line tools on one node, their printed output", timeoutMs: 60_000 },
  { id: 'err-missing-topic', title: 'produce to a missing topic (auto-create off)', timeoutMs: 60_000 },
  { id: 'err-offset-out-of-range', title: 'fetch out of range', timeoutMs: 90_000 },
  { id: 'err-oversize', title: 'record over max.message.bytes', timeoutMs: 60_000 },
  { id: 'transactions', title: 'transactional produce, read_committed', timeoutMs: 90_000 },
  { id: 'compaction', title: 'what the log cleaner leaves of a compact topic: (offset, key, value) survivors', timeoutMs: 120_000 },
];
