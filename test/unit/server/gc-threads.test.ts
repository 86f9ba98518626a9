import { describe, expect, it } from 'vitest';
import { brokerExecArgv, NODE_DEFAULT_V8_POOL, V8_POOL_FLAG } from '../../../src/server/gc-threads.js';

describe('brokerExecArgv', () => {
  it('adds --v8-pool-size=0 after the given node arguments on a machine of up to 4 cores', () => {
    expect(brokerExecArgv([], undefined, 2)).toEqual([`${V8_POOL_FLAG}=0`]);
    expect(brokerExecArgv(['--import', 'tsx', '--max-old-space-size=96'], '', NODE_DEFAULT_V8_POOL)).toEqual(['--import', 'tsx', '--max-old-space-size=96', '--v8-pool-size=0']);
  });

  it('keeps a pool size the operator gave, on the command line or in NODE_OPTIONS, in either spelling', () => {
    expect(brokerExecArgv(['--v8-pool-size=4'], undefined, 2)).toBeNull();
    expect(brokerExecArgv(['--v8_pool_size=2'], undefined, 2)).toBeNull();
    expect(brokerExecArgv([], '--max-old-space-size=512  --v8-pool-size=3', 2)).toBeNull();
  });

  it("keeps Node's pool on a machine with more cores than it has threads", () => {
    expect(brokerExecArgv([], undefined, NODE_DEFAULT_V8_POOL + 1)).toBeNull();
    expect(brokerExecArgv([], undefined, 64)).toBeNull();
  });

  it('is not fooled by an option that only starts like it', () => {
    expect(brokerExecArgv(['--v8-pool-sizes=1'], '--v8-pool-size-x', 2)).toEqual(['--v8-pool-sizes=1', '--v8-pool-size=0']);
  });
});
