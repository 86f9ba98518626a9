/**
 * Broker configuration, with Kafka's names. Sources, later ones winning:
 *   1. Kafka's defaults (src/cluster/config-defs.ts);
 *   2. a properties file (`--config server.properties`, Java properties syntax);
 *   3. environment variables `LEDGERLINE_<NAME>`, named as Apache Kafka's container image names them:
 *      upper case, `.` → `_`, `_` → `__`, `-` → `___` (LEDGERLINE_LOG_DIRS=/data → log.dirs=/data);
 *   4. `--set key=value` on the command line.
 */
import { readFileSync } from 'node:fs';
import { ErrorCode } from '../protocol/error-codes.js';
import { LedgerlineError } from '../protocol/errors.js';
import { BROKER_CONFIG_BY_NAME, BROKER_CONFIGS, validateConfigValue } from './cluster/config-defs.js';
import { listenerProtocols, type SecurityProtocol } from './security/listener-security.js';

/** A configuration Kafka would refuse (its ConfigException: INVALID_CONFIG). */
export class ConfigError extends LedgerlineError {
  constructor(message: string) {
    super('LL_ERR_CONFIG', ErrorCode.INVALID_CONFIG, message);
  }
}

export interface Listener {
  name: string;
  host: string;
  port: number;
}

export interface BrokerConfig {
  /** Every config as a string, after all sources, defaults included (null: no value). */
  readonly values: ReadonlyMap<string, string | null>;
  /** Names set explicitly by the operator (file, environment or --set): STATIC_BROKER_CONFIG. */
  readonly explicit: ReadonlySet<string>;
  readonly nodeId: number;
  readonly listeners: Listener[];
  /**
   * The addresses this node publishes, by listener name: the broker listeners' (Metadata, FindCoordinator)
   * and the controller listeners' (DescribeQuorum, DescribeCluster for controllers).
   */
  readonly advertisedListeners: Listener[];
  /** The names of the listeners that serve the controller APIs (controller.listener.names), upper-cased. */
  readonly controllerListenerNames: readonly string[];
  /** Each listener's security protocol (listener.security.protocol.map, src/security/listener-security.ts). */
  readonly securityProtocols: ReadonlyMap<string, SecurityProtocol>;
  readonly dataDir: string;
  readonly numPartitions: number;
  readonly defaultReplicationFactor: number;
  readonly autoCreateTopics: boolean;
  readonly deleteTopicEnable: boolean;
  readonly messageMaxBytes: number;
  readonly socketRequestMaxBytes: number;
  /** queued.max.request.bytes: the request memory pool's capacity; Infinity when unbounded (-1). */
  readonly queuedMaxRequestBytes: number;
  readonly connectionsMaxIdleMs: number;
  readonly logRetentionCheckIntervalMs: number;
  readonly maxFetchSessions: number;
}

/** Parses Java properties text: `key=value` or `key: value`, `#`/`!` comments, `\` line continuations. */
export function parseProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.trimStart();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    while (/(^|[^\\])(\\\\)*\\$/.test(line) && i + 1 < lines.length) line = line.slice(0, -1) + lines[++i]!.trimStart();
    const m = /^((?:\\.|[^=:\s\\])+)\s*[=:\s]\s*(.*)$/.exec(line);
    const key = (m ? m[1]! : line).replace(/\\(.)/g, '$1');
    const value = m ? m[2]!.replace(/\\(.)/g, '$1') : '';
    out.set(key, value);
  }
  return out;
}

/** `LEDGERLINE_LOG_DIRS` → `log.dirs`, as Kafka's container image maps KAFKA_* variables. */
/** Variables that configure the process rather than the broker. */
const PROCESS_VARIABLES = new Set(['LEDGERLINE_LOG_LEVEL', 'LEDGERLINE_LOG_FORMAT']);

export function envToConfigName(variable: string): string | null {
  if (!variable.startsWith('LEDGERLINE_') || PROCESS_VARIABLES.has(variable)) return null;
  return variable
    .slice('LEDGERLINE_'.length)
    .toLowerCase()
    .replace(/___/g, '\u0001')
    .replace(/__/g, '\u0002')
    .replace(/_/g, '.')
    .replace(/\u0001/g, '-')
    .replace(/\u0002/g, '_');
}

export function parseListeners(value: string, what: string): Listener[] {
  const out: Listener[] = [];
  for (const item of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^([A-Za-z0-9_]+):\/\/(\[[^\]]*\]|[^:]*):(\d+)$/.exec(item);
    if (!m) throw new ConfigError(`${what}: ${JSON.stringify(item)} is not NAME://host:port`);
    const port = Number(m[3]);
    if (port > 65535) throw new ConfigError(`${what}: port ${port} out of range`);
    out.push({ name: m[1]!.toUpperCase(), host: m[2]!.replace(/^\[|\]$/g, ''), port });
  }
  if (out.length === 0) throw new ConfigError(`${what} is empty`);
  return out;
}

/** Ledgerline's default for queued.max.request.bytes. */
export const DEFAULT_QUEUED_MAX_REQUEST_BYTES = 256 * 1024 * 1024;

/**
 * The request memory pool's capacity (queued.max.request.bytes). Kafka's default, -1, leaves request memory
 * unbounded; Ledgerline's is bounded whatever clients do: 256 MiB, or twice socket.request.max.bytes when
 * that is larger, so two largest requests always fit with room to spare for small ones. 256 MiB is a small
 * share of a broker machine, and requests hold it only while being read and handled (a produce until its
 * fsync), so at millisecond latencies it carries far more than the disk can take. An operator's explicit
 * -1 (or 0) keeps Kafka's meaning, no bound. An explicit bound below socket.request.max.bytes is refused as
 * Kafka refuses it (its SimpleMemoryPool cannot be smaller than its largest single allocation): a request
 * of the maximum size could otherwise never be read.
 */
export function requestMemoryBound(explicit: number | null, socketRequestMaxBytes: number): number {
  if (explicit === null) return Math.max(DEFAULT_QUEUED_MAX_REQUEST_BYTES, 2 * socketRequestMaxBytes);
  if (explicit <= 0) return Infinity;
  if (explicit < socketRequestMaxBytes) {
    throw new ConfigError(`queued.max.request.bytes (${explicit}) must be at least socket.request.max.bytes (${socketRequestMaxBytes}), or -1 for no bound`);
  }
  return explicit;
}

export interface ConfigSources {
  file?: string;
  env?: NodeJS.ProcessEnv;
  overrides?: ReadonlyArray<[string, string]>;
}

export function loadConfig(sources: ConfigSources = {}): BrokerConfig {
  const values = new Map<string, string | null>(BROKER_CONFIGS.map((d) => [d.name, d.default]));
  const explicit = new Set<string>();
  const set = (k: string, v: string): void => {
    values.set(k, v);
    explicit.add(k);
  };
  if (sources.file) {
    let text: string;
    try {
      text = readFileSync(sources.file, 'utf8');
    } catch (e) {
      throw new ConfigError(`cannot read config file ${sources.file}: ${(e as Error).message}`);
    }
    for (const [k, v] of parseProperties(text)) set(k, v);
  }
  for (const [variable, v] of Object.entries(sources.env ?? {})) {
    const k = envToConfigName(variable);
    if (k && v !== undefined) set(k, v);
  }
  for (const [k, v] of sources.overrides ?? []) set(k, v);

  for (const k of explicit) {
    const def = BROKER_CONFIG_BY_NAME.get(k);
    if (!def) continue; // Kafka accepts (and logs) unknown configs.
    const err = validateConfigValue(def, values.get(k) ?? null);
    if (err) throw new ConfigError(err);
  }

  const str = (k: string): string | null => values.get(k) ?? null;
  const int = (k: string): number => Number(str(k));
  const bool = (k: string): boolean => str(k)?.toLowerCase() === 'true';

  // node.id wins; broker.id is its ZooKeeper-era alias.
  let nodeId = int('node.id');
  if (!explicit.has('node.id') && explicit.has('broker.id') && int('broker.id') >= 0) nodeId = int('broker.id');
  const listeners = parseListeners(str('listeners')!, 'listeners');
  const advertised = str('advertised.listeners');
  const controllerListenerNames = (str('controller.listener.names') ?? '').split(',').map((s) => s.trim().toUpperCase()).filter(Boolean);
  // Kafka's KafkaConfig checks: every controller listener is one of the listeners, and one listener at least
  // serves brokers' clients.
  for (const name of controllerListenerNames) {
    if (!listeners.some((l) => l.name === name)) throw new ConfigError(`controller.listener.names must only contain values appearing in the 'listeners' configuration (${name} does not)`);
  }
  if (listeners.every((l) => controllerListenerNames.includes(l.name))) throw new ConfigError('listeners must name at least one listener that is not a controller listener (controller.listener.names)');
  // A controller listener advertises its own address unless advertised.listeners names it (KIP-853 lets it).
  const advertisedListeners = advertised ? parseListeners(advertised, 'advertised.listeners') : listeners.filter((l) => !controllerListenerNames.includes(l.name)).map((l) => ({ ...l }));
  for (const l of listeners) if (controllerListenerNames.includes(l.name) && !advertisedListeners.some((a) => a.name === l.name)) advertisedListeners.push({ ...l });
  const securityProtocols = listenerProtocols(listeners, values, explicit, controllerListenerNames);
  const logDirs = explicit.has('log.dirs') || !explicit.has('log.dir') ? str('log.dirs')! : str('log.dir')!;
  const dataDirs = logDirs.split(',').map((s) => s.trim()).filter(Boolean);
  if (dataDirs.length !== 1) throw new ConfigError(`log.dirs must name exactly one directory (got ${JSON.stringify(logDirs)})`);

  const socketRequestMaxBytes = int('socket.request.max.bytes');
  const queuedMaxRequestBytes = requestMemoryBound(explicit.has('queued.max.request.bytes') ? Number(str('queued.max.request.bytes')) : null, socketRequestMaxBytes);

  return {
    values,
    explicit,
    nodeId,
    listeners,
    advertisedListeners,
    controllerListenerNames,
    securityProtocols,
    dataDir: dataDirs[0]!,
    numPartitions: int('num.partitions'),
    defaultReplicationFactor: int('default.replication.factor'),
    autoCreateTopics: bool('auto.create.topics.enable'),
    deleteTopicEnable: bool('delete.topic.enable'),
    messageMaxBytes: int('message.max.bytes'),
    socketRequestMaxBytes,
    queuedMaxRequestBytes,
    connectionsMaxIdleMs: int('connections.max.idle.ms'),
    logRetentionCheckIntervalMs: int('log.retention.check.interval.ms'),
    maxFetchSessions: int('max.incremental.fetch.session.cache.slots'),
  };
}
