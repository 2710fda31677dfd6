/**
 * What is stable is written where tools see it (issue 43, item 4):
 *
 * - every name the package's entry points (src/index.ts, src/testing/index.ts) export is declared
 *   with an explicit status in its TSDoc, `@public` (stable) or `@public @experimental`; the API
 *   report prints it on each declaration (api-extractor.json reports `@experimental`; a
 *   declaration without a release tag fails `npm run api:check`, ae-missing-release-tag);
 * - the report's status of a name is the status of its row in README.md's "Public API" table;
 * - the count of public names goes up only with a release note that says why: when the reports
 *   export more names than the last release recorded in releases.json, CHANGELOG.md's
 *   `[Unreleased]` says `Public API: <n> names (+<k> since <version>)` and why, and so does every
 *   release section whose recorded count rose.
 *
 * The declarations are read from the sources with the TypeScript parser (no type checker: the
 * entry points re-export by name, `export { a } from './a.js'`), so the test is quick.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import ts from 'typescript'
import { CORE_ROOT } from './helpers/app.js'
import { readmeRows, releaseRecord } from './helpers/api-report.js'

const { exportedNames, publicNameCount, readReleases } = releaseRecord

interface Declared { readonly name: string, readonly file: string, readonly tags: ReadonlySet<string> }

const sources = new Map<string, ts.SourceFile>()
function sourceOf (file: string): ts.SourceFile {
  let source = sources.get(file)
  if (source === undefined) {
    source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true)
    sources.set(file, source)
  }
  return source
}

/** The module file an import specifier of `from` names (`./a.js` → `./a.ts`). */
function moduleFile (from: string, specifier: string): string {
  return resolve(dirname(from), specifier.replace(/\.js$/, '.ts'))
}

/** Whether `file` exports `name` by `export { name }` (no module specifier). */
function reExportsLocally (file: string, name: string): boolean {
  return sourceOf(file).statements.some((statement) => ts.isExportDeclaration(statement) && statement.moduleSpecifier === undefined && statement.exportClause !== undefined && ts.isNamedExports(statement.exportClause) && statement.exportClause.elements.some((element) => element.name.text === name))
}

/** The TSDoc tags of the top-level declarations named `name` in `file`, following named re-exports. */
function declarationsOf (file: string, name: string, depth = 0): Declared[] {
  const found: Declared[] = []
  for (const statement of sourceOf(file).statements) {
    if (ts.isExportDeclaration(statement) && statement.moduleSpecifier !== undefined && ts.isStringLiteral(statement.moduleSpecifier) && statement.exportClause !== undefined && ts.isNamedExports(statement.exportClause)) {
      for (const element of statement.exportClause.elements) {
        if (element.name.text === name && depth < 5) found.push(...declarationsOf(moduleFile(file, statement.moduleSpecifier.text), (element.propertyName ?? element.name).text, depth + 1))
      }
      continue
    }
    // `import type { a } from './a.js'` ... `export type { a }`: follow the import.
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier) && statement.importClause?.namedBindings !== undefined && ts.isNamedImports(statement.importClause.namedBindings) && reExportsLocally(file, name)) {
      for (const element of statement.importClause.namedBindings.elements) {
        if (element.name.text === name && depth < 5) found.push(...declarationsOf(moduleFile(file, statement.moduleSpecifier.text), (element.propertyName ?? element.name).text, depth + 1))
      }
      continue
    }
    const names = ts.isVariableStatement(statement)
      ? statement.declarationList.declarations.map((declaration) => declaration.name.getText())
      : (ts.isFunctionDeclaration(statement) || ts.isClassDeclaration(statement) || ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement) || ts.isEnumDeclaration(statement) || ts.isModuleDeclaration(statement)) && statement.name !== undefined
          ? [statement.name.getText()]
          : []
    const exported = ts.canHaveModifiers(statement) && (ts.getModifiers(statement) ?? []).some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)
    if (!exported || !names.includes(name)) continue
    const tags = new Set(ts.getJSDocTags(ts.isVariableStatement(statement) ? statement.declarationList.declarations[0] as ts.Node : statement).map((tag) => tag.tagName.text))
    found.push({ name, file: file.slice(CORE_ROOT.length + 1), tags })
  }
  return found
}

/** Every name an entry point exports, with its declarations. */
function entryExports (entry: string): Map<string, Declared[]> {
  const file = join(CORE_ROOT, entry)
  const exports = new Map<string, Declared[]>()
  for (const statement of sourceOf(file).statements) {
    if (!ts.isExportDeclaration(statement) || statement.exportClause === undefined || !ts.isNamedExports(statement.exportClause)) continue
    assert.ok(statement.moduleSpecifier !== undefined && ts.isStringLiteral(statement.moduleSpecifier), `${entry} re-exports by name from a module`)
    for (const element of statement.exportClause.elements) {
      exports.set(element.name.text, declarationsOf(moduleFile(file, statement.moduleSpecifier.text), (element.propertyName ?? element.name).text))
    }
  }
  return exports
}

/** Each exported declaration of an API report with the status line above it. */
function reportStatuses (report: string): Map<string, string> {
  const statuses = new Map<string, string>()
  for (const match of report.matchAll(/^\/\/ (@public[^\n]*)\n(?:\/\/[^\n]*\n)*export (?:declare )?(?:abstract )?(?:function|const|let|class|interface|type|enum|namespace) ([A-Za-z_$][\w$]*)/gm)) {
    const status = (match[1] ?? '').includes('@experimental') ? 'experimental' : 'stable'
    const name = match[2] ?? ''
    // An overloaded function is reported once per signature; every one carries the same status.
    assert.ok(!statuses.has(name) || statuses.get(name) === status, `${name}: every declaration has one status`)
    statuses.set(name, status)
  }
  return statuses
}

/** The status of each name in README.md's "Public API" table (test/readme-api.test.ts checks the table itself). */
function readmeStatuses (): Map<string, string> {
  const statuses = new Map<string, string>()
  for (const row of readmeRows()) for (const name of row.names) statuses.set(name, row.status)
  return statuses
}

test('every export of both entry points is declared @public, optionally @experimental, and nothing else decides its status', () => {
  for (const entry of ['src/index.ts', 'src/testing/index.ts']) {
    const exports = entryExports(entry)
    assert.ok(exports.size > (entry === 'src/index.ts' ? 200 : 30), `${entry} exports ${exports.size} names`)
    assert.deepEqual([...exports].filter(([, declarations]) => declarations.length === 0).map(([name]) => name), [], `${entry}: exported names whose declaration was not found`)
    const untagged = [...exports.values()].flat().filter((declaration) => !declaration.tags.has('public')).map((declaration) => `${declaration.name} (${declaration.file})`)
    assert.deepEqual(untagged, [], `${entry}: declarations without @public (stable) or @public @experimental`)
    const mixed = [...exports].filter(([, declarations]) => new Set(declarations.map((declaration) => declaration.tags.has('experimental'))).size > 1).map(([name]) => name)
    assert.deepEqual(mixed, [], `${entry}: names whose declarations disagree on @experimental`)
  }
})

test('the API reports carry each export\'s status, and README.md\'s table says the same', () => {
  const core = reportStatuses(readFileSync(join(CORE_ROOT, 'etc', 'core.api.md'), 'utf8'))
  const readme = readmeStatuses()
  assert.ok(core.size > 200, `the report shows ${core.size} statuses`)
  assert.deepEqual(exportedNames(readFileSync(join(CORE_ROOT, 'etc', 'core.api.md'), 'utf8')).filter((name) => !core.has(name)), [], 'reported without a status line')
  const disagreeing = [...core].filter(([name, status]) => readme.get(name) !== status).map(([name, status]) => `${name}: report ${status}, README ${String(readme.get(name))}`)
  assert.deepEqual(disagreeing, [], 'the report and the README disagree')
  const testing = reportStatuses(readFileSync(join(CORE_ROOT, 'etc', 'core-testing.api.md'), 'utf8'))
  assert.deepEqual([...testing].filter(([, status]) => status !== 'experimental').map(([name]) => name), [], 'the testing entry point is experimental as a whole (README.md, "Testing an app")')
})

/** The body of a CHANGELOG section (`Unreleased` or a version). */
function changelogSection (changelog: string, heading: string): string {
  const start = changelog.indexOf(`\n## [${heading}]`)
  if (start < 0) return ''
  const next = changelog.indexOf('\n## [', start + 1)
  return changelog.slice(start, next < 0 ? undefined : next)
}

/** Whether `section` explains a rise to `count` names from `previous`'s count, with a reason. */
function explains (section: string, count: number, rise: number, previous: string): boolean {
  const line = section.split('\n').find((text) => text.includes(`Public API: ${count} names (+${rise} since ${previous})`))
  return line !== undefined && line.replace(/^[-\s]*/, '').length > `Public API: ${count} names (+${rise} since ${previous})`.length + 20
}

test('the count of public names goes up only with a release note that says why', () => {
  const releases = readReleases(CORE_ROOT)
  const counted = Object.entries(releases).filter(([, record]) => record.publicNames !== undefined)
  assert.ok(counted.length > 0, 'releases.json records the public names of at least one release')
  const changelog = readFileSync(join(CORE_ROOT, 'CHANGELOG.md'), 'utf8')
  for (let index = 1; index < counted.length; index += 1) {
    const [version, record] = counted[index] as [string, { publicNames: number }]
    const [previous, before] = counted[index - 1] as [string, { publicNames: number }]
    if (record.publicNames > before.publicNames) {
      assert.ok(explains(changelogSection(changelog, version), record.publicNames, record.publicNames - before.publicNames, previous), `CHANGELOG.md [${version}] says "Public API: ${record.publicNames} names (+${record.publicNames - before.publicNames} since ${previous})" and why`)
    }
  }
  const [last, lastRecord] = counted.at(-1) as [string, { publicNames: number }]
  const count = publicNameCount(CORE_ROOT)
  if (count > lastRecord.publicNames) {
    const rise = count - lastRecord.publicNames
    assert.ok(explains(changelogSection(changelog, 'Unreleased'), count, rise, last), `CHANGELOG.md [Unreleased] says "Public API: ${count} names (+${rise} since ${last})" and why (the reports export ${count} names; ${last} recorded ${lastRecord.publicNames})`)
  }
})
