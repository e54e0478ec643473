// One build of the package for the whole suite (the CLI bin and demo tests run what a user
// runs): a private copy, so no other build of ./dist can pull it from under the tests.
import type { TestProject } from 'vitest/node';
import { buildPackageCopy } from './cli/support.js';

let copy: ReturnType<typeof buildPackageCopy> | undefined;

export function setup(project: TestProject): void {
  copy = buildPackageCopy();
  project.provide('packageCopy', copy.dir);
}

export function teardown(): void {
  copy?.remove();
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Folder of the built package copy: package.json, dist/, and a node_modules link. */
    packageCopy: string;
  }
}
