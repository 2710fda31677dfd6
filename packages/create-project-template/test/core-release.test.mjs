// @ts-check
/**
 * A version names one content (packages/core/scripts/release-record.mjs): the content digest
 * ignores only package.json's version; packing keeps a version only for the content recorded for
 * it in releases.json and otherwise vendors the `<next patch>-dev.<digest8>` prerelease; the
 * release script bumps package.json, moves [Unreleased] under a dated heading and records the
 * digest, and refuses (changing nothing) without entries, without upgrade notes, or for a version
 * already recorded.
 */
import { after, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { bumpVersion, contentDigest, packedVersion, previousRelease, readReleases, tarEntries } from '../../core/scripts/release-record.mjs'
import { moveUnreleased, release } from '../../core/scripts/release.mjs'
import { satisfiesCaret } from '../lib/project-files.mjs'
import { CORE_DIR, checkoutCore, run, tempDir } from './helpers.mjs'

const sandbox = tempDir('cpt-release-')
after(() => rmSync(sandbox, { recursive: true, force: true }))

/**
 * `npm pack` of a two-file package written into the sandbox.
 * @param {string} label
 * @param {{ version: string, index: string }} content
 */
async function packSmall (label, content) {
  const directory = join(sandbox, label)
  mkdirSync(directory)
  writeFileSync(join(directory, 'package.json'), JSON.stringify({ name: 'small', version: content.version }, null, 2))
  writeFileSync(join(directory, 'index.js'), content.index)
  const result = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', directory], { cwd: directory })
  assert.equal(result.status, 0, result.stderr)
  return readFileSync(join(directory, JSON.parse(result.stdout)[0].filename))
}

describe('the content digest', () => {
  test('is of the packed files: the same for another version, different for one changed byte', async () => {
    const a = await packSmall('a', { version: '1.0.0', index: 'export default 1\n' })
    const b = await packSmall('b', { version: '1.0.1', index: 'export default 1\n' })
    const c = await packSmall('c', { version: '1.0.0', index: 'export default 2\n' })
    assert.deepEqual(tarEntries(a).map((entry) => entry.path).sort(), ['package/index.js', 'package/package.json'])
    assert.match(contentDigest(a), /^sha256-[0-9a-f]{64}$/)
    assert.equal(contentDigest(a), contentDigest(b))
    assert.notEqual(contentDigest(a), contentDigest(c))
  })
})

describe('the version packing gives a core', () => {
  const digest = `sha256-${'3b062b6f'.padEnd(64, '0')}`
  /** @type {Array<{ label: string, version: string, releases: Record<string, { date: string, digest: string }>, expected: { version: string, released: boolean } }>} */
  const cases = [
    { label: 'the recorded content of its version: that release', version: '1.2.0', releases: { '1.2.0': { date: '2026-11-27', digest } }, expected: { version: '1.2.0', released: true } },
    { label: 'content changed since its release: the next patch\'s dev prerelease', version: '1.2.0', releases: { '1.2.0': { date: '2026-11-27', digest: 'sha256-other' } }, expected: { version: '1.2.1-dev.3b062b6f', released: false } },
    { label: 'a version with no record (1.0.0 predates the record): a dev prerelease', version: '1.0.0', releases: {}, expected: { version: '1.0.1-dev.3b062b6f', released: false } }
  ]
  for (const { label, version, releases, expected } of cases) {
    test(label, () => {
      const { version: packed, released } = packedVersion({ version, digest, releases })
      assert.deepEqual({ version: packed, released }, expected)
    })
  }

  test('the checkout\'s core: its version when releases.json records its content, else the dev prerelease named by its digest', () => {
    const core = checkoutCore()
    const manifest = JSON.parse(readFileSync(join(CORE_DIR, 'package.json'), 'utf8'))
    const entries = tarEntries(core.data)
    assert.equal(JSON.parse(entries.find((entry) => entry.path === 'package/package.json')?.data.toString('utf8') ?? '{}').version, core.version)
    const digest = contentDigest(core.data)
    if (readReleases(CORE_DIR)[manifest.version]?.digest === digest) {
      assert.deepEqual([core.version, core.released], [manifest.version, true])
    } else {
      assert.equal(core.version, `${bumpVersion(manifest.version, 'patch')}-dev.${digest.slice('sha256-'.length, 'sha256-'.length + 8)}`)
      assert.equal(core.released, false)
      assert.equal(core.fileName, `project-template-core-${core.version}.tgz`)
    }
  })

  test('a dev prerelease satisfies the template\'s caret range by its release part; the previous release is the latest below it', () => {
    assert.equal(satisfiesCaret('1.0.1-dev.3b062b6f', '^1.0.0'), true)
    assert.equal(satisfiesCaret('2.0.1-dev.3b062b6f', '^1.0.0'), false)
    assert.equal(satisfiesCaret('1.0.1-beta', '^1.0.0'), false)
    const releases = { '1.0.1': { date: '', digest: '' }, '1.1.0': { date: '', digest: '' }, '1.1.1': { date: '', digest: '' } }
    assert.equal(previousRelease(releases, '1.1.2-dev.3b062b6f'), '1.1.1')
    assert.equal(previousRelease(releases, '1.1.1'), '1.1.0')
    assert.equal(previousRelease(releases, '1.0.1'), undefined)
  })
})

describe('npm run release -- <patch|minor|major>', () => {
  const changelog = '# Changelog\n\nIntro.\n\n## [Unreleased]\n\nUpgrading from 1.0.0: nothing to do.\n\n### Security\n\n- A fix.\n\n## [1.0.0] - 2026-11-25\n\n### Added\n\n- All.\n'
  /** @param {string} label @param {string} text */
  const coreCopy = (label, text) => {
    const directory = join(sandbox, label)
    mkdirSync(directory)
    writeFileSync(join(directory, 'package.json'), JSON.stringify({ name: '@project-template/core', version: '1.0.0' }, null, 2) + '\n')
    writeFileSync(join(directory, 'CHANGELOG.md'), text)
    mkdirSync(join(directory, 'etc'))
    writeFileSync(join(directory, 'etc', 'core.api.md'), '// @public\nexport function createApp(): void;\n\n// @public @experimental\nexport interface Options {\n}\n')
    writeFileSync(join(directory, 'etc', 'core-testing.api.md'), '// @public @experimental\nexport const build: () => void;\n')
    return directory
  }
  const fakePack = () => readFileSync(join(sandbox, 'a', 'small-1.0.0.tgz'))
  const now = new Date('2026-11-27T18:00:00Z')

  test('a minor: package.json bumped, [Unreleased] moved under "## [1.1.0] - 2026-11-27", the digest and the public names recorded', () => {
    const coreDir = coreCopy('minor', changelog)
    const result = release(['minor'], { coreDir, now, pack: fakePack })
    assert.deepEqual(result, { version: '1.1.0', digest: contentDigest(fakePack()) })
    assert.equal(JSON.parse(readFileSync(join(coreDir, 'package.json'), 'utf8')).version, '1.1.0')
    assert.equal(readFileSync(join(coreDir, 'CHANGELOG.md'), 'utf8'), '# Changelog\n\nIntro.\n\n## [Unreleased]\n\n## [1.1.0] - 2026-11-27\n\nUpgrading from 1.0.0: nothing to do.\n\n### Security\n\n- A fix.\n\n## [1.0.0] - 2026-11-25\n\n### Added\n\n- All.\n')
    assert.deepEqual(readReleases(coreDir), { '1.1.0': { date: '2026-11-27', digest: result.digest, publicNames: 3 } })
    assert.throws(() => release(['patch'], { coreDir, now, pack: fakePack }), { message: 'The [Unreleased] section of CHANGELOG.md is empty: there is nothing to release.' })
  })

  test('refusals change nothing: no upgrade notes, a recorded version, a failed pack, a wrong kind', () => {
    assert.throws(() => moveUnreleased(changelog.replace('Upgrading from 1.0.0: nothing to do.\n\n', ''), '1.0.1', '2026-11-27'), { message: /^The \[Unreleased\] section of CHANGELOG\.md must open with the upgrade notes/ })
    const coreDir = coreCopy('refusals', changelog)
    writeFileSync(join(coreDir, 'releases.json'), JSON.stringify({ '1.0.1': { date: '2026-11-26', digest: 'sha256-x' } }))
    const before = ['package.json', 'CHANGELOG.md', 'releases.json'].map((file) => readFileSync(join(coreDir, file), 'utf8'))
    assert.throws(() => release(['patch'], { coreDir, now, pack: fakePack }), { message: '1.0.1 is already recorded in releases.json (2026-11-26).' })
    assert.throws(() => release(['minor'], { coreDir, now, pack: () => { throw new Error('npm pack failed') } }), { message: 'npm pack failed' })
    assert.throws(() => release(['1.2.0'], { coreDir, now, pack: fakePack }), { message: 'usage: npm run release --workspace packages/core -- <patch|minor|major>' })
    assert.deepEqual(['package.json', 'CHANGELOG.md', 'releases.json'].map((file) => readFileSync(join(coreDir, file), 'utf8')), before)
  })
})
