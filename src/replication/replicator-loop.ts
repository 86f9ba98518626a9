/**
 * The loop every replicator of a cluster link runs (link-replicator.ts for mirror topics, active-replicator.ts for
 * active-active ones): rounds one after another, an idle wait when a round had nothing to do (cut short by
 * `poke`, and skipped when a poke came during the round, which may have looked before the change), and on a
 * failure to reach the link's cluster a growing backoff (up to 10 s) with the client dropped, so the next round
 * reconnects with the link's current settings.
 */
import type { KafkaClient } from '../client/client.js';
import type { Logger } from '../observability/logger.js';
import type { ClusterLink } from './model.js';

const MAX_BACKOFF_MS = 10_000;
const IDLE_WAIT_MS = 1_000;

export abstract class ReplicatorLoop {
  protected client: KafkaClient | null = null;
  protected stopped = false;
  private running: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private backoffMs = 0;
  /** A poke since the current round began: the round may have looked before the change, so no idle wait follows it. */
  private poked = false;
  /** The link's cluster's last error, or null. */
  sourceError: string | null = null;

  constructor(
    protected link: ClusterLink,
    private readonly connectLink: (link: ClusterLink) => Promise<KafkaClient>,
    protected readonly logger: Logger,
    /** What the log lines say this loop does. */
    private readonly what: string,
  ) {}

  get name(): string {
    return this.link.name;
  }

  /** One round; false when there was nothing to do. Throws when the link's cluster cannot be reached. */
  protected abstract round(): Promise<boolean>;

  /** After a failed round, before the backoff: what a subclass keeps between rounds is settled and dropped. */
  protected async reset(): Promise<void> {}

  /** The client of the link's cluster, connected on first use. */
  protected async connected(): Promise<KafkaClient> {
    return (this.client ??= await this.connectLink(this.link));
  }

  start(): void {
    this.running ??= this.loop().catch((err: unknown) => this.logger.error({ err, link: this.link.name }, `${this.what} stopped`));
  }

  /** New settings: the next round reconnects with them. */
  relink(link: ClusterLink): void {
    this.link = link;
    void this.dropClient();
    this.poke();
  }

  /** Something changed (a topic, an ownership): look again now rather than after the idle wait. */
  poke(): void {
    this.backoffMs = Math.min(this.backoffMs, 100);
    this.poked = true;
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
    await this.dropClient();
  }

  private async dropClient(): Promise<void> {
    const c = this.client;
    this.client = null;
    await c?.close().catch(() => undefined);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(done, ms);
      t.unref();
      function done(): void {
        clearTimeout(t);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let worked = false;
      this.poked = false;
      try {
        worked = await this.round();
        this.backoffMs = 0;
        this.sourceError = null;
      } catch (err) {
        if (this.stopped) return;
        this.sourceError = err instanceof Error ? err.message : String(err);
        this.backoffMs = Math.min(Math.max(this.backoffMs * 2, 200), MAX_BACKOFF_MS);
        this.logger.warn({ err, link: this.link.name, retryInMs: this.backoffMs }, `${this.what} failed; retrying`);
        await this.dropClient();
        await this.reset();
        await this.sleep(this.backoffMs);
        continue;
      }
      if (!worked && !this.stopped && !this.poked) await this.sleep(IDLE_WAIT_MS);
    }
  }
}
