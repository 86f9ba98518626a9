/**
 * When a coordinator may create its internal topic (__consumer_offsets, __transaction_state), and with how
 * many replicas.
 *
 * Kafka creates them on first use with offsets.topic.replication.factor / transaction.state.log.replication.factor
 * replicas, and the creation fails (FindCoordinator answers COORDINATOR_NOT_AVAILABLE) "until the cluster size
 * meets this replication factor requirement" (the configs' documentation). A member of a shared cluster does
 * the same: with BookKeeper the replication factor is the ensemble of the topic's ledgers, and a topic created
 * while the first broker was alone would keep every group's offsets on one bookie for good. A broker alone in
 * its cluster (the embedded default) caps the factor to the live brokers instead, so that a single broker needs
 * no setting to run groups and transactions; the data has the local store's durability either way.
 */
import type { Clock, ClockTimer } from '../metadata/clock.js';
import type { CoordinatorLogger } from './context.js';

/** How often a coordinator waiting for brokers looks again. */
export const INTERNAL_TOPIC_RETRY_MS = 1_000;

/** The replication factor to create the topic with now, or null to wait for more live brokers. */
export function internalTopicReplicas(configured: number, liveBrokers: number, awaitReplicas: boolean): number | null {
  if (!awaitReplicas) return Math.max(1, Math.min(configured, liveBrokers));
  return liveBrokers >= configured ? configured : null;
}

/**
 * Runs `attempt` now and again every INTERNAL_TOPIC_RETRY_MS until it reports done, an error logged and retried
 * like a wait; `cancel` ends it. The first run's outcome is what `start` resolves with (done or not), so a
 * broker's start does not wait for other brokers.
 */
export class InternalTopicStarter {
  #timer: ClockTimer | null = null;
  #cancelled = false;
  #waitingLogged = false;

  constructor(
    private readonly topic: string,
    private readonly clock: Clock,
    private readonly log: CoordinatorLogger,
    private readonly attempt: () => Promise<boolean>,
  ) {}

  async start(): Promise<boolean> {
    return this.#run();
  }

  /** Looks again now (the topic appeared, created by another broker). */
  poke(): void {
    if (this.#cancelled) return;
    this.#timer?.cancel();
    this.#timer = null;
    void this.#run();
  }

  /** Logged once per wait: why the topic is not there yet. */
  waiting(message: string, fields: Record<string, unknown>): void {
    if (this.#waitingLogged) return;
    this.#waitingLogged = true;
    this.log.info({ topic: this.topic, ...fields }, message);
  }

  cancel(): void {
    this.#cancelled = true;
    this.#timer?.cancel();
    this.#timer = null;
  }

  async #run(): Promise<boolean> {
    if (this.#cancelled) return false;
    let done = false;
    try {
      done = await this.attempt();
    } catch (err) {
      this.log.warn({ err, topic: this.topic }, 'creating an internal topic failed; it is tried again');
    }
    if (!done && !this.#cancelled && this.#timer === null) {
      this.#timer = this.clock.setTimer(INTERNAL_TOPIC_RETRY_MS, () => {
        this.#timer = null;
        void this.#run();
      });
    }
    return done;
  }
}
