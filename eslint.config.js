// Lint rules for all TypeScript in the repository (`npm run lint`).
// typescript-eslint's recommended rules without type information (the type
// checks themselves are `npm run typecheck`, kept separate so either is fast
// alone), and React's rules of hooks for the renderer: an effect that reads a
// value it does not list re-runs on stale data, which no test may catch.
// Formatting is Prettier's (.prettierrc.json), not a lint rule.
import js from '@eslint/js';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/node_modules/**', '**/dist/**', '**/build/**', 'native/**', '.carry/**', 'bench/results/**'],
  },
  {
    // A disable comment that no longer suppresses anything is an error, so
    // each one left says where a rule is knowingly set aside (and, after
    // `--`, why).
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx}'],
    rules: {
      // `_`-prefixed names are deliberately unused (a callback's position, a destructured rest).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
    },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
    },
  },
);
