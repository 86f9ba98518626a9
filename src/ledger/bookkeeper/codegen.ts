/**
 * Generates `proto/` (TypeScript, protobuf-es) from Apache BookKeeper's own .proto files, which are not kept in
 * this repository: `BookkeeperProtocol.proto` (the bookie wire protocol v3) and `DataFormats.proto` (ledger
 * metadata as stored in ZooKeeper), from `../shared/bookkeeper-protocol/` by default.
 *
 *   npm run gen:bookkeeper [-- <proto dir>]       # or LEDGERLINE_BOOKKEEPER_PROTO=<dir>
 *
 * Runs `buf generate` (devDependency @bufbuild/buf) with the local plugin `protoc-gen-es`
 * (@bufbuild/protoc-gen-es), target=ts. `generateBookKeeperProto(dir, out)` is what the test of the committed
 * output calls, into a temporary folder.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** The repository root (this file is src/ledger/bookkeeper/codegen.ts, or its dist/ copy). */
const repoRoot = path.resolve(here, here.includes(`${path.sep}dist${path.sep}`) ? '../../../..' : '../../..');
/** Where the generated modules are committed. */
export const PROTO_OUT_DIR = path.join(repoRoot, 'src/ledger/bookkeeper/proto');
/** The schemas generation reads. */
export const PROTO_FILES = ['BookkeeperProtocol.proto', 'DataFormats.proto'] as const;

/** The proto folder: the argument, else LEDGERLINE_BOOKKEEPER_PROTO, else ../shared/bookkeeper-protocol. */
export function bookKeeperProtoDir(arg?: string): string {
  return path.resolve(arg ?? process.env.LEDGERLINE_BOOKKEEPER_PROTO ?? path.join(repoRoot, '../shared/bookkeeper-protocol'));
}

/** Whether `dir` holds both schemas. */
export function hasBookKeeperProto(dir: string): boolean {
  return PROTO_FILES.every((f) => existsSync(path.join(dir, f)));
}

/** Generates the modules for the schemas in `protoDir` into `outDir` (emptied first). */
export function generateBookKeeperProto(protoDir: string, outDir: string): void {
  if (!hasBookKeeperProto(protoDir)) throw new Error(`${protoDir} does not hold ${PROTO_FILES.join(' and ')}`);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const bin = path.join(repoRoot, 'node_modules/.bin');
  const template = JSON.stringify({
    version: 'v2',
    plugins: [{ local: path.join(bin, 'protoc-gen-es'), out: outDir, opt: ['target=ts', 'import_extension=js'] }],
  });
  execFileSync(path.join(bin, 'buf'), ['generate', protoDir, '--template', template], { stdio: ['ignore', 'inherit', 'inherit'] });
}

/** The generated files of a folder, by name, for comparing two generations. */
export function readGenerated(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  if (!existsSync(dir)) return files;
  for (const name of readdirSync(dir).sort()) if (name.endsWith('.ts')) files.set(name, readFileSync(path.join(dir, name), 'utf8'));
  return files;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = bookKeeperProtoDir(process.argv[2]);
  generateBookKeeperProto(dir, PROTO_OUT_DIR);
  console.log(`generated ${[...readGenerated(PROTO_OUT_DIR).keys()].join(', ')} in ${path.relative(process.cwd(), PROTO_OUT_DIR)} from ${dir}`);
}
