// Types of release-record.mjs for the core's TypeScript tests (test/api-report.test.ts); the
// module itself is checked JavaScript (@ts-check) so the generator can run it without a build.
export interface ReleaseRecord { readonly date: string, readonly digest: string, readonly publicNames?: number }
export const RELEASES_FILE: string
export const API_REPORTS: readonly string[]
export function exportedNames (report: string): string[]
export function publicNameCount (coreDir: string): number
export function readReleases (coreDir: string): Record<string, ReleaseRecord>
