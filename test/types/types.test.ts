// Compiles test/types/consumer.ts, a merchant's file, under strict +
// exactOptionalPropertyTypes: misspelt result fields and wrong enum literals must not
// compile (its `@ts-expect-error` lines; an unused one is itself an error), ids are
// strings, balance is iterable, list status is a union, options accept undefined.
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, test } from 'vitest';

test('the consumer file compiles, and every @ts-expect-error in it is an error', () => {
  const configPath = fileURLToPath(new URL('./tsconfig.json', import.meta.url));
  const config = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('test/types/tsconfig.json could not be read');
  const program = ts.createProgram(config.fileNames, config.options);
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
    const where =
      d.file && d.start !== undefined
        ? `${d.file.fileName.replace(/.*\/(src|test)\//, '$1/')}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}`
        : '';
    return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
  expect(diagnostics).toEqual([]);
  expect(config.options.exactOptionalPropertyTypes).toBe(true);
  expect(config.options.strict).toBe(true);
}, 60_000);
