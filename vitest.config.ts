// vitest.config.ts - unit tests beside the code they test (web/**/*.test.ts), in Node.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['web/**/*.test.ts'],
    environment: 'node',
  },
});
