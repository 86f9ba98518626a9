/**
 * The log cleaner's metrics under Kafka's names (kafka.log:type=LogCleaner and type=LogCleanerManager, as
 * the JMX exporter spells them), plus per-partition figures Kafka keeps only in its cleaner log lines:
 * dirty ratio, bytes cleaned and the time of the last pass.
 */
import { Gauge, type Registry } from 'prom-client';
import type { LogCleaner, PartitionCleanerStats } from '../log/log-cleaner.js';

export function registerLogCleanerMetrics(registry: Registry, cleaner: LogCleaner): void {
  const registers = [registry];
  const gauge = (name: string, help: string, read: () => number): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read());
      },
    });
  };
  gauge('kafka_log_logcleanermanager_max_dirty_percent', 'Largest dirty ratio of a compacted partition at the last look, in percent.', () => cleaner.stats().maxDirtyPercent);
  gauge('kafka_log_logcleanermanager_time_since_last_run_ms', 'Milliseconds since the cleaner last looked for work.', () => cleaner.stats().timeSinceLastRunMs);
  gauge('kafka_log_logcleanermanager_uncleanable_partitions_count', 'Partitions whose last pass failed, left alone for a while.', () => cleaner.stats().uncleanablePartitions);
  gauge('kafka_log_logcleaner_max_compaction_delay_secs', 'How long past max.compaction.lag.ms the most overdue partition is.', () => cleaner.stats().maxCompactionDelaySecs);
  gauge('kafka_log_logcleaner_max_buffer_utilization_percent', "Share of the key map the last pass used, in percent.", () => cleaner.stats().maxBufferUtilizationPercent);
  gauge('kafka_log_logcleaner_cleaner_recopy_percent', 'Bytes the last pass wrote per byte it read, in percent.', () => cleaner.stats().recopyPercent);
  gauge('kafka_log_logcleaner_max_clean_time_secs', 'Duration of the last pass.', () => cleaner.stats().maxCleanTimeSecs);
  gauge('kafka_log_logcleaner_deadthreadcount', 'Cleaner threads that stopped (a failed pass marks its partition instead).', () => cleaner.stats().deadThreads);
  const perPartition = (name: string, help: string, read: (s: PartitionCleanerStats) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['topic', 'partition'],
      registers,
      collect() {
        this.reset();
        for (const s of cleaner.stats().partitions.values()) this.set({ topic: s.topic, partition: String(s.partition) }, read(s));
      },
    });
  };
  perPartition('kafka_log_logcleaner_dirty_ratio', 'Dirty bytes / cleanable bytes of each compacted partition at the last look.', (s) => s.dirtyRatio);
  perPartition('kafka_log_logcleaner_cleaned_bytes', 'Bytes the cleaner has read from each partition.', (s) => s.bytesCleaned);
  perPartition('kafka_log_logcleaner_written_bytes', 'Bytes the cleaner has written into compacted ledgers of each partition.', (s) => s.bytesWritten);
  perPartition('kafka_log_logcleaner_last_clean_timestamp_seconds', "End of each partition's last pass (seconds since the epoch; 0 before any).", (s) => (s.lastPassAtMs < 0 ? 0 : s.lastPassAtMs / 1000));
}
