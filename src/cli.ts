#!/usr/bin/env node
/**
 * `ledgerline` command line. Until the broker lands, `ledgerline start` prints the version and exits.
 */
import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

function main(argv: string[]): number {
  const [command] = argv;
  switch (command) {
    case undefined:
    case 'version':
    case '--version':
      console.log(`ledgerline ${pkg.version}`);
      return 0;
    case 'start':
      console.log(`ledgerline ${pkg.version}: the broker is not implemented yet; nothing to start.`);
      return 0;
    default:
      console.error(`ledgerline: unknown command ${JSON.stringify(command)}. Commands: start, version`);
      return 2;
  }
}

process.exitCode = main(process.argv.slice(2));
