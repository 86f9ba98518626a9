import { describe, expect, it } from 'vitest';
import {
  ControlRecordType,
  InvalidRecordError,
  RecordBatch,
  buildEndTxnMarkerBatch,
  controlRecordKey,
  endTxnMarkerValue,
  parseControlRecordType,
  parseEndTxnMarker,
} from '../../../../protocol/records/index.js';

describe('control records', () => {
  it('builds a transaction marker batch as Kafka writes it', () => {
    const batch = RecordBatch.wrap(
      buildEndTxnMarkerBatch({
        commit: false,
        producerId: 77n,
        producerEpoch: 4,
        coordinatorEpoch: 12,
        timestamp: 1_700_000_000_000,
        baseOffset: 900,
        partitionLeaderEpoch: 2,
      }),
    );
    batch.validate();
    expect(batch.isControl).toBe(true);
    expect(batch.isTransactional).toBe(true);
    expect(batch.producerId).toBe(77n);
    expect(batch.producerEpoch).toBe(4);
    expect(batch.baseSequence).toBe(-1);
    expect(batch.compressionType).toBe(0);
    expect(batch.baseOffsetNumber).toBe(900);
    expect(batch.partitionLeaderEpoch).toBe(2);
    const [record] = batch.records().toArray();
    expect(record!.key!.toString('hex')).toBe('00000000'); // version 0, ABORT
    expect(record!.value!.toString('hex')).toBe('00000000000c'); // version 0, coordinator epoch 12
    expect(parseEndTxnMarker(record!.key, record!.value)).toEqual({ commit: false, coordinatorEpoch: 12 });
  });

  it('parses control keys and marker values, reading newer versions as version 0', () => {
    expect(parseControlRecordType(controlRecordKey(ControlRecordType.LEADER_CHANGE))).toBe(2);
    const v1Key = Buffer.from('00010001', 'hex');
    const v1Value = Buffer.from('0001000000070000', 'hex'); // a newer marker with an extra field
    expect(parseEndTxnMarker(v1Key, v1Value)).toEqual({ commit: true, coordinatorEpoch: 7 });
    expect(endTxnMarkerValue(-1).readInt32BE(2)).toBe(-1);
  });

  it('rejects malformed control records with InvalidRecordError', () => {
    expect(() => parseControlRecordType(null)).toThrow(InvalidRecordError);
    expect(() => parseControlRecordType(Buffer.from('0000', 'hex'))).toThrow(/at least 4 bytes/);
    expect(() => parseControlRecordType(Buffer.from('ffff0001', 'hex'))).toThrow(/Invalid version/);
    expect(() => parseEndTxnMarker(controlRecordKey(ControlRecordType.LEADER_CHANGE), endTxnMarkerValue(1))).toThrow(
      /Invalid control record type/,
    );
    expect(() => parseEndTxnMarker(controlRecordKey(1), Buffer.from('0000', 'hex'))).toThrow(InvalidRecordError);
    expect(() => parseEndTxnMarker(controlRecordKey(1), Buffer.from('ffff00000001', 'hex'))).toThrow(/Invalid version/);
  });
});
