import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Integration tests start real broker processes; two cores is the budget.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // kafkajs's negative-timer warning on Node.js 24 (tulios/kafkajs#1751), dropped; see the file.
    setupFiles: ['test/support/quiet-kafkajs-timers.ts'],
  },
});
