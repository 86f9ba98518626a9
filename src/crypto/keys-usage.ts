/** The usage of `ledgerline keys` (keys-command.ts), apart so that `ledgerline start` need not load the command. */
export const KEYS_USAGE = `usage:
  ledgerline keys generate <id> --dir DIR [--type rsa|x25519|secret] [--bits 3072]
  ledgerline keys rotate <name> --dir DIR [--bits 3072]
  ledgerline keys list --dir DIR
  ledgerline keys needed --bootstrap-server HOST:PORT --topic T [--records 1000]`;
