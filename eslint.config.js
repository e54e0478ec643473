// ESLint: typescript-eslint's type-aware recommended rules on the shipped code, the plain
// recommended ones on tests and scripts; formatting is Prettier's (eslint-config-prettier
// turns off the rules that would fight it).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'docs/api/**', 'coverage/**', '**/node_modules/**', 'examples/**/.next/**', '.cache/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['src/**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Functions stay short enough to read in one screen; the simulated server is exempt below.
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: true, skipComments: true }],
      // Arrays and numbers in messages read fine (`[a,b]`, `3`).
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true, allowArray: true, allowNullish: true },
      ],
      // An abort rejects with `signal.reason`, whatever the caller put there (as fetch does).
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingAny: true, allowThrowingUnknown: true }],
    },
  },
  { files: ['src/testing/**/*.ts'], rules: { 'max-lines-per-function': 'off' } },
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
