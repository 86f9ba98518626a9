/**
 * The brokers an application test (Kafka Streams, Kafka Connect) runs its application against: Ledgerline,
 * and Apache Kafka 4.4 (compat's Maven build) when the test's opt-in variable is 1 — the reference run,
 * which checks the test itself. A missing prerequisite (java, a Maven build) skips a run with the reason
 * printed, or fails it when the test's require variable is 1 (as CI sets it).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReferenceKafka } from '../../compat/lib/brokers.js';
import { COMPAT_DIR } from '../../compat/lib/paths.js';

export interface AppBroker {
  readonly bootstrap: string;
  stop(): Promise<void>;
}

export interface AppBrokerKind<B extends AppBroker> {
  readonly name: string;
  /** Why this run cannot happen here, or null. */
  readonly skipReason: string | null;
  /** The run is skipped: opted out, or its prerequisite is missing and not required. */
  readonly skip: boolean;
  /** Throws when the run goes ahead although its prerequisite is missing (the require variable is 1). */
  needs(): void;
  start(): Promise<B>;
}

/** Apache Kafka 4.4 on a temporary log directory (removed at stop); restart() is a SIGKILL and a start on the same data. */
export async function startReferenceKafka(logDirPrefix: string): Promise<AppBroker & { restart(): Promise<void> }> {
  const logDir = mkdtempSync(join(tmpdir(), logDirPrefix));
  const k = new ReferenceKafka({ label: 'kafka', logDir, heapMiB: 512, keepData: false });
  const started = await k.start();
  if (!started.ok) throw new Error(`Kafka did not start: ${started.reason}`);
  return {
    bootstrap: k.bootstrap,
    restart: async () => {
      const again = await k.restart();
      if (!again.ok) throw new Error(`Kafka did not start again after SIGKILL: ${again.reason}`);
    },
    stop: async () => {
      await k.stop();
      rmSync(logDir, { recursive: true, force: true });
    },
  };
}

export interface AppBrokerKindsOptions<B extends AppBroker> {
  /** What the test runs, for the skip lines: 'Kafka Connect'. */
  readonly what: string;
  /** Why the application cannot run here (whyNoStreamsApp, whyNoConnect), or null. */
  readonly appMissing: string | null;
  /** The variable that turns a missing prerequisite into a failure: LEDGERLINE_REQUIRE_STREAMS. */
  readonly requireVar: string;
  /** The variable that must be 1 for the run against Kafka: LEDGERLINE_STREAMS_REFERENCE. */
  readonly referenceVar: string;
  readonly ledgerline: () => Promise<B>;
  readonly kafka: () => Promise<B>;
}

/** The Ledgerline run and the Kafka reference run of an application test, with the skipped ones said why. */
export function appBrokerKinds<B extends AppBroker>(o: AppBrokerKindsOptions<B>): AppBrokerKind<B>[] {
  const required = process.env[o.requireVar] === '1';
  const kafkaJars = existsSync(join(COMPAT_DIR, 'kafka-broker', 'target', 'classpath.txt'))
    ? null
    : 'the Kafka jars are not resolved (run `npm run compat -- --only kafka` once)';
  const runs = [
    { name: 'Ledgerline', skipReason: o.appMissing, optedOut: false, start: o.ledgerline },
    { name: 'Apache Kafka 4.4', skipReason: o.appMissing ?? kafkaJars, optedOut: process.env[o.referenceVar] !== '1', start: o.kafka },
  ];
  return runs.map((r) => {
    if (r.optedOut) console.warn(`${o.what} against ${r.name} skipped: ${o.referenceVar}=1 runs it`);
    else if (r.skipReason && !required) console.warn(`${o.what} against ${r.name} skipped: ${r.skipReason}`);
    return {
      name: r.name,
      skipReason: r.skipReason,
      skip: r.optedOut || (r.skipReason !== null && !required),
      needs: () => {
        if (r.skipReason !== null) throw new Error(`${o.requireVar}=1, but: ${r.skipReason}`);
      },
      start: r.start,
    };
  });
}
