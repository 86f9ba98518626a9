/**
 * What the protocol modules share: settings, time, logging, topic metadata, and event sinks for metrics.
 */
import type { Clock } from '../metadata/clock.js';
import type { GroupCoordinatorConfig } from './config.js';

/** The logging calls the coordinator makes (pino's Logger provides them). */
export interface CoordinatorLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export const SILENT_LOGGER: CoordinatorLogger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** A topic as the coordinator needs it (src/cluster/topics.ts's TopicRecord has these fields). */
export interface TopicInfo {
  readonly name: string;
  readonly topicId: string;
  readonly partitions: number;
  readonly internal: boolean;
}

/** Read access to the topic registry (TopicManager provides it). */
export interface TopicView {
  get(name: string): TopicInfo | undefined;
  getById(topicId: string): TopicInfo | undefined;
  list(): readonly TopicInfo[];
}

/** The request's origin, as Kafka's RequestContext gives it to the coordinator. */
export interface RequestInfo {
  readonly clientId: string;
  readonly clientHost: string;
  readonly apiVersion: number;
}

export interface CoordinatorEvents {
  /** A classic group reached a new generation, or a KIP-848 group a new group epoch. */
  rebalance(groupId: string, type: 'classic' | 'consumer'): void;
}

export interface CoordinatorContext {
  readonly config: GroupCoordinatorConfig;
  readonly clock: Clock;
  readonly log: CoordinatorLogger;
  readonly topics: TopicView;
  readonly events: CoordinatorEvents;
}
