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
    // A spread passes each element as an argument, and arguments live on the
    // stack: Math.max(...a) with a few hundred thousand elements throws
    // RangeError (issue 27: `report` on 130 k kernel names). Arrays that grow
    // with a recording are walked with a loop (or a reduce); a spread of a
    // literal list is written as its elements.
    files: ['profiler/**/*.{ts,tsx}', 'renderer/**/*.{ts,tsx}', 'app/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='Math'] > SpreadElement",
          message: 'Math.max/min(...array) overflows the stack on a large array: use a loop or reduce.',
        },
        {
          selector: 'CallExpression[callee.property.name=/^(push|unshift|splice|concat)$/] > SpreadElement',
          message: 'push/unshift/splice/concat(...array) overflows the stack on a large array: push in a loop (for…of).',
        },
        {
          selector: "CallExpression[callee.object.name='String'][callee.property.name=/^fromC(harCode|odePoint)$/] > SpreadElement",
          message: 'String.fromCharCode(...array) overflows the stack on a large array: decode with TextDecoder or Buffer.',
        },
        {
          selector: "CallExpression[callee.property.name='apply'][callee.object.object.name='Math']",
          message: 'Math.max.apply(null, array) overflows the stack on a large array: use a loop or reduce.',
        },
      ],
    },
  },
  {
    // Plain CommonJS that runs before any TypeScript loads: the `streamscope`
    // command's launcher (profiler/cli/launch.cjs), Node's globals only.
    files: ['**/*.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', __dirname: 'readonly', process: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
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
