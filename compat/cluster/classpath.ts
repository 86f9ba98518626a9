/** Where the JVM side of the cluster comes from: compat/bookkeeper, built by `npm run compat`'s install step. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { COMPAT_DIR } from '../lib/paths.js';

export const BOOKKEEPER_MODULE_DIR = join(COMPAT_DIR, 'bookkeeper');

/** The command that builds compat/bookkeeper, for messages. */
export const BUILD_COMMAND = 'mvn -B -q -Dmaven.repo.local=compat/.work/m2 -f compat/pom.xml -pl bookkeeper -am package';

/**
 * The classpath of BookKeeper 4.17.3 (bookie, shell, autorecovery, client), ZooKeeper 3.9.5 and BkTool, or
 * undefined when compat/bookkeeper is not built (or names a jar that is gone).
 */
export function bookKeeperClasspath(): string | undefined {
  const classes = join(BOOKKEEPER_MODULE_DIR, 'target', 'classes');
  const file = join(BOOKKEEPER_MODULE_DIR, 'target', 'classpath.txt');
  if (!existsSync(file) || !existsSync(join(classes, 'dev', 'ledgerline', 'compat', 'bookkeeper', 'BkTool.class'))) return undefined;
  const jars = readFileSync(file, 'utf8').trim();
  if (jars === '' || !jars.split(':').every((j) => existsSync(j))) return undefined;
  return `${classes}:${jars}`;
}

/** Tests that need ZooKeeper/BookKeeper fail rather than skip when it is missing (CI sets it). */
export function requireBookKeeper(): boolean {
  return process.env.LEDGERLINE_REQUIRE_BOOKKEEPER === '1';
}

export function classpathOrThrow(): string {
  const cp = bookKeeperClasspath();
  if (cp === undefined) throw new Error(`BookKeeper is not built (compat/bookkeeper/target/classpath.txt): run ${BUILD_COMMAND}`);
  return cp;
}
