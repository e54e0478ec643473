// ESLint: typescript-eslint's type-aware recommended rules on the shipped code, the plain
// recommended ones on tests and scripts; formatting is Prettier's (eslint-config-prettier
// turns off the rules that would fight it).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import list from './entries.json' with { type: 'json' };

const INDEPENDENT =
  'src/testing is the independent simulated service: it may not import the client (src/ outside src/testing, or business-payments). Write what it needs in src/testing.';

export default tseslint.config(
  { ignores: ['dist/**', 'docs/api/**', 'coverage/**', '**/node_modules/**', 'examples/**/.next/**', '.cache/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Functions stay short enough to read in one screen: every line counts, comments and blank
      // ones too. The limit is 60 lines, and a function keeps 5 of headroom below it (55), so a
      // fix never has to squeeze one; a function that is one table may say so in a disable comment.
      'max-lines-per-function': ['error', { max: 55, skipBlankLines: false, skipComments: false }],
      // Arrays and numbers in messages read fine (`[a,b]`, `3`).
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true, allowArray: true, allowNullish: true },
      ],
      // An abort rejects with `signal.reason`, whatever the caller put there (as fetch does).
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  // The simulated service (src/testing) is a second, independent implementation of the API:
  // it imports nothing of the client (src/ outside src/testing, or the package by name), so
  // a client bug cannot hide behind code both sides share. A relative import that climbs out
  // of src/testing is an error: `../` from src/testing/*.ts, `../../` from src/testing/*/*.ts…
  ...[0, 1, 2, 3].map((depth) => ({
    files: [`src/testing/${'*/'.repeat(depth)}*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: `^(\\./)?(\\.\\./){${depth + 1}}`, message: INDEPENDENT },
            { regex: '^business-payments(/|$)', message: INDEPENDENT },
          ],
        },
      ],
    },
  })),
  // core/ is what users hold (errors, APIPromise, PagePromise, APIResource): it sits below the
  // engine (internal/), which may use it; never the other way round.
  {
    files: ['src/core/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./internal/',
              message: 'src/core imports nothing from src/internal (the engine sits above it): move what both need into src/core.',
            },
          ],
        },
      ],
    },
  },
  // The CLI is a user of the SDK: it imports the public entries only (entries.json: src/index.ts,
  // src/webhooks.ts…, which tsup.config.ts turns into imports of the package),
  // and its own files. A relative import into a folder of the SDK (../core/, ../internal/…)
  // is an error; an exception says why on an eslint-disable comment.
  {
    files: ['src/cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./[\\w-]+/',
              message: `the CLI imports public entries only (${list.entries.map((entry) => entry.source).join(', ')}), as a user program would, or its own files (src/cli/)`,
            },
          ],
        },
      ],
    },
  },
  // TypeScript itself checks names; plain JS (scripts, examples) runs on Node or in a page.
  { files: ['**/*.ts', '**/*.tsx'], rules: { 'no-undef': 'off' } },
  { files: ['**/*.js', '**/*.mjs', '**/*.cjs'], languageOptions: { globals: { ...globals.node, ...globals.browser } } },
  {
    rules: {
      // `_name` marks a binding kept on purpose (a destructured field left out, a type tie).
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
    },
  },
  // CommonJS files load with require() (the runtime matrix checks exactly that).
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
  {
    // Tests feed malformed input on purpose (control characters, loose casts).
    files: ['test/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', 'no-control-regex': 'off' },
  },
  prettier,
);
