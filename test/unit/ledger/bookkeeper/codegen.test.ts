/**
 * The committed src/ledger/bookkeeper/proto/ is exactly what BookKeeper's .proto files generate. The schemas are
 * not in this repository: the check runs when they are found (LEDGERLINE_BOOKKEEPER_PROTO, else
 * ../shared/bookkeeper-protocol) and fails instead of skipping when LEDGERLINE_BOOKKEEPER_PROTO names a folder
 * (.ci/run does).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bookKeeperProtoDir, generateBookKeeperProto, hasBookKeeperProto, PROTO_OUT_DIR, readGenerated } from '../../../../src/ledger/bookkeeper/codegen.js';

const dir = bookKeeperProtoDir();
const available = hasBookKeeperProto(dir);
const required = process.env.LEDGERLINE_BOOKKEEPER_PROTO !== undefined;

if (!available) {
  if (required) {
    describe('bookkeeper protobuf generation', () => {
      it('finds the schemas LEDGERLINE_BOOKKEEPER_PROTO names', () => {
        expect.fail(`${dir} does not hold BookkeeperProtocol.proto and DataFormats.proto`);
      });
    });
  } else {
    console.warn(`NOT RUN: the check that src/ledger/bookkeeper/proto/ is what BookKeeper's .proto files generate (none in ${dir}).`);
  }
}

describe.skipIf(!available)("bookkeeper protobuf generation (with BookKeeper's .proto files)", () => {
  it('committed src/ledger/bookkeeper/proto/ is exactly what the schemas generate', () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'ledgerline-bk-proto-'));
    try {
      generateBookKeeperProto(dir, out);
      const fresh = readGenerated(out);
      const committed = readGenerated(PROTO_OUT_DIR);
      expect([...committed.keys()], 'run `npm run gen:bookkeeper` and commit the result').toEqual([...fresh.keys()]);
      for (const [name, text] of fresh) expect(committed.get(name) === text, `${name} differs: run \`npm run gen:bookkeeper\``).toBe(true);
      expect(fresh.size).toBe(2);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});
