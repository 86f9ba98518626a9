import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SHARED_BROKER_SETTINGS } from '../../../../compat/lib/brokers.js';
import { CLIENTS } from '../../../../compat/lib/clients.js';
import { SCENARIOS } from '../../../../compat/lib/scenarios.js';
import { COMPAT_DIR } from '../../../../compat/lib/paths.js';

const java = CLIENTS.find((c) => c.id === 'java');

describe('the kafka-tools scenario', () => {
  it('is a scenario of the matrix', () => {
    expect(SCENARIOS.map((s) => s.id)).toContain('kafka-tools');
  });

  it("runs Kafka's tools through their own module's program and classpath in the java row", () => {
    const inv = java?.invocation('kafka-tools', '127.0.0.1:9092', 'kafka-tools-java-x');
    const cp = inv?.args[inv.args.indexOf('-cp') + 1] ?? '';
    expect(cp.startsWith(`${join(COMPAT_DIR, 'kafka-tools', 'target', 'classes')}:`)).toBe(true);
    expect(inv?.args.slice(-4)).toEqual(['dev.ledgerline.compat.Tools', 'kafka-tools', '127.0.0.1:9092', 'kafka-tools-java-x']);
    expect(java?.na['kafka-tools']).toBeUndefined();
  });

  it('leaves every other java scenario to the kafka-clients program', () => {
    const inv = java?.invocation('admin-single-node', '127.0.0.1:9092', 'p');
    const cp = inv?.args[inv.args.indexOf('-cp') + 1] ?? '';
    expect(cp.startsWith(`${join(COMPAT_DIR, 'java', 'target', 'classes')}:`)).toBe(true);
    expect(inv?.args).toContain('dev.ledgerline.compat.Scenarios');
  });

  it('is n/a, with a reason, for every client but java', () => {
    for (const c of CLIENTS.filter((x) => x.id !== 'java')) expect(c.na['kafka-tools'], c.id).toMatch(/java/i);
  });
});

describe('the compaction scenario', () => {
  it('is a scenario of the matrix, bounded well past its own waits', () => {
    const s = SCENARIOS.find((x) => x.id === 'compaction');
    expect(s?.timeoutMs).toBeGreaterThanOrEqual(120_000);
  });

  it('runs in the java, kafkajs and confluent-kafka rows and is n/a, with a reason, in the others', () => {
    for (const c of CLIENTS) {
      if (['java', 'kafkajs', 'confluent-kafka'].includes(c.id)) expect(c.na.compaction, c.id).toBeUndefined();
      else expect(c.na.compaction, c.id).toMatch(/log cleaner/);
    }
  });

  it('runs both brokers with the same short log.cleaner.backoff.ms', () => {
    expect(SHARED_BROKER_SETTINGS['log.cleaner.backoff.ms']).toBe('200');
  });
});
