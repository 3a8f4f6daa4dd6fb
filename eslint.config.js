// Lint runs as part of `npm test`; the type-aware rules catch floating promises,
// which in a consumer loop mean an offset committed before its rows are durable.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'dist-*/', 'node_modules/', '.state/', 'test/fixtures/', 'bin/', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'off',
      // kafkajs hands eachBatch its callbacks (resolveOffset, heartbeat, …) as
      // closures; destructuring them is how its own docs use them.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // node:test's test() returns a promise the runner itself awaits.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-floating-promises': 'off', '@typescript-eslint/unbound-method': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      globals: { process: 'readonly', console: 'readonly' },
    },
  },
  {
    // The page `agentledger serve` serves: plain scripts for the browser.
    files: ['src/serve/page/**/*.js'],
    languageOptions: {
      sourceType: 'script',
      globals: {
        window: 'readonly', document: 'readonly', fetch: 'readonly', URL: 'readonly', URLSearchParams: 'readonly',
        Blob: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly',
        uPlot: 'readonly', BigInt: 'readonly', location: 'readonly', history: 'readonly', console: 'readonly',
        agentledgerMoney: 'writable', ResizeObserver: 'readonly', requestAnimationFrame: 'readonly',
        Node: 'readonly', AbortController: 'readonly',
      },
    },
  },
);
