// One build of the package for the whole suite (the CLI bin and demo tests run what a user
// runs): a private copy, so no other build of ./dist can pull it from under the tests. It is
// started here and not awaited: the tests that need it wait for it (packageCopyReady), the
// others run meanwhile, and a run without those tests never waits for a build at all.
import type { TestProject } from 'vitest/node';
import { startPackageCopy } from './support/cli.js';

let copy: ReturnType<typeof startPackageCopy> | undefined;

export function setup(project: TestProject): void {
  copy = startPackageCopy();
  project.provide('packageCopy', copy.dir);
}

export async function teardown(): Promise<void> {
  await copy?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** Folder of the package copy being built: package.json, dist/ (once packageCopyReady resolves), a node_modules link. */
    packageCopy: string;
  }
}
