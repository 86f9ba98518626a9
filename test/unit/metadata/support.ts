/**
 * Engines the metadata contract suite runs against, and helpers shared by the metadata tests.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  MemoryMetadataVolume,
  openMemoryMetadataStore,
  openSqliteMetadataStore,
  type LocalMetadataStoreOptions,
  type MetadataStore,
  type WatchEvent,
  type WatchListener,
  type WatchResponse,
} from '../../../src/metadata/index.js';

/** One engine's storage for one test: `open` may be called again after `close` to reopen it. */
export interface EngineInstance {
  open(options?: LocalMetadataStoreOptions): Promise<MetadataStore>;
  /** The data directory, for engines that have one. */
  readonly dir: string | undefined;
  dispose(): void;
}

export interface Engine {
  readonly name: string;
  /** Whatever a killed process had acknowledged is there after reopening (needs a directory). */
  readonly survivesProcessKill: boolean;
  create(): EngineInstance;
}

export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `ll-metadata-${label}-`));
}

export const sqliteEngine: Engine = {
  name: 'sqlite',
  survivesProcessKill: true,
  create() {
    const dir = tempDir('sqlite');
    return {
      dir,
      open: (options) => openSqliteMetadataStore(join(dir, 'metadata'), options),
      dispose: () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

export const memoryEngine: Engine = {
  name: 'memory',
  survivesProcessKill: false,
  create() {
    const volume = new MemoryMetadataVolume('memory-test');
    return {
      dir: undefined,
      open: (options) => openMemoryMetadataStore(volume, options),
      dispose: () => {},
    };
  },
};

export const engines: Engine[] = [sqliteEngine, memoryEngine];

export const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Wait until `condition` holds, yielding to the event loop; fail after `timeoutMs`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** A watch listener that records what it receives. */
export class Recorder implements WatchListener {
  readonly responses: WatchResponse[] = [];
  readonly errors: Error[] = [];

  onEvents(response: WatchResponse): void {
    this.responses.push(response);
  }

  onError(error: Error): void {
    this.errors.push(error);
  }

  get events(): WatchEvent[] {
    return this.responses.flatMap((r) => [...r.events]);
  }

  /** Compact form for assertions: "put /a=1@2", "delete /a@3". */
  get summary(): string[] {
    return this.events.map((e) =>
      e.type === 'put'
        ? `put ${e.kv.key}=${e.kv.value.toString()}@${e.kv.modRevision}`
        : `delete ${e.kv.key}@${e.kv.modRevision}`,
    );
  }

  async waitForEvents(n: number, timeoutMs?: number): Promise<void> {
    await until(() => this.events.length >= n, `${n} watch events (have ${this.events.length})`, timeoutMs);
  }
}
