import { describe, expect, it } from 'vitest';
import { AMENDMENTS, amend, type Amendment, type SchemaMessage } from '../../../../protocol/gen/amendments.js';
import { parseMessage } from '../../../../protocol/gen/schema.js';

function heartbeatSchema(validVersions: string, withRegex: boolean): SchemaMessage {
  return {
    name: 'ConsumerGroupHeartbeatRequest',
    type: 'request',
    apiKey: 68,
    validVersions,
    flexibleVersions: '0+',
    fields: [
      { name: 'GroupId', type: 'string', versions: '0+' },
      { name: 'SubscribedTopicNames', type: '[]string', versions: '0+', nullableVersions: '0+', default: 'null' },
      ...(withRegex ? [{ name: 'SubscribedTopicRegex', type: 'string', versions: '1+', nullableVersions: '1+', default: 'null' }] : []),
      { name: 'ServerAssignor', type: 'string', versions: '0+', nullableVersions: '0+', default: 'null' },
    ],
  };
}

/** An amendment as the 3.9.0-era list had it: ConsumerGroupHeartbeat v1 adds SubscribedTopicRegex (KIP-848). */
const REGEX: Amendment = {
  message: 'ConsumerGroupHeartbeatRequest',
  source: 'Kafka 4.0: version 1 adds SubscribedTopicRegex (KIP-848)',
  validVersions: '0-1',
  addFields: [{ struct: null, after: 'SubscribedTopicNames', field: { name: 'SubscribedTopicRegex', type: 'string', versions: '1+', nullableVersions: '1+', default: 'null' } }],
};

const ERROR_MESSAGE: Amendment = {
  message: 'DescribeGroupsResponse',
  source: 'Kafka 4.0: version 6 adds ErrorMessage (KIP-1043)',
  validVersions: '0-6',
  addFields: [{ struct: 'DescribedGroup', after: 'ErrorCode', field: { name: 'ErrorMessage', type: 'string', versions: '6+', nullableVersions: '6+', default: 'null' } }],
};

describe('schema amendments', () => {
  it('none is left once Kafka 4.4.0 schemas define the versions the 3.9.0-era amendments added', () => {
    expect(AMENDMENTS).toEqual([]);
  });

  it('adds the versions and fields a later Kafka release defines, in schema order', () => {
    const raw = heartbeatSchema('0', false);
    const applied = amend('ConsumerGroupHeartbeatRequest.json', raw, [REGEX]);
    expect(applied).toHaveLength(1);
    expect(applied[0]).toContain('KIP-848');
    expect(raw.validVersions).toBe('0-1');
    expect(raw.fields!.map((f) => f.name)).toEqual(['GroupId', 'SubscribedTopicNames', 'SubscribedTopicRegex', 'ServerAssignor']);
  });

  it('leaves a schema set that already has the versions alone', () => {
    const raw = heartbeatSchema('0-1', true);
    const before = structuredClone(raw);
    expect(amend('ConsumerGroupHeartbeatRequest.json', raw, [REGEX])).toEqual([]);
    expect(raw).toEqual(before);
  });

  it('adds into nested structs by name', () => {
    const raw: SchemaMessage = {
      name: 'DescribeGroupsResponse',
      type: 'response',
      apiKey: 15,
      validVersions: '0-5',
      flexibleVersions: '5+',
      fields: [
        {
          name: 'Groups',
          type: '[]DescribedGroup',
          versions: '0+',
          fields: [
            { name: 'ErrorCode', type: 'int16', versions: '0+' },
            { name: 'GroupId', type: 'string', versions: '0+' },
          ],
        },
      ],
    };
    amend('DescribeGroupsResponse.json', raw, [ERROR_MESSAGE]);
    expect(raw.validVersions).toBe('0-6');
    expect(raw.fields![0]!.fields!.map((f) => f.name)).toEqual(['ErrorCode', 'ErrorMessage', 'GroupId']);
  });

  it('fails loudly when an amendment no longer fits the schema', () => {
    const broken: Amendment = {
      message: 'ConsumerGroupHeartbeatRequest',
      source: 'test',
      validVersions: '0-1',
      addFields: [{ struct: null, after: 'NoSuchField', field: { name: 'X', type: 'int8', versions: '1+' } }],
    };
    expect(() => amend('f.json', heartbeatSchema('0', false), [broken])).toThrow(/anchor NoSuchField/);
    const duplicate: Amendment = { ...broken, addFields: [{ struct: null, after: 'GroupId', field: { name: 'ServerAssignor', type: 'string', versions: '1+' } }] };
    expect(() => amend('f.json', heartbeatSchema('0', false), [duplicate])).toThrow(/already exists/);
    const unknownStruct: Amendment = { ...broken, addFields: [{ struct: 'Nope', after: 'GroupId', field: { name: 'X', type: 'int8', versions: '1+' } }] };
    expect(() => amend('f.json', heartbeatSchema('0', false), [unknownStruct])).toThrow(/unknown struct Nope/);
  });

  it('records the amendments a parsed message went through', () => {
    const spec = parseMessage('messages/ConsumerGroupHeartbeatRequest.json', JSON.stringify(heartbeatSchema('0', false)), [REGEX]);
    expect(spec.validVersions.toString()).toBe('0-1');
    expect(spec.amendedBy).toEqual([REGEX.source]);
    expect(parseMessage('m.json', JSON.stringify(heartbeatSchema('0', false)), []).amendedBy).toEqual([]);
  });
});
