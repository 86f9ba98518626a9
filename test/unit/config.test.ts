import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, envToConfigName, loadConfig, parseListeners, parseProperties } from '../../src/config.js';

const dir = mkdtempSync(join(tmpdir(), 'ledgerline-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('parseProperties', () => {
  it('reads Java properties: separators, comments, blank lines, continuations and escapes', () => {
    const props = parseProperties(
      [
        '# a comment',
        '! another comment',
        '',
        'listeners=PLAINTEXT://:9092',
        '  num.partitions : 3',
        'log.dirs /data/one',
        'advertised.listeners=PLAINTEXT://a:1,\\',
        '    PLAINTEXT2://b:2',
        'key\\=with\\:escapes=value',
        'empty=',
        'bare',
        'windows=crlf\r',
        'trailing.backslash=ends with \\\\',
        'after=ok',
      ].join('\n'),
    );
    expect(Object.fromEntries(props)).toEqual({
      listeners: 'PLAINTEXT://:9092',
      'num.partitions': '3',
      'log.dirs': '/data/one',
      'advertised.listeners': 'PLAINTEXT://a:1,PLAINTEXT2://b:2',
      'key=with:escapes': 'value',
      empty: '',
      bare: '',
      windows: 'crlf',
      'trailing.backslash': 'ends with \\',
      after: 'ok',
    });
  });
});

describe('envToConfigName', () => {
  it('maps LEDGERLINE_ variables as Kafka\'s container image maps KAFKA_ ones', () => {
    expect(envToConfigName('LEDGERLINE_LOG_DIRS')).toBe('log.dirs');
    expect(envToConfigName('LEDGERLINE_NUM_PARTITIONS')).toBe('num.partitions');
    expect(envToConfigName('LEDGERLINE_SOME__UNDERSCORE')).toBe('some_underscore');
    expect(envToConfigName('LEDGERLINE_WITH___DASH')).toBe('with-dash');
    expect(envToConfigName('KAFKA_LOG_DIRS')).toBeNull();
    expect(envToConfigName('PATH')).toBeNull();
  });
});

describe('parseListeners', () => {
  it('parses NAME://host:port lists, IPv6 and empty hosts', () => {
    expect(parseListeners('PLAINTEXT://127.0.0.1:9092, internal://[::1]:9093,EXTERNAL://:0', 'listeners')).toEqual([
      { name: 'PLAINTEXT', host: '127.0.0.1', port: 9092 },
      { name: 'INTERNAL', host: '::1', port: 9093 },
      { name: 'EXTERNAL', host: '', port: 0 },
    ]);
  });

  it('refuses malformed entries, ports out of range and empty lists', () => {
    expect(() => parseListeners('127.0.0.1:9092', 'listeners')).toThrow(ConfigError);
    expect(() => parseListeners('PLAINTEXT://h:70000', 'listeners')).toThrow(/out of range/);
    expect(() => parseListeners(' , ', 'listeners')).toThrow(/empty/);
  });
});

describe('loadConfig', () => {
  it('starts from Kafka\'s defaults', () => {
    const c = loadConfig({ overrides: [['log.dirs', '/d']] });
    expect(c).toMatchObject({ nodeId: 1, numPartitions: 1, autoCreateTopics: true, deleteTopicEnable: true, messageMaxBytes: 1048588, socketRequestMaxBytes: 104857600, dataDir: '/d' });
    expect(c.explicit).toEqual(new Set(['log.dirs']));
    expect(c.advertisedListeners).toEqual(c.listeners);
  });

  it('maps LEDGERLINE_LOG_DIRS to log.dirs and ignores other variables', () => {
    const c = loadConfig({ env: { LEDGERLINE_LOG_DIRS: '/from/env', LEDGERLINE_NUM_PARTITIONS: '6', HOME: '/root', KAFKA_NUM_PARTITIONS: '9' } });
    expect(c.dataDir).toBe('/from/env');
    expect(c.numPartitions).toBe(6);
    expect(c.explicit.has('log.dirs')).toBe(true);
  });

  it('lets the environment override the file and --set override both', () => {
    const path = file('precedence.properties', 'log.dirs=/from/file\nnum.partitions=2\nmessage.max.bytes=5000\nauto.create.topics.enable=false\n');
    const fromFile = loadConfig({ file: path });
    expect(fromFile).toMatchObject({ dataDir: '/from/file', numPartitions: 2, messageMaxBytes: 5000, autoCreateTopics: false });
    const withEnv = loadConfig({ file: path, env: { LEDGERLINE_NUM_PARTITIONS: '4', LEDGERLINE_LOG_DIRS: '/from/env' } });
    expect(withEnv).toMatchObject({ dataDir: '/from/env', numPartitions: 4, messageMaxBytes: 5000 });
    const withSet = loadConfig({
      file: path,
      env: { LEDGERLINE_NUM_PARTITIONS: '4' },
      overrides: [
        ['num.partitions', '8'],
        ['num.partitions', '10'],
        ['auto.create.topics.enable', 'TRUE'],
      ],
    });
    expect(withSet).toMatchObject({ dataDir: '/from/file', numPartitions: 10, autoCreateTopics: true });
  });

  it('takes node.id before broker.id, and broker.id when node.id is not set', () => {
    expect(loadConfig({ overrides: [['broker.id', '7']] }).nodeId).toBe(7);
    expect(loadConfig({ overrides: [['broker.id', '7'], ['node.id', '3']] }).nodeId).toBe(3);
  });

  it('uses log.dir when log.dirs is not set, and wants exactly one directory', () => {
    expect(loadConfig({ overrides: [['log.dir', '/single']] }).dataDir).toBe('/single');
    expect(loadConfig({ overrides: [['log.dir', '/single'], ['log.dirs', '/many']] }).dataDir).toBe('/many');
    expect(() => loadConfig({ overrides: [['log.dirs', '/a,/b']] })).toThrow(/exactly one directory/);
  });

  it('refuses invalid values with Kafka\'s messages, and accepts unknown names', () => {
    const bad: [string, string, RegExp][] = [
      ['num.partitions', 'many', /Invalid value many for configuration num.partitions: Not a number of type INT/],
      ['num.partitions', '0', /Value must be at least 1/],
      ['num.partitions', '2147483648', /Not a number of type INT/],
      ['auto.create.topics.enable', 'yes', /Expected value to be either true or false/],
      ['log.cleanup.policy', 'delete,shred', /String must be one of: delete, compact/],
      ['log.message.timestamp.type', 'Now', /String must be one of/],
      ['listeners', 'nonsense', /is not NAME:\/\/host:port/],
    ];
    for (const [k, v, message] of bad) {
      let error: unknown;
      try {
        loadConfig({ overrides: [['log.dirs', '/d'], [k, v]] });
      } catch (e) {
        error = e;
      }
      expect(error, `${k}=${v}`).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).code).toBe('LL_ERR_CONFIG');
      expect((error as Error).message).toMatch(message);
    }
    expect(loadConfig({ overrides: [['log.dirs', '/d'], ['some.plugin.setting', 'x']] }).values.get('some.plugin.setting')).toBe('x');
  });

  it('reports an unreadable config file', () => {
    expect(() => loadConfig({ file: join(dir, 'missing.properties') })).toThrow(/cannot read config file/);
  });

});

describe('queued.max.request.bytes', () => {
  it('bounds request memory by default: 256 MiB, or twice socket.request.max.bytes when larger', () => {
    expect(loadConfig().queuedMaxRequestBytes).toBe(256 * 1024 * 1024);
    expect(loadConfig({ overrides: [['socket.request.max.bytes', String(200 * 1024 * 1024)]] }).queuedMaxRequestBytes).toBe(400 * 1024 * 1024);
  });

  it('takes Kafka\'s name, and -1 as Kafka\'s "no bound"', () => {
    expect(loadConfig({ overrides: [['queued.max.request.bytes', String(512 * 1024 * 1024)]] }).queuedMaxRequestBytes).toBe(512 * 1024 * 1024);
    expect(loadConfig({ overrides: [['queued.max.request.bytes', '-1']] }).queuedMaxRequestBytes).toBe(Infinity);
    expect(loadConfig({ env: { LEDGERLINE_QUEUED_MAX_REQUEST_BYTES: '300000000' } }).queuedMaxRequestBytes).toBe(300_000_000);
  });

  it('refuses a bound below socket.request.max.bytes, which could never read a largest request', () => {
    expect(() => loadConfig({ overrides: [['queued.max.request.bytes', '1000']] })).toThrow(ConfigError);
    expect(() => loadConfig({ overrides: [['queued.max.request.bytes', '1000']] })).toThrow(/must be at least socket.request.max.bytes/);
    expect(() => loadConfig({ overrides: [['queued.max.request.bytes', 'lots']] })).toThrow(ConfigError);
  });

  it('takes controller.listener.names as Kafka does: listeners of this node, never advertised to clients, one broker listener at least', () => {
    const c = loadConfig({ overrides: [['log.dirs', '/d'], ['listeners', 'PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093'], ['controller.listener.names', 'controller']] });
    expect(c.controllerListenerNames).toEqual(['CONTROLLER']);
    // The controller listener advertises its own address, kept apart from the brokers' (Metadata) by its name.
    expect(c.advertisedListeners).toEqual([
      { name: 'PLAINTEXT', host: '127.0.0.1', port: 9092 },
      { name: 'CONTROLLER', host: '127.0.0.1', port: 9093 },
    ]);
    const advertised = loadConfig({ overrides: [['log.dirs', '/d'], ['listeners', 'PLAINTEXT://:9092,CONTROLLER://:9093'], ['advertised.listeners', 'PLAINTEXT://kafka.example:9092'], ['controller.listener.names', 'CONTROLLER']] });
    expect(advertised.advertisedListeners.map((l) => `${l.name}://${l.host}:${l.port}`)).toEqual(['PLAINTEXT://kafka.example:9092', 'CONTROLLER://:9093']);
    expect(loadConfig({ overrides: [['log.dirs', '/d']] }).controllerListenerNames).toEqual([]);
    expect(() => loadConfig({ overrides: [['log.dirs', '/d'], ['controller.listener.names', 'CONTROLLER']] })).toThrow(/must only contain values appearing in the 'listeners' configuration/);
    expect(() => loadConfig({ overrides: [['log.dirs', '/d'], ['listeners', 'CONTROLLER://:9093'], ['controller.listener.names', 'CONTROLLER']] })).toThrow(/at least one listener that is not a controller listener/);
  });
});
